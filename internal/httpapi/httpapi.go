// Package httpapi is the wire format of ckpt serve's HTTP API, the one
// definition the server (package server) and its client (package remote)
// share: paths, headers, JSON bodies, and the table that maps the stable
// error codes of the root package to HTTP statuses and back.
//
// It depends on the root package and the standard library only, so neither
// side imports the other. docs/api.md describes the API for people; the
// server serves the same description as OpenAPI at /openapi.json.
package httpapi

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/ckpt-dev/ckpt"
)

// Paths of the API. A checkpoint ID (which may hold slashes) always ends a
// path, after one of the prefixes ending in "/".
const (
	PathCheckpoints = "/v1/checkpoints"    // GET: list; /{id}: GET one, DELETE
	PathEvents      = "/v1/events/"        // {id}: POST append, GET history
	PathBeats       = "/v1/beats/"         // {id}: POST a beat
	PathLifecycle   = "/v1/lifecycle/"     // {verb}/{id}: POST resume, takeover, restart, restore, archive, abandon
	PathChanges     = "/v1/changes"        // GET: the change feed as server-sent events
	PathHead        = "/v1/changes/head"   // GET: the feed's current end
	PathCheck       = "/v1/check"          // POST: check the store (read-only)
	PathRepair      = "/v1/repair"         // POST: repair the store (admin)
	PathStale       = "/v1/stale"          // GET: the silent checkpoints
	PathInbox       = "/v1/inbox"          // GET: what needs a person
	PathTell        = "/v1/tell/"          // {id}: POST a message for the agent
	PathBulk        = "/v1/bulk"           // POST: one action on the checkpoints a filter picks
	PathWhy         = "/v1/why/"           // {id}: GET why it shows its presence
	PathInfo        = "/v1/info"           // GET: version and capabilities
	PathOpenAPI     = "/openapi.json"      // GET: this API in OpenAPI 3.1
	PathMCP         = "/mcp"               // the MCP server (streamable HTTP)
	PathMetrics     = "/metrics"           // Prometheus metrics
	PathHealth      = "/healthz"           // the process answers
	PathReady       = "/readyz"            // the store answers
	PathTokens      = "/v1/tokens"         // admin: GET list, POST create; /{id}: DELETE revoke
	PathWhoAmI      = "/v1/tokens/current" // GET: the calling token's grant
)

// IsURL reports whether s names a server (http:// or https://) rather than
// a store directory: remote.IsURL's rule, here so that code linking no
// HTTP client (ckpt's own binary) decides alike.
func IsURL(s string) bool {
	return strings.HasPrefix(s, "https://") || strings.HasPrefix(s, "http://")
}

// Headers with a meaning in the API.
const (
	// HeaderIfMatch on an append carries the expected revision (an
	// entity tag of the form "N" or plain N): AppendOptions.IfRev.
	HeaderIfMatch = "If-Match"
	// HeaderAsAgent "true" on an append records the event as the work of
	// the checkpoint's own agent: AppendOptions.AsCheckpointAgent.
	HeaderAsAgent = "Ckpt-As-Agent"
	// HeaderKeyOrigin on a keyed append says where its key came from
	// (AppendOptions.KeyOrigin): KeyOriginNew for a key the client made
	// for this append and sends for the first time, KeyOriginResent for
	// such a key sent again after a lost answer; absent, the key is a
	// given one.
	HeaderKeyOrigin = "Ckpt-Key-Origin"
	KeyOriginNew    = "new"
	KeyOriginResent = "resent"
	// HeaderIdempotencyKey on an append or a lifecycle call is the
	// event's idempotency key (it overrides a key in the body).
	HeaderIdempotencyKey = "Idempotency-Key"
	// HeaderReplayed is "true" on the answer to an append whose key had
	// been applied already.
	HeaderReplayed = "Idempotent-Replayed"
	// HeaderLastEventID resumes the change feed after a cursor.
	HeaderLastEventID = "Last-Event-ID"
)

// Event is an event on the wire: ckpt.Event with its checksum, which the
// history line carries but Event's JSON leaves out. Data travels as the
// exact bytes the store keeps, so a client can verify the chain.
type Event struct {
	ckpt.Event
	Sum string `json:"sum,omitempty"`
}

// WireEvent returns e as it travels.
func WireEvent(e ckpt.Event) Event { return Event{Event: e, Sum: e.Sum} }

// Store returns the event the wire one carries.
func (e Event) Store() ckpt.Event {
	out := e.Event
	out.Sum = e.Sum
	return out
}

// AppendResult is the answer to an append.
type AppendResult struct {
	State    *ckpt.Checkpoint `json:"state"`
	Event    Event            `json:"event"`
	Replayed bool             `json:"replayed,omitempty"`
	Warnings []string         `json:"warnings,omitempty"`
}

// Page is the answer to a listing: ckpt.Page, plus the checkpoints that
// could not be read (List's *ckpt.DamagedError) when there are some.
type Page struct {
	Items   []ckpt.Summary `json:"items"`
	Next    string         `json:"next,omitempty"`
	Damaged *Error         `json:"damaged,omitempty"`
}

// Beat is the body of a beat: ckpt.Signal.
type Beat struct {
	At      time.Time          `json:"at,omitzero"`
	State   ckpt.PresenceState `json:"state,omitempty"`
	Reason  string             `json:"reason,omitempty"`
	For     string             `json:"for,omitempty"`
	Process *ckpt.Process      `json:"process,omitempty"`
	Session string             `json:"session,omitempty"`
	Begins  bool               `json:"begins,omitempty"`
}

// Signal returns the signal the beat carries.
func (b Beat) Signal() ckpt.Signal {
	return ckpt.Signal{At: b.At, State: b.State, Reason: b.Reason, For: b.For, Process: b.Process, Session: b.Session, Begins: b.Begins}
}

// BeatOf returns sig as it travels.
func BeatOf(sig ckpt.Signal) Beat {
	return Beat{At: sig.At, State: sig.State, Reason: sig.Reason, For: sig.For, Process: sig.Process, Session: sig.Session, Begins: sig.Begins}
}

// Lifecycle is the body of a lifecycle call: ckpt.Lifecycle plus the
// arguments of each verb (ckpt.LifecycleOp). Force is Lifecycle.Force (for
// resume also its force argument).
type Lifecycle struct {
	At          time.Time   `json:"at,omitzero"`
	Actor       ckpt.Actor  `json:"actor,omitzero"`
	SessionID   string      `json:"session_id,omitempty"`
	Key         string      `json:"key,omitempty"`
	Reason      string      `json:"reason,omitempty"` // takeover, restart: the archive's one-word reason
	Force       bool        `json:"force,omitempty"`
	IfRev       int64       `json:"if_rev,omitempty"`      // one compare-and-swap on this revision (or If-Match)
	Agent       *ckpt.Agent `json:"agent,omitempty"`       // resume: replaces the recorded agent
	To          ckpt.Agent  `json:"to,omitzero"`           // takeover: the new agent
	Rev         int64       `json:"rev,omitempty"`         // restore: the revision to go back to
	Note        string      `json:"note,omitempty"`        // archive, abandon: the reason recorded
	QuietBefore time.Time   `json:"quiet_before,omitzero"` // abandon: quiet if last seen before this
}

// Lifecycle verbs (the segment after PathLifecycle): ckpt's Op constants.
const (
	VerbResume   = ckpt.OpResume
	VerbTakeover = ckpt.OpTakeover
	VerbRestart  = ckpt.OpRestart
	VerbRestore  = ckpt.OpRestore
	VerbArchive  = ckpt.OpArchive
	VerbAbandon  = ckpt.OpAbandon
)

// LifecycleResult is the answer to a lifecycle call.
type LifecycleResult struct {
	State      *ckpt.Checkpoint `json:"state"`
	ArchivedAs string           `json:"archived_as,omitempty"` // takeover, restart
	// Changed is false when archive found the checkpoint archived already
	// or abandon found it not quiet.
	Changed  bool   `json:"changed"`
	Replayed bool   `json:"replayed,omitempty"`
	Event    *Event `json:"event,omitempty"` // archive: the event appended or replayed
}

// Head is the answer to PathHead.
type Head struct {
	Cursor string `json:"cursor"`
}

// Check is the body of PathCheck.
type Check struct {
	IDs []string `json:"ids,omitempty"`
}

// Info is the answer to PathInfo.
type Info struct {
	Version      string            `json:"version"`
	Capabilities ckpt.Capabilities `json:"capabilities"`
}

// Tell is the body of PathTell: the message, and the sender to record
// when the token is bound to no agent (an agent-bound token's agent is
// the sender).
type Tell struct {
	Text string `json:"text"`
	From string `json:"from,omitempty"`
}

// StaleEntry is one silent checkpoint in the answer to PathStale.
type StaleEntry struct {
	ckpt.Summary
	// Liveness is warn or stale (ckpt.PresenceView.Alarm); Presence says
	// which (dead, stale or warn) and Why names the process or threshold.
	Liveness      ckpt.Liveness      `json:"liveness"`
	Presence      ckpt.PresenceState `json:"presence"`
	Why           string             `json:"why,omitempty"`
	SilentSeconds int64              `json:"silent_seconds"`
}

// Error is every error body: a stable code (ckpt.Code), the message, and
// for some codes the detail a client needs to rebuild the error.
type Error struct {
	Code    ckpt.Code `json:"code"`
	Message string    `json:"message"`
	// Conflict is set for CodeConflict from an append with If-Match.
	Conflict *Conflict `json:"conflict,omitempty"`
	// IDs names the damaged checkpoints of a listing (CodeCorrupt).
	IDs []string `json:"ids,omitempty"`
	// Refused is set for a lifecycle operation its rules refuse.
	Refused *Refused `json:"refused,omitempty"`
}

// Refused is the detail of a *ckpt.RefusedError: which rule refused the
// operation and whether forcing it (force: true, --force) would go on.
type Refused struct {
	Op       string    `json:"op"`
	ID       string    `json:"id"`
	Rule     ckpt.Rule `json:"rule"`
	Why      string    `json:"why"`
	Forcible bool      `json:"forcible"`
}

// Conflict is the detail of a *ckpt.ConflictError.
type Conflict struct {
	ID   string `json:"id"`
	Want int64  `json:"want"`
	Have int64  `json:"have"`
}

// HTTP statuses the API answers with, named here so that this package (and
// so the keeper and ckpt's own binary, which import it) links no net/http.
// They equal net/http's constants of the same names.
const (
	StatusBadRequest          = 400
	StatusUnauthorized        = 401
	StatusForbidden           = 403
	StatusNotFound            = 404
	StatusConflict            = 409
	StatusPreconditionFailed  = 412
	StatusUnprocessableEntity = 422
	StatusClientClosedRequest = 499 // the client went away (nginx's code)
	StatusInternalServerError = 500
	StatusBadGateway          = 502
	StatusServiceUnavailable  = 503
	StatusGatewayTimeout      = 504
)

// Status returns the HTTP status of an error code: the one table of
// statuses for error codes. A code not here is 500.
func Status(c ckpt.Code) int {
	switch c {
	case ckpt.CodeNotFound:
		return StatusNotFound
	case ckpt.CodeExists, ckpt.CodeNotResumable:
		return StatusConflict
	case ckpt.CodeConflict:
		return StatusPreconditionFailed
	case ckpt.CodeInvalid:
		return StatusBadRequest
	case ckpt.CodeCycleLimit:
		return StatusUnprocessableEntity
	case ckpt.CodeNoStore, ckpt.CodeUnavailable:
		return StatusServiceUnavailable
	case ckpt.CodeUnauthenticated:
		return StatusUnauthorized
	case ckpt.CodeForbidden:
		return StatusForbidden
	case ckpt.CodeCanceled:
		return StatusClientClosedRequest
	}
	return StatusInternalServerError // CodeCorrupt, CodeInternal and unknown codes
}

// statusText is the reason phrase of status, as net/http's StatusText
// words it for the statuses a server or proxy commonly answers with; ""
// for others (the number alone still says what happened).
func statusText(status int) string {
	switch status {
	case 200:
		return "OK"
	case StatusBadRequest:
		return "Bad Request"
	case StatusUnauthorized:
		return "Unauthorized"
	case StatusForbidden:
		return "Forbidden"
	case StatusNotFound:
		return "Not Found"
	case 405:
		return "Method Not Allowed"
	case 408:
		return "Request Timeout"
	case StatusConflict:
		return "Conflict"
	case 413:
		return "Request Entity Too Large"
	case StatusPreconditionFailed:
		return "Precondition Failed"
	case StatusUnprocessableEntity:
		return "Unprocessable Entity"
	case 429:
		return "Too Many Requests"
	case StatusInternalServerError:
		return "Internal Server Error"
	case 501:
		return "Not Implemented"
	case StatusBadGateway:
		return "Bad Gateway"
	case StatusServiceUnavailable:
		return "Service Unavailable"
	case StatusGatewayTimeout:
		return "Gateway Timeout"
	}
	return ""
}

// ErrorOf returns the wire form of err.
func ErrorOf(err error) *Error {
	e := &Error{Code: ckpt.ErrorCode(err), Message: err.Error()}
	var ce *ckpt.ConflictError
	if errors.As(err, &ce) {
		e.Conflict = &Conflict{ID: ce.ID, Want: ce.Want, Have: ce.Have}
	}
	var de *ckpt.DamagedError
	if errors.As(err, &de) {
		e.IDs = de.IDs
	}
	var re *ckpt.RefusedError
	if errors.As(err, &re) {
		e.Refused = &Refused{Op: re.Op, ID: re.ID, Rule: re.Rule, Why: re.Why, Forcible: re.Forcible}
	}
	return e
}

// Err rebuilds the error a wire Error describes, so that errors.Is with the
// root package's sentinels and errors.As with *ckpt.ConflictError,
// *ckpt.DamagedError and *ckpt.RefusedError work on the client as on the
// server.
func (e *Error) Err() error {
	if e.Message == "" {
		e.Message = fmt.Sprintf("the server reported %s with no message", e.Code)
	}
	if e.Conflict != nil {
		return &ckpt.ConflictError{ID: e.Conflict.ID, Want: e.Conflict.Want, Have: e.Conflict.Have}
	}
	if r := e.Refused; r != nil && ckpt.SentinelOf(e.Code) != nil {
		return &ckpt.RefusedError{Op: r.Op, ID: r.ID, Rule: r.Rule, Why: r.Why, Forcible: r.Forcible, Err: ckpt.SentinelOf(e.Code)}
	}
	if e.Code == ckpt.CodeCorrupt && len(e.IDs) > 0 {
		return &ckpt.DamagedError{IDs: e.IDs, Err: &RemoteError{Code: e.Code, Message: e.Message}}
	}
	return &RemoteError{Code: e.Code, Message: e.Message}
}

// RemoteError is an error the server reported. It unwraps to the root
// package's sentinel for its code (ckpt.SentinelOf), nil for internal
// errors.
type RemoteError struct {
	Code    ckpt.Code
	Message string
}

func (e *RemoteError) Error() string { return e.Message }

// Unwrap returns the sentinel of the error's code.
func (e *RemoteError) Unwrap() error { return ckpt.SentinelOf(e.Code) }

// DecodeError reads an error body of status; a body that is not an API
// error (a proxy's page, say) becomes an error naming the status, which
// is unavailable for 502, 503 and 504 and internal otherwise.
func DecodeError(status int, body []byte) error {
	var e Error
	if err := json.Unmarshal(body, &e); err == nil && e.Code != "" {
		return e.Err()
	}
	code := ckpt.CodeInternal
	switch status {
	case StatusBadGateway, StatusServiceUnavailable, StatusGatewayTimeout:
		code = ckpt.CodeUnavailable
	case StatusUnauthorized:
		code = ckpt.CodeUnauthenticated
	case StatusForbidden:
		code = ckpt.CodeForbidden
	case StatusNotFound:
		code = ckpt.CodeNotFound
	}
	snippet := string(body)
	if len(snippet) > 200 {
		snippet = snippet[:200] + "…"
	}
	answered := fmt.Sprint(status)
	if text := statusText(status); text != "" {
		answered += " " + text
	}
	return &RemoteError{Code: code, Message: fmt.Sprintf("the server answered %s: %q", answered, snippet)}
}

// TokenInfo is a token as the API shows it: never its hash; its bearer
// string (Token) only in the answer that created it. The body of a
// create names Scope and optionally Prefix, Agent, Note, ReadPrefix and
// TTL.
type TokenInfo struct {
	ID        string    `json:"id,omitempty"`
	Scope     string    `json:"scope"`
	Prefix    string    `json:"prefix,omitempty"`
	Agent     string    `json:"agent,omitempty"`
	Note      string    `json:"note,omitempty"`
	CreatedAt time.Time `json:"created_at,omitzero"`
	Token     string    `json:"token,omitempty"`
	// ReadPrefix limits the token's reading to Prefix too.
	ReadPrefix bool `json:"read_prefix,omitempty"`
	// TTL, in a create, makes the token expire that long after (a Go
	// duration: 24h, 90m); ExpiresAt is when it does.
	TTL       string    `json:"ttl,omitempty"`
	ExpiresAt time.Time `json:"expires_at,omitzero"`
}

// Server-sent event names of the change feed. Each "change" event's id is
// the change's cursor and its data a ckpt.Change; an "error" event's data
// is an Error, after which the server ends the stream.
const (
	SSEChange = "change"
	SSEError  = "error"
)
