package mirror

import (
	"context"
	"fmt"
	"time"

	ckpt "github.com/ckpt-dev/ckpt"
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
	e, err := ckpt.NewEvent(ckpt.EventImported, at, actor, ckpt.Snapshot{State: *state, Source: source})
	if err != nil {
		return ckpt.AppendResult{}, err
	}
	return st.Append(ctx, id, e, ckpt.AppendOptions{})
}
