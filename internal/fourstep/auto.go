package fourstep

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"time"

	ckpt "github.com/ckpt-dev/ckpt"
	"github.com/ckpt-dev/ckpt/internal/mirror"
	"github.com/ckpt-dev/ckpt/internal/tracker"
	"github.com/ckpt-dev/ckpt/protocols/ccc"
)

// Auto is the four-step checkpoint as the hooks' final checkpoint runs it
// (the automated profile) in the project directory Dir. Its lines are not
// printed (a hook's stdout belongs to the client).
type Auto struct {
	Store  ckpt.Store
	Dir    string              // the project: the repository, else the session's directory
	Getenv func(string) string // the tracker's credentials (TrackerFromEnv)
	Now    func() time.Time
}

// Run runs the automated profile for checkpoint c in a project that uses
// ccc (seed 001) (OptedIn; the mirror list is the store's when it is a
// *mirror.Store), and does nothing elsewhere: it writes .ccc-progress.md
// (step 1) and, when a tracker is configured (.ccc-state.json linearIssue
// with LINEAR_API_KEY), upserts the status comment (step 3). It
// fails when a step failed, naming each.
func (a Auto) Run(ctx context.Context, c *ckpt.Checkpoint) error {
	var list mirror.List
	if m, ok := a.Store.(*mirror.Store); ok {
		list = m.MirrorList()
	}
	if ok, _ := OptedIn(a.Dir, list); !ok {
		return nil
	}
	getenv := a.Getenv
	if getenv == nil {
		getenv = func(string) string { return "" }
	}
	o := Options{
		Out:     io.Discard,
		Store:   a.Store,
		ID:      c.ID,
		Profile: ProfileAuto,
		Dir:     a.Dir,
		Tracker: TrackerFromEnv(getenv),
		Now:     a.Now,
	}
	o.Tracker.Timeout = tracker.DefaultTimeout
	rep, err := Run(ctx, o)
	if err != nil {
		return err
	}
	var failed []string
	for _, st := range rep.Steps {
		if st.Failed != "" {
			failed = append(failed, st.Failed)
		}
	}
	if len(failed) > 0 {
		return fmt.Errorf("%d of %d steps failed: %s", len(failed), rep.Total, strings.Join(failed, " "))
	}
	return nil
}

// AtGate runs the automated profile (Run) when the project's
// .ccc-state.json awaits a gate (awaitingGate set): ccc's (seed 001) stop hook
// checkpoints at gate boundaries, not at every turn's end. Without a gate,
// or without a readable state file, it does nothing.
func (a Auto) AtGate(ctx context.Context, c *ckpt.Checkpoint) error {
	st, err := ccc.ReadState(filepath.Join(a.Dir, ccc.StateFile))
	if err != nil || st.Gate() == "" {
		return nil
	}
	return a.Run(ctx, c)
}
