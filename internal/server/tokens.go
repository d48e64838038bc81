package server

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/ckpt-dev/ckpt"
	"github.com/ckpt-dev/ckpt/internal/atomicfile"
	"github.com/ckpt-dev/ckpt/internal/httpapi"
)

// Scope is what a token may do. Each scope includes the ones before it.
type Scope string

// Scopes: read sees everything; write also appends, beats and runs the
// lifecycle verbs (within its prefix); admin also deletes, repairs and
// manages tokens.
const (
	ScopeRead  Scope = "read"
	ScopeWrite Scope = "write"
	ScopeAdmin Scope = "admin"
)

func (s Scope) rank() int {
	switch s {
	case ScopeRead:
		return 1
	case ScopeWrite:
		return 2
	case ScopeAdmin:
		return 3
	}
	return 0
}

// Allows reports whether s includes want.
func (s Scope) Allows(want Scope) bool { return s.rank() >= want.rank() && want.rank() > 0 }

// ParseScope checks a scope given by a person.
func ParseScope(s string) (Scope, error) {
	if sc := Scope(strings.ToLower(s)); sc.rank() > 0 {
		return sc, nil
	}
	return "", fmt.Errorf("%w: scope %q: use read, write or admin", ckpt.ErrInvalid, s)
}

// Token is a stored token: everything but its secret, of which only the
// SHA-256 is kept. A token's secret is 256 random bits, so a plain hash is
// enough: there is nothing to guess a dictionary from.
type Token struct {
	ID        string    `json:"id"`
	Hash      string    `json:"hash"` // hex SHA-256 of the secret
	Scope     Scope     `json:"scope"`
	Prefix    string    `json:"prefix,omitempty"` // writes only checkpoints under this path prefix (ending in /)
	Agent     string    `json:"agent,omitempty"`  // recorded as the actor of every write
	Note      string    `json:"note,omitempty"`
	CreatedAt time.Time `json:"created_at"`
	// ReadPrefix limits reading to Prefix too: the token neither lists,
	// reads nor follows the changes of a checkpoint outside it (tenants
	// that must not see each other).
	ReadPrefix bool `json:"read_prefix,omitempty"`
	// ExpiresAt, when set, is when the token stops being accepted; its
	// open streams end then.
	ExpiresAt time.Time `json:"expires_at,omitzero"`
}

// Expired reports whether t is no longer accepted at now.
func (t Token) Expired(now time.Time) bool {
	return !t.ExpiresAt.IsZero() && !now.Before(t.ExpiresAt)
}

// Grant is what an authenticated request may do: its token without the
// hash.
type Grant struct {
	TokenID    string    `json:"token_id,omitempty"`
	Scope      Scope     `json:"scope"`
	Prefix     string    `json:"prefix,omitempty"`
	Agent      string    `json:"agent,omitempty"`
	ReadPrefix bool      `json:"read_prefix,omitempty"`
	ExpiresAt  time.Time `json:"expires_at,omitzero"`
}

// Grant returns what t allows.
func (t Token) Grant() Grant {
	return Grant{TokenID: t.ID, Scope: t.Scope, Prefix: ckpt.PathPrefix(t.Prefix), Agent: t.Agent, ReadPrefix: t.ReadPrefix && t.Prefix != "", ExpiresAt: t.ExpiresAt}
}

// TokenStore keeps tokens. Implementations are safe for concurrent use;
// a revocation is seen by the next Lookup, in every process sharing the
// store.
type TokenStore interface {
	// Add stores t; an ID in use fails with ckpt.ErrExists.
	Add(ctx context.Context, t Token) error
	// Lookup returns the token with id, or ckpt.ErrNotFound.
	Lookup(ctx context.Context, id string) (Token, error)
	// List returns every token, in creation order.
	List(ctx context.Context) ([]Token, error)
	// Revoke removes token id (ckpt.ErrNotFound when there is none).
	Revoke(ctx context.Context, id string) error
}

// tokenPrefix starts every bearer token, so that a leaked one is easy to
// recognise (and to scan for).
const tokenPrefix = "ckpt_"

// NewToken makes a token with a fresh ID and secret. It returns the stored
// form and the bearer string, which exists only here: print it once.
func NewToken(scope Scope, prefix, agent, note string, now time.Time) (Token, string, error) {
	if scope.rank() == 0 {
		return Token{}, "", fmt.Errorf("%w: scope %q: use read, write or admin", ckpt.ErrInvalid, scope)
	}
	if prefix != "" {
		if err := ckpt.ValidateID(strings.TrimSuffix(prefix, "/")); err != nil {
			return Token{}, "", fmt.Errorf("%w: prefix %q is not a path of checkpoint IDs (like team-a or kai-7/tracks)", ckpt.ErrInvalid, prefix)
		}
		prefix = ckpt.PathPrefix(prefix) // team-a is team-a/, never team-ab/
	}
	var id [6]byte
	var secret [32]byte
	if _, err := rand.Read(id[:]); err != nil {
		return Token{}, "", err
	}
	if _, err := rand.Read(secret[:]); err != nil {
		return Token{}, "", err
	}
	t := Token{ID: hex.EncodeToString(id[:]), Scope: scope, Prefix: prefix, Agent: agent, Note: note, CreatedAt: now.UTC()}
	s := hex.EncodeToString(secret[:])
	t.Hash = hashSecret(s)
	return t, tokenPrefix + t.ID + "_" + s, nil
}

// NewTokenFrom makes a token as a create request (the API's body, ckpt
// token create's flags) describes it: scope, prefix, agent, note, whether
// it reads only its prefix, and its time to live from now.
func NewTokenFrom(in httpapi.TokenInfo, now time.Time) (Token, string, error) {
	scope, err := ParseScope(in.Scope)
	if err != nil {
		return Token{}, "", err
	}
	if in.ReadPrefix && in.Prefix == "" {
		return Token{}, "", fmt.Errorf("%w: a token that reads only its prefix needs one: add --prefix", ckpt.ErrInvalid)
	}
	t, bearer, err := NewToken(scope, in.Prefix, in.Agent, in.Note, now)
	if err != nil {
		return Token{}, "", err
	}
	t.ReadPrefix = in.ReadPrefix
	if in.TTL != "" {
		ttl, err := time.ParseDuration(in.TTL)
		if err != nil || ttl <= 0 {
			return Token{}, "", fmt.Errorf("%w: ttl %q: give a positive duration like 24h or 90m", ckpt.ErrInvalid, in.TTL)
		}
		t.ExpiresAt = t.CreatedAt.Add(ttl)
	}
	return t, bearer, nil
}

// TokenInfoOf is t as the API and ckpt token ls show it: never its hash.
func TokenInfoOf(t Token) httpapi.TokenInfo {
	return httpapi.TokenInfo{ID: t.ID, Scope: string(t.Scope), Prefix: t.Prefix, Agent: t.Agent, Note: t.Note,
		CreatedAt: t.CreatedAt, ReadPrefix: t.ReadPrefix, ExpiresAt: t.ExpiresAt}
}

func hashSecret(secret string) string {
	h := sha256.Sum256([]byte(secret))
	return hex.EncodeToString(h[:])
}

// splitBearer parses ckpt_<id>_<secret>.
func splitBearer(bearer string) (id, secret string, ok bool) {
	rest, ok := strings.CutPrefix(bearer, tokenPrefix)
	if !ok {
		return "", "", false
	}
	id, secret, ok = strings.Cut(rest, "_")
	return id, secret, ok && id != "" && secret != ""
}

// dummyHash is compared against when no token has the ID asked for, so that
// an unknown ID costs what a known one does.
var dummyHash = hashSecret("no such token")

// Authenticate checks a bearer string against ts at time now: it looks the
// token up by its ID and always compares a hash, in constant time, so that
// a wrong token costs the same as a right one. It fails with
// ckpt.ErrUnauthenticated, saying only that the token is not valid (or,
// for a right one past its ExpiresAt, that it expired).
func Authenticate(ctx context.Context, ts TokenStore, bearer string, now time.Time) (Token, error) {
	id, secret, _ := splitBearer(bearer)
	t, err := ts.Lookup(ctx, id)
	want := t.Hash
	if err != nil {
		if !errors.Is(err, ckpt.ErrNotFound) {
			return Token{}, err
		}
		want = dummyHash
	}
	got := hashSecret(secret)
	if subtle.ConstantTimeCompare([]byte(got), []byte(want)) != 1 || err != nil {
		return Token{}, fmt.Errorf("%w: the token is not valid (revoked, mistyped, or for another server): ask the server's admin for one (ckpt token create)", ckpt.ErrUnauthenticated)
	}
	if t.Expired(now) {
		return Token{}, fmt.Errorf("%w: the token expired at %s: ask the server's admin for a new one (ckpt token create --ttl)", ckpt.ErrUnauthenticated, t.ExpiresAt.Format(time.RFC3339))
	}
	return t, nil
}

// TokenFileName is the file tokens are kept in inside a store directory.
const TokenFileName = "tokens.json"

// FileTokens is a TokenStore in one JSON file, replaced atomically and
// durably on every change and readable by its owner only (0600). Several
// processes may share the file: each rereads it when it changed on disk,
// so a revocation by one is refused by all at the next request. Writers
// in different processes are not serialised; tokens are managed by one
// admin at a time.
type FileTokens struct {
	path string
	mu   sync.Mutex
	seen os.FileInfo // the file as last read
	byID map[string]Token
	list []Token
}

// OpenFileTokens opens the token file at path (created on the first Add).
func OpenFileTokens(path string) (*FileTokens, error) {
	ft := &FileTokens{path: path}
	ft.mu.Lock()
	defer ft.mu.Unlock()
	if err := ft.refresh(); err != nil {
		return nil, err
	}
	return ft, nil
}

// Path returns the token file's path.
func (ft *FileTokens) Path() string { return ft.path }

type tokenFile struct {
	Tokens []Token `json:"tokens"`
}

// refresh rereads the file when it changed since the last read. The
// caller holds ft.mu.
func (ft *FileTokens) refresh() error {
	fi, err := os.Stat(ft.path)
	if errors.Is(err, os.ErrNotExist) {
		ft.seen, ft.byID, ft.list = nil, map[string]Token{}, nil
		return nil
	}
	if err != nil {
		return fmt.Errorf("%w: token file: %v", ckpt.ErrUnavailable, err)
	}
	if ft.seen != nil && os.SameFile(fi, ft.seen) && fi.ModTime().Equal(ft.seen.ModTime()) && fi.Size() == ft.seen.Size() {
		return nil
	}
	data, err := os.ReadFile(ft.path)
	if err != nil {
		return fmt.Errorf("%w: token file: %v", ckpt.ErrUnavailable, err)
	}
	var f tokenFile
	if err := json.Unmarshal(data, &f); err != nil {
		return fmt.Errorf("%w: token file %s: %v: restore it from a backup, or move it aside and restart the server to make a new admin token", ckpt.ErrCorrupt, ft.path, err)
	}
	byID := make(map[string]Token, len(f.Tokens))
	for _, t := range f.Tokens {
		byID[t.ID] = t
	}
	ft.seen, ft.byID, ft.list = fi, byID, f.Tokens
	return nil
}

// write replaces the file with list. The caller holds ft.mu.
func (ft *FileTokens) write(list []Token) error {
	data, err := json.MarshalIndent(tokenFile{Tokens: list}, "", "  ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(ft.path), 0o700); err != nil {
		return err
	}
	if err := atomicfile.WriteFile(ft.path, append(data, '\n'), 0o600); err != nil {
		return err
	}
	ft.seen = nil
	return ft.refresh()
}

// Add implements TokenStore.
func (ft *FileTokens) Add(ctx context.Context, t Token) error {
	ft.mu.Lock()
	defer ft.mu.Unlock()
	if err := ft.refresh(); err != nil {
		return err
	}
	if _, ok := ft.byID[t.ID]; ok {
		return fmt.Errorf("%w: token %s", ckpt.ErrExists, t.ID)
	}
	return ft.write(append(slices.Clone(ft.list), t))
}

// Lookup implements TokenStore.
func (ft *FileTokens) Lookup(ctx context.Context, id string) (Token, error) {
	ft.mu.Lock()
	defer ft.mu.Unlock()
	if err := ft.refresh(); err != nil {
		return Token{}, err
	}
	t, ok := ft.byID[id]
	if !ok {
		return Token{}, fmt.Errorf("%w: token %s", ckpt.ErrNotFound, id)
	}
	return t, nil
}

// List implements TokenStore.
func (ft *FileTokens) List(ctx context.Context) ([]Token, error) {
	ft.mu.Lock()
	defer ft.mu.Unlock()
	if err := ft.refresh(); err != nil {
		return nil, err
	}
	return slices.Clone(ft.list), nil
}

// Revoke implements TokenStore.
func (ft *FileTokens) Revoke(ctx context.Context, id string) error {
	ft.mu.Lock()
	defer ft.mu.Unlock()
	if err := ft.refresh(); err != nil {
		return err
	}
	if _, ok := ft.byID[id]; !ok {
		return fmt.Errorf("%w: token %s (ckpt token ls lists them)", ckpt.ErrNotFound, id)
	}
	return ft.write(slices.DeleteFunc(slices.Clone(ft.list), func(t Token) bool { return t.ID == id }))
}

// Bootstrap makes an admin token when ts has none at all, for a server's
// first start, and returns its bearer string ("" when there were tokens).
func Bootstrap(ctx context.Context, ts TokenStore, now time.Time) (string, error) {
	list, err := ts.List(ctx)
	if err != nil || len(list) > 0 {
		return "", err
	}
	t, bearer, err := NewToken(ScopeAdmin, "", "", "made at the server's first start", now)
	if err != nil {
		return "", err
	}
	if err := ts.Add(ctx, t); err != nil {
		return "", err
	}
	return bearer, nil
}
