package ckpt

import (
	"context"
	"errors"
)

// Code is the stable, machine-readable kind of an error. Every surface
// (CLI exit codes, MCP tool errors, HTTP status and JSON bodies) maps codes,
// never message text; each surface adds its own hint.
type Code string

// Error codes. CodeInternal is anything not classified.
const (
	CodeNotFound        Code = "not_found"
	CodeExists          Code = "exists"
	CodeConflict        Code = "conflict"
	CodeInvalid         Code = "invalid"
	CodeCorrupt         Code = "corrupt"
	CodeNotResumable    Code = "not_resumable"
	CodeCycleLimit      Code = "cycle_limit"
	CodeNoStore         Code = "no_store"
	CodeUnavailable     Code = "unavailable" // the store cannot be reached now; retry
	CodeUnauthenticated Code = "unauthenticated"
	CodeForbidden       Code = "forbidden"
	CodeCanceled        Code = "canceled"
	CodeInternal        Code = "internal"
)

// ErrUnavailable means the store could not be reached or answered with a
// transient failure (a restarting database, a dropped connection); the same
// call may succeed later, and a keyed write may be retried safely.
var ErrUnavailable = errors.New("store unavailable")

// ErrUnauthenticated and ErrForbidden are a remote store's refusals: no valid
// credentials, or credentials that do not allow the operation.
var (
	ErrUnauthenticated = errors.New("not authenticated")
	ErrForbidden       = errors.New("not allowed")
)

var codeOf = []struct {
	err  error
	code Code
}{
	{ErrNotFound, CodeNotFound},
	{ErrExists, CodeExists},
	{ErrConflict, CodeConflict},
	{ErrNotResumable, CodeNotResumable},
	{ErrCycleLimit, CodeCycleLimit},
	{ErrCorrupt, CodeCorrupt},
	{ErrInvalid, CodeInvalid},
	{ErrNoStore, CodeNoStore},
	{ErrUnavailable, CodeUnavailable},
	{ErrUnauthenticated, CodeUnauthenticated},
	{ErrForbidden, CodeForbidden},
	{context.Canceled, CodeCanceled},
	{context.DeadlineExceeded, CodeCanceled},
}

// ErrorCode returns the code of err: the first of the package's sentinel
// errors that err wraps, "" for a nil err and CodeInternal otherwise.
func ErrorCode(err error) Code {
	if err == nil {
		return ""
	}
	for _, c := range codeOf {
		if errors.Is(err, c.err) {
			return c.code
		}
	}
	return CodeInternal
}

// SentinelOf returns the sentinel error of a code (ErrNotFound for
// CodeNotFound…), so a remote client can rebuild an error that errors.Is
// recognises; nil for CodeInternal and unknown codes.
func SentinelOf(c Code) error {
	for _, e := range codeOf {
		if e.code == c {
			return e.err
		}
	}
	return nil
}

// Retryable reports whether the same call may succeed if made again
// unchanged: a transient store failure. A conflict is not retryable as is
// (read again first: see Update).
func Retryable(err error) bool { return errors.Is(err, ErrUnavailable) }
