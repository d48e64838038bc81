package mcp

import (
	"context"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	ckpt "github.com/ckpt-dev/ckpt"
	"github.com/ckpt-dev/ckpt/internal/process"
	"github.com/ckpt-dev/ckpt/internal/render"
	"github.com/ckpt-dev/ckpt/internal/request"
)

// WhyInput are ckpt_why's arguments.
type WhyInput struct {
	ID    string `json:"id" jsonschema:"the checkpoint ID, e.g. kai-7/secondary-a"`
	Warn  string `json:"warn,omitempty" jsonschema:"silence after which it is warn, e.g. 30m; default twice its heartbeat interval"`
	Stale string `json:"stale,omitempty" jsonschema:"silence after which it is stale, e.g. 1h; default four times its heartbeat interval"`
}

// WhyOutput is ckpt_why's result: render.Why, flattened to plain fields.
type WhyOutput struct {
	ID        string   `json:"id" jsonschema:"the checkpoint ID"`
	Status    string   `json:"status" jsonschema:"the checkpoint's status"`
	Presence  string   `json:"presence" jsonschema:"the state every view shows: working, busy, waiting, blocked, failed, dead, stale, warn, ended, done or -"`
	Since     string   `json:"since,omitempty" jsonschema:"when the state began (RFC 3339), when known"`
	Why       string   `json:"why,omitempty" jsonschema:"what it waits on or runs, why it is taken for dead, which threshold passed"`
	For       string   `json:"for,omitempty" jsonschema:"for waiting: person or thing"`
	Blockers  []string `json:"blockers,omitempty" jsonschema:"for blocked: the active blockers and blocking errors"`
	Rule      int      `json:"rule" jsonschema:"the number of the rule that decided it (docs/design.md, Liveness and presence)"`
	When      string   `json:"when" jsonschema:"the rule's condition"`
	Signal    string   `json:"signal" jsonschema:"where the deciding fact came from"`
	Change    string   `json:"change" jsonschema:"what would change the state"`
	LastSeen  string   `json:"last_seen,omitempty" jsonschema:"the last sign of life (RFC 3339)"`
	Suspect   bool     `json:"suspect,omitempty" jsonschema:"the last-seen time is ahead of the server's clock beyond the skew bound"`
	Reported  string   `json:"reported,omitempty" jsonschema:"the last reported state, reason, time and session as the store keeps it"`
	Process   string   `json:"process,omitempty" jsonschema:"the client process bound to the session: PID on host"`
	ProcessIs string   `json:"process_is,omitempty" jsonschema:"alive, gone or unknown"`
	Session   string   `json:"session,omitempty" jsonschema:"the checkpoint's current session"`
}

func (s *server) why(ctx context.Context, _ *sdk.CallToolRequest, in WhyInput) (*sdk.CallToolResult, WhyOutput, error) {
	th, err := request.ParseThresholds(s.opts.Thresholds, "warn", in.Warn, "stale", in.Stale)
	if err != nil {
		return nil, WhyOutput{}, err
	}
	if err := ckpt.ValidateID(in.ID); err != nil {
		return nil, WhyOutput{}, err
	}
	c, err := s.store.Get(ctx, in.ID, 0)
	if err != nil {
		return nil, WhyOutput{}, err
	}
	sum := c.Summary()
	w := render.NewWhy(&sum, s.now(), th, process.Alive)
	v := w.Presence
	out := WhyOutput{ID: w.ID, Status: string(w.Status), Presence: string(v.State), Why: v.Why, For: v.For, Blockers: v.Blockers,
		Rule: w.Rule.N, When: w.Rule.When, Signal: w.Rule.Signal, Change: w.Rule.Change, Suspect: v.Suspect,
		ProcessIs: w.ProcessIs, Session: w.Session}
	if !v.Since.IsZero() {
		out.Since = v.Since.Format(render.TimeLayout)
	}
	if !w.LastSeen.IsZero() {
		out.LastSeen = w.LastSeen.Format(render.TimeLayout)
	}
	if p := w.Reported; p != nil {
		out.Reported = render.ReportedText(p)
		if p.Process != nil {
			out.Process = p.Process.String()
		}
	}
	return nil, out, nil
}
