// Package request turns what a person or an agent asks for (a command's
// flags, an MCP tool's arguments) into the ckpt.Event that records it, with
// one set of rules for every surface: which values are valid, what a
// missing value means, what an empty request is. A surface parses its own
// syntax, fills a request, and appends the event Build returns.
package request

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	ckpt "github.com/ckpt-dev/ckpt"
)

// Names maps a request's field names (snake_case, as in the checkpoint's
// JSON: max_cycles, meta_json) to the words a surface uses for them in
// messages: its flags (--max-cycles) or its tool arguments. nil names each
// field by its own name.
type Names func(field string) string

func (n Names) of(field string) string {
	if n == nil {
		return field
	}
	return n(field)
}

// Request is one change a surface asks for.
type Request interface {
	// Build checks the request and returns the event's type and data
	// (for ckpt.NewEvent). Errors wrap ckpt.ErrInvalid and name fields
	// with n.
	Build(n Names) (ckpt.EventType, any, error)
}

// ErrEmpty is Build's error for an update that changes nothing (it wraps
// ckpt.ErrInvalid too): each surface says which fields it takes.
var ErrEmpty = errors.New("nothing to update")

// Write is how Append records a request.
type Write struct {
	At    time.Time
	Actor ckpt.Actor
	Key   string // idempotency key
	IfRev int64  // compare-and-swap when > 0
	Names Names
}

// Append checks id and r, builds r's event and appends it to checkpoint id
// in one store call (one durable write). An Update that sets progress is
// checked against the checkpoint first (Update.CheckProgress).
func Append(ctx context.Context, st ckpt.Store, id string, r Request, w Write) (ckpt.AppendResult, error) {
	if err := ckpt.ValidateID(id); err != nil {
		return ckpt.AppendResult{}, err
	}
	if w.IfRev < 0 {
		return ckpt.AppendResult{}, fmt.Errorf("%w: %s %d: give a revision of 1 or more", ckpt.ErrInvalid, w.Names.of("if_rev"), w.IfRev)
	}
	e, err := NewEvent(r, w)
	if err != nil {
		return ckpt.AppendResult{}, err
	}
	if u, ok := r.(Update); ok {
		if err := u.CheckProgress(ctx, st, id); err != nil {
			return ckpt.AppendResult{}, err
		}
	}
	return st.Append(ctx, id, e, ckpt.AppendOptions{IfRev: w.IfRev})
}

// NewEvent checks r and returns its event, made at w.At by w.Actor with
// idempotency key w.Key.
func NewEvent(r Request, w Write) (ckpt.Event, error) {
	t, data, err := r.Build(w.Names)
	if err != nil {
		return ckpt.Event{}, err
	}
	e, err := ckpt.NewEvent(t, w.At, w.Actor, data)
	if err != nil {
		return ckpt.Event{}, err
	}
	e.Key = w.Key
	return e, nil
}

// nonEmpty drops empty and blank entries.
func nonEmpty(list []string) []string {
	if list == nil {
		return nil
	}
	out := make([]string, 0, len(list))
	for _, s := range list {
		if strings.TrimSpace(s) != "" {
			out = append(out, s)
		}
	}
	return out
}

// optional is &s, or nil for "".
func optional(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

func invalid(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ckpt.ErrInvalid}, args...)...)
}
