// Package remote is a ckpt.Store over the HTTP API of ckpt serve (package
// server), so that every ckpt command, hook, MCP server and monitor works
// the same against a server as against a local store:
//
//	st, err := remote.Open(ctx, "https://ckpt.example:8080", remote.Options{Token: os.Getenv("CKPT_TOKEN")})
//
// It passes the conformance suite (storetest) against servers over every
// backend. Every write is exactly-once across retries: an append without an
// idempotency key gets one from the client (so the key is in the stored
// event), and a call that fails in transport (refused, reset, timed out)
// or with a retryable error (ckpt.ErrUnavailable: a restarting server) is
// retried with the same key, a bounded number of times with backoff.
// Errors come back as the root package's: errors.Is(err, ckpt.ErrConflict)
// and errors.As(err, &*ckpt.ConflictError) work across the wire.
//
// A store that must not lose a write while the server is away wraps this
// one in a Spool (see NewSpool).
package remote

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/ckpt-dev/ckpt"
	"github.com/ckpt-dev/ckpt/internal/backoff"
	"github.com/ckpt-dev/ckpt/internal/httpapi"
	"github.com/ckpt-dev/ckpt/internal/spool"
)

// Options configure a client. The zero value (plus a Token) is usable.
type Options struct {
	// Token is the bearer token (CKPT_TOKEN).
	Token string
	// HTTPClient makes the requests; nil means one with sane connection
	// limits and no overall timeout (Timeout bounds each call).
	HTTPClient *http.Client
	// Timeout bounds one attempt of a call; 0 means 30 s. The change feed
	// is not bounded; it reconnects when a stream is silent for three
	// times the server's keepalive.
	Timeout time.Duration
	// Attempts bounds the tries of one call that fails in transport or
	// with a retryable error; 0 means 6, 1 means no retry.
	Attempts int
	// Backoff is the first pause between tries, doubled each time up to
	// 2 s, with jitter; 0 means 50 ms.
	Backoff time.Duration
	// AllowHTTP permits plain http:// to a host that is not loopback
	// (behind a TLS-terminating proxy on a private network, say). Without
	// it only loopback hosts may use http://.
	AllowHTTP bool
	// StreamIdle is how long a change-feed stream may be silent before
	// the client reconnects; 0 means 45 s (three keepalives).
	StreamIdle time.Duration
}

// Store is the client of one server. It is safe for concurrent use.
type Store struct {
	base *url.URL
	opts Options
	hc   *http.Client
}

var (
	_ ckpt.Store           = (*Store)(nil)
	_ ckpt.Watcher         = (*Store)(nil)
	_ ckpt.Checker         = (*Store)(nil)
	_ ckpt.Repairer        = (*Store)(nil)
	_ ckpt.LifecycleRunner = (*Store)(nil)
)

// IsURL reports whether s names a server (http:// or https://) rather than
// a store directory.
func IsURL(s string) bool { return httpapi.IsURL(s) }

// New returns a client of the server at rawURL (https://host[:port][/path];
// http:// for a loopback host). It does not contact the server.
func New(rawURL string, opts Options) (*Store, error) {
	u, err := url.Parse(rawURL)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		return nil, fmt.Errorf("%w: %q is not a server URL: use https://HOST:PORT (or http://127.0.0.1:PORT for a local server)", ckpt.ErrInvalid, rawURL)
	}
	if u.Scheme == "http" && !opts.AllowHTTP && !isLoopback(u.Hostname()) {
		return nil, fmt.Errorf("%w: %s would send the token in clear text: use https://, or http:// only to a loopback address", ckpt.ErrInvalid, rawURL)
	}
	if u.RawQuery != "" || u.Fragment != "" || u.User != nil {
		return nil, fmt.Errorf("%w: server URL %q: give scheme, host, port and an optional path only (the token goes in CKPT_TOKEN)", ckpt.ErrInvalid, rawURL)
	}
	u.Path = strings.TrimSuffix(u.Path, "/")
	if opts.Timeout <= 0 {
		opts.Timeout = 30 * time.Second
	}
	if opts.Attempts <= 0 {
		opts.Attempts = 6
	}
	if opts.Backoff <= 0 {
		opts.Backoff = 50 * time.Millisecond
	}
	if opts.StreamIdle <= 0 {
		opts.StreamIdle = 45 * time.Second
	}
	hc := opts.HTTPClient
	if hc == nil {
		tr := http.DefaultTransport.(*http.Transport).Clone()
		tr.MaxIdleConnsPerHost = 64
		hc = &http.Client{Transport: tr}
	}
	return &Store{base: u, opts: opts, hc: hc}, nil
}

// Open returns a client of the server at rawURL that offers exactly what
// the server's store offers (ckpt.CapabilitiesOf): it asks the server
// once. A server that cannot be reached fails with ckpt.ErrUnavailable.
func Open(ctx context.Context, rawURL string, opts Options) (ckpt.Store, error) {
	s, err := New(rawURL, opts)
	if err != nil {
		return nil, err
	}
	info, err := s.Info(ctx)
	if err != nil {
		return nil, err
	}
	return s.Limit(info.Capabilities), nil
}

// Limit returns s as a store offering only caps.
func (s *Store) Limit(caps ckpt.Capabilities) ckpt.Store {
	if caps.Check {
		return s
	}
	return plain{s}
}

// URL returns the server's URL.
func (s *Store) URL() string { return s.base.String() }

func isLoopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// call is one API call.
type call struct {
	method string
	path   string
	query  url.Values
	header http.Header
	body   any // JSON-encoded when not nil
	out    any // decoded from a 2xx answer when not nil
	// onRetry, when set, may turn the error of a retried attempt into
	// success (a retried delete that finds nothing).
	onRetry func(err error) error
}

// do runs c, retrying transport failures and retryable errors.
func (s *Store) do(ctx context.Context, c call) (*http.Response, error) {
	var body []byte
	if c.body != nil {
		var err error
		if e, ok := c.body.(bodyEncoder); ok {
			body, err = e.encodeBody()
		} else {
			body, err = json.Marshal(c.body)
		}
		if err != nil {
			return nil, fmt.Errorf("%w: encoding the request: %v", ckpt.ErrInvalid, err)
		}
	}
	attempts := s.opts.Attempts
	if n, ok := spool.Attempts(ctx); ok {
		attempts = n
	}
	var err error
	for attempt := 0; attempt < attempts; attempt++ {
		if attempt > 0 {
			if werr := s.backoff().Wait(ctx, attempt); werr != nil {
				return nil, werr
			}
			if c.header.Get(httpapi.HeaderKeyOrigin) == httpapi.KeyOriginNew {
				// The lost attempt may have applied it.
				c.header = c.header.Clone()
				c.header.Set(httpapi.HeaderKeyOrigin, httpapi.KeyOriginResent)
			}
		}
		var resp *http.Response
		resp, err = s.attempt(ctx, c, body)
		if err == nil {
			return resp, nil
		}
		if attempt > 0 && c.onRetry != nil {
			if err = c.onRetry(err); err == nil {
				return nil, nil
			}
		}
		if ctx.Err() != nil || !ckpt.Retryable(err) {
			return nil, err
		}
	}
	return nil, err
}

// attempt makes one request and reads its answer into c.out.
func (s *Store) attempt(caller context.Context, c call, body []byte) (*http.Response, error) {
	// The attempt's own time limit running out is no answer, retried like
	// a broken connection; only the caller's context ending stops the call.
	ctx, cancel := context.WithTimeout(caller, s.opts.Timeout)
	defer cancel()
	req, err := s.request(ctx, c.method, c.path, c.query, body)
	if err != nil {
		return nil, err
	}
	for k, v := range c.header {
		req.Header[k] = v
	}
	resp, err := s.hc.Do(req)
	if err != nil {
		return nil, transportError(caller, err)
	}
	defer resp.Body.Close()
	// The answer is read into a buffer kept between calls: every decoder
	// below copies what it keeps.
	buf := answerBufs.Get().(*[]byte)
	defer putAnswerBuf(buf)
	data, err := readAnswer((*buf)[:0], resp)
	*buf = data
	if err != nil {
		return nil, transportError(caller, err)
	}
	if resp.StatusCode >= 400 {
		return nil, httpapi.DecodeError(resp.StatusCode, data)
	}
	if c.out != nil && resp.StatusCode != http.StatusNoContent {
		decode := func() error { return json.Unmarshal(data, c.out) }
		if d, ok := c.out.(answerDecoder); ok {
			decode = func() error { return d.decodeAnswer(data) }
		}
		if err := decode(); err != nil {
			return nil, fmt.Errorf("%w: the server's answer to %s %s is not the API's JSON: %v", ckpt.ErrUnavailable, c.method, c.path, err)
		}
	}
	return resp, nil
}

func (s *Store) request(ctx context.Context, method, path string, query url.Values, body []byte) (*http.Request, error) {
	u := *s.base
	u.Path = s.base.Path + path
	u.RawQuery = query.Encode()
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, u.String(), rd)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ckpt.ErrInvalid, err)
	}
	if s.opts.Token != "" {
		req.Header.Set("Authorization", "Bearer "+s.opts.Token)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("Accept", "application/json")
	return req, nil
}

// transportError is a request that got no answer: unavailable (retryable)
// unless the caller's context ended, or the server's certificate is not
// trusted (retrying cannot help, and no token was sent).
func transportError(ctx context.Context, err error) error {
	if ctx.Err() != nil && errors.Is(err, ctx.Err()) {
		return ctx.Err()
	}
	var cv *tls.CertificateVerificationError
	if errors.As(err, &cv) {
		return fmt.Errorf("the server's TLS certificate is not trusted here: %w (for a private CA or a self-signed certificate, point SSL_CERT_FILE at it)", err)
	}
	var ue *url.Error
	if errors.As(err, &ue) {
		// url.Error's text repeats the method and the whole URL, query
		// included; a person needs the server and why it did not answer.
		where := ue.URL
		if u, perr := url.Parse(ue.URL); perr == nil {
			where = u.Scheme + "://" + u.Host
		}
		return &unreachableError{where: where, reason: dialReason(ue.Err), err: err}
	}
	return fmt.Errorf("%w: %w", ckpt.ErrUnavailable, err)
}

// dialReason is why a request got no answer, in a few words.
func dialReason(err error) string {
	var op *net.OpError
	switch {
	case errors.Is(err, syscall.ECONNREFUSED):
		return "connection refused"
	case errors.Is(err, os.ErrDeadlineExceeded):
		return "timed out"
	case errors.As(err, &op) && op.Err != nil:
		return op.Err.Error()
	}
	return err.Error()
}

// unreachableError is a server that did not answer: ckpt.ErrUnavailable
// (retryable) with the transport's error in its chain, worded for a person.
type unreachableError struct {
	where, reason string
	err           error
}

func (e *unreachableError) Error() string {
	return ckpt.ErrUnavailable.Error() + ": cannot reach ckpt serve at " + e.where + " (" + e.reason + "): is the server running there, and is the URL in --store or CKPT_STORE right?"
}

func (e *unreachableError) Unwrap() []error { return []error{ckpt.ErrUnavailable, e.err} }

// backoff is the pause between tries: Backoff doubled each time up to
// 2 s, with jitter (package backoff, shared with the feed's reconnects).
func (s *Store) backoff() backoff.Policy {
	return backoff.Policy{First: s.opts.Backoff, Max: 2 * time.Second}
}

// NewKey returns a fresh idempotency key.
func NewKey() string { return spool.NewKey() }

func idPath(prefix, id string) (string, error) {
	if err := ckpt.ValidateID(id); err != nil {
		return "", err
	}
	return prefix + id, nil
}

// Append implements ckpt.Store. An event without a key gets one, so that
// a retry after a lost answer replays instead of appending twice. A key
// made for this call (that one, or the caller's with ckpt.KeyNew) goes as
// new (Ckpt-Key-Origin), so that the server's store need not look it up
// or index it, and its retries as resent.
func (s *Store) Append(ctx context.Context, id string, e ckpt.Event, opts ckpt.AppendOptions) (ckpt.AppendResult, error) {
	path, err := idPath(httpapi.PathEvents, id)
	if err != nil {
		return ckpt.AppendResult{}, err
	}
	if opts.IfRev < 0 {
		return ckpt.AppendResult{}, fmt.Errorf("%w: if-rev %d is negative: give the revision you read, or 0 for none", ckpt.ErrInvalid, opts.IfRev)
	}
	if e.Key == "" {
		e.Key, opts.KeyOrigin = NewKey(), ckpt.KeyNew
	}
	h := http.Header{}
	switch opts.KeyOrigin {
	case ckpt.KeyNew:
		h.Set(httpapi.HeaderKeyOrigin, httpapi.KeyOriginNew)
	case ckpt.KeyResent:
		h.Set(httpapi.HeaderKeyOrigin, httpapi.KeyOriginResent)
	}
	if opts.IfRev > 0 {
		h.Set(httpapi.HeaderIfMatch, strconv.Quote(strconv.FormatInt(opts.IfRev, 10)))
	}
	if opts.AsCheckpointAgent {
		h.Set(httpapi.HeaderAsAgent, "true")
	}
	minimal := withoutState(ctx)
	if minimal {
		h.Set("Prefer", "return=minimal")
	}
	var out appendAnswer
	if _, err := s.do(ctx, call{method: http.MethodPost, path: path, header: h, body: eventBody(httpapi.WireEvent(e)), out: &out}); err != nil {
		return ckpt.AppendResult{}, err
	}
	if out.State == nil && !minimal {
		return ckpt.AppendResult{}, fmt.Errorf("%w: the server's append answer has no state", ckpt.ErrUnavailable)
	}
	return ckpt.AppendResult{State: out.State, Event: out.Event.Store(), Replayed: out.Replayed, Warnings: out.Warnings}, nil
}

// Get implements ckpt.Store.
func (s *Store) Get(ctx context.Context, id string, rev int64) (*ckpt.Checkpoint, error) {
	path, err := idPath(httpapi.PathCheckpoints+"/", id)
	if err != nil {
		return nil, err
	}
	if rev < 0 {
		return nil, fmt.Errorf("%w: revision %d is negative: give 0 for the latest or a revision from ckpt log %s", ckpt.ErrInvalid, rev, id)
	}
	q := url.Values{}
	if rev > 0 {
		q.Set("rev", strconv.FormatInt(rev, 10))
	}
	var c ckpt.Checkpoint
	if _, err := s.do(ctx, call{method: http.MethodGet, path: path, query: q, out: &c}); err != nil {
		return nil, err
	}
	return &c, nil
}

// History implements ckpt.Store.
func (s *Store) History(ctx context.Context, id string, from int64, limit int) ([]ckpt.Event, error) {
	path, err := idPath(httpapi.PathEvents, id)
	if err != nil {
		return nil, err
	}
	q := url.Values{}
	q.Set("from", strconv.FormatInt(from, 10))
	if limit > 0 {
		q.Set("limit", strconv.Itoa(limit))
	}
	var out struct {
		Events []httpapi.Event `json:"events"`
	}
	if _, err := s.do(ctx, call{method: http.MethodGet, path: path, query: q, out: &out}); err != nil {
		return nil, err
	}
	events := make([]ckpt.Event, len(out.Events))
	for i, e := range out.Events {
		events[i] = e.Store()
	}
	return events, nil
}

// List implements ckpt.Store. The server pages by at most
// ckpt.MaxPageSize; a larger Limit, or 0 (all), is filled from as many
// server pages as it takes.
func (s *Store) List(ctx context.Context, opts ckpt.ListOptions) (ckpt.Page, error) {
	q := filterQuery(opts.Filter)
	page := ckpt.Page{Items: []ckpt.Summary{}}
	var damaged *ckpt.DamagedError
	after := opts.After
	for {
		want := ckpt.MaxPageSize
		if opts.Limit > 0 {
			want = min(want, opts.Limit-len(page.Items))
		}
		q.Set("limit", strconv.Itoa(want))
		q.Set("after", after)
		var p httpapi.Page
		if _, err := s.do(ctx, call{method: http.MethodGet, path: httpapi.PathCheckpoints, query: q, out: &p}); err != nil {
			return ckpt.Page{}, err
		}
		page.Items = append(page.Items, p.Items...)
		if p.Damaged != nil {
			if damaged == nil {
				damaged = &ckpt.DamagedError{Err: &httpapi.RemoteError{Code: p.Damaged.Code, Message: p.Damaged.Message}}
			}
			damaged.IDs = append(damaged.IDs, p.Damaged.IDs...)
		}
		page.Next, after = p.Next, p.Next
		if p.Next == "" || (opts.Limit > 0 && len(page.Items) >= opts.Limit) {
			break
		}
	}
	if damaged != nil {
		return page, damaged
	}
	return page, nil
}

// filterQuery is f as the listing's query parameters.
func filterQuery(f ckpt.Filter) url.Values {
	q := url.Values{}
	set := func(k, v string) {
		if v != "" {
			q.Set(k, v)
		}
	}
	set("agent", f.Agent)
	set("parent", f.Parent)
	set("label", f.Label)
	set("prefix", f.Prefix)
	for _, st := range f.Status {
		q.Add("status", string(st))
	}
	if f.IncludeArchived {
		q.Set("archived", "true")
	}
	if !f.UpdatedSince.IsZero() {
		q.Set("updated_since", f.UpdatedSince.UTC().Format(time.RFC3339Nano))
	}
	if !f.SeenBefore.IsZero() {
		q.Set("seen_before", f.SeenBefore.UTC().Format(time.RFC3339Nano))
	}
	return q
}

// Beat implements ckpt.Store. A retried beat is harmless: beats are
// monotonic.
func (s *Store) Beat(ctx context.Context, id string, sig ckpt.Signal) error {
	path, err := idPath(httpapi.PathBeats, id)
	if err != nil {
		return err
	}
	_, err = s.do(ctx, call{method: http.MethodPost, path: path, body: httpapi.BeatOf(sig)})
	return err
}

// Delete implements ckpt.Store. A delete retried after a lost answer that
// finds nothing to delete counts as done.
func (s *Store) Delete(ctx context.Context, id string) error {
	path, err := idPath(httpapi.PathCheckpoints+"/", id)
	if err != nil {
		return err
	}
	_, err = s.do(ctx, call{method: http.MethodDelete, path: path, onRetry: func(err error) error {
		if errors.Is(err, ckpt.ErrNotFound) {
			return nil
		}
		return err
	}})
	return err
}

// Close releases idle connections.
func (s *Store) Close() error {
	s.hc.CloseIdleConnections()
	return nil
}

// Info returns the server's version and capabilities.
func (s *Store) Info(ctx context.Context) (httpapi.Info, error) {
	var info httpapi.Info
	_, err := s.do(ctx, call{method: http.MethodGet, path: httpapi.PathInfo, out: &info})
	return info, err
}

// Check implements ckpt.Checker: the server's store checks itself.
func (s *Store) Check(ctx context.Context, ids []string) (*ckpt.Report, error) {
	var rep ckpt.Report
	if _, err := s.do(ctx, call{method: http.MethodPost, path: httpapi.PathCheck, body: httpapi.Check{IDs: ids}, out: &rep}); err != nil {
		return nil, err
	}
	return &rep, nil
}

// Repair implements ckpt.Repairer: the server's store repairs itself. It
// needs an admin token: repair rewrites stored data.
func (s *Store) Repair(ctx context.Context, ids []string) (*ckpt.Report, error) {
	var rep ckpt.Report
	if _, err := s.do(ctx, call{method: http.MethodPost, path: httpapi.PathRepair, body: httpapi.Check{IDs: ids}, out: &rep}); err != nil {
		return nil, err
	}
	return &rep, nil
}
