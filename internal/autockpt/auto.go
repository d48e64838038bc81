// Package autockpt is the hooks' final checkpoint of seed 001 (ccc): the
// automated profile of the four-step checkpoint (package fourstep) as ckpt
// runs it without linking the issue trackers' HTTP clients. Step 1
// (.ccc-progress.md) and the code's state are written in the hook's own
// process; step 3, the tracker's status comment, only when a tracker is
// configured, is run by ckpt-server as a child process
// (`ckpt-server checkpoint ID --profile auto --tracker-only --json`), whose
// report the hook reads back. Package fourstep shares step 1 and the code
// state from here.
package autockpt

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"
	"unicode/utf8"

	ckpt "github.com/ckpt-dev/ckpt"
	"github.com/ckpt-dev/ckpt/internal/mirror"
	"github.com/ckpt-dev/ckpt/protocols/ccc"
)

// EnvLinearKey is the Linear API key the tracker step reads; with
// .ccc-state.json linearIssue it is what configures the tracker of the
// hooks' checkpoint.
const EnvLinearKey = "LINEAR_API_KEY"

// OptedIn reports whether the project in dir uses ccc (seed 001), so that an
// automatic checkpoint (the Claude hooks' final one) may write
// .ccc-progress.md there, and says why: the project keeps the seed's own
// .ccc-state.json, or its mirror list has a ccc mirror rooted at dir. A
// project that did neither gets no progress file from the hooks;
// `ckpt checkpoint` is explicit and always runs.
func OptedIn(dir string, mirrors mirror.List) (bool, string) {
	if fi, err := os.Stat(filepath.Join(dir, ccc.StateFile)); err == nil && fi.Mode().IsRegular() {
		return true, ccc.StateFile + " in the project"
	}
	cfg, err := mirrors.Read()
	if err != nil {
		return false, ""
	}
	for _, e := range cfg.Mirrors {
		if e.Format == ccc.Name && filepath.Clean(mirrors.RootDir(e)) == filepath.Clean(dir) {
			return true, "a ccc mirror of " + e.Selector() + " in " + mirrors.File
		}
	}
	return false, ""
}

// WriteProgress is step 1: .ccc-progress.md in dir from checkpoint c, with
// its line on out. It returns the report's "Failed: …" line, "" when the
// file was written.
func WriteProgress(out io.Writer, dir string, c *ckpt.Checkpoint) string {
	if err := ccc.New().Mirror(dir, c); err != nil {
		fmt.Fprintf(out, "Warning: progress file not written: %v\n", err)
		return fmt.Sprintf("Failed: Progress file (%s) — progress not saved to %s.", Reason(err), ccc.ProgressFile)
	}
	fmt.Fprintf(out, "Progress saved to %s.\n", ccc.ProgressFile)
	return ""
}

// Reason is the short cause of a step's failure for its report line: the
// file and what went wrong for a file error, else the error's text on one
// line, at most 100 runes.
func Reason(err error) string {
	var le *os.LinkError
	if errors.As(err, &le) {
		return filepath.Base(le.New) + ": " + le.Err.Error()
	}
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return filepath.Base(pe.Path) + ": " + pe.Err.Error()
	}
	return cut(err.Error(), 100)
}

func cut(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	return string([]rune(s)[:n-1]) + "…"
}

// Auto is the four-step checkpoint as the hooks' final checkpoint runs it
// (the automated profile: steps 1 and 3) in the project directory Dir. Its
// lines are not printed (a hook's stdout belongs to the client).
type Auto struct {
	Store  ckpt.Store
	Dir    string              // the project: the repository, else the session's directory
	Getenv func(string) string // the tracker's credentials
	Now    func() time.Time
	// Tracker runs step 3 for checkpoint id in ckpt-server, a child
	// process, and returns what it printed: its report as JSON
	// (`ckpt checkpoint --tracker-only --json`). nil: the step fails,
	// saying so.
	Tracker func(ctx context.Context, id string) ([]byte, error)
}

// Run runs the automated profile for checkpoint c in a project that uses
// ccc (seed 001) (OptedIn; the mirror list is that of the *mirror.Store
// under Store's wrappers), and does nothing elsewhere: it writes .ccc-progress.md
// (step 1), records where the code is and, when a tracker is configured
// (.ccc-state.json linearIssue with LINEAR_API_KEY), has Tracker upsert
// the issue's status comment (step 3). It fails when a step failed,
// naming each, as "N of 2 steps failed: Failed: …".
func (a Auto) Run(ctx context.Context, c *ckpt.Checkpoint) error {
	if ok, _ := OptedIn(a.Dir, mirrorList(a.Store)); !ok {
		return nil
	}
	now := time.Now
	if a.Now != nil {
		now = a.Now
	}
	var failed []string
	if line := WriteProgress(io.Discard, a.Dir, c); line != "" {
		failed = append(failed, line)
	}
	RecordCode(ctx, io.Discard, a.Store, c, a.Dir, now().UTC())
	// Step 3 counts when skipped, as in fourstep.Run: two steps.
	if a.trackerConfigured() {
		if line := a.trackerStep(ctx, c.ID); line != "" {
			failed = append(failed, line)
		}
	}
	if len(failed) > 0 {
		return fmt.Errorf("%d of 2 steps failed: %s", len(failed), strings.Join(failed, " "))
	}
	return nil
}

// mirrorList is the mirror list of st's *mirror.Store, under the wrappers
// a hook puts around it (its bound); the zero List when there is none.
func mirrorList(st ckpt.Store) mirror.List {
	for range 8 {
		switch s := st.(type) {
		case *mirror.Store:
			return s.MirrorList()
		case interface{ Unwrap() ckpt.Store }:
			st = s.Unwrap()
		default:
			return mirror.List{}
		}
	}
	return mirror.List{}
}

// trackerConfigured reports whether step 3 has a tracker to write to: the
// project's .ccc-state.json names a Linear issue and LINEAR_API_KEY is set
// (a state file that cannot be read configures none, as in fourstep.Run).
func (a Auto) trackerConfigured() bool {
	if a.Getenv == nil || a.Getenv(EnvLinearKey) == "" {
		return false
	}
	st, err := ccc.ReadState(filepath.Join(a.Dir, ccc.StateFile))
	return err == nil && st.LinearIssue != ""
}

// trackerStep runs step 3 through a.Tracker and returns its "Failed: …"
// line, "" when it succeeded.
func (a Auto) trackerStep(ctx context.Context, id string) string {
	if a.Tracker == nil {
		return TrackerFailure(nil, errors.New("ckpt-server cannot be started from here"))
	}
	return TrackerFailure(a.Tracker(ctx, id))
}

// TrackerFailure reads the report ckpt-server printed for step 3 alone
// (out, a fourstep.Report as JSON) when it ran with error err: the step's
// "Failed: …" line, "" when it succeeded or was skipped. When out is no
// such report (ckpt-server missing, killed at the hook's deadline, or
// refusing the command line), the line gives err, or says the report was
// unreadable.
func TrackerFailure(out []byte, err error) string {
	var r struct {
		Steps []struct {
			Name   string `json:"name"`
			Failed string `json:"failed"`
		} `json:"steps"`
	}
	if json.Unmarshal(out, &r) == nil && len(r.Steps) == 1 && r.Steps[0].Name != "" {
		return cut(r.Steps[0].Failed, 300)
	}
	reason := "ckpt-server printed no report"
	if err != nil {
		reason = cut(err.Error(), 160)
	}
	return fmt.Sprintf("Failed: Linear update (%s) — status not persisted to issue tracker.", reason)
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
