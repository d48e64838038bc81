// Package bulk acts on a filtered set of checkpoints at once: the
// checkpoints a selection (the dashboard's filters: prefix, status,
// presence, agent, parent, label, text) picks, each given the same action
// an operator would take on one (tell, note, done, abandon, archive,
// unblock). A dry run says what would happen to each; a run reports what
// happened to each. The dashboard, the HTTP API (POST /v1/bulk) and
// `ckpt bulk` share it, so a preview and its run agree everywhere.
package bulk

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/ckpt-dev/ckpt"
)

// Action is what a bulk request does to each checkpoint it selects.
type Action string

// The actions: each the library call the single command makes.
const (
	Tell    Action = "tell"    // ckpt tell: a message for each agent (Text)
	Note    Action = "note"    // ckpt note: a line in each checkpoint's notes (Text)
	Done    Action = "done"    // ckpt done: mark the work done
	Abandon Action = "abandon" // mark the work abandoned (Text: the reason)
	Archive Action = "archive" // ckpt archive: hide ended work (Text: the reason, default complete)
	Unblock Action = "unblock" // ckpt unblock: clear every active blocker
)

// Actions lists the actions in the order help shows them.
var Actions = []Action{Tell, Note, Done, Abandon, Archive, Unblock}

// MaxItems bounds how many checkpoints one request may act on: a wider
// selection is refused with a hint to narrow it.
const MaxItems = 5000

// Selector picks checkpoints, with the dashboard's filters as its URL
// spells them. At least one filter, or All, is required: an empty
// selection is the whole fleet, never taken by accident.
type Selector struct {
	Prefix   string `json:"prefix,omitempty"`
	Status   string `json:"status,omitempty"`   // statuses, comma-separated
	Presence string `json:"presence,omitempty"` // presence words (Word), comma-separated
	Agent    string `json:"agent,omitempty"`
	Parent   string `json:"parent,omitempty"`
	Label    string `json:"label,omitempty"`
	Text     string `json:"q,omitempty"` // in the ID, title, agent or current step
	All      bool   `json:"all,omitempty"`
}

// Request is one bulk action.
type Request struct {
	Action Action   `json:"action"`
	Select Selector `json:"filter"`
	// Text is the message (tell), the note (note) or the reason (abandon,
	// archive).
	Text string `json:"text,omitempty"`
	// IDs, when given, are the checkpoints a preview listed: only those
	// are acted on, and each only if the selection still picks it.
	IDs    []string `json:"ids,omitempty"`
	DryRun bool     `json:"dry_run,omitempty"`
	// From is the actor an HTTP request asks to be recorded as (the
	// sender of a tell); a token bound to an agent records its agent.
	// Other callers set Env.Actor.
	From string `json:"from,omitempty"`
}

// Outcomes of an item.
const (
	Will      = "will"      // a dry run: the action would apply
	Applied   = "done"      // the action was applied
	Skipped   = "skipped"   // it does not apply (already done, no blocker, …)
	Forbidden = "forbidden" // the caller may not act on it
	Failed    = "failed"    // the store refused or failed
)

// Item is what happened (or would happen) to one checkpoint.
type Item struct {
	ID      string `json:"id"`
	Outcome string `json:"outcome"`
	Reason  string `json:"reason,omitempty"`
	Rev     int64  `json:"rev,omitempty"` // the revision the action made
}

// Result is the answer to a Request: every checkpoint's item, in ID order.
type Result struct {
	Action  Action         `json:"action"`
	DryRun  bool           `json:"dry_run,omitempty"`
	Matched int            `json:"matched"` // how many the selection picks
	Counts  map[string]int `json:"counts"`  // items by outcome
	Items   []Item         `json:"items"`
}

// Env is where and as whom a request runs.
type Env struct {
	// Store is the store as the caller may write it (a token's prefix and
	// agent applied); the selection is listed from it too.
	Store ckpt.Store
	// May reports whether the caller may act on id; nil: on every one.
	May        func(id string) bool
	Now        time.Time
	Actor      ckpt.Actor
	Thresholds ckpt.Thresholds
	Alive      ckpt.AliveFunc
}

// Check validates r before anything is read: a known action, the text it
// needs, a selection that is not empty by accident.
func (r Request) Check() error {
	if !slices.Contains(Actions, r.Action) {
		return fmt.Errorf("%w: unknown bulk action %q: use tell, note, done, abandon, archive or unblock", ckpt.ErrInvalid, r.Action)
	}
	if (r.Action == Tell || r.Action == Note) && strings.TrimSpace(r.Text) == "" {
		return fmt.Errorf("%w: %s needs the text (the message or the note)", ckpt.ErrInvalid, r.Action)
	}
	if len(r.Text) > 4096 {
		return fmt.Errorf("%w: the text is %d bytes: at most 4096", ckpt.ErrInvalid, len(r.Text))
	}
	if len(r.IDs) > MaxItems {
		return fmt.Errorf("%w: %d IDs: at most %d in one request", ckpt.ErrInvalid, len(r.IDs), MaxItems)
	}
	s := r.Select
	if !s.All && s.Prefix == "" && s.Status == "" && s.Presence == "" && s.Agent == "" && s.Parent == "" && s.Label == "" && strings.TrimSpace(s.Text) == "" {
		return fmt.Errorf("%w: a bulk action needs a filter (prefix, status, presence, agent, parent, label or text), or all to act on every checkpoint", ckpt.ErrInvalid)
	}
	_, err := s.filter()
	return err
}

// filter is the part of s the store runs.
func (s Selector) filter() (ckpt.Filter, error) {
	f := ckpt.Filter{Prefix: s.Prefix, Agent: s.Agent, Parent: s.Parent, Label: s.Label}
	for _, w := range splitList(s.Status) {
		st, err := ckpt.ParseStatus(w)
		if err != nil {
			return f, fmt.Errorf("status filter: %w", err)
		}
		f.Status = append(f.Status, st)
	}
	return f, nil
}

// Matches applies the filters the store cannot run: the presence word and
// the text (the dashboard's overview applies the same).
func (s Selector) Matches(word string, sum *ckpt.Summary) bool {
	if ws := splitList(s.Presence); len(ws) > 0 && !slices.Contains(ws, word) {
		return false
	}
	text := strings.ToLower(strings.TrimSpace(s.Text))
	if text == "" {
		return true
	}
	hay := strings.ToLower(sum.ID + " " + sum.Title + " " + sum.Agent.Name + " " + sum.Agent.ID + " " + sum.CurrentStep)
	return strings.Contains(hay, text)
}

func splitList(s string) []string {
	var out []string
	for _, w := range strings.Split(s, ",") {
		if w = strings.TrimSpace(w); w != "" {
			out = append(out, w)
		}
	}
	return out
}

// Run previews (DryRun) or runs r in env.
func Run(ctx context.Context, env Env, r Request) (Result, error) {
	if err := r.Check(); err != nil {
		return Result{}, err
	}
	picked, err := Select(ctx, env, r.Select)
	if err != nil {
		return Result{}, err
	}
	out := Result{Action: r.Action, DryRun: r.DryRun, Matched: len(picked), Counts: map[string]int{}, Items: []Item{}}
	if len(picked) > MaxItems && r.IDs == nil {
		return Result{}, fmt.Errorf("%w: the filters pick %d checkpoints, more than %d: narrow them (a prefix, a status, a presence)", ckpt.ErrInvalid, len(picked), MaxItems)
	}
	byID := make(map[string]*ckpt.Summary, len(picked))
	for i := range picked {
		byID[picked[i].ID] = &picked[i]
	}
	ids := r.IDs
	if ids == nil {
		ids = make([]string, len(picked))
		for i := range picked {
			ids[i] = picked[i].ID
		}
	}
	ids = slices.Compact(slices.Sorted(slices.Values(ids)))
	for _, id := range ids {
		it := Item{ID: id}
		s := byID[id]
		switch {
		case s == nil:
			it.Outcome, it.Reason = Skipped, "the filters no longer pick it"
		case env.May != nil && !env.May(id):
			it.Outcome, it.Reason = Forbidden, "outside what this token may change"
		default:
			it.Outcome, it.Reason = preview(r, s)
			if it.Outcome == Will && !r.DryRun {
				it = apply(ctx, env, r, id)
			}
		}
		out.Counts[it.Outcome]++
		out.Items = append(out.Items, it)
	}
	return out, nil
}

// Select lists the checkpoints s picks, in ID order. A damaged checkpoint
// cannot be read, so it is not picked.
func Select(ctx context.Context, env Env, s Selector) ([]ckpt.Summary, error) {
	f, err := s.filter()
	if err != nil {
		return nil, err
	}
	all, err := ckpt.ListAll(ctx, env.Store, f)
	var d *ckpt.DamagedError
	if err != nil && !errors.As(err, &d) {
		return nil, err
	}
	out := all[:0]
	for i := range all {
		w, _, _ := Word(&all[i], env.Now, env.Thresholds, env.Alive)
		if s.Matches(w, &all[i]) {
			out = append(out, all[i])
		}
	}
	return out, nil
}

// preview says whether r applies to the checkpoint s summarises, and if
// not, why.
func preview(r Request, s *ckpt.Summary) (string, string) {
	switch r.Action {
	case Done, Abandon:
		if s.Status.Final() {
			return Skipped, "it is " + string(s.Status) + " already"
		}
	case Archive:
		if !s.Status.Final() {
			return Skipped, "it has not ended (" + string(s.Status) + "): mark it done or abandoned first"
		}
	case Unblock:
		if s.ActiveBlockers == 0 {
			return Skipped, "it has no active blocker"
		}
	}
	return Will, ""
}
