package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	ckpt "github.com/ckpt-dev/ckpt"
	"github.com/ckpt-dev/ckpt/claude"
	"github.com/ckpt-dev/ckpt/fourstep"
	"github.com/ckpt-dev/ckpt/protocols/mirror"
	"github.com/ckpt-dev/ckpt/protocols/plan"
	"github.com/ckpt-dev/ckpt/tracker"
)

// hookSteps are the parts of a hook call that the command wires in around
// package claude's Handler: the plan sync and the final checkpoint's
// steps.
type hookSteps struct {
	store   ckpt.Store
	now     func() time.Time
	project string // the project directory: the repository, else the store's parent
	agent   string // the agent recorded on the events the steps write
	getenv  func(string) string
}

// trackedPlan reports whether checkpoint c was synced from the plan file at
// path (its plan meta names it).
func (s *hookSteps) trackedPlan(c *ckpt.Checkpoint, path string) bool {
	var meta struct {
		PlanPath string `json:"planPath"`
	}
	raw, ok := c.Meta[plan.MetaPlan]
	if !ok || json.Unmarshal(raw, &meta) != nil || meta.PlanPath == "" {
		return false
	}
	p := filepath.FromSlash(meta.PlanPath)
	if !filepath.IsAbs(p) {
		p = filepath.Join(s.project, p)
	}
	return filepath.Clean(p) == filepath.Clean(path)
}

// syncPlan syncs checkpoint id from the plan file at path (seed 004) when
// the checkpoint tracks that file, and does nothing otherwise: the plan
// library's Sync reads the markers, StoreSync lays them over the current
// state through ckpt.Update, so an event another hook appends meanwhile is
// kept. It gives up when ctx ends: plan.Sync may wait for another
// process's plan lock.
func (s *hookSteps) syncPlan(ctx context.Context, id, path string) error {
	c, err := s.store.Get(ctx, id, 0)
	if err != nil {
		return err
	}
	if !s.trackedPlan(c, path) {
		return nil
	}
	return bounded(ctx, func() error {
		now := s.now()
		res, err := plan.Sync(path, now, plan.CompletedBy("main"))
		if err != nil {
			return err
		}
		var warnings []string
		for _, w := range res.Warnings {
			warnings = append(warnings, filepath.Base(path)+": "+w)
		}
		if res.PlanError != nil {
			warnings = append(warnings, fmt.Sprintf("%s could not be read (%v): the last known state was kept and nothing was stored", filepath.Base(path), res.PlanError))
		} else {
			st, err := plan.StoreSync(ctx, s.store, id, res.Checkpoint, plan.StoreOptions{Now: now, Actor: ckpt.Actor{Agent: s.agent}, Source: path})
			warnings = append(warnings, st.Warnings...)
			if err != nil {
				return err
			}
		}
		if len(warnings) > 0 {
			return errors.New(strings.Join(warnings, "; "))
		}
		return nil
	})
}

// env reads an environment variable; without a Getenv none is set.
func (s *hookSteps) env(key string) string {
	if s.getenv == nil {
		return ""
	}
	return s.getenv(key)
}

// unclosed is a store whose Close does nothing: the hook closes its store
// once, at the end.
type unclosed struct{ ckpt.Store }

func (unclosed) Close() error { return nil }

// final is the final checkpoint's extra steps after the session note and
// heartbeat that package claude writes: in a project that uses seed 001
// (fourstep.OptedIn: its .ccc-state.json, or a ccc mirror rooted there),
// the four-step checkpoint in its automated profile (docs/checkpoint.md),
// which writes .ccc-progress.md
// in the project directory (step 1) and, when a tracker is configured
// (.ccc-state.json linearIssue with LINEAR_API_KEY), upserts the issue's
// status comment (step 3). The steps' lines are not printed (a hook's
// stdout belongs to the client); a failed step is the step's error.
func (s *hookSteps) final() []claude.FinalStep {
	return []claude.FinalStep{{
		Name: "checkpoint (auto profile)",
		Run: func(ctx context.Context, c *ckpt.Checkpoint) error {
			// Only a project that uses seed 001 gets .ccc-progress.md.
			var list mirror.List
			if m, ok := s.store.(*mirror.Store); ok {
				list = m.MirrorList()
			}
			if ok, _ := fourstep.OptedIn(s.project, list); !ok {
				return nil
			}
			var out bytes.Buffer
			o := fourstep.Options{
				Out:     &out,
				Store:   unclosed{s.store},
				ID:      c.ID,
				Profile: fourstep.ProfileAuto,
				Dir:     s.project,
				Tracker: fourstep.TrackerFromEnv(s.env),
				Now:     s.now,
			}
			o.Tracker.Timeout = tracker.DefaultTimeout
			var rep *fourstep.Report
			err := bounded(ctx, func() error {
				var err error
				rep, err = fourstep.Run(ctx, o)
				return err
			})
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
		},
	}}
}
