package mirror

import (
	"context"
	"fmt"
	"os"
	"time"

	ckpt "github.com/ckpt-dev/ckpt"
	"github.com/ckpt-dev/ckpt/internal/request"
	"github.com/ckpt-dev/ckpt/protocols"
	"github.com/ckpt-dev/ckpt/protocols/sitebuilder"
)

// ImportFile reads one seed file in format f into the checkpoints it
// holds: one, or for a sitebuilder STATUS.md aggregate (which the format's
// Import does not take: it is not a checkpoint file) one per agent row.
func ImportFile(f protocols.Format, path string, data []byte) ([]protocols.Imported, error) {
	imp, err := f.Import(path, data)
	if err == nil {
		return []protocols.Imported{imp}, nil
	}
	if f.Name() != sitebuilder.Name {
		return nil, err
	}
	items, rerr := sitebuilder.ImportStatusMarkdown(data)
	if rerr != nil {
		return nil, fmt.Errorf("%v; nor is it a STATUS.md aggregate: %v", err, rerr)
	}
	return items, nil
}

// StoreImported appends state, read from source (FORMAT:PATH), to checkpoint id as
// one imported event made at by actor: the first event of a new
// checkpoint, or a new snapshot of an existing one.
func StoreImported(ctx context.Context, st ckpt.Store, id string, state *ckpt.Checkpoint, source string, at time.Time, actor ckpt.Actor) (ckpt.AppendResult, error) {
	if err := ckpt.ValidateID(id); err != nil {
		return ckpt.AppendResult{}, err
	}
	e, err := request.NewEvent(request.Import{State: state, Source: source}, request.Write{At: at, Actor: actor})
	if err != nil {
		return ckpt.AppendResult{}, err
	}
	return st.Append(ctx, id, e, ckpt.AppendOptions{})
}

// ImportOptions are how ImportPath stores what a file holds.
type ImportOptions struct {
	// ID, when set, is the checkpoint ID to store under instead of the
	// one the file suggests (for a file that holds one checkpoint).
	ID string
	// Source is the file as the user named it: results carry it as their
	// Path, and each event records FORMAT:Source. "" is the path.
	Source string
	At     time.Time
	Actor  ckpt.Actor
}

// ImportResult is one checkpoint ImportPath stored, or could not. Its
// JSON is what `ckpt import --json` prints for it.
type ImportResult struct {
	Path     string   `json:"path"`
	ID       string   `json:"id,omitempty"`
	Rev      int64    `json:"rev,omitempty"`
	Created  bool     `json:"created"`
	Warnings []string `json:"warnings"` // what the reading guessed or kept aside
	Error    string   `json:"error,omitempty"`

	State         *ckpt.Checkpoint `json:"-"` // after the import; nil when it failed
	StoreWarnings []string         `json:"-"` // the store's remarks
	Err           error            `json:"-"` // why it failed; Error is its text
}

// String is an import that succeeded on one line, as ckpt import prints
// it: "imported PATH as ID  rev N  created|updated  (progress, status)".
// It is meant for results without Error.
func (r ImportResult) String() string {
	verb := "updated"
	if r.Created {
		verb = "created"
	}
	var progress ckpt.Progress
	var status ckpt.Status
	if r.State != nil {
		progress, status = r.State.Progress, r.State.Status
	}
	return fmt.Sprintf("imported %s as %s  rev %d  %s  (%s, %s)", r.Path, r.ID, r.Rev, verb, progress.Count(), status)
}

// ImportPath reads the file at path in format f (ImportFile) and stores
// each checkpoint it holds as one imported event (StoreImported), each
// result with its own error (an ID that is not valid, a refused append).
// The error is the file's: it cannot be read, or is not in the format
// (ErrInvalid).
func ImportPath(ctx context.Context, st ckpt.Store, f protocols.Format, path string, o ImportOptions) ([]ImportResult, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	items, err := ImportFile(f, path, data)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ckpt.ErrInvalid, err)
	}
	source := o.Source
	if source == "" {
		source = path
	}
	out := make([]ImportResult, 0, len(items))
	for _, it := range items {
		r := ImportResult{Path: source, ID: it.ID, Warnings: it.Warnings}
		if r.Warnings == nil {
			r.Warnings = []string{}
		}
		if o.ID != "" {
			r.ID = o.ID
		}
		res, err := StoreImported(ctx, st, r.ID, it.State, f.Name()+":"+source, o.At, o.Actor)
		r.StoreWarnings = res.Warnings
		if err != nil {
			r.Err, r.Error = err, err.Error()
		} else {
			r.Rev, r.Created, r.State = res.State.Rev, res.State.Rev == 1, res.State
		}
		out = append(out, r)
	}
	return out, nil
}
