package spool_test

import (
	"context"
	"errors"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/ckpt-dev/ckpt"
	"github.com/ckpt-dev/ckpt/internal/spool"
	"github.com/ckpt-dev/ckpt/memstore"
)

// TestSpoolDir: one spool per server on this machine, in the XDG state
// directory (a relative $XDG_STATE_HOME is ignored, as the XDG rule says),
// the same for a URL with or without its trailing slash.
func TestSpoolDir(t *testing.T) {
	a := spool.DirOf("/state", "/home/u", "https://ckpt.example.com:8443")
	if filepath.Dir(a) != "/state/ckpt/spool" || len(filepath.Base(a)) != 16 {
		t.Fatalf("DirOf = %q", a)
	}
	if b := spool.DirOf("/state", "", "https://ckpt.example.com:8443/"); b != a {
		t.Errorf("a trailing slash gives another spool: %q, %q", a, b)
	}
	if c := spool.DirOf("/state", "", "https://other.example.com"); c == a {
		t.Errorf("two servers share the spool %q", c)
	}
	if d := spool.DirOf("rel", "/home/u", "https://ckpt.example.com:8443"); filepath.Dir(d) != "/home/u/.local/state/ckpt/spool" {
		t.Errorf("with a relative XDG_STATE_HOME: %q", d)
	}
	if e := spool.DirOf("", "", "https://ckpt.example.com:8443"); e != "" {
		t.Errorf("with no state directory nor home: %q", e)
	}
}

// attempts is a reachable server that records the attempts each call was
// asked to make (spool.Attempts), as a retrying client reads them, and
// each append's key origin.
type attempts struct {
	reachable
	mu      sync.Mutex
	seen    []int
	origins []ckpt.KeyOrigin
}

func (a *attempts) note(ctx context.Context) {
	n, ok := spool.Attempts(ctx)
	if !ok {
		n = 0 // the client's own setting
	}
	a.mu.Lock()
	a.seen = append(a.seen, n)
	a.mu.Unlock()
}

func (a *attempts) Append(ctx context.Context, id string, e ckpt.Event, o ckpt.AppendOptions) (ckpt.AppendResult, error) {
	a.note(ctx)
	a.mu.Lock()
	a.origins = append(a.origins, o.KeyOrigin)
	a.mu.Unlock()
	return a.reachable.Append(ctx, id, e, o)
}

// TestOneAttemptWhileDown: after a call found the server unreachable, the
// next calls ask the client for one attempt (a hook must not spend its
// time limit retrying each), and once the server answers again they use
// the client's own retries. A write made while it is away is spooled with
// an idempotency key and delivered, once, ahead of the next write: the key
// the spool made goes as new on its first send and as resent when
// delivered (that first send may have been applied).
func TestOneAttemptWhileDown(t *testing.T) {
	ctx := context.Background()
	backend := memstore.New()
	server := &attempts{reachable: reachable{Store: backend}}
	dir := filepath.Join(t.TempDir(), "spool")
	sp := spool.New(server, dir, true, nil)
	note := func(text string) error {
		_, err := sp.Append(ctx, "a", ckpt.MustEvent(ckpt.EventNote, time.Time{}, ckpt.Actor{}, ckpt.Note{Text: text}), ckpt.AppendOptions{})
		return err
	}
	if _, err := sp.Append(ctx, "a", ckpt.MustEvent(ckpt.EventCreated, time.Time{}, ckpt.Actor{}, ckpt.Created{}), ckpt.AppendOptions{}); err != nil {
		t.Fatal(err)
	}
	server.down.Store(true)
	var spooled *spool.SpooledError
	for _, text := range []string{"first", "second"} {
		if err := note(text); !errors.As(err, &spooled) || spooled.Dir != dir || !errors.Is(spooled.Cause, ckpt.ErrUnavailable) {
			t.Fatalf("append with the server away: %v, want a SpooledError in %s", err, dir)
		}
	}
	server.down.Store(false)
	if err := note("third"); err != nil {
		t.Fatal(err)
	}
	if err := note("fourth"); err != nil {
		t.Fatal(err)
	}
	// created and first: the client's own retries (the server had
	// answered); second: only the delivery of first is tried, once, and
	// fails, so second joins the spool; third: the delivery of first and
	// second (once each: it was down), then third itself and fourth with
	// the client's own retries again.
	want := []int{0, 0, 1, 1, 1, 0, 0}
	server.mu.Lock()
	defer server.mu.Unlock()
	if !slices.Equal(server.seen, want) {
		t.Errorf("attempts asked per call: %v, want %v", server.seen, want)
	}
	n, r := ckpt.KeyNew, ckpt.KeyResent
	if wantOrigins := []ckpt.KeyOrigin{n, n, r, r, r, n, n}; !slices.Equal(server.origins, wantOrigins) {
		t.Errorf("key origin per call: %v, want %v", server.origins, wantOrigins)
	}
	c, err := backend.Get(ctx, "a", 0)
	if err != nil || c.Rev != 5 || c.Context.Notes != "first\nsecond\nthird\nfourth" {
		t.Errorf("the server's checkpoint: %+v, %v; want rev 5 with the four notes in order", c, err)
	}
	if n, err := spool.Pending(dir); n != 0 || err != nil {
		t.Errorf("Pending = %d, %v; want 0", n, err)
	}
}
