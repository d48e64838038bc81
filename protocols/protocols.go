// Package protocols holds what the seed-protocol adapters share: the Format
// each one implements, so the CLI can import, export and mirror any of them
// by name. Each adapter lives in its own package below this one.
package protocols

import (
	"encoding/json"

	ckpt "github.com/ckpt-dev/ckpt"
	"github.com/ckpt-dev/ckpt/internal/jsondoc"
)

// Imported is one seed file read into a checkpoint.
type Imported struct {
	// ID is the checkpoint ID the file suggests (e.g. "kai-7/secondary-a"),
	// valid for ckpt.ValidateID. The caller may override it.
	ID string
	// State is the checkpoint the file describes. Fields the model has no
	// place for are kept in State.Meta so that Export reproduces them.
	State *ckpt.Checkpoint
	// Warnings lists what was guessed, defaulted or kept aside, one line each.
	Warnings []string
}

// Format is one seed system's file format, read and written both ways.
type Format interface {
	// Name is the format's name on the command line: superpowers, ccc,
	// agent-checkpoints, sitebuilder or plan.
	Name() string
	// Import reads one seed file leniently. It fails only when nothing
	// usable can be read, with an error that says what was expected.
	Import(path string, data []byte) (Imported, error)
	// Export renders c as the seed file's bytes.
	Export(c *ckpt.Checkpoint) ([]byte, error)
	// Mirror writes c's seed-format files under root, atomically, where the
	// seed system keeps them (and whatever that system keeps beside them:
	// locks, backups, aggregates). It is called after every change.
	Mirror(root string, c *ckpt.Checkpoint) error
}

// Presence is the presence a seed file records for c: ckpt.PresenceOf as of
// c.s last sign of life, so working, busy, waiting, blocked or ended, with since and
// why. A file cannot say warn, stale or dead: it is read later, and its
// reader judges the time since the last sign of life itself, as the seeds
// do. ok is false for a checkpoint that is not live (pending, finished,
// archived).
func Presence(c *ckpt.Checkpoint) (v ckpt.PresenceView, ok bool) {
	s := c.Summary()
	v = ckpt.PresenceOf(&s, s.LastSeen(), ckpt.Thresholds{}, nil)
	return v, v.Alarm() != ckpt.NotLive
}

// PresenceJSON is Presence as the JSON seed files carry it,
// {"state", "since", "why"}, or nil for a checkpoint that is not live.
// Every JSON format writes it under the key "presence"; Import ignores it
// (it is liveness, not state).
func PresenceJSON(c *ckpt.Checkpoint) json.RawMessage {
	v, ok := Presence(c)
	if !ok {
		return nil
	}
	o := jsondoc.NewObject()
	o.Put("state", string(v.State))
	if !v.Since.IsZero() {
		o.Put("since", jsondoc.FormatTime(v.Since))
	}
	if v.Why != "" {
		o.Put("why", v.Why)
	}
	return o.Raw()
}
