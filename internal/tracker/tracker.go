// Package tracker is step 3 of ccc's (seed 001) four-step checkpoint: the
// issue-tracker status. A checkpoint keeps one "Checkpoint Status" comment
// per issue, created once and then updated in place by its stored ID (an
// upsert), so an issue does not fill up with one comment per checkpoint.
//
// The Tracker interface is implemented for GitHub issues (package
// tracker/github, REST) and Linear (package tracker/linear, GraphQL).
// StatusComment renders the comment body the seed document prescribes.
// Failures are *Error values that say which service, what was attempted, the
// HTTP status and the API's own message, so the caller can print the
// document's completion-report line (see FailureLine).
package tracker

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"
)

// DefaultTimeout bounds one Upsert (all of its requests together) when the
// tracker is configured without a timeout.
const DefaultTimeout = 10 * time.Second

// Comment is a comment as the tracker stored it.
type Comment struct {
	// ID is the tracker's ID of the comment: what the caller stores (seed
	// 001's .ccc-state.json checkpointCommentId) and passes to the next
	// Upsert.
	ID string
	// URL is the comment's web address, when the tracker gives one.
	URL string
}

// Tracker posts the checkpoint status comment on an issue.
type Tracker interface {
	// Upsert writes body as the checkpoint comment of issue. With an empty
	// commentID it creates a comment. With a commentID it updates that
	// comment in place; if the comment no longer exists (deleted: HTTP 404
	// or "entity not found") it creates a new one. The returned Comment's ID
	// is the one to store for next time: it differs from commentID exactly
	// when a comment was created.
	//
	// Errors are *Error (or wrap ckpt.ErrInvalid for a malformed issue
	// reference); nothing is retried. Upsert is safe for concurrent use.
	Upsert(ctx context.Context, issue string, commentID string, body string) (Comment, error)
}

// Kind classifies an Error.
type Kind int

// The kinds of Error.
const (
	// KindUnreachable: no answer at all (DNS, refused connection, TLS).
	KindUnreachable Kind = iota + 1
	// KindTimeout: no answer within the timeout.
	KindTimeout
	// KindHTTP: the API answered with an HTTP error status.
	KindHTTP
	// KindAPI: the API answered 2xx but reported an error (GraphQL errors,
	// success: false).
	KindAPI
	// KindResponse: the answer could not be understood.
	KindResponse
)

// ErrUnreachable matches (with errors.Is) an *Error of kind KindUnreachable
// or KindTimeout: the tracker could not be reached, which ccc (seed 001) says to
// skip with a warning.
var ErrUnreachable = errors.New("issue tracker unreachable")

// Error is a failed call to an issue tracker's API.
type Error struct {
	Service string        // "GitHub" or "Linear"
	Op      string        // what was attempted: "create comment", "update comment", "find issue"
	Kind    Kind          // what went wrong
	Status  int           // the HTTP status code, 0 when no response arrived
	Message string        // the API's own error message, or the transport error's text
	Hint    string        // what to do about it, when known
	Timeout time.Duration // the timeout that expired, for KindTimeout
	Err     error         // the underlying transport error, if any
}

func (e *Error) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s: ", e.Service, e.Op)
	switch e.Kind {
	case KindUnreachable:
		b.WriteString("unreachable: " + e.Message)
	case KindTimeout:
		fmt.Fprintf(&b, "timed out after %s", e.Timeout)
	case KindHTTP:
		fmt.Fprintf(&b, "HTTP %d", e.Status)
		if e.Message != "" {
			b.WriteString(": " + e.Message)
		}
	case KindAPI:
		b.WriteString("API error: " + e.Message)
	default:
		b.WriteString("unexpected response: " + e.Message)
	}
	if e.Hint != "" {
		b.WriteString(" (" + e.Hint + ")")
	}
	return b.String()
}

// Unwrap returns the transport error, if any.
func (e *Error) Unwrap() error { return e.Err }

// Is reports whether e is an unreachable-tracker error (see ErrUnreachable).
func (e *Error) Is(target error) bool {
	return target == ErrUnreachable && (e.Kind == KindUnreachable || e.Kind == KindTimeout)
}

// Reason is the short cause of err for a report line: "HTTP 503",
// "timed out after 10s", "unreachable", "API error: <message>" or
// "unexpected response"; for an error that is not an *Error, its text. It is
// at most 100 runes.
func Reason(err error) string {
	var e *Error
	if !errors.As(err, &e) {
		return cut(err.Error(), 100)
	}
	switch e.Kind {
	case KindUnreachable:
		return "unreachable"
	case KindTimeout:
		return fmt.Sprintf("timed out after %s", e.Timeout)
	case KindHTTP:
		return fmt.Sprintf("HTTP %d", e.Status)
	case KindAPI:
		return cut("API error: "+e.Message, 100)
	default:
		return "unexpected response"
	}
}

// FailureLine is the completion-report line for a failed step 3, in the
// document's words, e.g. for service "Linear" and an HTTP 503:
//
//	Failed: Linear update (HTTP 503) — status not persisted to issue tracker.
func FailureLine(service string, err error) string {
	return fmt.Sprintf("Failed: %s update (%s) — status not persisted to issue tracker.", service, Reason(err))
}

func cut(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	return string([]rune(s)[:n-1]) + "…"
}
