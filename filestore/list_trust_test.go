package filestore

import (
	"context"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ckpt-dev/ckpt"
)

// A listing trusts the journal's view of a checkpoint whose beat file
// exists without a stat of its files, once it has settled (dead writers'
// markers resolved, the journal reconciled under this boot). These tests
// give every checkpoint a beat file, so that the trusted path is the one
// taken, and break the view in each way settling must repair.

// trustNoteEnv makes the test binary a writer that appends one note to
// the checkpoint it names and is killed after the history's fsync, before
// its journal line.
const trustNoteEnv = "CKPT_TRUST_NOTE_THEN_DIE"

func init() {
	childModes[trustNoteEnv] = func() {
		afterHistorySync = func() { syscall.Kill(os.Getpid(), syscall.SIGKILL); select {} }
		s, err := Open(os.Getenv("CKPT_TORTURE_STORE"))
		if err == nil {
			_, err = s.Append(context.Background(), os.Getenv(trustNoteEnv), noteEvent("then killed"), ckpt.AppendOptions{})
		}
		os.Stderr.WriteString("the writer was not killed: " + strconv.Quote(errString(err)) + "\n")
		os.Exit(2)
	}
}

func errString(err error) string {
	if err == nil {
		return "no error"
	}
	return err.Error()
}

// beatingCheckpoint creates id with a beat file and returns its listing.
func beatingCheckpoint(t *testing.T, s *Store, id string) ckpt.Summary {
	t.Helper()
	appendOK(t, s, id, createEvent())
	if err := s.Beat(context.Background(), id, ckpt.Signal{At: time.Now()}); err != nil {
		t.Fatal(err)
	}
	return listedRev(t, s, id)
}

// listedRev returns the one summary a listing of id's prefix holds.
func listedRev(t *testing.T, s *Store, id string) ckpt.Summary {
	t.Helper()
	p, err := s.List(context.Background(), ckpt.ListOptions{Filter: ckpt.Filter{Prefix: id}})
	if err != nil || len(p.Items) != 1 || p.Items[0].ID != id {
		t.Fatalf("listing %s: %+v, %v; want it alone", id, p.Items, err)
	}
	return p.Items[0]
}

// TestListAfterKillBetweenHistoryAndJournal: a writer killed after its
// event is durable and before its journal line leaves the view a revision
// behind; the listing settles the dead writer's marker first and shows the
// event.
func TestListAfterKillBetweenHistoryAndJournal(t *testing.T) {
	s := newStore(t, Options{})
	if got := beatingCheckpoint(t, s, "trust/a"); got.Rev != 1 {
		t.Fatalf("created at rev %d", got.Rev)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), trustNoteEnv+"=trust/a", "CKPT_TORTURE_STORE="+s.Dir())
	out, err := cmd.CombinedOutput()
	if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); !ok || !ws.Signaled() {
		t.Fatalf("the writer was not killed: %v: %s", err, out)
	}
	if got := listedRev(t, s, "trust/a"); got.Rev != 2 {
		t.Errorf("listed at rev %d after the killed writer's durable note, want 2", got.Rev)
	}
}

// TestListAfterMachineCrash: a crash lost the journal's unsynced tail (the
// history holds an event the view does not) and the boot changed; the
// listing reconciles the journal first and shows the event.
func TestListAfterMachineCrash(t *testing.T) {
	if thisBoot() == "" {
		t.Skip("this system has no boot ID, so the journal is reconciled only by its writers and ckpt repair")
	}
	s := newStore(t, Options{})
	beatingCheckpoint(t, s, "trust/a")
	head, err := s.Head(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	appendOK(t, s, "trust/a", noteEvent("lost from the journal"))
	j := s.journal()
	end, _ := strconv.ParseInt(head, 10, 64)
	if err := os.Truncate(j.active(), end); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(j.lock(), []byte("a-previous-boot\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	s, err = Open(s.Dir())
	if err != nil {
		t.Fatal(err)
	}
	if got := listedRev(t, s, "trust/a"); got.Rev != 2 {
		t.Errorf("listed at rev %d after the crash, want 2", got.Rev)
	}
}

// TestCheckpointRemovedByHand: removing a checkpoint's directory by hand
// (not ckpt prune) leaves its line in the view and its beats in the
// liveness log. A short page looks at its beat file and leaves it out; a
// full listing reads no file of any checkpoint (see "Liveness in
// bulk") and lists it until ckpt check reports it and ckpt repair
// journals its deletion.
func TestCheckpointRemovedByHand(t *testing.T) {
	s := newStore(t, Options{})
	ctx := context.Background()
	beatingCheckpoint(t, s, "trust/a")
	beatingCheckpoint(t, s, "trust/b")
	if err := os.RemoveAll(s.files("trust/a").dir); err != nil {
		t.Fatal(err)
	}
	ids := func(opts ckpt.ListOptions) []string {
		t.Helper()
		opts.Filter.Prefix = "trust/"
		p, err := s.List(ctx, opts)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, c := range p.Items {
			out = append(out, c.ID)
		}
		return out
	}
	if got := ids(ckpt.ListOptions{Limit: ckpt.DefaultPageSize}); !slices.Equal(got, []string{"trust/b"}) {
		t.Errorf("first page after trust/a was removed by hand: %v, want trust/b alone", got)
	}
	if got := ids(ckpt.ListOptions{}); !slices.Equal(got, []string{"trust/a", "trust/b"}) {
		t.Errorf("full listing after trust/a was removed by hand: %v, want both until a repair", got)
	}
	ps := checkProblems(t, s)
	if len(ps) != 1 || ps[0].ID != "trust/a" || !strings.Contains(ps[0].What, "gone") {
		t.Fatalf("check after trust/a was removed by hand: %+v, want trust/a reported gone", ps)
	}
	if _, err := s.Repair(ctx, nil); err != nil {
		t.Fatal(err)
	}
	if got := ids(ckpt.ListOptions{}); !slices.Equal(got, []string{"trust/b"}) {
		t.Errorf("full listing after repair: %v, want trust/b alone", got)
	}
}
