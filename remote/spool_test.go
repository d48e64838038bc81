package remote_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ckpt-dev/ckpt"
	"github.com/ckpt-dev/ckpt/memstore"
	"github.com/ckpt-dev/ckpt/remote"
)

// TestSpoolLosesNothing: with the server away, appends are spooled on
// disk and reported as such; the next call after the server is back
// delivers them in order, exactly once, even when a delivery is repeated.
func TestSpoolLosesNothing(t *testing.T) {
	ctx := context.Background()
	tokens, admin := fleetTokens(t)
	backend := memstore.New()
	srv := run(t, backend, tokens, "127.0.0.1:0")
	dir := filepath.Join(t.TempDir(), "spool")
	var warnings []string
	sp := remote.NewSpool(dial(t, srv.url(), admin, 2), dir, true, func(w string) { warnings = append(warnings, w) })
	if _, err := sp.Append(ctx, "a", ckpt.MustEvent(ckpt.EventCreated, time.Time{}, ckpt.Actor{}, ckpt.Created{}), ckpt.AppendOptions{}); err != nil {
		t.Fatal(err)
	}
	srv.stop(t)
	var spooledErr *remote.SpooledError
	for i, text := range []string{"first", "second"} {
		_, err := sp.Append(ctx, "a", ckpt.MustEvent(ckpt.EventNote, time.Time{}, ckpt.Actor{}, ckpt.Note{Text: text}), ckpt.AppendOptions{})
		if !errors.As(err, &spooledErr) {
			t.Fatalf("append %d with the server away: %v, want a SpooledError", i, err)
		}
	}
	// A write with an If-Match that will not hold when delivered.
	_, err := sp.Append(ctx, "a", ckpt.MustEvent(ckpt.EventNote, time.Time{}, ckpt.Actor{}, ckpt.Note{Text: "stale"}), ckpt.AppendOptions{IfRev: 1})
	if !errors.As(err, &spooledErr) {
		t.Fatal(err)
	}
	if n, err := remote.Pending(dir); n != 3 || err != nil {
		t.Fatalf("Pending = %d, %v; want 3", n, err)
	}
	names, _ := filepath.Glob(filepath.Join(dir, "*.json"))
	saved, _ := os.ReadFile(names[0])
	run(t, backend, tokens, srv.addr)
	c, err := sp.Get(ctx, "a", 0)
	if err != nil {
		t.Fatal(err)
	}
	if c.Rev != 3 || c.Context.Notes != "first\nsecond" {
		t.Errorf("after delivery: rev %d notes %q, want 3 and both notes in order", c.Rev, c.Context.Notes)
	}
	if n, _ := remote.Pending(dir); n != 0 {
		t.Errorf("%d writes still pending", n)
	}
	if failed, _ := filepath.Glob(filepath.Join(dir, "failed", "*.json")); len(failed) != 1 || len(warnings) != 1 {
		t.Errorf("the conflicting write: failed/ %v, warnings %q", failed, warnings)
	}
	// A delivery repeated (a crash after the server took it, before the
	// file was removed) replays by key.
	if err := os.WriteFile(names[0], saved, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := sp.Deliver(ctx); err != nil {
		t.Fatal(err)
	}
	if c := mustRev(t, backend, "a"); c != 3 {
		t.Errorf("a repeated delivery appended again: rev %d", c)
	}
}

func mustRev(t *testing.T, st ckpt.Store, id string) int64 {
	t.Helper()
	c, err := st.Get(context.Background(), id, 0)
	if err != nil {
		t.Fatal(err)
	}
	return c.Rev
}

// TestSpoolOff: without spooling, an append to an absent server fails as
// usual (retryable) and nothing is spooled.
func TestSpoolOff(t *testing.T) {
	tokens, admin := fleetTokens(t)
	srv := run(t, memstore.New(), tokens, "127.0.0.1:0")
	dir := filepath.Join(t.TempDir(), "spool")
	sp := remote.NewSpool(dial(t, srv.url(), admin, 1), dir, false, nil)
	srv.stop(t)
	_, err := sp.Append(context.Background(), "a", ckpt.MustEvent(ckpt.EventCreated, time.Time{}, ckpt.Actor{}, ckpt.Created{}), ckpt.AppendOptions{})
	if !ckpt.Retryable(err) {
		t.Errorf("append without spooling: %v, want a retryable error", err)
	}
	if n, _ := remote.Pending(dir); n != 0 {
		t.Errorf("%d writes spooled with spooling off", n)
	}
}

// TestSpoolReadsOffline: with spooling on, a read-modify-write (ckpt.Update,
// what plan sync and the hooks do) while the server is away builds on the
// last state this machine wrote, with the writes spooled since laid over
// it, and is spooled with its If-Match; the writes land in order when the
// server is back. One that another writer overtook meanwhile is refused
// and kept in failed/, never laid over work it did not see.
func TestSpoolReadsOffline(t *testing.T) {
	ctx := context.Background()
	tokens, admin := fleetTokens(t)
	backend := memstore.New()
	srv := run(t, backend, tokens, "127.0.0.1:0")
	dir := filepath.Join(t.TempDir(), "spool")
	var warnings []string
	sp := remote.NewSpool(dial(t, srv.url(), admin, 2), dir, true, func(w string) { warnings = append(warnings, w) })
	for _, id := range []string{"mine", "shared"} {
		if _, err := sp.Append(ctx, id, ckpt.MustEvent(ckpt.EventCreated, time.Time{}, ckpt.Actor{}, ckpt.Created{}), ckpt.AppendOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	srv.stop(t)
	if _, err := sp.Get(ctx, "never-seen", 0); !ckpt.Retryable(err) {
		t.Errorf("reading a checkpoint this machine never saw, offline: %v, want the server's unavailable error", err)
	}
	addNote := func(id, text string) error {
		_, err := ckpt.Update(ctx, sp, id, func(c *ckpt.Checkpoint) (ckpt.Event, error) {
			return ckpt.MustEvent(ckpt.EventNote, time.Time{}, ckpt.Actor{}, ckpt.Note{Text: fmt.Sprintf("%s after rev %d", text, c.Rev)}), nil
		})
		return err
	}
	var spooledErr *remote.SpooledError
	for _, w := range []struct{ id, text string }{{"mine", "first"}, {"mine", "second"}, {"shared", "late"}} {
		if err := addNote(w.id, w.text); !errors.As(err, &spooledErr) {
			t.Fatalf("update of %s offline: %v, want a SpooledError", w.id, err)
		}
	}
	// Another writer moves "shared" while this machine is cut off.
	if _, err := backend.Append(ctx, "shared", ckpt.MustEvent(ckpt.EventNote, time.Now(), ckpt.Actor{}, ckpt.Note{Text: "theirs"}), ckpt.AppendOptions{}); err != nil {
		t.Fatal(err)
	}
	back := run(t, backend, tokens, srv.addr)
	c, err := sp.Get(ctx, "mine", 0)
	if err != nil {
		t.Fatal(err)
	}
	if c.Rev != 3 || c.Context.Notes != "first after rev 1\nsecond after rev 2" {
		t.Errorf("after delivery: rev %d, notes %q; want both writes, each built on the one before", c.Rev, c.Context.Notes)
	}
	if c := mustRev(t, backend, "shared"); c != 2 {
		t.Errorf("shared is at rev %d: the offline write was laid over a change it never saw", c)
	}
	if failed, _ := filepath.Glob(filepath.Join(dir, "failed", "*.json")); len(failed) != 1 || len(warnings) != 1 {
		t.Errorf("the overtaken write: failed/ %v, warnings %q", failed, warnings)
	}
	if w, err := remote.Look(dir); err != nil || w.Writes != 0 || w.Failed != 1 {
		t.Errorf("Look = %+v, %v; want nothing waiting and one failed", w, err)
	}

	// Away again, twice, with only a delivery in between (no read): each
	// offline write builds on the state the delivery before it left.
	back.stop(t)
	for i, text := range []string{"third", "fourth"} {
		if err := addNote("mine", text); !errors.As(err, &spooledErr) {
			t.Fatalf("update %s offline: %v", text, err)
		}
		up := run(t, backend, tokens, srv.addr)
		if err := sp.Deliver(ctx); err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			up.stop(t)
		}
	}
	if c, _ := backend.Get(ctx, "mine", 0); c.Rev != 5 || !strings.HasSuffix(c.Context.Notes, "third after rev 3\nfourth after rev 4") {
		t.Errorf("the later offline writes: rev %d, notes %q", c.Rev, c.Context.Notes)
	}
}
