// Package protocols holds what the seed-protocol adapters share: the Format
// each one implements, so the CLI can import, export and mirror any of them
// by name. Each adapter lives in its own package below this one.
package protocols

import ckpt "github.com/ckpt-dev/ckpt"

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
