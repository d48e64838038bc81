package servercli

import (
	"cmp"
	"context"
	"crypto/tls"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"

	ckpt "github.com/ckpt-dev/ckpt"
	"github.com/ckpt-dev/ckpt/internal/cli"
	"github.com/ckpt-dev/ckpt/internal/cmdutil"
	"github.com/ckpt-dev/ckpt/internal/feed"
	"github.com/ckpt-dev/ckpt/internal/mcp"
	"github.com/ckpt-dev/ckpt/internal/process"
	"github.com/ckpt-dev/ckpt/internal/server"
	"github.com/ckpt-dev/ckpt/internal/web"
	"github.com/ckpt-dev/ckpt/pgstore"
)

// DefaultServeAddr is where ckpt serve listens when given no --addr: a
// loopback address, reachable from the network only when asked.
const DefaultServeAddr = "127.0.0.1:8470"

// ServeOptions are the inputs of `ckpt serve`.
type ServeOptions struct {
	IO        cmdutil.IOStreams
	Now       func() time.Time
	Interrupt func(ctx context.Context) (context.Context, context.CancelFunc)
	// OpenLocal opens the local file store (--store, CKPT_STORE, or found).
	OpenLocal func() (ckpt.Store, string, error)
	// Mirrors keeps the served store's seed-format mirrors current until
	// its context ends (cli.KeepMirrors: writes through the server
	// followed, the seed escalations, the list re-read on change); nil:
	// none.
	Mirrors  func(ckpt.Store) func(ctx context.Context)
	Addr     string
	PG       string // --pg: a PostgreSQL URL instead of the local store
	Tokens   string // --tokens: the token file; default: in the store dir, or the config dir for --pg
	TLSCert  string
	TLSKey   string
	Insecure bool     // --insecure-dev: no tokens, loopback only
	Hosts    []string // --host: more Host names to answer to
	Origins  []string // --origin: browser origins allowed to call the API
	Grace    time.Duration
	// Webhooks are --webhook URLs (with #options, package webhook);
	// WebhookSecret the file of the secret that signs their bodies.
	Webhooks      []string
	WebhookSecret string
	// Ready, when set, is called with the bound address once listening.
	Ready func(addr net.Addr)
	// Getenv reads the OTEL_* variables that switch trace export on.
	Getenv func(string) string
	// OTLP is --otlp-endpoint: export traces there (OTLP over HTTP)
	// whatever the variables say.
	OTLP string

	storeDir string // the local store's directory, set by openBackend
}

func newServeCmd(f *cmdutil.Factory) *cobra.Command {
	o := &ServeOptions{IO: f.Env.IOStreams, Interrupt: f.Env.Interrupt, Getenv: f.Env.Var}
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Serve the store over HTTP to agents on other machines (API, change feed, MCP, dashboard)",
		Long: `Serve a store over HTTP so that agents on any machine use it with one URL
and a token: the JSON API (docs/api.md, /openapi.json), the change feed as
server-sent events, the MCP server at /mcp, the dashboard at /, Prometheus
metrics at /metrics, and /healthz and /readyz. The server keeps no state of
its own: run several over one PostgreSQL database.

The store is the local one (--store, CKPT_STORE, else the nearest .ckpt/),
or PostgreSQL with --pg URL. On a machine that uses the server, set
CKPT_STORE=https://HOST:PORT and CKPT_TOKEN=TOKEN and every ckpt command,
hook and MCP server works against it.

Every request needs a bearer token (ckpt token create). The first start
with no tokens creates an admin token and prints it once. Tokens live in
tokens.json inside the store directory; for --pg in the database (table
ckpt_tokens), so every replica sees a token created or revoked through any
of them at once, or in --tokens FILE if given.

With seed-format mirrors configured (ckpt mirror add; the store
directory's mirrors.json, or $CKPT_MIRRORS), the server writes the seed
files of every change, and the seeds' escalations every minute; it reads
the list again when it changes.

A bare port listens on 127.0.0.1. Serve TLS with --tls-cert and --tls-key,
or put the server behind a proxy that does. --insecure-dev serves without
tokens, on a loopback address only, for development.`,
		Example: `  ckpt serve
  ckpt serve --addr 0.0.0.0:8470 --tls-cert cert.pem --tls-key key.pem
  ckpt serve --pg postgres://ckpt@db/ckpt --tokens /etc/ckpt/tokens.json
  ckpt serve --addr 8470 --insecure-dev`,
		Args: cmdutil.ExactArgs(0, "no arguments"),
	}
	cmd.RunE = f.RunE(func(ctx context.Context, args []string) error {
		o.Now = f.Now
		o.OpenLocal = func() (ckpt.Store, string, error) {
			st, err := cli.OpenFileStore(f)
			if err != nil {
				return nil, "", err
			}
			return st, st.Dir(), nil
		}
		o.Mirrors = func(st ckpt.Store) func(context.Context) { return cli.KeepMirrors(f, st) }
		return runServe(ctx, o)
	})
	fl := cmd.Flags()
	fl.StringVar(&o.Addr, "addr", DefaultServeAddr, "listen on `ADDR` (HOST:PORT, or a port on 127.0.0.1)")
	fl.StringVar(&o.PG, "pg", "", "serve the PostgreSQL store at `URL` (postgres://…) instead of the local one")
	fl.StringVar(&o.Tokens, "tokens", "", "the token `FILE` (default: tokens.json in the store directory; for --pg, the database's ckpt_tokens table)")
	fl.StringVar(&o.TLSCert, "tls-cert", "", "serve TLS with this certificate `FILE` (PEM; with --tls-key)")
	fl.StringVar(&o.TLSKey, "tls-key", "", "the TLS private key `FILE` (PEM)")
	fl.BoolVar(&o.Insecure, "insecure-dev", false, "serve without tokens (every caller is admin); refused unless the address is loopback")
	fl.StringSliceVar(&o.Hosts, "host", nil, "also answer to this Host `NAME` (repeatable; a loopback server answers only to loopback names by default)")
	fl.StringSliceVar(&o.Origins, "origin", nil, "allow browser calls from this `ORIGIN` (https://host[:port]; repeatable)")
	fl.DurationVar(&o.Grace, "grace", 10*time.Second, "on stop, wait this long for requests under way")
	fl.StringArrayVar(&o.Webhooks, "webhook", nil, "POST each transition into waiting, blocked, dead, stale, failed or done to `URL` (repeatable; URL#state=waiting,dead&prefix=kai-7/&format=slack filters and picks Slack's body)")
	fl.StringVar(&o.WebhookSecret, "webhook-secret", "", "sign webhook bodies with the secret in `FILE` (X-Ckpt-Signature: sha256=HMAC-SHA256 of the body)")
	fl.StringVar(&o.OTLP, "otlp-endpoint", "", "export the store's work as OpenTelemetry traces to this OTLP/HTTP `URL` (default: $OTEL_EXPORTER_OTLP_ENDPOINT; docs/telemetry.md)")
	return cmd
}

func runServe(ctx context.Context, o *ServeOptions) error {
	addr, err := mcp.ListenAddr(o.Addr)
	if err != nil {
		return cmdutil.UsageError(err)
	}
	host, _, _ := net.SplitHostPort(addr)
	if o.Insecure && !isLoopback(host) {
		return cmdutil.Usagef("--insecure-dev serves without tokens, so it listens only on a loopback address, not %s: use --addr 127.0.0.1:PORT, or create tokens (ckpt token create) and drop --insecure-dev", addr)
	}
	if (o.TLSCert == "") != (o.TLSKey == "") {
		return cmdutil.Usagef("give both --tls-cert and --tls-key, or neither")
	}
	st, tokensPath, err := o.openBackend(ctx)
	if err != nil {
		return err
	}
	defer st.Close()
	sopts, closeTokens, err := o.serverOptions(ctx, st, tokensPath, host)
	if err != nil {
		return err
	}
	defer closeTokens()
	notifier, counts, closeMemory, err := o.webhooks(ctx, st)
	if err != nil {
		return err
	}
	defer closeMemory()
	if counts != nil {
		sopts.Collectors = append(sopts.Collectors, counts)
	}
	stopTelemetry, err := o.startTelemetry(ctx, st, &sopts)
	if err != nil {
		return err
	}
	defer stopTelemetry()
	srv, err := server.New(st, sopts)
	if err != nil {
		return err
	}
	var tlsConfig *tls.Config
	if o.TLSCert != "" {
		cert, err := tls.LoadX509KeyPair(o.TLSCert, o.TLSKey)
		if err != nil {
			return fmt.Errorf("%w: TLS certificate: %v", ckpt.ErrInvalid, err)
		}
		tlsConfig = &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("listening on %s: %w (is another server there? pick another --addr)", addr, err)
	}
	scheme := "http"
	if tlsConfig != nil {
		scheme = "https"
	} else if !isLoopback(host) {
		cmdutil.PrintWarning(o.IO.ErrOut, fmt.Sprintf("serving plain HTTP on %s: tokens cross the network in clear unless a TLS proxy is in front (or use --tls-cert and --tls-key)", addr))
	}
	url, all := serveURL(scheme, ln.Addr(), o.Hosts)
	if all {
		fmt.Fprintf(o.IO.ErrOut, "ckpt serve: listening on all interfaces (%s): other machines use this machine's name or address with the port\n", ln.Addr())
	}
	fmt.Fprintf(o.IO.ErrOut, "ckpt serve: serving %s (API /v1, dashboard /, MCP /mcp, metrics /metrics; Ctrl-C stops)\n", url)
	if o.Ready != nil {
		o.Ready(ln.Addr())
	}
	if o.Interrupt != nil {
		var stop context.CancelFunc
		ctx, stop = o.Interrupt(ctx)
		defer stop()
	}
	if o.Mirrors != nil {
		keep := o.Mirrors(st)
		keepCtx, stopKeep := context.WithCancel(ctx)
		done := make(chan struct{})
		go func() { defer close(done); keep(keepCtx) }()
		defer func() { stopKeep(); <-done }() // no file left half-written
	}
	hookCtx, stopHooks := context.WithCancel(ctx)
	wait := runWebhooks(hookCtx, notifier)
	defer wait()
	defer stopHooks()
	return srv.Serve(ctx, ln, tlsConfig, o.Grace)
}

// serveURL is the URL to print for a server listening on a: on all
// interfaces (0.0.0.0, [::]) the address is no URL a browser or a client
// can use, so it names the first --host, else localhost, and all is true.
func serveURL(scheme string, a net.Addr, hosts []string) (url string, all bool) {
	host, port, err := net.SplitHostPort(a.String())
	if err != nil {
		return scheme + "://" + a.String(), false
	}
	if ip := net.ParseIP(host); ip != nil && ip.IsUnspecified() {
		host, all = "localhost", true
		if len(hosts) > 0 {
			host = hosts[0]
		}
	}
	return scheme + "://" + net.JoinHostPort(host, port), all
}

// openBackend opens the store to serve and says where its tokens are.
func (o *ServeOptions) openBackend(ctx context.Context) (ckpt.Store, string, error) {
	if o.PG != "" {
		if !pgstore.IsURL(o.PG) {
			return nil, "", cmdutil.Usagef("--pg %q is not a PostgreSQL URL: use postgres://USER@HOST/DB", o.PG)
		}
		st, err := pgstore.Open(ctx, o.PG)
		if err != nil {
			return nil, "", err
		}
		// "": the tokens live in the database, seen by every replica.
		return st, o.Tokens, nil
	}
	st, dir, err := o.OpenLocal()
	if err != nil {
		return nil, "", err
	}
	o.storeDir = dir
	path := o.Tokens
	if path == "" {
		path = filepath.Join(dir, server.TokenFileName)
	}
	return st, path, nil
}

// openTokens opens the token store: the file at path, or for a server
// over PostgreSQL with no --tokens (path ""), the database's table. close
// releases it.
func (o *ServeOptions) openTokens(ctx context.Context, path string) (ts server.TokenStore, where string, close func(), err error) {
	if path == "" && o.PG != "" {
		pt, err := server.OpenPGTokens(ctx, o.PG)
		if err != nil {
			return nil, "", nil, err
		}
		return pt, pt.Where(), pt.Close, nil
	}
	ft, err := server.OpenFileTokens(path)
	if err != nil {
		return nil, "", nil, err
	}
	return ft, path, func() {}, nil
}

// serverOptions builds the server's options: tokens (made on first start),
// Host names, the MCP mount and the dashboard; closeTokens releases the
// token store.
func (o *ServeOptions) serverOptions(ctx context.Context, st ckpt.Store, tokensPath, host string) (opts server.Options, closeTokens func(), err error) {
	logger := slog.New(slog.NewTextHandler(o.IO.ErrOut, &slog.HandlerOptions{Level: slog.LevelWarn}))
	opts = server.Options{Insecure: o.Insecure, Version: serverVersion(), Logger: logger, Now: o.Now, Origins: o.Origins, Alive: process.Alive}
	closeTokens = func() {}
	if isLoopback(host) {
		opts.Hosts = append([]string{"127.0.0.1", "localhost", "::1"}, o.Hosts...)
	} else if len(o.Hosts) > 0 {
		opts.Hosts = o.Hosts
	}
	var authenticate func(ctx context.Context, token string) (web.Principal, error)
	if !o.Insecure {
		tokens, where, closeTS, err := o.openTokens(ctx, tokensPath)
		if err != nil {
			return opts, nil, err
		}
		closeTokens = closeTS
		bearer, err := server.Bootstrap(ctx, tokens, o.Now())
		if err != nil {
			closeTS()
			return opts, nil, err
		}
		if bearer != "" {
			fmt.Fprintf(o.IO.Out, "created the first admin token (shown only now; keep it, e.g. in a password manager):\n%s\n", bearer)
			fmt.Fprintf(o.IO.ErrOut, "ckpt serve: tokens are kept, hashed, in %s; create one per agent with ckpt token create\n", where)
		}
		opts.Tokens = tokens
		opts.TokenWatch = server.NewTokenWatch(tokens, 0, nil)
		authenticate = func(ctx context.Context, token string) (web.Principal, error) {
			t, err := server.Authenticate(ctx, tokens, token, o.Now())
			if err != nil {
				return web.Principal{}, web.ErrBadToken
			}
			g := t.Grant()
			name := cmp.Or(t.Agent, "token "+t.ID) + " (" + string(t.Scope) + ")"
			return web.Principal{Name: name, Write: t.Scope.Allows(server.ScopeWrite), Prefix: g.Prefix, ReadPrefix: g.ReadPrefix,
				Agent: t.Agent, Store: server.StoreFor(st, g),
				Hold: func(ctx context.Context) (context.Context, context.CancelFunc) { return opts.TokenWatch.Hold(ctx, g) }}, nil
		}
	}
	opts.MCP = func(scoped ckpt.Store, g server.Grant) http.Handler {
		return mcp.HTTPHandler(mcp.NewServer(scoped, mcp.Options{Now: o.Now, Version: serverVersion(), Agent: g.Agent, Logger: logger, Prefix: g.Prefix}))
	}
	opts.Feed = feed.New(st, 0, 0) // one store watch for the API's streams and the dashboard's
	opts.Web = web.New(web.Options{Store: st, Feed: opts.Feed, Authenticate: authenticate, Anonymous: web.Principal{Name: "developer", Write: true},
		Secure: o.TLSCert != "", Alive: process.Alive})
	return opts, closeTokens, nil
}
