// Package linear keeps a checkpoint's status comment on a Linear issue, over
// Linear's GraphQL API: the commentCreate mutation creates it, commentUpdate
// updates it in place. An issue identifier such as CIA-123 is resolved to the
// issue's UUID with an issue(id:) query first (once per identifier).
package linear

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	ckpt "github.com/ckpt-dev/ckpt"
	"github.com/ckpt-dev/ckpt/internal/lazyregexp"
	"github.com/ckpt-dev/ckpt/internal/tracker"
	"github.com/ckpt-dev/ckpt/internal/tracker/internal/apicall"
)

// DefaultURL is Linear's GraphQL endpoint.
const DefaultURL = "https://api.linear.app/graphql"

// The GraphQL documents sent. Values travel only as variables.
const (
	issueQuery = `query CkptIssue($id: String!) { issue(id: $id) { id identifier } }`

	createMutation = `mutation CkptCommentCreate($input: CommentCreateInput!) { commentCreate(input: $input) { success comment { id url } } }`

	updateMutation = `mutation CkptCommentUpdate($id: String!, $input: CommentUpdateInput!) { commentUpdate(id: $id, input: $input) { success comment { id url } } }`
)

// Config configures a Tracker. Only APIKey is required.
type Config struct {
	// APIKey is a personal API key (the CLI reads LINEAR_API_KEY), sent as
	// "Authorization: <key>" as Linear asks. An OAuth access token is given
	// as "Bearer <token>" and sent as it is.
	APIKey string
	// URL is the GraphQL endpoint; empty means DefaultURL.
	URL string
	// Timeout bounds one Upsert; zero means tracker.DefaultTimeout.
	Timeout time.Duration
	// Client sends the requests; nil means a new http.Client.
	Client *http.Client
}

// Tracker is a tracker.Tracker for Linear issues. It is safe for concurrent
// use.
type Tracker struct {
	url  string
	call apicall.Caller

	mu     sync.Mutex
	issues map[string]string // identifier → UUID, resolved once
}

// Regular expressions are compiled on first use, not at start-up: every
// ckpt process links this package, and most never use them.
var (
	identifierRE = lazyregexp.New(`^[A-Za-z][A-Za-z0-9_]{0,19}-[0-9]{1,9}$`)
	uuidRE       = lazyregexp.New(`^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$`)
)

// New checks cfg and returns a Tracker. It fails (wrapping ckpt.ErrInvalid)
// when APIKey is empty or URL is not an http(s) URL; it sends nothing.
func New(cfg Config) (*Tracker, error) {
	key := strings.TrimSpace(cfg.APIKey)
	if key == "" {
		return nil, fmt.Errorf("%w: Linear API key missing: set LINEAR_API_KEY to a personal API key (Linear settings → Security & access)", ckpt.ErrInvalid)
	}
	endpoint := cfg.URL
	if endpoint == "" {
		endpoint = DefaultURL
	}
	if err := apicall.CheckURL("Linear", endpoint, DefaultURL); err != nil {
		return nil, err
	}
	return &Tracker{
		url:    endpoint,
		issues: map[string]string{},
		call: apicall.New("Linear", cfg.Client, cfg.Timeout, http.Header{
			"Authorization": {key},
			"Accept":        {"application/json"},
			"User-Agent":    {"ckpt"},
		}),
	}, nil
}

// Upsert implements tracker.Tracker. issue is an identifier such as CIA-123
// or the issue's UUID. commentID is the comment's UUID as returned by an
// earlier Upsert; when Linear answers that it does not exist ("Entity not
// found"), or commentID is not a UUID at all (e.g. an ID stored for GitHub),
// a new comment is created.
func (t *Tracker) Upsert(ctx context.Context, issue, commentID, body string) (tracker.Comment, error) {
	issue = strings.TrimSpace(issue)
	if !identifierRE.Get().MatchString(issue) && !uuidRE.Get().MatchString(issue) {
		return tracker.Comment{}, fmt.Errorf("%w: Linear issue %q: give its identifier, e.g. --linear-issue CIA-123", ckpt.ErrInvalid, issue)
	}
	ctx, cancel := context.WithTimeout(ctx, t.call.Timeout)
	defer cancel()

	// An ID that cannot be a Linear comment's (e.g. one stored for GitHub)
	// is treated like a deleted comment.
	if commentID = strings.TrimSpace(commentID); uuidRE.Get().MatchString(commentID) {
		vars := map[string]any{"id": commentID, "input": map[string]string{"body": body}}
		c, err := t.mutate(ctx, "update comment", updateMutation, vars, "commentUpdate")
		if !notFound(err) {
			return c, err
		}
		// The comment was deleted: create a new one.
	}
	issueID, err := t.resolve(ctx, issue)
	if err != nil {
		return tracker.Comment{}, err
	}
	vars := map[string]any{"input": map[string]string{"issueId": issueID, "body": body}}
	return t.mutate(ctx, "create comment", createMutation, vars, "commentCreate")
}

// resolve returns the UUID of issue, asking Linear for an identifier's.
func (t *Tracker) resolve(ctx context.Context, issue string) (string, error) {
	if uuidRE.Get().MatchString(issue) {
		return issue, nil
	}
	key := strings.ToUpper(issue)
	t.mu.Lock()
	id, ok := t.issues[key]
	t.mu.Unlock()
	if ok {
		return id, nil
	}
	data, err := t.send(ctx, "find issue", issueQuery, map[string]any{"id": key}, "issue")
	if err != nil {
		if e, ok := err.(*tracker.Error); ok && (e.Kind == tracker.KindAPI || e.Kind == tracker.KindResponse) {
			e.Hint = fmt.Sprintf("no Linear issue %s, or the API key cannot see it", key)
		}
		return "", err
	}
	var v struct {
		ID string `json:"id"`
	}
	if err := json.Unmarshal(data, &v); err != nil || v.ID == "" {
		return "", &tracker.Error{Service: "Linear", Op: "find issue", Kind: tracker.KindAPI, Status: http.StatusOK,
			Message: "issue not found", Hint: fmt.Sprintf("no Linear issue %s, or the API key cannot see it", key)}
	}
	t.mu.Lock()
	t.issues[key] = v.ID
	t.mu.Unlock()
	return v.ID, nil
}

// mutate runs a comment mutation and returns the comment from its payload.
func (t *Tracker) mutate(ctx context.Context, op, query string, vars map[string]any, field string) (tracker.Comment, error) {
	data, err := t.send(ctx, op, query, vars, field)
	if err != nil {
		return tracker.Comment{}, err
	}
	c, err := parseCommentPayload(data)
	if err != nil {
		return tracker.Comment{}, &tracker.Error{Service: "Linear", Op: op, Kind: tracker.KindAPI, Status: http.StatusOK, Message: err.Error()}
	}
	return c, nil
}

// send posts one GraphQL request and returns data.<field>.
func (t *Tracker) send(ctx context.Context, op, query string, vars map[string]any, field string) (json.RawMessage, error) {
	resp, err := t.call.Do(ctx, op, http.MethodPost, t.url, map[string]any{"query": query, "variables": vars})
	if err != nil {
		return nil, err
	}
	data, gqlErr, perr := parseResponse(resp.Body, field)
	switch {
	case resp.Status < 200 || resp.Status > 299:
		e := &tracker.Error{Service: "Linear", Op: op, Kind: tracker.KindHTTP, Status: resp.Status, Message: gqlErr.message()}
		if e.Message == "" {
			e.Message = http.StatusText(resp.Status)
		}
		e.Err = gqlErr.sentinel()
		if resp.Status == http.StatusUnauthorized || gqlErr.authentication() {
			e.Hint = "the API key was refused: check LINEAR_API_KEY"
		}
		return nil, e
	case perr != nil:
		return nil, &tracker.Error{Service: "Linear", Op: op, Kind: tracker.KindResponse, Status: resp.Status, Message: perr.Error()}
	case len(gqlErr) > 0:
		e := &tracker.Error{Service: "Linear", Op: op, Kind: tracker.KindAPI, Status: resp.Status, Message: gqlErr.message(), Err: gqlErr.sentinel()}
		if gqlErr.authentication() {
			e.Hint = "the API key was refused: check LINEAR_API_KEY"
		}
		return nil, e
	}
	return data, nil
}
