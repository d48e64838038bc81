// Package github keeps a checkpoint's status comment on a GitHub issue, over
// the REST API: POST /repos/{owner}/{repo}/issues/{number}/comments creates
// it, PATCH /repos/{owner}/{repo}/issues/comments/{id} updates it in place.
package github

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	ckpt "github.com/ckpt-dev/ckpt"
	"github.com/ckpt-dev/ckpt/internal/lazyregexp"
	"github.com/ckpt-dev/ckpt/internal/tracker"
	"github.com/ckpt-dev/ckpt/internal/tracker/internal/apicall"
)

// DefaultBaseURL is the API root of github.com. GitHub Enterprise Server's is
// https://HOST/api/v3.
const DefaultBaseURL = "https://api.github.com"

// APIVersion is the REST API version requested (X-GitHub-Api-Version).
const APIVersion = "2022-11-28"

// Config configures a Tracker. Only Repo and Token are required.
type Config struct {
	// Repo is the repository, "owner/name" (the --github-repo flag).
	Repo string
	// Token is a token allowed to write issues (the CLI reads GITHUB_TOKEN,
	// then GH_TOKEN).
	Token string
	// BaseURL is the API root; empty means DefaultBaseURL.
	BaseURL string
	// Timeout bounds one Upsert; zero means tracker.DefaultTimeout.
	Timeout time.Duration
	// Client sends the requests; nil means a new http.Client.
	Client *http.Client
}

// Tracker is a tracker.Tracker for the issues of one GitHub repository. It
// is safe for concurrent use.
type Tracker struct {
	owner, repo string
	base        string
	call        apicall.Caller
}

// Regular expressions are compiled on first use, not at start-up: every
// ckpt process links this package, and most never use them.
var (
	namePart = lazyregexp.New(`^[A-Za-z0-9_.-]+$`)
	digits   = lazyregexp.New(`^[0-9]{1,19}$`)
)

// New checks cfg and returns a Tracker. It fails (wrapping ckpt.ErrInvalid)
// when Repo is not "owner/name", Token is empty, or BaseURL is not an
// http(s) URL; it sends nothing.
func New(cfg Config) (*Tracker, error) {
	owner, repo, ok := strings.Cut(cfg.Repo, "/")
	if !ok || !namePart.Get().MatchString(owner) || !namePart.Get().MatchString(repo) || dots(owner) || dots(repo) {
		return nil, fmt.Errorf("%w: GitHub repository %q: give it as owner/name, e.g. --github-repo ckpt-dev/ckpt", ckpt.ErrInvalid, cfg.Repo)
	}
	if strings.TrimSpace(cfg.Token) == "" {
		return nil, fmt.Errorf("%w: GitHub token missing: set GITHUB_TOKEN or GH_TOKEN to a token that may write issues", ckpt.ErrInvalid)
	}
	base := cfg.BaseURL
	if base == "" {
		base = DefaultBaseURL
	}
	if err := apicall.CheckURL("GitHub", base, DefaultBaseURL+" or https://HOST/api/v3"); err != nil {
		return nil, err
	}
	return &Tracker{
		owner: owner, repo: repo,
		base: strings.TrimRight(base, "/"),
		call: apicall.New("GitHub", cfg.Client, cfg.Timeout, http.Header{
			"Accept":               {"application/vnd.github+json"},
			"Authorization":        {"Bearer " + strings.TrimSpace(cfg.Token)},
			"X-Github-Api-Version": {APIVersion},
			"User-Agent":           {"ckpt"},
		}),
	}, nil
}

// Upsert implements tracker.Tracker. issue is the issue (or pull request)
// number, "42" or "#42". A commentID that cannot be a GitHub comment ID
// (not a decimal number, e.g. one stored for Linear) is treated like a
// deleted comment: a new comment is created.
func (t *Tracker) Upsert(ctx context.Context, issue, commentID, body string) (tracker.Comment, error) {
	number := strings.TrimPrefix(strings.TrimSpace(issue), "#")
	if !digits.Get().MatchString(number) || strings.Trim(number, "0") == "" {
		return tracker.Comment{}, fmt.Errorf("%w: GitHub issue %q: give the issue number, e.g. --issue 42", ckpt.ErrInvalid, issue)
	}
	ctx, cancel := context.WithTimeout(ctx, t.call.Timeout)
	defer cancel()
	payload := map[string]string{"body": body}

	if digits.Get().MatchString(commentID) {
		u := fmt.Sprintf("%s/repos/%s/%s/issues/comments/%s", t.base, url.PathEscape(t.owner), url.PathEscape(t.repo), commentID)
		resp, err := t.call.Do(ctx, "update comment", http.MethodPatch, u, payload)
		if err != nil {
			return tracker.Comment{}, err
		}
		if resp.Status != http.StatusNotFound {
			return t.result("update comment", resp, http.StatusOK)
		}
		// The comment was deleted: fall through and create a new one.
	}
	u := fmt.Sprintf("%s/repos/%s/%s/issues/%s/comments", t.base, url.PathEscape(t.owner), url.PathEscape(t.repo), number)
	resp, err := t.call.Do(ctx, "create comment", http.MethodPost, u, payload)
	if err != nil {
		return tracker.Comment{}, err
	}
	c, err := t.result("create comment", resp, http.StatusCreated)
	if e, ok := err.(*tracker.Error); ok && e.Status == http.StatusNotFound {
		e.Hint = fmt.Sprintf("no issue #%s in %s/%s, or the token cannot see that repository", number, t.owner, t.repo)
	}
	return c, err
}

// result turns an answer into the comment or an *tracker.Error.
func (t *Tracker) result(op string, resp apicall.Response, want int) (tracker.Comment, error) {
	if resp.Status != want && (resp.Status < 200 || resp.Status > 299) {
		e := &tracker.Error{Service: "GitHub", Op: op, Kind: tracker.KindHTTP, Status: resp.Status, Message: parseError(resp.Body)}
		if e.Message == "" {
			e.Message = http.StatusText(resp.Status)
		}
		switch resp.Status {
		case http.StatusUnauthorized:
			e.Hint = "the token was refused: check GITHUB_TOKEN or GH_TOKEN"
		case http.StatusForbidden, http.StatusTooManyRequests:
			e.Hint = "the token may lack the issues: write permission, or a rate limit was hit"
		}
		return tracker.Comment{}, e
	}
	c, err := parseComment(resp.Body)
	if err != nil {
		return tracker.Comment{}, &tracker.Error{Service: "GitHub", Op: op, Kind: tracker.KindResponse, Status: resp.Status, Message: err.Error()}
	}
	return c, nil
}

// parseComment reads the comment GitHub returns: its numeric id (kept as
// decimal text) and html_url. It fails unless id is a positive integer.
func parseComment(body []byte) (tracker.Comment, error) {
	var v struct {
		ID      json.Number `json:"id"`
		HTMLURL string      `json:"html_url"`
	}
	if err := json.Unmarshal(body, &v); err != nil {
		return tracker.Comment{}, fmt.Errorf("comment JSON: %v", err)
	}
	id, err := strconv.ParseInt(v.ID.String(), 10, 64)
	if err != nil || id <= 0 {
		return tracker.Comment{}, fmt.Errorf("comment JSON: id %q is not a comment ID", v.ID)
	}
	return tracker.Comment{ID: strconv.FormatInt(id, 10), URL: v.HTMLURL}, nil
}

// parseError reads GitHub's error body, {"message": …, "errors": [...]},
// into one line: the message, then each detail. It returns "" when the body
// is not such JSON.
func parseError(body []byte) string {
	var v struct {
		Message string            `json:"message"`
		Errors  []json.RawMessage `json:"errors"`
	}
	if json.Unmarshal(body, &v) != nil {
		return ""
	}
	parts := []string{}
	if m := oneLine(v.Message); m != "" {
		parts = append(parts, m)
	}
	for _, raw := range v.Errors {
		var d struct {
			Message, Code, Field, Resource string
		}
		var s string
		switch {
		case json.Unmarshal(raw, &s) == nil:
			parts = append(parts, oneLine(s))
		case json.Unmarshal(raw, &d) == nil:
			switch {
			case d.Message != "":
				parts = append(parts, oneLine(d.Message))
			case d.Code != "":
				parts = append(parts, oneLine(strings.TrimSpace(d.Resource+" "+d.Field+" "+d.Code)))
			}
		}
	}
	return strings.Join(parts, "; ")
}

// dots reports a path segment that would move the request path.
func dots(s string) bool { return s == "." || s == ".." }

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }
