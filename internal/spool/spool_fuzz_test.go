package spool_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ckpt-dev/ckpt"
	"github.com/ckpt-dev/ckpt/internal/spool"
	"github.com/ckpt-dev/ckpt/memstore"
	"github.com/ckpt-dev/ckpt/storetest"
)

// reachable is a store whose server can be switched away: while down,
// every call fails as an unreachable server's does (retryable).
type reachable struct {
	ckpt.Store
	down atomic.Bool
}

func (r *reachable) Append(ctx context.Context, id string, e ckpt.Event, o ckpt.AppendOptions) (ckpt.AppendResult, error) {
	if r.down.Load() {
		return ckpt.AppendResult{}, fmt.Errorf("%w: the server is away", ckpt.ErrUnavailable)
	}
	return r.Store.Append(ctx, id, e, o)
}

func (r *reachable) Get(ctx context.Context, id string, rev int64) (*ckpt.Checkpoint, error) {
	if r.down.Load() {
		return nil, fmt.Errorf("%w: the server is away", ckpt.ErrUnavailable)
	}
	return r.Store.Get(ctx, id, rev)
}

// FuzzSpoolFiles: the spool's files (a spooled write, the kept state of a
// checkpoint) are read back by later processes, so they are hostile input
// (a torn write, another version, a hand edit). Whatever they hold, an
// offline read returns the checkpoint asked for or an error, never a
// panic; delivery with the server back leaves nothing pending (a write
// the server refuses is moved aside) and the server's history verifies.
func FuzzSpoolFiles(f *testing.F) {
	f.Add([]byte(`{"id":"a","event":{"type":"note","data":{"text":"offline"}},"spooled_at":"2026-01-15T14:30:00Z"}`), []byte(nil))
	f.Add([]byte(`{"id":"a","event":{"type":"note","data":{"text":"x"}},"if_rev":1,"as_agent":true,"spooled_at":"2026-01-15T14:30:00Z"}`), []byte(`{"id":"a","rev":1}`))
	f.Add([]byte(`{"id":"a","event":{"type":"created"}}`), []byte(`{"id":"a","rev":-3,"status":"bogus"}`))
	f.Add([]byte(`{"id":"../b","event":{"type":"progress","data":{"percent":900}}}`), []byte("{"))
	f.Add([]byte("\xff\xfe"), []byte(`{"id":"b","rev":9}`))
	f.Fuzz(func(t *testing.T, spooledFile, stateFile []byte) {
		ctx := context.Background()
		backend := memstore.New()
		t.Cleanup(func() { storetest.Verify(t, backend) })
		server := &reachable{Store: backend}
		dir := filepath.Join(t.TempDir(), "spool")
		sp := spool.New(server, dir, true, nil)
		create := ckpt.MustEvent(ckpt.EventCreated, time.Date(2026, 1, 15, 14, 0, 0, 0, time.UTC), ckpt.Actor{Agent: "kai-7"}, ckpt.Created{})
		if _, err := sp.Append(ctx, "a", create, ckpt.AppendOptions{}); err != nil {
			t.Fatal(err)
		}
		kept, _ := filepath.Glob(filepath.Join(dir, "state", "*.json"))
		if len(kept) != 1 {
			t.Fatalf("the spool kept %d states, want 1", len(kept))
		}
		if len(stateFile) > 0 {
			if err := os.WriteFile(kept[0], stateFile, 0o600); err != nil {
				t.Fatal(err)
			}
		}
		if err := os.WriteFile(filepath.Join(dir, "00000000000000000001-000001-1.json"), spooledFile, 0o600); err != nil {
			t.Fatal(err)
		}

		server.down.Store(true)
		if c, err := sp.Get(ctx, "a", 0); err == nil && (c == nil || c.ID != "a" || c.Rev < 1) {
			t.Fatalf("offline read of a: %+v, want checkpoint a at a revision of 1 or more", c)
		}

		server.down.Store(false)
		if err := sp.Deliver(ctx); err != nil {
			t.Fatalf("delivery with the server back: %v", err)
		}
		if n, err := spool.Pending(dir); n != 0 || err != nil {
			t.Fatalf("after delivery: %d pending (%v), want none: a refused write is moved aside", n, err)
		}
		if _, err := backend.Get(ctx, "a", 0); err != nil {
			t.Fatalf("the server's checkpoint after delivery: %v", err)
		}
	})
}
