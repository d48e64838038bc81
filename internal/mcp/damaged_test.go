package mcp

import (
	"slices"
	"testing"
	"time"

	"github.com/ckpt-dev/ckpt/memstore"
	"github.com/ckpt-dev/ckpt/storetest"
)

func TestListAndStaleShowTheReadableAndNameTheDamaged(t *testing.T) {
	f := connectTo(t, storetest.WithDamaged(memstore.New(), "b"))
	for _, id := range []string{"a", "b", "c"} {
		ok[StateOutput](t, f, "ckpt_start", map[string]any{"id": id, "interval": "5m"})
	}
	list := ok[ListOutput](t, f, "ckpt_list", map[string]any{})
	if list.Count != 2 || list.Checkpoints[0].ID != "a" || list.Checkpoints[1].ID != "c" || !slices.Equal(list.Damaged, []string{"b"}) {
		t.Fatalf("ckpt_list with b damaged: %+v", list)
	}
	f.clock.Set(t0.Add(time.Hour))
	stale := ok[StaleOutput](t, f, "ckpt_stale", map[string]any{})
	if stale.Count != 2 || !slices.Equal(stale.Damaged, []string{"b"}) {
		t.Fatalf("ckpt_stale with b damaged: %+v", stale)
	}
}
