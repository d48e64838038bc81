package ckpt_test

import (
	"context"
	"errors"
	"testing"

	ckpt "github.com/ckpt-dev/ckpt"
	"github.com/ckpt-dev/ckpt/memstore"
)

// readFailing is a store whose Get of one checkpoint finds damage and of
// another finds it gone (deleted between the listing and the read).
type readFailing struct {
	ckpt.Store
	corrupt, gone string
}

func (s readFailing) Get(ctx context.Context, id string, rev int64) (*ckpt.Checkpoint, error) {
	switch id {
	case s.corrupt:
		return nil, ckpt.ErrCorrupt
	case s.gone:
		return nil, ckpt.ErrNotFound
	}
	return s.Store.Get(ctx, id, rev)
}

// TestGetAllNamesWhatCannotBeRead: the readable checkpoints come with a
// *DamagedError naming the damaged one; one deleted since the listing is
// simply left out.
func TestGetAllNamesWhatCannotBeRead(t *testing.T) {
	ctx := context.Background()
	mem := memstore.New()
	for _, id := range []string{"a", "b", "c", "d"} {
		if _, err := mem.Append(ctx, id, ckpt.MustEvent(ckpt.EventCreated, t0, ckpt.Actor{}, ckpt.Created{}), ckpt.AppendOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	got, err := ckpt.GetAll(ctx, readFailing{Store: mem, corrupt: "b", gone: "c"}, ckpt.Filter{})
	var d *ckpt.DamagedError
	if !errors.As(err, &d) || len(d.IDs) != 1 || d.IDs[0] != "b" || !errors.Is(err, ckpt.ErrCorrupt) {
		t.Fatalf("GetAll: %v, want a DamagedError naming b", err)
	}
	if len(got) != 2 || got[0].ID != "a" || got[1].ID != "d" {
		t.Errorf("GetAll returned %d checkpoints, want a and d", len(got))
	}
	if got, err := ckpt.GetAll(ctx, mem, ckpt.Filter{Prefix: "a"}); err != nil || len(got) != 1 || got[0].Rev != 1 {
		t.Errorf("GetAll over a healthy store: %v, %v", got, err)
	}
}
