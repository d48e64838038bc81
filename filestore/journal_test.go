package filestore

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ckpt-dev/ckpt"
)

// watchN collects n changes from cursor from, failing after a minute.
func watchN(t *testing.T, s *Store, from string, n int) []ckpt.Change {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var got []ckpt.Change
	stop := errors.New("enough")
	err := s.Watch(ctx, from, func(c ckpt.Change) error {
		got = append(got, c)
		if len(got) == n {
			return stop
		}
		return nil
	})
	if n == 0 || !errors.Is(err, stop) {
		t.Fatalf("Watch from %q: %v after %d of %d changes", from, err, len(got), n)
	}
	return got
}

// quiet fails if a Watch from cursor delivers anything within a moment.
func quiet(t *testing.T, s *Store, from string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	err := s.Watch(ctx, from, func(c ckpt.Change) error { return fmt.Errorf("unexpected change %+v", c) })
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Watch from the end (%q): %v", from, err)
	}
}

func noteEvent(text string) ckpt.Event {
	return ckpt.MustEvent(ckpt.EventNote, time.Time{}, ckpt.Actor{}, ckpt.Note{Text: text})
}

func createEvent() ckpt.Event {
	return ckpt.MustEvent(ckpt.EventCreated, time.Time{}, ckpt.Actor{}, ckpt.Created{})
}

func appendOK(t testing.TB, s *Store, id string, e ckpt.Event) ckpt.AppendResult {
	t.Helper()
	res, err := s.Append(context.Background(), id, e, ckpt.AppendOptions{})
	if err != nil {
		t.Fatalf("Append %s: %v", id, err)
	}
	if len(res.Warnings) > 0 {
		t.Fatalf("Append %s warned: %v", id, res.Warnings)
	}
	return res
}

// TestWatchAcrossRestart closes and reopens the store between writes and
// resumes from every cursor: each resume yields exactly the later changes.
func TestWatchAcrossRestart(t *testing.T) {
	s := newStore(t, Options{})
	appendOK(t, s, "r/a", createEvent())
	appendOK(t, s, "r/a", noteEvent("one"))
	first := watchN(t, s, "", 2)
	s.Close()

	s, err := Open(s.Dir())
	if err != nil {
		t.Fatal(err)
	}
	appendOK(t, s, "r/b", createEvent())
	appendOK(t, s, "r/a", noteEvent("two"))
	s.Close()

	s, err = Open(s.Dir())
	if err != nil {
		t.Fatal(err)
	}
	all := watchN(t, s, "", 4)
	for i, c := range first {
		if all[i] != c {
			t.Errorf("change %d after restarts = %+v, before = %+v", i, all[i], c)
		}
	}
	want := []string{"r/a@1", "r/a@2", "r/b@1", "r/a@3"}
	for i, c := range all {
		if got := fmt.Sprintf("%s@%d", c.ID, c.Rev); got != want[i] {
			t.Errorf("change %d = %s, want %s", i, got, want[i])
		}
		rest := all[i+1:]
		if len(rest) == 0 {
			quiet(t, s, c.Cursor)
			continue
		}
		got := watchN(t, s, c.Cursor, len(rest))
		for k := range rest {
			if got[k] != rest[k] {
				t.Errorf("resuming after change %d: change %d = %+v, want %+v", i, k, got[k], rest[k])
			}
		}
	}
	head, err := s.Head(context.Background())
	if err != nil || head != all[3].Cursor {
		t.Errorf("Head = %q, %v; want the last change's cursor %q", head, err, all[3].Cursor)
	}
}

// TestWatchWriterProcesses watches while writer processes share the store:
// every event of every checkpoint arrives once, in revision order.
func TestWatchWriterProcesses(t *testing.T) {
	s := newStore(t, Options{})
	title := "shared"
	appendOK(t, s, sharedID, ckpt.MustEvent(ckpt.EventCreated, time.Now(), ckpt.Actor{}, ckpt.Created{Patch: ckpt.Patch{Title: &title}}))
	const procs, each = 6, 15
	total := 1 + procs*(1+2*each)
	results := make(chan []ckpt.Change, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		var got []ckpt.Change
		s.Watch(ctx, "", func(c ckpt.Change) error {
			got = append(got, c)
			if len(got) == total {
				return errors.New("all")
			}
			return nil
		})
		results <- got
	}()
	var cmds []*exec.Cmd
	for i := range procs {
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), fmt.Sprintf("CKPT_TORTURE_WRITER=p%d", i), "CKPT_TORTURE_STORE="+s.Dir(), fmt.Sprintf("CKPT_WRITES=%d", 2*each))
		cmd.Stderr = os.Stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		cmds = append(cmds, cmd)
	}
	for _, cmd := range cmds {
		if err := cmd.Wait(); err != nil {
			t.Errorf("writer: %v", err)
		}
	}
	got := <-results
	if len(got) != total {
		t.Fatalf("the watcher saw %d changes, want %d", len(got), total)
	}
	last := map[string]int64{}
	for _, c := range got {
		if c.Rev != last[c.ID]+1 {
			t.Errorf("%s: change to revision %d after %d", c.ID, c.Rev, last[c.ID])
		}
		last[c.ID] = c.Rev
	}
	for id, rev := range last {
		if c, err := s.Get(context.Background(), id, 0); err != nil || c.Rev != rev {
			t.Errorf("%s: the feed ends at revision %d, the store has %v (%v)", id, rev, c.Rev, err)
		}
	}
}

// TestWatchAfterKillBetweenHistoryAndJournal SIGKILLs a writer process right
// after its event's fsync and before its journal write: the event is in
// the history, and Watch, Head and the next writer still journal it once.
func TestWatchAfterKillBetweenHistoryAndJournal(t *testing.T) {
	for _, next := range []string{"watch", "writer"} {
		t.Run(next, func(t *testing.T) {
			s := newStore(t, Options{})
			head, err := s.Head(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			cmd := exec.Command(os.Args[0], "-test.run=^$")
			cmd.Env = append(os.Environ(), "CKPT_TORTURE_WRITER=k", "CKPT_TORTURE_STORE="+s.Dir(), "CKPT_DIE_AFTER_HISTORY=1")
			err = cmd.Run()
			if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); !ok || !ws.Signaled() {
				t.Fatalf("the writer was not killed: %v", err)
			}
			c, err := s.Get(context.Background(), "torture/k", 0)
			if err != nil || c.Rev != 1 {
				t.Fatalf("the killed writer's create: %v, %v", c, err)
			}
			if next == "writer" {
				appendOK(t, s, "torture/k", noteEvent("after the kill"))
				got := watchN(t, s, head, 2)
				if got[0].Rev != 1 || got[1].Rev != 2 {
					t.Errorf("feed after the next write: %+v", got)
				}
				quiet(t, s, got[1].Cursor)
				return
			}
			got := watchN(t, s, head, 1)
			if got[0].ID != "torture/k" || got[0].Rev != 1 || got[0].Type != ckpt.EventCreated {
				t.Errorf("feed after the kill: %+v", got[0])
			}
			quiet(t, s, got[0].Cursor)
			names, _ := readDirNames(s.journal().pending())
			for _, name := range names {
				if ms, dead := deadMarkers(s.journal().pending() + sep + name); !dead || len(ms) > 0 {
					t.Errorf("pending markers left in %s: %+v (its Store gone: %v)", name, ms, dead)
				}
			}
		})
	}
}

// TestWatchAfterMachineCrash simulates a crash that lost the journal's
// unsynced tail: the history holds an event the journal does not, and the
// journal was last reconciled under another boot. Opening the store and
// watching journals the event; a cursor into the lost tail is refused.
func TestWatchAfterMachineCrash(t *testing.T) {
	if thisBoot() == "" {
		t.Skip("this system has no boot ID")
	}
	s := newStore(t, Options{})
	appendOK(t, s, "c/a", createEvent())
	appendOK(t, s, "c/b", createEvent())
	before := watchN(t, s, "", 2)
	appendOK(t, s, "c/a", noteEvent("lost from the journal"))
	lost := watchN(t, s, before[1].Cursor, 1)[0]
	// The crash: the journal loses its last line, the boot changes.
	j := s.journal()
	end, _ := strconv.ParseInt(before[1].Cursor, 10, 64)
	if err := os.Truncate(j.active(), end); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(j.lock(), []byte("a-previous-boot\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := Open(s.Dir())
	if err != nil {
		t.Fatal(err)
	}
	got := watchN(t, s, before[1].Cursor, 1)
	if got[0].ID != "c/a" || got[0].Rev != 2 {
		t.Errorf("after the crash the feed continues with %+v, want c/a at 2", got[0])
	}
	quiet(t, s, got[0].Cursor)
	err = s.Watch(context.Background(), lost.Cursor, func(ckpt.Change) error { return nil })
	if !errors.Is(err, ckpt.ErrInvalid) {
		t.Errorf("Watch from a cursor into the lost tail: %v, want ErrInvalid", err)
	}
	if all := watchN(t, s, "", 3); all[2] != got[0] {
		t.Errorf("from the start: %+v", all)
	}
}

// TestWatchRefusesForeignCursors checks the cursors Watch refuses.
func TestWatchRefusesForeignCursors(t *testing.T) {
	s := newStore(t, Options{})
	appendOK(t, s, "f/a", createEvent())
	c := watchN(t, s, "", 1)[0]
	n, _ := strconv.ParseInt(c.Cursor, 10, 64)
	for _, bad := range []string{"x", "-1", strconv.FormatInt(n-1, 10), strconv.FormatInt(n+1, 10), "1", strings.Repeat("9", 30)} {
		if err := s.Watch(context.Background(), bad, func(ckpt.Change) error { return nil }); !errors.Is(err, ckpt.ErrInvalid) {
			t.Errorf("Watch from %q: %v, want ErrInvalid", bad, err)
		}
	}
}

// TestAppendHonoursContextWhileLocked holds a checkpoint's lock as another
// process would: an Append with a deadline gives up with the context's
// error and appends nothing.
func TestAppendHonoursContextWhileLocked(t *testing.T) {
	s := newStore(t, Options{})
	appendOK(t, s, "l/a", createEvent())
	unlock, err := s.lockCheckpoint(context.Background(), s.files("l/a"), false)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	done := make(chan error, 1)
	go func() {
		_, err := s.Append(ctx, "l/a", noteEvent("waits"), ckpt.AppendOptions{})
		done <- err
	}()
	select {
	case err := <-done:
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("Append under a held lock: %v, want context.DeadlineExceeded", err)
		}
	case <-time.After(time.Minute):
		t.Fatal("Append did not give up when its context ended")
	}
	unlock()
	if c, err := s.Get(context.Background(), "l/a", 0); err != nil || c.Rev != 1 {
		t.Errorf("after the cancelled Append: rev %v, %v; want 1", c.Rev, err)
	}
	// Without a deadline the same Append waits for the lock and succeeds.
	unlock, err = s.lockCheckpoint(context.Background(), s.files("l/a"), false)
	if err != nil {
		t.Fatal(err)
	}
	time.AfterFunc(50*time.Millisecond, unlock)
	live, stop := context.WithCancel(context.Background())
	defer stop()
	if _, err := s.Append(live, "l/a", noteEvent("after"), ckpt.AppendOptions{}); err != nil {
		t.Errorf("Append after the lock is released: %v", err)
	}
}

// TestMarkerFilesAdopted: a Store adopts the idle marker file a closed
// Store left instead of creating one (no inode per short-lived process),
// never adopts a file holding a dead writer's marker (settle resolves it
// first, then it is idle), and settle keeps at most idleMarkerFiles idle.
func TestMarkerFilesAdopted(t *testing.T) {
	s := newStore(t, Options{})
	appendOK(t, s, "m/a", createEvent())
	first := s.procMarkerName()
	s.Close()
	for i := range 3 {
		s2, err := Open(s.Dir())
		if err != nil {
			t.Fatal(err)
		}
		appendOK(t, s2, "m/a", noteEvent(fmt.Sprint("again ", i)))
		if got := s2.procMarkerName(); got != first {
			t.Errorf("Store %d wrote through marker file %q; want the idle %q adopted", i, got, first)
		}
		s2.Close()
	}
	dir := s.journal().pending()
	if names, _ := readDirNames(dir); len(names) != 1 {
		t.Fatalf("pending/ holds %v; want the one idle file", names)
	}

	// A dead writer's marker in the idle file: not adopted, then settled.
	m := marker{Kind: ckpt.ChangeEvent, ID: "m/a", Rev: 4, Sum: "not-this"}
	if err := os.WriteFile(dir+sep+first, m.encode(), 0o644); err != nil {
		t.Fatal(err)
	}
	s3, err := Open(s.Dir())
	if err != nil {
		t.Fatal(err)
	}
	appendOK(t, s3, "m/a", noteEvent("beside a dead marker"))
	if got := s3.procMarkerName(); got == first || got == "" {
		t.Errorf("Store wrote through %q; want a new file beside %q, which holds a dead marker", got, first)
	}
	s3.Close()
	if _, err := s.Head(context.Background()); err != nil {
		t.Fatal(err)
	}
	for _, name := range mustNames(t, dir) {
		if ms, dead := deadMarkers(dir + sep + name); !dead || len(ms) > 0 {
			t.Errorf("%s after settle: markers %+v, dead %v", name, ms, dead)
		}
	}

	// More idle files than settle keeps: the rest are removed.
	for i := range idleMarkerFiles + 3 {
		if err := os.WriteFile(fmt.Sprintf("%s%s%d-idle", dir, sep, i), marker{}.blank(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.Head(context.Background()); err != nil {
		t.Fatal(err)
	}
	if names := mustNames(t, dir); len(names) != idleMarkerFiles {
		t.Errorf("settle kept %d idle marker files %v; want %d", len(names), names, idleMarkerFiles)
	}
}

func mustNames(t *testing.T, dir string) []string {
	t.Helper()
	names, err := readDirNames(dir)
	if err != nil {
		t.Fatal(err)
	}
	return names
}
