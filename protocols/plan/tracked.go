package plan

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	ckpt "github.com/ckpt-dev/ckpt"
)

// PathOf is the plan file checkpoint c was synced from, as its plan meta
// records it (relative to the project, or absolute); "" when c was not
// synced from a plan.
func PathOf(c *ckpt.Checkpoint) string {
	var meta planMeta
	raw, ok := c.Meta[MetaPlan]
	if !ok || json.Unmarshal(raw, &meta) != nil {
		return ""
	}
	return meta.PlanPath
}

// Tracks reports whether checkpoint c was synced from the plan file at the
// absolute path; a relative recorded path is taken from project.
func Tracks(c *ckpt.Checkpoint, project, path string) bool {
	p := filepath.FromSlash(PathOf(c))
	if p == "" {
		return false
	}
	if !filepath.IsAbs(p) {
		p = filepath.Join(project, p)
	}
	return filepath.Clean(p) == filepath.Clean(path)
}

// TrackedSync is what SyncTracked needs besides the store.
type TrackedSync struct {
	Project string           // the project directory recorded plan paths are relative to
	Now     func() time.Time // the sync's clock
	Actor   ckpt.Actor       // recorded on the event
}

// SyncTracked syncs checkpoint id from the plan file at the absolute path
// (Sync, then StoreSync, which lays the plan over the current state through
// ckpt.Update, so an event another writer appends meanwhile is kept) when
// the checkpoint tracks that file (Tracks), and does nothing otherwise: an
// edit hook calls it for every plan file an agent touched. Warnings (of
// the plan, of the store, a plan.md that could not be parsed and was not
// stored) are returned as one error, after anything that could be stored
// was.
func SyncTracked(ctx context.Context, st ckpt.Store, id, path string, o TrackedSync) error {
	c, err := st.Get(ctx, id, 0)
	if err != nil {
		return err
	}
	if !Tracks(c, o.Project, path) {
		return nil
	}
	now := o.Now()
	res, err := Sync(path, now, CompletedBy("main"))
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
		stored, err := StoreSync(ctx, st, id, res.Checkpoint, StoreOptions{Now: now, Actor: o.Actor, Source: path})
		warnings = append(warnings, stored.Warnings...)
		if err != nil {
			return err
		}
	}
	if len(warnings) > 0 {
		return errors.New(strings.Join(warnings, "; "))
	}
	return nil
}
