package plan

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	ckpt "github.com/ckpt-dev/ckpt"
	"github.com/ckpt-dev/ckpt/internal/lazyregexp"
)

// Report is what SyncStore did: the sync of plan.md's bookkeeping and the
// store step. Its JSON is what `ckpt plan sync --json` prints.
type Report struct {
	Plan            string        `json:"plan"` // the plan's path as given
	ID              string        `json:"id"`
	Rev             int64         `json:"rev"`
	Stored          bool          `json:"stored"` // an event was appended
	NewlyCompleted  []string      `json:"newly_completed"`
	Reopened        []string      `json:"reopened"`
	NewlyMet        []string      `json:"newly_met"`
	PhasesCompleted []string      `json:"phases_completed"`
	Recovered       string        `json:"recovered,omitempty"`
	RecoverySaved   string        `json:"recovery_saved,omitempty"`
	PlanError       string        `json:"plan_error,omitempty"` // plan.md could not be read: nothing stored
	History         []string      `json:"history"`              // the events appended to history.jsonl
	Warnings        []string      `json:"warnings"`             // the plan's and the sync's
	Progress        ckpt.Progress `json:"progress"`
	Status          ckpt.Status   `json:"status,omitempty"`

	// State is the checkpoint after the store step; nil when nothing was
	// stored because plan.md could not be read.
	State *ckpt.Checkpoint `json:"-"`
	// StoreWarnings are the store's remarks (damage mended on the way).
	StoreWarnings []string `json:"-"`
}

// Text is what a sync did, for a person: one line saying what was stored
// (imported, synced, unchanged) or kept, then an indented line per kind of
// change (completed, reopened, acceptance met, phases completed) and per
// recovery step. It is what ckpt plan sync prints.
func (r Report) Text() string {
	var b strings.Builder
	switch c := r.State; {
	case r.PlanError != "":
		fmt.Fprintf(&b, "kept the last known state of %s: nothing stored\n", r.Plan)
	case r.Stored:
		verb := "synced"
		if c.Rev == 1 {
			verb = "imported"
		}
		fmt.Fprintf(&b, "synced %s: %s  rev %d  %s  (%s, %s)\n", r.Plan, c.ID, c.Rev, verb, c.Progress.Count(), c.Status)
	default:
		fmt.Fprintf(&b, "synced %s: %s unchanged at rev %d  (%s, %s)\n", r.Plan, c.ID, c.Rev, c.Progress.Count(), c.Status)
	}
	for _, l := range []struct {
		what string
		ids  []string
	}{{"completed", r.NewlyCompleted}, {"reopened", r.Reopened}, {"acceptance met", r.NewlyMet}, {"phases completed", r.PhasesCompleted}} {
		if len(l.ids) > 0 {
			fmt.Fprintf(&b, "  %s: %s\n", l.what, strings.Join(l.ids, ", "))
		}
	}
	if r.Recovered != "" {
		fmt.Fprintf(&b, "  recovered the state from %s\n", r.Recovered)
	}
	if r.RecoverySaved != "" {
		fmt.Fprintf(&b, "  wrote recovery.json (%s)\n", r.RecoverySaved)
	}
	return b.String()
}

// SyncStoreOptions are the inputs of SyncStore besides the store.
type SyncStoreOptions struct {
	Plan     string // plan.md as the user gave it (recorded as the source)
	Path     string // its absolute path
	ID       string // the checkpoint; "" is the one the plan's place suggests
	By       string // who completed newly checked tasks (CheckBy)
	Notes    string // state.json's session notes; "" leaves them
	Recovery string // write recovery.json now, for this reason; "" when due
	// AssignTo and Assigned add tasks to an agent's assignedTasks.
	AssignTo string
	Assigned []string
	Now      time.Time
	Actor    ckpt.Actor
	Key      string
	IfRev    int64
}

// byPattern is who may complete a task. Compiled on first use, not at
// start-up: every ckpt process links this package.
var byPattern = lazyregexp.New(`^(main|subagent:[A-Za-z0-9._-]+|team:[A-Za-z0-9._-]+)$`)

// CheckBy checks who completed a task: main, subagent:TYPE or team:ID.
func CheckBy(name, by string) error {
	if !byPattern.Get().MatchString(by) {
		return fmt.Errorf("%w: %s %q: use main, subagent:TYPE or team:ID", ckpt.ErrInvalid, name, by)
	}
	return nil
}

// SyncStore syncs the plan at o.Path (Sync) and stores what it says in its
// checkpoint (StoreSync, a read-modify-write through ckpt.Update). A plan
// that does not exist is ckpt.ErrNotFound. A plan.md that cannot be read
// keeps the last known state and stores nothing (Report.PlanError).
func SyncStore(ctx context.Context, st ckpt.Store, o SyncStoreOptions) (Report, error) {
	opts := []Option{CompletedBy(o.By)}
	if o.Notes != "" {
		opts = append(opts, SessionNotes(o.Notes))
	}
	if o.Recovery != "" {
		opts = append(opts, RecoveryPoint(o.Recovery))
	}
	if o.AssignTo != "" {
		opts = append(opts, AssignTo(o.AssignTo, o.Assigned))
	}
	res, err := Sync(o.Path, o.Now, opts...)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return Report{}, fmt.Errorf("%w: %v: give the path of an existing plan.md", ckpt.ErrNotFound, err)
		}
		return Report{}, err
	}
	rep := Report{
		Plan: o.Plan, ID: o.ID, NewlyCompleted: nonNil(res.NewlyCompleted), Reopened: nonNil(res.Reopened),
		NewlyMet: nonNil(res.NewlyMet), PhasesCompleted: nonNil(res.PhasesCompleted),
		Recovered: res.Recovered, RecoverySaved: res.RecoverySaved, Warnings: nonNil(res.Warnings), History: []string{},
	}
	for _, e := range res.Events {
		rep.History = append(rep.History, e.Event)
	}
	if rep.ID == "" {
		rep.ID = res.ID
	}
	if res.PlanError != nil {
		rep.PlanError = res.PlanError.Error()
		return rep, nil
	}
	stored, err := StoreSync(ctx, st, rep.ID, res.Checkpoint, StoreOptions{Now: o.Now, Actor: o.Actor, Source: o.Plan, Key: o.Key, IfRev: o.IfRev})
	rep.StoreWarnings = stored.Warnings
	if err != nil {
		return rep, err
	}
	c := stored.State
	rep.State, rep.Rev, rep.Stored, rep.Progress, rep.Status = c, c.Rev, stored.Stored, c.Progress, c.Status
	return rep, nil
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// Find returns the plan.md that `ckpt plan check` and `uncheck` edit when
// none is given, relative to workDir: the plan checkpoint id was synced
// from (when id is not "" and that file exists), else plan.md in workDir,
// else the only plans/*/plan.md below it. More than one, or none, is
// ckpt.ErrInvalid.
func Find(ctx context.Context, st ckpt.Store, workDir, id string) (string, error) {
	if id != "" {
		c, err := st.Get(ctx, id, 0)
		if err != nil && !errors.Is(err, ckpt.ErrNotFound) {
			return "", err
		}
		if from := ""; err == nil {
			if from = PathOf(c); from != "" {
				p := from
				if !filepath.IsAbs(p) {
					p = filepath.Join(workDir, p)
				}
				if _, err := os.Stat(p); err == nil {
					return from, nil
				}
			}
		}
	}
	if _, err := os.Stat(filepath.Join(workDir, "plan.md")); err == nil {
		return "plan.md", nil
	}
	found, _ := filepath.Glob(filepath.Join(workDir, "plans", "*", "plan.md"))
	if len(found) == 1 {
		rel, _ := filepath.Rel(workDir, found[0])
		return rel, nil
	}
	return "", fmt.Errorf("%w: which plan? %d plans/*/plan.md found here and no plan.md", ckpt.ErrInvalid, len(found))
}
