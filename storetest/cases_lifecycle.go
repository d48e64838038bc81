package storetest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ckpt-dev/ckpt"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// The lifecycle operations (takeover, restart, archive, restore, abandon)
// are library code over the Store interface; these cases prove every
// backend gives them what they rely on: Append's compare-and-swap, creation
// that claims a name, Delete of archives, reads of old revisions.

func lifecycleAt(i int) ckpt.Lifecycle {
	return ckpt.Lifecycle{At: at(i), Actor: actor, SessionID: fmt.Sprintf("lc-%d", i)}
}

// createWork makes a checkpoint with two steps, one done, run by agent A.
func createWork(t *testing.T, s ckpt.Store, id string) *ckpt.Checkpoint {
	t.Helper()
	create(t, s, id, ckpt.Created{Patch: ckpt.Patch{Title: ptr("work"), Agent: &ckpt.Agent{ID: "A"}},
		Steps: []ckpt.Step{{ID: "plan"}, {ID: "build"}}})
	return mustAppend(t, s, id, event(1, ckpt.EventStep, ckpt.StepChange{ID: "plan", Status: ckpt.StepDone})).State
}

// archiveOpts compares an archive with the state it copies: the copy is a
// new checkpoint (its own ID, revision, time of change, liveness) marked
// archived.
var archiveOpts = cmp.Options{cmpopts.EquateEmpty(), cmpopts.IgnoreFields(ckpt.Checkpoint{}, "ID", "Rev", "Archived", "UpdatedAt", "Heartbeat")}

// checkArchive fails unless archive name holds exactly the state of id at
// revision rev, marked archived from id with reason.
func checkArchive(t testing.TB, s ckpt.Store, id, name string, rev int64, reason string) {
	t.Helper()
	ctx := context.Background()
	want, err := s.Get(ctx, id, rev)
	if err != nil {
		t.Fatalf("Get(%s, %d): %v", id, rev, err)
	}
	got, err := s.Get(ctx, name, 0)
	if err != nil {
		t.Fatalf("the archive %s named by the event: %v", name, err)
	}
	if got.Archived == nil || got.Archived.From != id || got.Archived.Reason != reason {
		t.Errorf("archive %s is marked %+v, want archived from %s for %s", name, got.Archived, id, reason)
	}
	if d := cmp.Diff(want, got, archiveOpts); d != "" {
		t.Errorf("archive %s is not the state of %s at revision %d (-want +got):\n%s", name, id, rev, d)
	}
}

// archivesOf returns the IDs of the archives copied from id.
func archivesOf(t testing.TB, s ckpt.Store, id string) []string {
	t.Helper()
	all, err := ckpt.ListAll(context.Background(), s, ckpt.Filter{IncludeArchived: true, Prefix: id + "_"})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, c := range all {
		if c.Archived != nil && c.Archived.From == id {
			out = append(out, c.ID)
		}
	}
	return out
}

// handOverNames returns the archive named by each hand-over event of id,
// with the revision it replaced.
func handOverNames(t testing.TB, s ckpt.Store, id string) map[string]int64 {
	t.Helper()
	out := map[string]int64{}
	for _, e := range mustHistory(t, s, id) {
		var ref struct {
			ArchivedAs string `json:"archived_as"`
		}
		if e.Type != ckpt.EventTakenOver && e.Type != ckpt.EventRestarted {
			continue
		}
		if err := json.Unmarshal(e.Data, &ref); err != nil || ref.ArchivedAs == "" {
			t.Fatalf("%s event %d names no archive: %v", e.Type, e.Seq, err)
		}
		if _, dup := out[ref.ArchivedAs]; dup {
			t.Errorf("two hand-overs of %s name the archive %s", id, ref.ArchivedAs)
		}
		out[ref.ArchivedAs] = e.Seq - 1
	}
	return out
}

// testLifecycleRules checks what each operation refuses, and that a refusal
// stores nothing: no event, no archive.
func testLifecycleRules(t *testing.T, s ckpt.Store) {
	ctx := context.Background()
	c := createWork(t, s, "rules")
	done := mustAppend(t, s, "rules", event(2, ckpt.EventStatus, ckpt.StatusChange{Status: ckpt.StatusDone})).State
	refused := func(what string, err error, sentinel error, forcible bool) {
		t.Helper()
		var r *ckpt.RefusedError
		if !errors.As(err, &r) || !errors.Is(err, sentinel) || r.Forcible != forcible || !strings.HasPrefix(r.ID, "rules") {
			t.Errorf("%s: %v (%+v), want a RefusedError wrapping %v, forcible %v", what, err, r, sentinel, forcible)
		}
	}
	_, _, err := ckpt.TakeOverCheckpoint(ctx, s, "rules", ckpt.Agent{ID: "B"}, lifecycleAt(3))
	refused("takeover of done work", err, ckpt.ErrNotResumable, true)
	_, _, err = ckpt.RestartCheckpoint(ctx, s, "rules", lifecycleAt(3))
	refused("restart of done work", err, ckpt.ErrNotResumable, true)
	_, err = ckpt.ResumeCheckpoint(ctx, s, "rules", lifecycleAt(3), nil, false)
	refused("resume of done work", err, ckpt.ErrNotResumable, true)
	unchanged(t, s, "rules", done.Rev)
	if a := archivesOf(t, s, "rules"); len(a) != 0 {
		t.Errorf("refused hand-overs left archives %v", a)
	}
	_ = c

	live := createWork(t, s, "rules-live")
	_, _, err = ckpt.ArchiveCheckpoint(ctx, s, "rules-live", "superseded", lifecycleAt(3))
	refused("archive of live work", err, ckpt.ErrInvalid, true)
	unchanged(t, s, "rules-live", live.Rev)
	stop := mustAppend(t, s, "rules-live", event(3, ckpt.EventUpdate, ckpt.Patch{Resumable: ptr(false)})).State
	_, _, err = ckpt.TakeOverCheckpoint(ctx, s, "rules-live", ckpt.Agent{ID: "B"}, lifecycleAt(4))
	refused("takeover of work marked not resumable", err, ckpt.ErrNotResumable, true)
	unchanged(t, s, "rules-live", stop.Rev)

	// Forced, the rules give way, except for an archive.
	l := lifecycleAt(5)
	l.Force = true
	if _, _, err := ckpt.TakeOverCheckpoint(ctx, s, "rules", ckpt.Agent{ID: "B"}, l); err != nil {
		t.Errorf("forced takeover of done work: %v", err)
	}
	ar, already, err := ckpt.ArchiveCheckpoint(ctx, s, "rules-live", "superseded", l)
	a := ar.State
	if err != nil || already || a.Archived == nil || a.Archived.Reason != "superseded" {
		t.Fatalf("forced archive: %v, already %v, %+v", err, already, a)
	}
	ar, already, err = ckpt.ArchiveCheckpoint(ctx, s, "rules-live", "again", lifecycleAt(6))
	if again := ar.State; err != nil || !already || again.Rev != a.Rev || again.Archived.Reason != "superseded" {
		t.Errorf("archiving an archive again: %v, already %v, rev %d (was %d); want nothing appended", err, already, again.Rev, a.Rev)
	}
	_, _, err = ckpt.TakeOverCheckpoint(ctx, s, "rules-live", ckpt.Agent{ID: "B"}, l)
	refused("forced takeover of an archive", err, ckpt.ErrNotResumable, false)
	_, _, err = ckpt.RestartCheckpoint(ctx, s, "rules-live", l)
	refused("forced restart of an archive", err, ckpt.ErrNotResumable, false)
	_, err = ckpt.RestoreCheckpoint(ctx, s, "rules-live", 1, lifecycleAt(7))
	refused("restore of an archive", err, ckpt.ErrNotResumable, true)
	unchanged(t, s, "rules-live", a.Rev)

	// Restore: past the end, and the current revision, are refused.
	_, err = ckpt.RestoreCheckpoint(ctx, s, "rules", 99, lifecycleAt(8))
	wantErr(t, "restore past the last revision", err, ckpt.ErrNotFound)
	cur := mustGet(t, s, "rules")
	_, err = ckpt.RestoreCheckpoint(ctx, s, "rules", cur.Rev, lifecycleAt(8))
	wantErr(t, "restore to the current revision", err, ckpt.ErrInvalid)
	r, err := ckpt.RestoreCheckpoint(ctx, s, "rules", 2, lifecycleAt(8))
	if err != nil || r.Rev != cur.Rev+1 || r.Progress.Done != 1 || r.Agent.ID != "A" {
		t.Errorf("restore to revision 2: %v, %+v", err, r)
	}
}

// testTakeover checks a takeover end to end: the archive holds the state
// taken over, the event names it, a keyed retry changes nothing, and a
// second takeover in the same second gets an archive of its own.
func testTakeover(t *testing.T, s ckpt.Store) {
	ctx := context.Background()
	before := createWork(t, s, "to/a")
	l := lifecycleAt(10)
	l.Key = "takeover-1"
	c, name, err := ckpt.TakeOverCheckpoint(ctx, s, "to/a", ckpt.Agent{ID: "B"}, l)
	if err != nil {
		t.Fatal(err)
	}
	if want := fmt.Sprintf("to/a_crashed_%d", at(10).Unix()); name != want {
		t.Errorf("archive name %s, want %s", name, want)
	}
	if c.Agent.ID != "B" || c.Session.ID != "lc-10" || c.Rev != before.Rev+1 {
		t.Errorf("after takeover: agent %+v session %+v rev %d", c.Agent, c.Session, c.Rev)
	}
	checkArchive(t, s, "to/a", name, before.Rev, "crashed")
	l.At = at(11)
	c2, name2, err := ckpt.TakeOverCheckpoint(ctx, s, "to/a", ckpt.Agent{ID: "B"}, l)
	if err != nil || name2 != name || c2.Rev != c.Rev {
		t.Errorf("keyed retry: %v, archive %s rev %d; want %s rev %d", err, name2, c2.Rev, name, c.Rev)
	}
	_, name3, err := ckpt.TakeOverCheckpoint(ctx, s, "to/a", ckpt.Agent{ID: "C"}, lifecycleAt(10))
	if err != nil || name3 != name+"_2" {
		t.Fatalf("second takeover in the same second: %v, archive %s", err, name3)
	}
	checkArchive(t, s, "to/a", name, before.Rev, "crashed")
	checkArchive(t, s, "to/a", name3, c.Rev, "crashed")
	if a := archivesOf(t, s, "to/a"); len(a) != 2 {
		t.Errorf("archives %v after two takeovers and a retry, want two", a)
	}
	r, rname, err := ckpt.RestartCheckpoint(ctx, s, "to/a", lifecycleAt(12))
	if err != nil || r.Progress.Done != 0 || rname != fmt.Sprintf("to/a_aborted_%d", at(12).Unix()) {
		t.Fatalf("restart: %v, done %d, archive %s", err, r.Progress.Done, rname)
	}
	checkArchive(t, s, "to/a", rname, r.Rev-1, "aborted")
}

// testHandOverConcurrent runs takeovers and restarts of one checkpoint at
// once, in the same second, while writers append: every acknowledged one
// names an archive of its own that holds exactly the state it replaced,
// every archive is named by one, and the only failure is a conflict.
func testHandOverConcurrent(t *testing.T, s ckpt.Store) {
	ctx := context.Background()
	createWork(t, s, "hot")
	const handOvers, writers, writes = 6, 2, 15
	var wg sync.WaitGroup
	errs := make(chan error, handOvers+writers)
	for w := range writers {
		wg.Go(func() {
			for i := range writes {
				if _, err := s.Append(ctx, "hot", note(20, fmt.Sprintf("w%d-%d", w, i)), ckpt.AppendOptions{}); err != nil {
					errs <- err
					return
				}
				time.Sleep(time.Millisecond)
			}
		})
	}
	acked := make(chan string, handOvers)
	for i := range handOvers {
		wg.Go(func() {
			l := lifecycleAt(30) // all in one second: names must not collide
			var name string
			var err error
			if i%3 == 2 {
				_, name, err = ckpt.RestartCheckpoint(ctx, s, "hot", l)
			} else {
				_, name, err = ckpt.TakeOverCheckpoint(ctx, s, "hot", ckpt.Agent{ID: fmt.Sprintf("T%d", i)}, l)
			}
			if err != nil {
				errs <- err
				return
			}
			acked <- name
		})
	}
	wg.Wait()
	close(errs)
	close(acked)
	failed := 0
	for err := range errs {
		failed++
		if !errors.Is(err, ckpt.ErrConflict) {
			t.Errorf("concurrent hand-over or write: %v", err)
		}
	}
	if failed > handOvers/2 {
		t.Errorf("%d of %d hand-overs gave up under concurrent writers", failed, handOvers)
	}
	named := handOverNames(t, s, "hot")
	for name := range acked {
		if _, ok := named[name]; !ok {
			t.Errorf("acknowledged archive %s is named by no event", name)
		}
	}
	for name, rev := range named {
		reason := "crashed"
		if strings.Contains(name, "_aborted_") {
			reason = "aborted"
		}
		checkArchive(t, s, "hot", name, rev, reason)
	}
	if a := archivesOf(t, s, "hot"); len(a) != len(named) {
		t.Errorf("%d archives of hot for %d hand-overs: %v", len(a), len(named), a)
	}
}

// testLongIDHandOver checks that work with the longest valid IDs can be
// taken over, and that two such IDs get different archives.
func testLongIDHandOver(t *testing.T, s ckpt.Store) {
	ctx := context.Background()
	base := strings.Repeat("x", 90) + "/" + strings.Repeat("y", ckpt.MaxIDLen-92)
	ids := []string{base + "1", base + "2"}
	names := map[string]bool{}
	for _, id := range ids {
		if len(id) != ckpt.MaxIDLen {
			t.Fatalf("test ID is %d bytes", len(id))
		}
		before := createWork(t, s, id)
		for range 2 {
			c, name, err := ckpt.TakeOverCheckpoint(ctx, s, id, ckpt.Agent{ID: "B"}, lifecycleAt(40))
			if err != nil {
				t.Fatalf("takeover of a %d-byte ID: %v", len(id), err)
			}
			if err := ckpt.ValidateID(name); err != nil || names[name] {
				t.Errorf("archive name %s: %v, seen before %v", name, err, names[name])
			}
			names[name] = true
			checkArchive(t, s, id, name, c.Rev-1, "crashed")
		}
		_ = before
	}
}

// testAbandon checks the monitor's write: quiet work is abandoned, work
// seen since, finished work and archives are left alone.
func testAbandon(t *testing.T, s ckpt.Store) {
	ctx := context.Background()
	createWork(t, s, "quiet")
	c, ok, err := ckpt.AbandonCheckpoint(ctx, s, "quiet", at(60), "no sign of life", lifecycleAt(61))
	if err != nil || !ok || c.Status != ckpt.StatusAbandoned {
		t.Fatalf("abandon quiet work: %v, abandoned %v, %+v", err, ok, c)
	}
	c, ok, err = ckpt.AbandonCheckpoint(ctx, s, "quiet", at(62), "again", lifecycleAt(63))
	if err != nil || ok || c.Rev != 3 {
		t.Errorf("abandon ended work: %v, abandoned %v, rev %d", err, ok, c.Rev)
	}
	createWork(t, s, "alive")
	mustAppend(t, s, "alive", note(70, "still here"))
	_, ok, err = ckpt.AbandonCheckpoint(ctx, s, "alive", at(70), "quiet", lifecycleAt(71))
	if err != nil || ok {
		t.Errorf("abandon work seen at the threshold: %v, abandoned %v", err, ok)
	}
	unchanged(t, s, "alive", 3)
	_, _, err = ckpt.AbandonCheckpoint(ctx, s, "missing", at(70), "quiet", lifecycleAt(71))
	wantErr(t, "abandon a missing checkpoint", err, ckpt.ErrNotFound)
}
