package filestore

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ckpt-dev/ckpt"
)

// listAllLive lists every checkpoint as a full listing does (liveness from
// the liveness log) and returns id → summary.
func listAllLive(t *testing.T, s *Store) map[string]ckpt.Summary {
	t.Helper()
	got, err := ckpt.ListAll(context.Background(), s, ckpt.Filter{IncludeArchived: true})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]ckpt.Summary{}
	for _, c := range got {
		out[c.ID] = c
	}
	return out
}

// sameLiveness fails unless the listing of id shows the liveness Get does.
func sameLiveness(t *testing.T, s *Store, listed map[string]ckpt.Summary, id string) {
	t.Helper()
	c, err := s.Get(context.Background(), id, 0)
	if err != nil {
		t.Fatal(err)
	}
	l := listed[id].Heartbeat
	if !l.LastBeat.Equal(c.Heartbeat.LastBeat) || (l.Presence == nil) != (c.Heartbeat.Presence == nil) ||
		(l.Presence != nil && l.Presence.State != c.Heartbeat.Presence.State) {
		t.Errorf("%s: listed beat %v presence %+v; Get says %v %+v", id, l.LastBeat, l.Presence, c.Heartbeat.LastBeat, c.Heartbeat.Presence)
	}
}

// TestLiveLogListsWhatTheBeatFilesSay: a full listing reads liveness from
// the liveness log, built from the beat files on first use, and shows what
// Get reads from each beat file: the beat's time, its presence, and none
// for a checkpoint that never beat.
func TestLiveLogListsWhatTheBeatFilesSay(t *testing.T) {
	s := newStore(t, Options{})
	ctx := context.Background()
	for _, id := range []string{"l/plain", "l/waiting", "l/never"} {
		appendOK(t, s, id, createEvent())
	}
	if err := s.Beat(ctx, "l/plain", ckpt.Signal{}); err != nil {
		t.Fatal(err)
	}
	if err := s.Beat(ctx, "l/waiting", ckpt.Signal{State: ckpt.PresenceWaiting}); err != nil {
		t.Fatal(err)
	}
	// A store from before the log: no live.index until a full listing.
	os.Remove(s.journal().liveIndex())
	for round := range 2 {
		listed := listAllLive(t, s)
		for _, id := range []string{"l/plain", "l/waiting", "l/never"} {
			sameLiveness(t, s, listed, id)
		}
		if listed["l/never"].Heartbeat.LastBeat.IsZero() != true || listed["l/waiting"].Heartbeat.Presence == nil {
			t.Errorf("round %d: %+v", round, listed)
		}
		if _, err := os.Stat(s.journal().liveIndex()); err != nil {
			t.Fatalf("round %d: no live.index after a full listing: %v", round, err)
		}
		if err := s.Beat(ctx, "l/plain", ckpt.Signal{At: time.Now().Add(time.Second)}); err != nil {
			t.Fatal(err)
		}
	}
	if ps := checkProblems(t, s); len(ps) > 0 {
		t.Errorf("check: %+v", ps)
	}
}

// TestLiveLogRotatesUnderConcurrentBeats: beats from several goroutines
// rotate a tiny log many times while full listings run; once they stop,
// every checkpoint is listed with the beat its file holds.
func TestLiveLogRotatesUnderConcurrentBeats(t *testing.T) {
	defer func(m int64) { liveMax = m }(liveMax)
	liveMax = 600
	s := newStore(t, Options{})
	ctx := context.Background()
	const n, writers, beats = 12, 4, 40
	for i := range n {
		appendOK(t, s, fmt.Sprintf("r/%02d", i), createEvent())
	}
	listAllLive(t, s) // builds live.index
	var wg sync.WaitGroup
	for w := range writers {
		wg.Go(func() {
			for k := range beats {
				id := fmt.Sprintf("r/%02d", (w*beats+k)%n)
				if err := s.Beat(ctx, id, ckpt.Signal{At: time.Now()}); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	stop := make(chan struct{})
	var listers sync.WaitGroup
	listers.Go(func() {
		other, err := Open(s.Dir()) // another process's Store: no shared memory
		if err != nil {
			t.Error(err)
			return
		}
		for {
			select {
			case <-stop:
				return
			default:
			}
			if _, err := ckpt.ListAll(ctx, other, ckpt.Filter{}); err != nil {
				t.Error(err)
				return
			}
		}
	})
	wg.Wait()
	close(stop)
	listers.Wait()
	if _, err := os.Stat(s.journal().liveOld()); err != nil {
		t.Fatalf("the log never rotated: %v", err)
	}
	for _, st := range []*Store{s, mustOpen(t, s.Dir())} {
		listed := listAllLive(t, st)
		for i := range n {
			sameLiveness(t, st, listed, fmt.Sprintf("r/%02d", i))
		}
	}
	if ps := checkProblems(t, s); len(ps) > 0 {
		t.Errorf("check: %+v", ps)
	}
}

func mustOpen(t *testing.T, dir string) *Store {
	t.Helper()
	s, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestLiveLogIsWrittenFirst: a Beat logs its record before it writes the
// beat file, so a Beat killed between the two leaves the log ahead (a
// beat that happened), never behind; its next Beat brings both level.
func TestLiveLogIsWrittenFirst(t *testing.T) {
	s := newStore(t, Options{})
	ctx := context.Background()
	appendOK(t, s, "k/a", createEvent())
	if err := s.Beat(ctx, "k/a", ckpt.Signal{}); err != nil {
		t.Fatal(err)
	}
	listAllLive(t, s)
	later := time.Now().Add(time.Minute).UTC().Truncate(time.Millisecond)
	// What a Beat killed after its log line leaves.
	if err := s.logLive("k/a", beatBytes(later, ckpt.Presence{})); err != nil {
		t.Fatal(err)
	}
	if got := listAllLive(t, s)["k/a"].Heartbeat.LastBeat; !got.Equal(later) {
		t.Errorf("listed beat %v, want the logged %v", got, later)
	}
	if ps := checkProblems(t, s); len(ps) > 0 {
		t.Errorf("check reports a log ahead of the beat file: %+v", ps)
	}
	if err := s.Beat(ctx, "k/a", ckpt.Signal{At: later.Add(time.Second)}); err != nil {
		t.Fatal(err)
	}
	sameLiveness(t, s, listAllLive(t, s), "k/a")
}

// TestLiveLogBehindTheBeatFile: a beat file written behind the log's back
// (by hand, by a ckpt before the log, or kept by a crash that lost the
// log's line) is listed at the log's older beat; check reports it and
// repair rebuilds the log's index from the beat files. An older ckpt's
// beat hint (journal/beats) makes listings read the beat file at once.
func TestLiveLogBehindTheBeatFile(t *testing.T) {
	s := newStore(t, Options{})
	ctx := context.Background()
	for _, id := range []string{"h/a", "h/b"} {
		appendOK(t, s, id, createEvent())
		if err := s.Beat(ctx, id, ckpt.Signal{}); err != nil {
			t.Fatal(err)
		}
	}
	listAllLive(t, s)
	later := time.Now().Add(time.Minute).UTC().Truncate(time.Millisecond)
	for _, id := range []string{"h/a", "h/b"} {
		if err := os.WriteFile(s.files(id).beat(), beatBytes(later, ckpt.Presence{}), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// An older ckpt beat h/b: it appended its hint.
	hint := "\nh/b " + strconv.FormatInt(later.UnixNano(), 10) + "\n"
	if err := os.WriteFile(s.journal().beats(), []byte(hint), 0o644); err != nil {
		t.Fatal(err)
	}
	listed := listAllLive(t, s)
	if got := listed["h/a"].Heartbeat.LastBeat; !got.Before(later) {
		t.Errorf("h/a listed at %v: the log's older beat was expected", got)
	}
	if got := listed["h/b"].Heartbeat.LastBeat; !got.Equal(later) {
		t.Errorf("h/b listed at %v, want its hinted beat file's %v", got, later)
	}
	ps := checkProblems(t, s)
	if len(ps) != 1 || ps[0].ID != "h/a" || !strings.Contains(ps[0].What, "journal/live") {
		t.Fatalf("check: %+v, want h/a's beat file reported", ps)
	}
	if _, err := s.Repair(ctx, nil); err != nil {
		t.Fatal(err)
	}
	listed = listAllLive(t, s)
	sameLiveness(t, s, listed, "h/a")
	sameLiveness(t, s, listed, "h/b")
	if ps := checkProblems(t, s); len(ps) > 0 {
		t.Errorf("check after repair: %+v", ps)
	}
}

// TestLiveLogRebuiltUnderAnotherBoot: nothing in the log is synced, so an
// index built under another boot (a machine crash may have lost lines) is
// rebuilt from the beat files by the next full listing.
func TestLiveLogRebuiltUnderAnotherBoot(t *testing.T) {
	if thisBoot() == "" {
		t.Skip("this system has no boot ID")
	}
	s := newStore(t, Options{})
	ctx := context.Background()
	appendOK(t, s, "b/a", createEvent())
	if err := s.Beat(ctx, "b/a", ckpt.Signal{}); err != nil {
		t.Fatal(err)
	}
	j := s.journal()
	stale := append(append(liveHeader("a-previous-boot"), '\n'), "b/a "+string(beatBytes(time.Unix(1e9, 0).UTC(), ckpt.Presence{}))+"\n"...)
	if err := os.WriteFile(j.liveIndex(), stale, 0o644); err != nil {
		t.Fatal(err)
	}
	os.Remove(j.live())
	sameLiveness(t, s, listAllLive(t, s), "b/a")
	idx, err := readLiveIndex(j)
	if err != nil || idx.boot != thisBoot() {
		t.Fatalf("live.index after the listing: %+v, %v; want it rebuilt under this boot", idx, err)
	}
}

// TestLiveLogForgetsADeletedCheckpoint: a checkpoint deleted and created
// again under its ID has not beat.
func TestLiveLogForgetsADeletedCheckpoint(t *testing.T) {
	s := newStore(t, Options{})
	ctx := context.Background()
	appendOK(t, s, "d/a", createEvent())
	if err := s.Beat(ctx, "d/a", ckpt.Signal{}); err != nil {
		t.Fatal(err)
	}
	listAllLive(t, s)
	appendOK(t, s, "d/a", ckpt.MustEvent(ckpt.EventArchived, time.Now(), ckpt.Actor{}, ckpt.Archive{Reason: "done"}))
	if err := s.Delete(ctx, "d/a"); err != nil {
		t.Fatal(err)
	}
	appendOK(t, s, "d/a", createEvent())
	if got := listAllLive(t, s)["d/a"].Heartbeat.LastBeat; !got.IsZero() {
		t.Errorf("the new d/a is listed as seen at %v, its deleted namesake's beat", got)
	}
}

// TestLiveLogInAStoreWithoutAJournal: a store made before the change
// journal (no journal/) takes a new checkpoint and its beats, and lists
// them in full.
func TestLiveLogInAStoreWithoutAJournal(t *testing.T) {
	s := newStore(t, Options{})
	if err := os.RemoveAll(s.journal().dir); err != nil {
		t.Fatal(err)
	}
	s = mustOpen(t, s.Dir())
	appendOK(t, s, "old/a", createEvent())
	if err := s.Beat(context.Background(), "old/a", ckpt.Signal{}); err != nil {
		t.Fatal(err)
	}
	sameLiveness(t, s, listAllLive(t, s), "old/a")
}
