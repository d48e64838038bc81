package ckpt_test

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	ckpt "github.com/ckpt-dev/ckpt"
	"github.com/ckpt-dev/ckpt/memstore"
)

func lifecycleStore(t *testing.T) (ckpt.Store, context.Context) {
	t.Helper()
	ctx := context.Background()
	s := memstore.New()
	e := ckpt.MustEvent(ckpt.EventCreated, t0, ckpt.Actor{}, ckpt.Created{Patch: ckpt.Patch{Agent: &ckpt.Agent{ID: "Secondary-A"}}, Steps: []ckpt.Step{{ID: "research"}, {ID: "spec"}}})
	if _, err := s.Append(ctx, "kai-7/a", e, ckpt.AppendOptions{}); err != nil {
		t.Fatal(err)
	}
	step := ckpt.MustEvent(ckpt.EventStep, t0.Add(time.Minute), ckpt.Actor{}, ckpt.StepChange{ID: "research", Status: ckpt.StepDone})
	if _, err := s.Append(ctx, "kai-7/a", step, ckpt.AppendOptions{}); err != nil {
		t.Fatal(err)
	}
	return s, ctx
}

func TestResumeRefusesFinishedWorkUnlessForced(t *testing.T) {
	s, ctx := lifecycleStore(t)
	c, err := ckpt.ResumeCheckpoint(ctx, s, "kai-7/a", ckpt.Lifecycle{At: t0.Add(time.Hour), SessionID: "s2"}, nil, false)
	if err != nil || c.Session.Number != 2 || c.Session.ID != "s2" || c.Rev != 3 {
		t.Fatalf("resume: %v, session %+v rev %d", err, c.Session, c.Rev)
	}
	done := ckpt.MustEvent(ckpt.EventStatus, t0.Add(2*time.Hour), ckpt.Actor{}, ckpt.StatusChange{Status: ckpt.StatusDone})
	if _, err := s.Append(ctx, "kai-7/a", done, ckpt.AppendOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := ckpt.ResumeCheckpoint(ctx, s, "kai-7/a", ckpt.Lifecycle{}, nil, false); !errors.Is(err, ckpt.ErrNotResumable) {
		t.Fatalf("resume of done work: %v, want ErrNotResumable", err)
	}
	if c, err := ckpt.ResumeCheckpoint(ctx, s, "kai-7/a", ckpt.Lifecycle{}, nil, true); err != nil || c.Status != ckpt.StatusInProgress {
		t.Fatalf("forced resume: %v", err)
	}
}

func TestTakeoverArchivesTheOldStateOnceEvenWhenRetried(t *testing.T) {
	s, ctx := lifecycleStore(t)
	at := t0.Add(time.Hour)
	l := ckpt.Lifecycle{At: at, Key: "takeover-1"}
	c, name, err := ckpt.TakeOverCheckpoint(ctx, s, "kai-7/a", ckpt.Agent{ID: "Secondary-C"}, l)
	if err != nil {
		t.Fatal(err)
	}
	wantName := "kai-7/a_crashed_" + itoa(at.Unix())
	if name != wantName || c.Agent.ID != "Secondary-C" || c.Session.Number != 2 {
		t.Fatalf("takeover: name %s agent %+v session %+v", name, c.Agent, c.Session)
	}
	arch, err := s.Get(ctx, name, 0)
	if err != nil {
		t.Fatal(err)
	}
	if arch.Agent.ID != "Secondary-A" || arch.Archived == nil || arch.Archived.Reason != "crashed" || arch.Archived.From != "kai-7/a" || arch.Progress.Done != 1 {
		t.Fatalf("archive does not hold the old agent's state: %+v", arch)
	}
	// A retry with the key (a hook or script that lost the answer) neither
	// takes over twice nor archives twice, even a second later.
	l.At = at.Add(time.Second)
	c2, name2, err := ckpt.TakeOverCheckpoint(ctx, s, "kai-7/a", ckpt.Agent{ID: "Secondary-C"}, l)
	if err != nil || name2 != name || c2.Rev != c.Rev {
		t.Fatalf("retried takeover: %v, name %s rev %d (first: %s rev %d)", err, name2, c2.Rev, name, c.Rev)
	}
	all, _ := ckpt.ListAll(ctx, s, ckpt.Filter{IncludeArchived: true})
	if len(all) != 2 {
		t.Fatalf("%d checkpoints after a retried takeover, want the checkpoint and one archive", len(all))
	}
	// A second, real takeover in the same second gets its own archive.
	_, name3, err := ckpt.TakeOverCheckpoint(ctx, s, "kai-7/a", ckpt.Agent{ID: "Secondary-D"}, ckpt.Lifecycle{At: at})
	if err != nil || name3 != wantName+"_2" {
		t.Fatalf("second takeover in the same second: %v, name %s", err, name3)
	}
	if a, _ := s.Get(ctx, name, 0); a.Agent.ID != "Secondary-A" {
		t.Fatalf("the first archive was overwritten: %+v", a.Agent)
	}
	if a, _ := s.Get(ctx, name3, 0); a.Agent.ID != "Secondary-C" {
		t.Fatalf("the second archive holds %+v, want Secondary-C's state", a.Agent)
	}
}

func TestRestartAndRestore(t *testing.T) {
	s, ctx := lifecycleStore(t)
	c, name, err := ckpt.RestartCheckpoint(ctx, s, "kai-7/a", ckpt.Lifecycle{At: t0.Add(time.Hour)})
	if err != nil || c.Progress.Done != 0 || name != "kai-7/a_aborted_"+itoa(t0.Add(time.Hour).Unix()) {
		t.Fatalf("restart: %v, done %d, archive %s", err, c.Progress.Done, name)
	}
	if a, err := s.Get(ctx, name, 0); err != nil || a.Progress.Done != 1 || a.Archived.Reason != "aborted" {
		t.Fatalf("restart archive: %v %+v", err, a)
	}
	c, err = ckpt.RestoreCheckpoint(ctx, s, "kai-7/a", 2, ckpt.Lifecycle{At: t0.Add(2 * time.Hour)})
	if err != nil || c.Progress.Done != 1 || c.Rev != 4 || c.Steps[0].Status != ckpt.StepDone {
		t.Fatalf("restore to rev 2: %v, %+v", err, c)
	}
	h, _ := s.History(ctx, "kai-7/a", 1, 0)
	if len(h) != 4 || h[3].Type != ckpt.EventRestored {
		t.Fatalf("restore must append, the history keeps everything: %d events", len(h))
	}
	if _, err := ckpt.RestoreCheckpoint(ctx, s, "kai-7/a", 99, ckpt.Lifecycle{}); !errors.Is(err, ckpt.ErrNotFound) {
		t.Fatalf("restore past the end: %v, want ErrNotFound", err)
	}
}

// TestRestartStartsFromTheStagesFirstPhase: a restart from scratch of work
// at seed 002's stage S2.P2 starts over from S2.P1 (its phase, which named
// S2.P2, is cleared); a stage of any other form is kept, and a restarted
// event recorded without a stage replays as before.
func TestRestartStartsFromTheStagesFirstPhase(t *testing.T) {
	for stage, want := range map[string]string{"S2.P2": "S2.P1", "S10.P3": "S10.P1", "S2.P1": "S2.P1", "design": "", "S2.Px": "", "S.P2": "", "S2.P": "", "": ""} {
		if got := ckpt.RestartStage(stage); got != want {
			t.Errorf("RestartStage(%q) = %q, want %q", stage, got, want)
		}
	}
	s, ctx := lifecycleStore(t)
	if _, err := s.Append(ctx, "kai-7/a", ckpt.MustEvent(ckpt.EventUpdate, t0.Add(time.Minute), ckpt.Actor{}, ckpt.Patch{Stage: ptr("S2.P2"), Phase: ptr("Specification")}), ckpt.AppendOptions{}); err != nil {
		t.Fatal(err)
	}
	c, _, err := ckpt.RestartCheckpoint(ctx, s, "kai-7/a", ckpt.Lifecycle{At: t0.Add(time.Hour)})
	if err != nil || c.Stage != "S2.P1" || c.Phase != "" {
		t.Fatalf("restart at S2.P2: %v, stage %q phase %q; want S2.P1 and no phase", err, c.Stage, c.Phase)
	}
	e := ckpt.MustEvent(ckpt.EventRestarted, t0, ckpt.Actor{}, ckpt.Restart{Reason: "aborted"})
	e.Seq = 4
	old, err := ckpt.Apply("x", &ckpt.Checkpoint{ID: "x", Rev: 3, Stage: "S2.P2", Phase: "Specification"}, e)
	if err != nil || old.Stage != "S2.P2" || old.Phase != "Specification" {
		t.Fatalf("a restart recorded without a stage must keep it: %v, %+v", err, old)
	}
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// FuzzArchiveName checks that every valid ID and reason give a valid
// archive name, that long IDs are shortened rather than refused, and that
// two IDs never share a name.
func FuzzArchiveName(f *testing.F) {
	long := strings.Repeat("a", ckpt.MaxIDLen)
	f.Add("kai-7/secondary-a", "kai-7/secondary-b", "crashed", int64(1768487400))
	f.Add(long, long[:ckpt.MaxIDLen-1]+"b", "aborted", int64(0))
	f.Add("x/"+strings.Repeat("..b", 60), "x/"+strings.Repeat("..c", 60), strings.Repeat("r", ckpt.MaxReasonLen), int64(-5))
	f.Fuzz(func(t *testing.T, id1, id2, reason string, unix int64) {
		at := time.Unix(unix%(1<<40), 0)
		n1, err1 := ckpt.ArchiveName(id1, reason, at)
		n2, err2 := ckpt.ArchiveName(id2, reason, at)
		for _, c := range []struct {
			id, name string
			err      error
		}{{id1, n1, err1}, {id2, n2, err2}} {
			valid := ckpt.ValidateID(c.id) == nil && ckpt.ValidateArchiveReason(reason) == nil
			if valid != (c.err == nil) {
				t.Fatalf("ArchiveName(%q, %q): %v; valid inputs %v", c.id, reason, c.err, valid)
			}
			if c.err == nil && ckpt.ValidateID(c.name) != nil {
				t.Fatalf("ArchiveName(%q, %q) = %q, not a valid ID", c.id, reason, c.name)
			}
			if c.err == nil && len(c.name)+3 > ckpt.MaxIDLen {
				t.Fatalf("ArchiveName(%q) = %q leaves no room for a _NN serial", c.id, c.name)
			}
		}
		if err1 == nil && err2 == nil && id1 != id2 && n1 == n2 {
			t.Fatalf("%q and %q share the archive name %q", id1, id2, n1)
		}
	})
}
