package ckpt

import (
	"context"
	"errors"
	"time"
)

// Summary is the projection of a checkpoint that listings carry: enough to
// show a row, filter, page and judge liveness, without moving the full
// state (steps, decisions, files, meta). Every backend derives it with
// (*Checkpoint).Summary, so the same state yields the same summary anywhere.
type Summary struct {
	ID        string   `json:"id"`
	Rev       int64    `json:"rev"`
	Parent    string   `json:"parent,omitempty"`
	Labels    []string `json:"labels,omitempty"`
	Agent     Agent    `json:"agent"`
	SessionID string   `json:"session_id,omitempty"`
	Title     string   `json:"title,omitempty"`
	TaskID    string   `json:"task_id,omitempty"`
	Stage     string   `json:"stage,omitempty"`
	Phase     string   `json:"phase,omitempty"`
	Status    Status   `json:"status"`
	// StatusReason is why it waits, failed or was abandoned.
	StatusReason string    `json:"status_reason,omitempty"`
	CurrentStep  string    `json:"current_step,omitempty"`
	Progress     Progress  `json:"progress"`
	Heartbeat    Heartbeat `json:"heartbeat"`
	// ActiveBlockers and BlockingErrors count what stops the work now.
	ActiveBlockers int `json:"active_blockers,omitempty"`
	BlockingErrors int `json:"blocking_errors,omitempty"`
	// Blockers are the active blockers ("b1: TEXT"), then the blocking
	// errors ("error: MESSAGE"): what a blocked checkpoint waits on.
	Blockers []string `json:"blockers,omitempty"`
	// SessionStartedAt is when the current session began; a presence
	// record bound before it is the previous session's (PresenceOf).
	SessionStartedAt time.Time `json:"session_started_at,omitzero"`
	// Partial is a done checkpoint whose acceptance criteria are not all met.
	Partial bool `json:"partial,omitempty"`
	// Messages counts the messages told and not yet delivered.
	Messages    int        `json:"messages,omitempty"`
	Archived    *Archive   `json:"archived,omitempty"`
	StartedAt   time.Time  `json:"started_at"`
	UpdatedAt   time.Time  `json:"updated_at"`
	CompletedAt *time.Time `json:"completed_at,omitempty"`
}

// Summary returns c's summary. Slices are copied: the summary shares
// nothing with c.
func (c *Checkpoint) Summary() Summary {
	s := Summary{
		ID: c.ID, Rev: c.Rev, Parent: c.Parent, Agent: c.Agent, SessionID: c.Session.ID,
		Title: c.Title, TaskID: c.TaskID, Stage: c.Stage, Phase: c.Phase,
		Status: c.Status, StatusReason: c.StatusReason, CurrentStep: c.CurrentStep, Progress: c.Progress,
		SessionStartedAt: c.Session.StartedAt,
		Heartbeat:        c.Heartbeat, Partial: c.PartiallyComplete(), Messages: len(c.Messages),
		StartedAt: c.StartedAt, UpdatedAt: c.UpdatedAt,
	}
	if len(c.Labels) > 0 {
		s.Labels = append([]string(nil), c.Labels...)
	}
	for _, b := range c.ActiveBlockers() {
		s.ActiveBlockers++
		s.Blockers = append(s.Blockers, b.ID+": "+b.Text)
	}
	for _, e := range c.ActiveErrors() {
		if e.Blocking {
			s.BlockingErrors++
			s.Blockers = append(s.Blockers, "error: "+e.Message)
		}
	}
	if c.Archived != nil {
		a := *c.Archived
		s.Archived = &a
	}
	if p := c.Heartbeat.Presence; p != nil {
		cp := *p
		if p.Process != nil {
			pr := *p.Process
			cp.Process = &pr
		}
		s.Heartbeat.Presence = &cp
	}
	if c.CompletedAt != nil {
		t := *c.CompletedAt
		s.CompletedAt = &t
	}
	return s
}

// LastSeen is the later of the last heartbeat and the last update.
func (s *Summary) LastSeen() time.Time {
	if s.Heartbeat.LastBeat.After(s.UpdatedAt) {
		return s.Heartbeat.LastBeat
	}
	return s.UpdatedAt
}

// DefaultPageSize is the page size a surface uses when the caller names
// none. Stores themselves treat a zero limit as "no limit".
const DefaultPageSize = 50

// MaxPageSize bounds a page a remote caller may ask for.
const MaxPageSize = 1000

// ListOptions selects and pages checkpoints in List.
type ListOptions struct {
	Filter
	// Limit is the most summaries one page holds; 0 means no limit.
	Limit int
	// After is the cursor of the previous page (Page.Next); "" starts at
	// the first ID. Cursors are opaque, valid for the store that made them
	// and for the same Filter.
	After string
}

// Page is one page of a listing, ordered by ID.
type Page struct {
	Items []Summary `json:"items"`
	// Next is the cursor of the following page, "" when this is the last.
	Next string `json:"next,omitempty"`
	// Omitted counts the checkpoints the filter matches that the store
	// left out under Filter.Quiet, each counted in exactly one page.
	Omitted int `json:"omitted,omitempty"`
}

// ListAll pages through every checkpoint that f matches. A *DamagedError
// from any page is collected (its IDs merged) and returned with the whole
// listing; any other error stops it.
func ListAll(ctx context.Context, s Store, f Filter) ([]Summary, error) {
	out := []Summary{}
	err := EachPage(ctx, s, f, func(page []Summary) error {
		out = append(out, page...)
		return nil
	})
	var d *DamagedError
	if err != nil && !errors.As(err, &d) {
		return nil, err
	}
	return out, err
}

// EachPage pages through every checkpoint that f matches, calling fn with
// each page's summaries in ID order, so that a caller judging every
// checkpoint (ckpt stale at 100,000) holds one page at a time, not the
// whole store. fn may keep the summaries (each page is its own slice). A
// *DamagedError from any page is collected (its IDs merged) and returned
// once every page was seen; an error from the store or from fn stops it.
// Every checkpoint f matches is listed: f's Quiet is ignored.
func EachPage(ctx context.Context, s Store, f Filter, fn func(page []Summary) error) error {
	f.Quiet = nil
	return eachPage(ctx, s, f, func(p *Page) error { return fn(p.Items) })
}

// eachPage is EachPage handing fn each whole page (its Omitted too).
func eachPage(ctx context.Context, s Store, f Filter, fn func(p *Page) error) error {
	var damaged *DamagedError
	opts := ListOptions{Filter: f, Limit: MaxPageSize}
	for {
		p, err := s.List(ctx, opts)
		var d *DamagedError
		switch {
		case errors.As(err, &d):
			if damaged == nil {
				damaged = &DamagedError{Err: d.Err}
			}
			damaged.IDs = append(damaged.IDs, d.IDs...)
		case err != nil:
			return err
		}
		if err := fn(&p); err != nil {
			return err
		}
		if p.Next == "" {
			break
		}
		opts.After = p.Next
	}
	if damaged != nil {
		return damaged
	}
	return nil
}

// GetAll is ListAll with the current state of each checkpoint, for views
// that need more than a summary. A checkpoint deleted since the listing
// is left out; one that cannot be read (ErrCorrupt) joins the listing's
// damaged IDs. As ListAll, a *DamagedError comes with every readable
// checkpoint; any other error stops it.
func GetAll(ctx context.Context, s Store, f Filter) ([]*Checkpoint, error) {
	sums, err := ListAll(ctx, s, f)
	var damaged *DamagedError
	if err != nil && !errors.As(err, &damaged) {
		return nil, err
	}
	out := make([]*Checkpoint, 0, len(sums))
	for _, sum := range sums {
		c, err := s.Get(ctx, sum.ID, 0)
		switch {
		case errors.Is(err, ErrNotFound):
			continue // deleted since the listing
		case errors.Is(err, ErrCorrupt):
			if damaged == nil {
				damaged = &DamagedError{Err: err}
			}
			damaged.IDs = append(damaged.IDs, sum.ID)
			continue
		case err != nil:
			return nil, err
		}
		out = append(out, c)
	}
	if damaged != nil {
		return out, damaged
	}
	return out, nil
}
