package ckpt

import (
	"context"
	"errors"
	"sort"
	"strings"
	"time"
)

// What needs a person: the inbox. A rule every surface applies alike, so
// it lives beside the presence it reads (PresenceOf); the views
// (internal/render's WriteInbox) only print it.

// InboxStates are the states that need a person, most urgent first: an
// agent waiting for an answer, work blocked, an agent dead or silent, work
// that failed. The inbox lists them in this order.
var InboxStates = []PresenceState{"waiting", "blocked", "dead", "stale", "failed"}

// InboxEntry is one checkpoint that needs a person, as `ckpt inbox --json`,
// GET /v1/inbox and ckpt_inbox give it.
type InboxEntry struct {
	ID     string        `json:"id"`
	Title  string        `json:"title,omitempty"`
	Agent  string        `json:"agent,omitempty"` // Agent.Label
	Parent string        `json:"parent,omitempty"`
	Status Status        `json:"status"`
	State  PresenceState `json:"state"` // one of InboxStates
	// Reason says what it waits for, what blocks it, why it is taken for
	// dead or stale, why it failed.
	Reason string `json:"reason,omitempty"`
	// Since is when the state began (as far as ckpt knows); AgeSeconds is
	// how long before the inbox was made.
	Since      time.Time `json:"since"`
	AgeSeconds int64     `json:"age_seconds"`
	// Messages counts the messages told and not yet delivered.
	Messages int   `json:"messages,omitempty"`
	Rev      int64 `json:"rev"`
}

// Inbox is what needs a person now, most urgent first.
type Inbox struct {
	Entries []InboxEntry `json:"items"`
	// Counts has how many entries are in each state.
	Counts map[PresenceState]int `json:"counts"`
	// Damaged names checkpoints that could not be read.
	Damaged []string `json:"damaged,omitempty"`
}

// inboxStatuses are the statuses a checkpoint that needs a person can have.
var inboxStatuses = []Status{StatusInProgress, StatusWaiting, StatusBlocked, StatusFailed}

// InboxFrom is the one inbox every surface shows (ckpt inbox, GET
// /v1/inbox, MCP's ckpt_inbox): the inbox of the checkpoints of st that f matches (its
// Status is replaced), at now, from each one's state (PresenceOf):
// those in InboxStates, in that order, the oldest first within a state
// (then by ID). Reasons missing from the state's explanation are read from
// the checkpoint (its blockers, its status reason). A damaged checkpoint is
// named in Damaged; any other error stops it.
func InboxFrom(ctx context.Context, st Store, f Filter, now time.Time, th Thresholds, alive AliveFunc) (Inbox, error) {
	f.Status = inboxStatuses
	in := Inbox{Entries: []InboxEntry{}, Counts: map[PresenceState]int{}}
	err := EachPage(ctx, st, f, func(page []Summary) error {
		for i := range page {
			if e, ok := inboxEntry(ctx, st, &page[i], now, th, alive); ok {
				in.Entries = append(in.Entries, e)
			}
		}
		return nil
	})
	var d *DamagedError
	if errors.As(err, &d) {
		in.Damaged, err = d.IDs, nil
	}
	if err != nil {
		return Inbox{Entries: []InboxEntry{}, Counts: map[PresenceState]int{}}, err
	}
	for i := range in.Entries {
		e := &in.Entries[i]
		if e.Reason == "" {
			e.Reason = readReason(ctx, st, e.ID, e.State)
		}
		in.Counts[e.State]++
	}
	rank := func(s PresenceState) int {
		for i, x := range InboxStates {
			if x == s {
				return i
			}
		}
		return len(InboxStates)
	}
	sort.SliceStable(in.Entries, func(i, j int) bool {
		a, b := in.Entries[i], in.Entries[j]
		if rank(a.State) != rank(b.State) {
			return rank(a.State) < rank(b.State)
		}
		if !a.Since.Equal(b.Since) {
			return a.Since.Before(b.Since)
		}
		return a.ID < b.ID
	})
	return in, nil
}

// inboxEntry is s's entry when its state needs a person.
func inboxEntry(ctx context.Context, st Store, s *Summary, now time.Time, th Thresholds, alive AliveFunc) (InboxEntry, bool) {
	v := RejudgeDead(ctx, st, s.ID, PresenceOf(s, now, th, alive), now, th, alive)
	state := attentionState(s, v)
	if state == "" {
		return InboxEntry{}, false
	}
	since := v.Since
	if state != v.State || since.IsZero() {
		since = s.UpdatedAt
		if s.CompletedAt != nil && s.Status == StatusFailed {
			since = *s.CompletedAt
		}
	}
	e := InboxEntry{ID: s.ID, Title: s.Title, Agent: s.Agent.Label(), Parent: s.Parent, Status: s.Status, State: state,
		Since: since, AgeSeconds: int64(max(now.Sub(since), 0) / time.Second), Messages: s.Messages, Rev: s.Rev}
	if state == v.State {
		e.Reason = v.Why
	}
	return e, true
}

// attentionState is the state of an inbox entry (StateOf), "" when it is
// not one of InboxStates.
func attentionState(s *Summary, v PresenceView) PresenceState {
	if v.State == PresenceWaiting && v.For == WaitsThing {
		return "" // waiting for a build, a bot: nobody needs to act
	}
	st := stateOf(s, v)
	for _, x := range InboxStates {
		if st == x {
			return x
		}
	}
	return ""
}

// StateOf is the one state of the summarised checkpoint an operator reads:
// PresenceOf's (done and failed for finished work, blocked, waiting for a
// ckpt wait). The inbox and the webhooks judge by it.
func StateOf(s *Summary, now time.Time, th Thresholds, alive AliveFunc) PresenceState {
	return stateOf(s, PresenceOf(s, now, th, alive))
}

func stateOf(_ *Summary, v PresenceView) PresenceState { return v.State }

// readReason reads a reason the view did not give from checkpoint id.
func readReason(ctx context.Context, st Store, id string, state PresenceState) string {
	c, err := st.Get(ctx, id, 0)
	if err != nil {
		return ""
	}
	return ReasonOf(c, state)
}

// ReasonOf says why c is in state when its presence gives no reason: the
// active blockers and blocking errors of blocked work, else the status
// reason (what it waits for, why it failed), on one line.
func ReasonOf(c *Checkpoint, state PresenceState) string {
	var parts []string
	if state == "blocked" {
		for _, b := range c.ActiveBlockers() {
			parts = append(parts, b.ID+": "+b.Text)
		}
		for _, e := range c.ActiveErrors() {
			if e.Blocking {
				parts = append(parts, "error: "+e.Message)
			}
		}
	}
	if len(parts) == 0 && c.StatusReason != "" {
		parts = append(parts, c.StatusReason)
	}
	return clip(strings.Join(parts, "; "), 300)
}

// clip is s on one line, its runs of white space made one space, cut to n
// runes with an ellipsis when longer.
func clip(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}
