// Package web is ckpt's dashboard: a live view of every checkpoint in a
// store, and the few actions a person takes on what they see (take over,
// mark abandoned, restore, add a note, clear a blocker). The assets are
// embedded: no build step, no CDN, it works offline.
//
// The dashboard talks only to its own JSON endpoints under /ui/api/, over
// a ckpt.Store; every action is the same library call the CLI makes. It
// updates from the store's change feed (ckpt.Watcher) by server-sent events.
//
// Sign-in: a person pastes a token; Options.Authenticate turns it into a
// Principal. The token is kept in an HttpOnly, SameSite=Strict cookie, and
// every state-changing request also carries a per-session CSRF value from a
// second cookie in a header, and a same-origin Origin.
package web

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"embed"
	"encoding/hex"
	"errors"
	"io/fs"
	"net/http"
	"net/url"
	"strings"
	"time"
	"unicode"

	"github.com/ckpt-dev/ckpt"
	"github.com/ckpt-dev/ckpt/internal/feed"
)

//go:embed assets
var assets embed.FS

// Principal is who a request acts for.
type Principal struct {
	Name   string // shown in the page ("signed in as")
	Write  bool   // may take the actions; a read-only principal sees none
	Prefix string // acts only on checkpoints under this path prefix ("team-a" is team-a/…)
	// ReadPrefix limits what the principal sees to Prefix too: the
	// overview, the checkpoints and the change feed.
	ReadPrefix bool
	Agent      string // the actor recorded for its actions; "" means "dashboard:" + Name
	// Store is the store as the principal may write it (its token's agent
	// and prefix applied to every event, as the API does); nil means
	// Options.Store.
	Store ckpt.Store
	// Hold, when set, returns a context that ends when the principal's
	// token is revoked or expires, with that as its cause: the page's event
	// stream ends with it.
	Hold func(ctx context.Context) (context.Context, context.CancelFunc)
}

// actor is the actor recorded for p's actions.
func (p Principal) actor() ckpt.Actor {
	if p.Agent != "" {
		return ckpt.Actor{Agent: p.Agent}
	}
	return ckpt.Actor{Agent: "dashboard:" + p.Name}
}

// may reports whether p may act on checkpoint id.
func (p Principal) may(id string) bool {
	return p.Write && ckpt.UnderPrefix(id, p.Prefix)
}

// mayRead reports whether p sees checkpoint id.
func (p Principal) mayRead(id string) bool {
	return !p.ReadPrefix || ckpt.UnderPrefix(id, p.Prefix)
}

// store returns the store p writes through.
func (h *Handler) store(p Principal) ckpt.Store {
	if p.Store != nil {
		return p.Store
	}
	return h.opts.Store
}

// ErrBadToken is what Authenticate returns for a token it does not accept.
var ErrBadToken = errors.New("token not accepted")

// Options configure the dashboard.
type Options struct {
	Store ckpt.Store
	// Feed is the server's shared change feed (one store watch for the
	// API's streams and the pages); nil makes one over Store for the
	// dashboard alone.
	Feed *feed.Hub
	// Authenticate checks a token. Nil means no sign-in at all: every
	// visitor acts as Anonymous (a loopback development server).
	Authenticate func(ctx context.Context, token string) (Principal, error)
	// Anonymous is the principal of every request when Authenticate is nil.
	Anonymous Principal
	// Secure marks cookies Secure (the server speaks TLS, or sits behind a
	// proxy that does).
	Secure bool
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// Thresholds override the liveness limits.
	Thresholds ckpt.Thresholds
	// Alive reports whether an agent's process is alive on this host, and
	// whether that could be known (see ckpt.PresenceOf); nil: never known.
	Alive ckpt.AliveFunc
	// Keepalive is how often an idle event stream sends a comment; zero
	// means 15 seconds.
	Keepalive time.Duration
	// PresenceEvery is how often the presence of live checkpoints is
	// derived again for the open pages (a process dies, a threshold
	// passes, with no write to tell); zero means 5 seconds.
	PresenceEvery time.Duration
}

// Handler serves the dashboard: the pages at /, /c/{id}, /login and
// /logout, the assets under /assets/ and the JSON endpoints under /ui/api/.
type Handler struct {
	opts     Options
	mux      *http.ServeMux
	presence presenceWatch
	feed     *feed.Hub
	// countsCache shares the presence counts among the open pages.
	countsCache countsCache
}

const (
	tokenCookie = "ckpt_token"
	csrfCookie  = "ckpt_csrf"
	csrfHeader  = "X-Ckpt-Csrf"
)

// New returns the dashboard over opts.Store.
func New(opts Options) *Handler {
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Keepalive <= 0 {
		opts.Keepalive = 15 * time.Second
	}
	if opts.PresenceEvery <= 0 {
		opts.PresenceEvery = 5 * time.Second
	}
	h := &Handler{opts: opts, mux: http.NewServeMux()}
	h.presence.h = h
	h.feed = opts.Feed
	if h.feed == nil {
		h.feed = feed.New(opts.Store, 0, 0)
	}
	static, _ := fs.Sub(assets, "assets")
	h.mux.Handle("GET /assets/", http.StripPrefix("/assets/", cacheable(http.FileServerFS(static))))
	h.mux.HandleFunc("GET /login", h.loginPage)
	h.mux.HandleFunc("POST /login", h.login)
	h.mux.HandleFunc("POST /logout", h.logout)
	h.mux.HandleFunc("GET /{$}", h.page)
	h.mux.HandleFunc("GET /c/{id...}", h.page)
	h.mux.HandleFunc("GET /ui/api/overview", h.api(h.overview))
	h.mux.HandleFunc("GET /ui/api/row", h.api(h.row))
	h.mux.HandleFunc("GET /ui/api/checkpoint", h.api(h.checkpoint))
	h.mux.HandleFunc("GET /ui/api/history", h.api(h.history))
	h.mux.HandleFunc("GET /ui/api/revision", h.api(h.revision))
	h.mux.HandleFunc("POST /ui/api/action", h.api(h.action))
	h.mux.HandleFunc("POST /ui/api/bulk", h.api(h.bulk))
	h.mux.HandleFunc("GET /ui/api/inbox", h.api(h.inbox))
	h.mux.HandleFunc("GET /ui/api/events", h.events)
	return h
}

// ServeHTTP implements http.Handler. Every response forbids framing and
// sniffing, and pages allow only their own scripts and styles.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	hd := w.Header()
	hd.Set("X-Frame-Options", "DENY")
	hd.Set("X-Content-Type-Options", "nosniff")
	hd.Set("Referrer-Policy", "same-origin")
	hd.Set("Content-Security-Policy", "default-src 'self'; img-src 'self' data:; object-src 'none'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'")
	h.mux.ServeHTTP(w, r)
}

func cacheable(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "no-cache")
		next.ServeHTTP(w, r)
	})
}

// principal returns who r acts for, or an error when it must sign in.
func (h *Handler) principal(r *http.Request) (Principal, error) {
	if h.opts.Authenticate == nil {
		return h.opts.Anonymous, nil
	}
	c, err := r.Cookie(tokenCookie)
	if err != nil || c.Value == "" {
		return Principal{}, ErrBadToken
	}
	return h.opts.Authenticate(r.Context(), c.Value)
}

// page serves the application shell, or sends a visitor who is not signed
// in to the sign-in page.
func (h *Handler) page(w http.ResponseWriter, r *http.Request) {
	if _, err := h.principal(r); err != nil {
		http.Redirect(w, r, "/login?next="+url.QueryEscape(r.URL.RequestURI()), http.StatusSeeOther)
		return
	}
	w.Header().Set("Cache-Control", "no-store")
	http.ServeFileFS(w, r, assets, "assets/index.html")
}

func (h *Handler) loginPage(w http.ResponseWriter, r *http.Request) {
	if h.opts.Authenticate == nil {
		http.Redirect(w, r, "/", http.StatusSeeOther)
		return
	}
	w.Header().Set("Cache-Control", "no-store")
	http.ServeFileFS(w, r, assets, "assets/login.html")
}

// login checks the pasted token and keeps it in the cookies.
func (h *Handler) login(w http.ResponseWriter, r *http.Request) {
	if !sameOrigin(r) {
		http.Error(w, "cross-site sign-in refused", http.StatusForbidden)
		return
	}
	if h.opts.Authenticate == nil {
		http.Redirect(w, r, "/", http.StatusSeeOther)
		return
	}
	r.Body = http.MaxBytesReader(w, r.Body, 8<<10)
	token := strings.TrimSpace(r.PostFormValue("token"))
	if _, err := h.opts.Authenticate(r.Context(), token); err != nil || token == "" {
		http.Redirect(w, r, "/login?failed=1&next="+url.QueryEscape(localPath(r.PostFormValue("next"))), http.StatusSeeOther)
		return
	}
	h.setCookie(w, r, tokenCookie, token, true, 0)
	h.setCookie(w, r, csrfCookie, randomHex(), false, 0)
	http.Redirect(w, r, localPath(r.PostFormValue("next")), http.StatusSeeOther)
}

// logout forgets the token.
func (h *Handler) logout(w http.ResponseWriter, r *http.Request) {
	if !h.csrfOK(r) {
		http.Error(w, "sign-out without the page's CSRF value refused", http.StatusForbidden)
		return
	}
	h.setCookie(w, r, tokenCookie, "", true, -1)
	h.setCookie(w, r, csrfCookie, "", false, -1)
	http.Redirect(w, r, "/login", http.StatusSeeOther)
}

// setCookie sets a cookie of the dashboard's, Secure when the server
// speaks TLS or the visitor came over HTTPS through a proxy that says so
// (X-Forwarded-Proto: a visitor who forges it only makes their own
// cookie Secure, which a plain-HTTP connection then no longer sends).
func (h *Handler) setCookie(w http.ResponseWriter, r *http.Request, name, value string, httpOnly bool, maxAge int) {
	secure := h.opts.Secure || r.TLS != nil || strings.EqualFold(r.Header.Get("X-Forwarded-Proto"), "https")
	http.SetCookie(w, &http.Cookie{Name: name, Value: value, Path: "/", MaxAge: maxAge,
		HttpOnly: httpOnly, Secure: secure, SameSite: http.SameSiteStrictMode})
}

// csrfOK checks a state-changing request: same origin, and the CSRF header
// equal to the CSRF cookie (a cross-site page can set neither). A
// dashboard without sign-in checks the origin only.
func (h *Handler) csrfOK(r *http.Request) bool {
	if !sameOrigin(r) {
		return false
	}
	if h.opts.Authenticate == nil {
		return true
	}
	c, err := r.Cookie(csrfCookie)
	got := r.Header.Get(csrfHeader)
	if got == "" {
		got = r.PostFormValue("csrf")
	}
	return err == nil && c.Value != "" && subtle.ConstantTimeCompare([]byte(c.Value), []byte(got)) == 1
}

// sameOrigin reports whether r's Origin (or, without one, its Referer)
// names the host r was sent to. A request with neither is not from a
// browser page and carries no ambient cookie risk beyond SameSite's.
func sameOrigin(r *http.Request) bool {
	src := r.Header.Get("Origin")
	if src == "" {
		src = r.Header.Get("Referer")
	}
	if src == "" {
		return r.Header.Get("Sec-Fetch-Site") == "" || r.Header.Get("Sec-Fetch-Site") == "same-origin"
	}
	u, err := url.Parse(src)
	return err == nil && u.Host == r.Host
}

// localPath returns next when it is a path on this site, else "/". A
// browser drops tabs and line breaks from a URL and reads a backslash as a
// slash, so /%09/evil.example and /\evil.example lead off-site: any
// control character or backslash, a second leading slash, or anything
// that parses with a scheme or a host is refused.
func localPath(next string) string {
	if len(next) == 0 || next[0] != '/' || strings.HasPrefix(next, "//") {
		return "/"
	}
	for _, r := range next {
		if r < 0x20 || r == 0x7f || r == '\\' || !unicode.IsPrint(r) && r != ' ' {
			return "/"
		}
	}
	u, err := url.Parse(next)
	if err != nil || u.Scheme != "" || u.Host != "" || u.User != nil || u.Opaque != "" {
		return "/"
	}
	return next
}

func randomHex() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
