// Package server is ckpt serve: a stateless HTTP/JSON API over any
// ckpt.Store, so that agents on many machines share one store through one
// URL and a token.
//
// Every Store operation has an endpoint (append with If-Match and
// Idempotency-Key, get, history, list, beat, delete), the lifecycle verbs
// run next to the data, the change feed streams as server-sent events
// resumable with Last-Event-ID, and check and stale reports are served.
// Errors are JSON bodies with the root package's stable codes, mapped to
// statuses in one table (package httpapi); package remote is the client.
//
// Every request carries a bearer token (see Token and TokenStore), except
// in the explicit insecure mode meant for a loopback development server.
// A token has a scope (read, write, admin) and may be bound to an ID prefix
// (it writes only there) and to an agent (recorded as the actor of its
// writes whatever the client says). The same checks guard the MCP server
// mounted at /mcp, which runs over the grant's view of the store.
//
// The wire format and the API are described in docs/api.md and served as
// OpenAPI at /openapi.json.
package server

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/ckpt-dev/ckpt"
	"github.com/ckpt-dev/ckpt/internal/feed"
	"github.com/ckpt-dev/ckpt/internal/httpapi"
)

// Options configure a Server. Tokens is required unless Insecure is set.
type Options struct {
	// Tokens authenticates requests.
	Tokens TokenStore
	// Insecure serves every request as admin without a token. Only for a
	// development server on a loopback address: the CLI refuses it
	// anywhere else.
	Insecure bool
	// Version is reported at /v1/info; "" means "dev".
	Version string
	// Logger receives the server's logs; nil means warnings on stderr.
	Logger *slog.Logger
	// Now is the clock of lifecycle defaults and stale reports; nil means
	// time.Now. (Event times are the store's.)
	Now func() time.Time
	// Thresholds are the default liveness limits of /v1/stale and the
	// ckpt_checkpoints metrics.
	Thresholds ckpt.Thresholds
	// Alive checks an agent's recorded process for /v1/stale and the
	// metrics (process.Alive: on the server's own host only); nil checks
	// none, and no agent is seen dead before its stale threshold.
	Alive ckpt.AliveFunc
	// MaxBody bounds a request body; 0 means 1 MiB.
	MaxBody int64
	// RequestTimeout bounds a request other than a change-feed stream;
	// 0 means 30 s.
	RequestTimeout time.Duration
	// Keepalive is how often an idle change-feed stream gets a comment
	// line, so proxies and clients see the connection alive; 0 means 15 s.
	Keepalive time.Duration
	// Hosts, when not empty, are the only Host header values (without
	// port) accepted: against DNS rebinding of a server on a private
	// address. The CLI sets the loopback names for a loopback address.
	Hosts []string
	// Origins are the browser origins (scheme://host[:port]) allowed to
	// call the API; a request with any other Origin header is refused.
	Origins []string
	// MCP, when set, makes the MCP handler for a grant's view of the
	// store; the server mounts it at /mcp behind the same auth. (The
	// mcp package is wired in by the CLI: integrations do not import each
	// other.)
	MCP func(st ckpt.Store, g Grant) http.Handler
	// Collectors are more Prometheus series served at /metrics (the
	// webhooks' deliveries).
	Collectors []prometheus.Collector
	// Web, when set, is the dashboard (package web), served at / and its
	// own paths (/c/, /login, /logout, /assets/, /ui/). It signs people in
	// with its own cookies, so it is not behind the bearer check; it
	// authenticates the same tokens (see Authenticate).
	Web http.Handler
	// Feed is the process's shared change feed, one store watch for every
	// stream (pass the same hub to the dashboard); nil makes one.
	Feed *feed.Hub
	// TokenWatch ends the streams of revoked and expired tokens (pass the
	// same one to the dashboard); nil makes one over Tokens.
	TokenWatch *TokenWatch
	// Wrap, when set, wraps the handling of every request (ckpt serve's
	// OpenTelemetry request spans, package telemetry).
	Wrap func(http.Handler) http.Handler
}

// Server is the HTTP API over one store. It is an http.Handler.
type Server struct {
	store   ckpt.Store
	opts    Options
	log     *slog.Logger
	metrics *metrics
	handler http.Handler

	mcpMu sync.Mutex
	mcp   map[string]http.Handler // by token ID: a session never crosses tokens

	// stopping ends when Serve begins to stop: change-feed streams end
	// then, other requests get their grace period.
	stopping context.Context
	stop     context.CancelFunc
}

// New returns a server over store. It does not take ownership of store.
func New(store ckpt.Store, opts Options) (*Server, error) {
	if opts.Tokens == nil && !opts.Insecure {
		return nil, errors.New("server: no token store: give Options.Tokens (or Insecure for a loopback development server)")
	}
	if opts.Version == "" {
		opts.Version = "dev"
	}
	if opts.MaxBody <= 0 {
		opts.MaxBody = 1 << 20
	}
	if opts.RequestTimeout <= 0 {
		opts.RequestTimeout = 30 * time.Second
	}
	if opts.Keepalive <= 0 {
		opts.Keepalive = 15 * time.Second
	}
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	}
	if opts.Feed == nil {
		opts.Feed = feed.New(store, 0, 0)
	}
	if opts.TokenWatch == nil && opts.Tokens != nil {
		opts.TokenWatch = NewTokenWatch(opts.Tokens, 0, nil)
	}
	s := &Server{store: store, opts: opts, log: log, mcp: map[string]http.Handler{}}
	s.stopping, s.stop = context.WithCancel(context.Background())
	s.metrics = newMetrics(s)
	s.handler = s.routes()
	if opts.Wrap != nil {
		s.handler = opts.Wrap(s.handler)
	}
	return s, nil
}

func (s *Server) now() time.Time {
	if s.opts.Now != nil {
		return s.opts.Now().UTC()
	}
	return time.Now().UTC()
}

// routes builds the mux: open endpoints (health, OpenAPI), then everything
// else behind authentication.
func (s *Server) routes() http.Handler {
	api := http.NewServeMux()
	for _, rt := range s.apiRoutes() {
		api.Handle(rt.method+" "+rt.path, s.timed(rt.path, rt.h))
	}
	api.HandleFunc("GET "+httpapi.PathChanges, s.changes)
	api.Handle(httpapi.PathMetrics, s.adminOnly(promhttp.HandlerFor(s.metrics.reg, promhttp.HandlerOpts{})))
	api.HandleFunc(httpapi.PathMCP, s.serveMCP)
	api.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		s.writeError(w, r, fmt.Errorf("%w: no endpoint %s %s (the API is described at /openapi.json and in docs/api.md)", ckpt.ErrNotFound, r.Method, r.URL.Path))
	})

	root := http.NewServeMux()
	root.HandleFunc("GET "+httpapi.PathHealth, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		fmt.Fprintln(w, "ok")
	})
	root.HandleFunc("GET "+httpapi.PathReady, s.ready)
	root.HandleFunc("GET "+httpapi.PathOpenAPI, serveOpenAPI)
	root.Handle("/", s.authenticate(api))
	if s.opts.Web != nil {
		for _, p := range []string{"/{$}", "/c/", "/login", "/logout", "/assets/", "/ui/"} {
			root.Handle(p, s.opts.Web)
		}
	}
	return s.guard(root)
}

// route is one JSON endpoint of the API.
type route struct {
	method, path string
	h            func(w http.ResponseWriter, r *http.Request) error
}

// apiRoutes are the JSON endpoints; openapi.json documents each (a test
// checks), with {id...} written {id}.
func (s *Server) apiRoutes() []route {
	return []route{
		{"GET", httpapi.PathCheckpoints, s.list},
		{"GET", httpapi.PathCheckpoints + "/{id...}", s.get},
		{"DELETE", httpapi.PathCheckpoints + "/{id...}", s.delete},
		{"POST", httpapi.PathEvents + "{id...}", s.append},
		{"GET", httpapi.PathEvents + "{id...}", s.history},
		{"POST", httpapi.PathBeats + "{id...}", s.beat},
		{"POST", httpapi.PathLifecycle + "{verb}/{id...}", s.lifecycle},
		{"GET", httpapi.PathHead, s.head},
		{"POST", httpapi.PathCheck, s.check},
		{"POST", httpapi.PathRepair, s.repair},
		{"GET", httpapi.PathStale, s.stale},
		{"GET", httpapi.PathInbox, s.inbox},
		{"POST", httpapi.PathTell + "{id...}", s.tell},
		{"POST", httpapi.PathBulk, s.bulk},
		{"GET", httpapi.PathWhy + "{id...}", s.why},
		{"GET", httpapi.PathInfo, s.info},
		{"GET", httpapi.PathTokens, s.listTokens},
		{"POST", httpapi.PathTokens, s.createToken},
		{"DELETE", httpapi.PathTokens + "/{id}", s.revokeToken},
		{"GET", httpapi.PathWhoAmI, s.whoAmI},
	}
}

// ServeHTTP implements http.Handler.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.handler.ServeHTTP(w, r) }

// guard applies what every request gets: the Host and Origin checks and
// the body limit.
func (s *Server) guard(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if len(s.opts.Hosts) > 0 {
			host := r.Host
			if h, _, err := net.SplitHostPort(host); err == nil {
				host = h
			}
			host = strings.Trim(host, "[]")
			if !slices.ContainsFunc(s.opts.Hosts, func(h string) bool { return strings.EqualFold(h, host) }) {
				s.writeError(w, r, fmt.Errorf("%w: Host %q is not one this server answers to (ckpt serve --host adds one)", ckpt.ErrForbidden, r.Host))
				return
			}
		}
		if o := r.Header.Get("Origin"); o != "" && !sameOrigin(r, o) && !slices.Contains(s.opts.Origins, o) {
			s.writeError(w, r, fmt.Errorf("%w: origin %q may not call this server (ckpt serve --origin adds one)", ckpt.ErrForbidden, o))
			return
		}
		if r.Body != nil {
			r.Body = http.MaxBytesReader(w, r.Body, s.opts.MaxBody)
		}
		next.ServeHTTP(w, r)
	})
}

// sameOrigin reports whether origin names the host the request reached
// (the dashboard's own requests). The scheme is not compared: behind a
// TLS-terminating proxy the server sees http while the page is https.
func sameOrigin(r *http.Request, origin string) bool {
	u, err := url.Parse(origin)
	return err == nil && u.Host != "" && strings.EqualFold(u.Host, r.Host)
}

// timed runs an API handler under the request timeout, writes its error,
// and records its latency.
func (s *Server) timed(route string, h func(w http.ResponseWriter, r *http.Request) error) http.Handler {
	timer := &routeTimer{vec: s.metrics.requests, route: route}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		ctx, cancel := context.WithTimeout(r.Context(), s.opts.RequestTimeout)
		defer cancel()
		rw := &statusWriter{ResponseWriter: w, status: http.StatusOK}
		if err := h(rw, r.WithContext(ctx)); err != nil {
			if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
				// A client that gave up reads no answer; one that reads it
				// met the server's limit or its shutdown: try again.
				err = &serverError{fmt.Errorf("%w: the request was cut short by the server (its %v limit, or it is stopping): %v", ckpt.ErrUnavailable, s.opts.RequestTimeout, err)}
			}
			s.writeError(rw, r, err)
		}
		timer.observe(rw.status, time.Since(start))
	})
}

// statusWriter remembers the status written.
type statusWriter struct {
	http.ResponseWriter
	status int
}

func (w *statusWriter) WriteHeader(code int) {
	w.status = code
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// adminOnly lets only admin tokens through.
func (s *Server) adminOnly(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := need(r.Context(), ScopeAdmin); err != nil {
			s.writeError(w, r, err)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// ready answers 200 when the store answers a one-item listing.
func (s *Server) ready(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := context.WithTimeout(r.Context(), 5*time.Second)
	defer cancel()
	var d *ckpt.DamagedError
	if _, err := s.store.List(ctx, ckpt.ListOptions{Limit: 1}); err != nil && !errors.As(err, &d) {
		s.writeError(w, r, fmt.Errorf("%w: the store does not answer: %v", ckpt.ErrUnavailable, err))
		return
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	fmt.Fprintln(w, "ready")
}

// serveMCP hands the request to the MCP server of the request's token,
// made on first use over the token's view of the store.
func (s *Server) serveMCP(w http.ResponseWriter, r *http.Request) {
	if s.opts.MCP == nil {
		s.writeError(w, r, fmt.Errorf("%w: this server has no MCP endpoint", ckpt.ErrNotFound))
		return
	}
	g := grantOf(r.Context())
	s.mcpMu.Lock()
	h, ok := s.mcp[g.TokenID]
	if !ok {
		h = s.opts.MCP(scopedStore{Store: s.store, g: g}, g)
		s.mcp[g.TokenID] = h
	}
	s.mcpMu.Unlock()
	h.ServeHTTP(w, r)
}

// Serve serves on ln (over TLS when tlsConfig is not nil) until ctx ends,
// then shuts down gracefully: it stops accepting, ends the change-feed
// streams (their clients reconnect elsewhere or later and miss nothing),
// and waits up to grace for the requests under way before closing what is
// left. Every write acknowledged before that is durable in the store; a
// write cut off unacknowledged is retried by its client with its key.
func (s *Server) Serve(ctx context.Context, ln net.Listener, tlsConfig *tls.Config, grace time.Duration) error {
	hs := &http.Server{
		Handler:           s,
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       time.Minute,
		IdleTimeout:       2 * time.Minute,
		MaxHeaderBytes:    64 << 10,
		TLSConfig:         tlsConfig,
		ErrorLog:          slog.NewLogLogger(s.log.Handler(), slog.LevelWarn),
	}
	if tlsConfig != nil {
		ln = tls.NewListener(ln, tlsConfig)
	}
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	s.stop()
	shut, cancel := context.WithTimeout(context.Background(), grace)
	defer cancel()
	if err := hs.Shutdown(shut); err != nil {
		hs.Close()
	}
	if err := <-errc; !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}
