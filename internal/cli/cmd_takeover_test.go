package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	ckpt "github.com/ckpt-dev/ckpt"
	"github.com/ckpt-dev/ckpt/internal/clitest"
	"github.com/ckpt-dev/ckpt/internal/cmdutil"
	"github.com/ckpt-dev/ckpt/internal/render"
	"github.com/ckpt-dev/ckpt/memstore"
)

// workedCheckpoint starts w for Secondary-A with three steps, finishes one,
// records a decision and a modified file, and returns its state.
func workedCheckpoint(h *clitest.Harness) *ckpt.Checkpoint {
	h.T.Helper()
	h.OK("start", "kai-7/a", "--agent", "Secondary-A", "--title", "Spec", "--step", "research", "--step", "spec", "--step", "checklist")
	h.OK("step", "kai-7/a", "research", "--done", "--agent", "Secondary-A")
	h.OK("step", "kai-7/a", "spec", "--start", "--agent", "Secondary-A")
	h.OK("decision", "kai-7/a", "Use the v2 API")
	h.OK("update", "kai-7/a", "--file-modified", "spec.md", "--next-step", "Write the acceptance criteria")
	return h.Get("kai-7/a")
}

func TestTakeoverArchivesTheOldStateAndHandsTheWorkOver(t *testing.T) {
	h := newHarness(t)
	old := workedCheckpoint(h)
	h.Now = t0.Add(90 * time.Minute)
	h.Vars[cmdutil.EnvAgent] = "Primary"
	h.Vars[cmdutil.EnvSession] = "sess-c1"
	out := h.OK("takeover", "kai-7/a", "--agent", "Secondary-C", "--agent-type", "secondary")

	archive := fmt.Sprintf("kai-7/a_crashed_%d", h.Now.Unix())
	if first := strings.SplitN(out, "\n", 2)[0]; first != "archived the previous state as "+archive {
		t.Errorf("first line %q, want the archive's name %s", first, archive)
	}
	for _, want := range []string{"# Resume: Spec", "Secondary-C (secondary), session 2", "Write the acceptance criteria", "- [x] research"} {
		if !strings.Contains(out, want) {
			t.Errorf("the new agent's prompt lacks %q:\n%s", want, out)
		}
	}

	// The archive is the old agent's state, marked archived and hidden.
	a := h.Get(archive)
	if a.Archived == nil || a.Archived.Reason != "crashed" || a.Archived.From != "kai-7/a" || !a.Archived.At.Equal(h.Now) {
		t.Errorf("archive record %+v", a.Archived)
	}
	if a.Agent.ID != "Secondary-A" || len(a.Steps) != 3 || a.Steps[0].Status != ckpt.StepDone || len(a.Decisions) != 1 || a.Files.Modified[0] != "spec.md" {
		t.Errorf("archive does not hold the old state: agent %+v steps %+v", a.Agent, a.Steps)
	}
	if ls := h.OK("ls"); strings.Contains(ls, "crashed") {
		t.Errorf("ls shows the archive:\n%s", ls)
	}
	if ls := h.OK("ls", "--all"); !strings.Contains(ls, archive) {
		t.Errorf("ls --all does not show the archive:\n%s", ls)
	}

	// The live checkpoint keeps its work and history, under the new agent.
	c := h.Get("kai-7/a")
	if c.Agent != (ckpt.Agent{ID: "Secondary-C", Type: "secondary"}) || c.Session.ID != "sess-c1" || c.Session.Number != 2 || c.Rev != old.Rev+1 {
		t.Errorf("after takeover: agent %+v session %+v rev %d", c.Agent, c.Session, c.Rev)
	}
	if c.Progress != old.Progress || len(c.Decisions) != 1 || c.Archived != nil {
		t.Errorf("takeover lost work: progress %+v decisions %d archived %v", c.Progress, len(c.Decisions), c.Archived)
	}
	ev := h.History("kai-7/a")
	var tk ckpt.Takeover
	if last := ev[len(ev)-1]; last.Type != ckpt.EventTakenOver || last.Actor.Agent != "Primary" || json.Unmarshal(last.Data, &tk) != nil {
		t.Fatalf("last event %+v", last)
	}
	if tk.From.ID != "Secondary-A" || tk.To.ID != "Secondary-C" || tk.ArchivedAs != archive || tk.Reason != "crashed" {
		t.Errorf("taken_over event %+v", tk)
	}

	// --json carries the archive's name with the prompt.
	h.Now = h.Now.Add(time.Hour)
	js := h.OK("takeover", "kai-7/a", "--agent", "Secondary-D", "--reason", "reassigned", "--json")
	var got render.Continuation
	if err := json.Unmarshal([]byte(js), &got); err != nil {
		t.Fatal(err)
	}
	if want := fmt.Sprintf("kai-7/a_reassigned_%d", h.Now.Unix()); got.ArchivedAs != want || got.Agent.ID != "Secondary-D" || got.Session != 3 {
		t.Errorf("takeover --json: archived_as %q agent %+v session %d", got.ArchivedAs, got.Agent, got.Session)
	}
}

func TestTakeoverRefusals(t *testing.T) {
	h := newHarness(t)
	workedCheckpoint(h)
	rev := h.Get("kai-7/a").Rev
	count := func() int {
		l, _ := ckpt.ListAll(context.Background(), h.Store, ckpt.Filter{IncludeArchived: true})
		return len(l)
	}
	n := count()

	msg := h.Fails(ExitUsage, "takeover", "kai-7/a")
	if !strings.Contains(msg, "pass --agent NAME") {
		t.Errorf("takeover without --agent: %q", msg)
	}
	// CKPT_AGENT is the acting agent, never the new one.
	h.Vars[cmdutil.EnvAgent] = "Primary"
	h.Fails(ExitUsage, "takeover", "kai-7/a")
	msg = h.Fails(ExitUsage, "takeover", "kai-7/a", "--agent", "C", "--reason", "went away")
	if !strings.Contains(msg, "use one word") {
		t.Errorf("bad reason: %q", msg)
	}
	h.Fails(ExitNotFound, "takeover", "nope", "--agent", "C")

	h.OK("done", "kai-7/a")
	msg = h.Fails(ExitNotResumable, "takeover", "kai-7/a", "--agent", "C")
	if !strings.Contains(msg, "is done: pass --force") {
		t.Errorf("takeover of done work: %q", msg)
	}
	if count() != n || h.Get("kai-7/a").Rev != rev+1 {
		t.Fatalf("refused takeovers stored something: %d checkpoints, rev %d", count(), h.Get("kai-7/a").Rev)
	}
	out := h.OK("takeover", "kai-7/a", "--agent", "C", "--force")
	archive := strings.TrimPrefix(strings.SplitN(out, "\n", 2)[0], "archived the previous state as ")
	msg = h.Fails(ExitNotResumable, "takeover", archive, "--agent", "D", "--force")
	if !strings.Contains(msg, "is an archive") || !strings.Contains(msg, "take over the live checkpoint kai-7/a instead") {
		t.Errorf("takeover of an archive: %q", msg)
	}
}

func TestRestartArchivesAsAbortedAndStartsOver(t *testing.T) {
	h := newHarness(t)
	h.OK("start", "w", "--step", "a", "--step", "b", "--accept", "tests", "--max-cycles", "3")
	h.OK("step", "w", "a", "--done")
	h.OK("decision", "w", "go")
	h.OK("block", "w", "stuck")
	h.OK("cycle", "w")
	h.OK("accept", "w", "tests")
	h.Now = t0.Add(time.Hour)
	out := h.OK("restart", "w")
	archive := fmt.Sprintf("w_aborted_%d", h.Now.Unix())
	if !strings.HasPrefix(out, "archived the previous state as "+archive+"\n") || !strings.Contains(out, "Start step a.") {
		t.Errorf("restart output:\n%s", out)
	}
	c := h.Get("w")
	if c.Status != ckpt.StatusInProgress || c.Progress.Done != 0 || c.Steps[0].Status != ckpt.StepPending || len(c.Decisions)+len(c.Blockers) != 0 ||
		c.Cycles.Count != 0 || c.Cycles.Max != 3 || c.Acceptance[0].Met || c.Session.Number != 2 {
		t.Errorf("restart did not start over: %+v", c)
	}
	if a := h.Get(archive); a.Archived == nil || a.Archived.Reason != "aborted" || a.Progress.Done != 1 || len(a.Blockers) != 1 {
		t.Errorf("aborted archive %+v", a)
	}
	if got := len(h.History("w")); got != 7 {
		t.Errorf("restart rewrote history: %d events, want 7", got)
	}
	js := h.OK("restart", "w", "--reason", "corrupted", "--json")
	var got render.Continuation
	if err := json.Unmarshal([]byte(js), &got); err != nil || got.ArchivedAs != fmt.Sprintf("w_corrupted_%d", h.Now.Unix()) {
		t.Errorf("restart --json: %v %+v", err, got.ArchivedAs)
	}
	h.Fails(ExitNotFound, "restart", "nope")
}

func TestArchiveHidesFinishedWork(t *testing.T) {
	h := newHarness(t)
	h.OK("start", "w")
	msg := h.Fails(ExitUsage, "archive", "w")
	if !strings.Contains(msg, "w is in_progress: archiving it would hide live work") || !strings.Contains(msg, "pass --force") {
		t.Errorf("archive of live work: %q", msg)
	}
	h.OK("done", "w")
	h.Now = t0.Add(time.Minute)
	out := h.OK("archive", "w")
	if want := "w  rev 3  archived  (0/0, 100%, done)\n"; out != want {
		t.Errorf("archive output %q, want %q", out, want)
	}
	c := h.Get("w")
	if c.Archived == nil || c.Archived.Reason != "complete" || !c.Archived.At.Equal(h.Now) || c.Status != ckpt.StatusDone {
		t.Errorf("archived %+v", c.Archived)
	}
	if ls := h.OK("ls", "--json"); strings.TrimSpace(ls) != "[]" {
		t.Errorf("ls lists an archived checkpoint: %s", ls)
	}
	// Again: nothing appended, exit 0, said so.
	code, out, errOut := h.Run("archive", "w", "--reason", "other")
	if code != 0 || !strings.Contains(errOut, "w was archived already (complete at") || !strings.Contains(out, "archived (complete)") {
		t.Errorf("second archive: exit %d, %q, %q", code, out, errOut)
	}
	if h.Get("w").Rev != 3 {
		t.Error("a second archive appended an event")
	}
	h.OK("start", "x")
	h.OK("archive", "x", "--force", "--reason", "superseded by y", "--json")
	if a := h.Get("x").Archived; a == nil || a.Reason != "superseded by y" {
		t.Errorf("forced archive %+v", a)
	}
	h.Fails(ExitUsage, "archive", "x", "--reason", " ")
	h.Fails(ExitNotFound, "archive", "nope")
}

func TestRestoreGoesBackByAppending(t *testing.T) {
	h := newHarness(t)
	h.OK("start", "w", "--step", "a", "--step", "b")
	h.OK("step", "w", "a", "--done")
	h.OK("decision", "w", "wrong turn")
	h.OK("step", "w", "b", "--done")
	at2 := h.OK("show", "w", "--rev", "2", "--json")
	h.Now = t0.Add(time.Hour)
	out := h.OK("restore", "w", "--rev", "2")
	if want := "w  rev 5  restored to revision 2  (1/2, 50%, in_progress)\n"; out != want {
		t.Errorf("restore output %q, want %q", out, want)
	}
	c := h.Get("w")
	want := decodeCheckpoint(t, at2)
	if c.Rev != 5 || c.Steps[1].Status != ckpt.StepPending || len(c.Decisions) != 0 || c.Steps[0].Status != want.Steps[0].Status {
		t.Errorf("restored state %+v", c)
	}
	ev := h.History("w")
	if len(ev) != 5 || ev[4].Type != ckpt.EventRestored || ev[3].Type != ckpt.EventStep {
		t.Errorf("restore did not keep the history: %d events, last %s", len(ev), ev[len(ev)-1].Type)
	}
	// Forward again: the history keeps revision 4.
	h.OK("restore", "w", "--rev", "4", "--json")
	if c := h.Get("w"); c.Progress.Done != 2 || len(c.Decisions) != 1 {
		t.Errorf("restore forward to 4: %+v", c.Progress)
	}

	msg := h.Fails(ExitNotFound, "restore", "w", "--rev", "99")
	if !strings.Contains(msg, "w has no revision 99: it is at revision 6: pick a revision from ckpt log w") {
		t.Errorf("missing revision: %q", msg)
	}
	h.Fails(ExitUsage, "restore", "w")
	h.Fails(ExitUsage, "restore", "w", "--rev", "-1")
	h.Fails(ExitUsage, "restore", "w", "--rev", "6")
	h.Fails(ExitNotFound, "restore", "nope", "--rev", "1")
	if h.Get("w").Rev != 6 {
		t.Error("a refused restore appended")
	}
}

func TestCycleLimitErrorIsClear(t *testing.T) {
	h := newHarness(t)
	h.OK("start", "loop/T060", "--max-cycles", "2")
	h.OK("cycle", "loop/T060")
	h.OK("cycle", "loop/T060")
	msg := h.Fails(ExitCycleLimit, "cycle", "loop/T060")
	if !strings.Contains(msg, "cycle limit reached: loop/T060 has used 2 of 2 cycles: raise the limit with ckpt update loop/T060 --max-cycles N, or stop and ask for help") {
		t.Errorf("cycle limit message %q", msg)
	}
	out := h.OK("resume", "loop/T060")
	if !strings.Contains(out, "cycle limit reached: 2 of 2") {
		t.Errorf("the prompt does not warn of the cycle limit:\n%s", out)
	}
}

func TestArchiveReason(t *testing.T) {
	for in, want := range map[string]string{"": "crashed", " reassigned ": "reassigned", "oom-kill.2": "oom-kill.2"} {
		if got, err := archiveReason(in, "crashed"); err != nil || got != want {
			t.Errorf("archiveReason(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, bad := range []string{"a b", "a/b", "..", "x\ny", strings.Repeat("r", 300)} {
		if _, err := archiveReason(bad, "crashed"); ExitCode(err) != ExitUsage {
			t.Errorf("archiveReason(%q) accepted: %v", bad, err)
		}
	}
}

func TestRunTakeoverWithMemstore(t *testing.T) {
	st := memstore.New()
	startForTest(t, st, "w", "a")
	var out, errOut bytes.Buffer
	w := testWriter(st, &out, &errOut)
	o := &HandOverOptions{common: w.common, nextSession: nextSession{ID: "w", Actor: w.Actor}, To: ckpt.Agent{Name: "New agent"}, Reason: "crashed"}
	if err := runHandOver(context.Background(), o); err != nil {
		t.Fatal(err)
	}
	c, _ := st.Get(context.Background(), "w", 0)
	if c.Agent.Name != "New agent" || c.Session.Number != 2 {
		t.Errorf("takeover by name: %+v", c.Agent)
	}
	if _, err := st.Get(context.Background(), fmt.Sprintf("w_crashed_%d", t0.Unix()), 0); err != nil {
		t.Errorf("archive: %v", err)
	}
}

func TestTakeoverAndRestartInTheSameSecondDoNotOverwriteTheArchive(t *testing.T) {
	h := newHarness(t)
	h.OK("start", "w", "--agent", "A", "--step", "a")
	h.OK("step", "w", "a", "--done")
	h.OK("takeover", "w", "--agent", "B", "--key", "k1")
	archive := fmt.Sprintf("w_crashed_%d", t0.Unix())
	before := h.History(archive)
	// A retry with the same key changes nothing.
	h.OK("takeover", "w", "--agent", "B", "--key", "k1")
	if got := h.History(archive); len(got) != len(before) {
		t.Errorf("a retried takeover wrote to the archive: %d events, was %d", len(got), len(before))
	}
	if _, err := h.Store.Get(context.Background(), archive+"_2", 0); err == nil {
		t.Errorf("a retried takeover made a second archive")
	}
	// A second, real takeover in the same second gets its own archive.
	h.OK("takeover", "w", "--agent", "C")
	if got := h.History(archive); len(got) != len(before) {
		t.Errorf("the second takeover wrote to the first archive: %d events, was %d", len(got), len(before))
	}
	if a := h.Get(archive + "_2").Agent.ID; a != "B" {
		t.Errorf("the second archive holds %s's state, want B's", a)
	}
	if a := h.Get("w").Agent.ID; a != "C" {
		t.Errorf("the work went to %s, want C", a)
	}
	h.OK("restart", "w")
	h.OK("restart", "w")
	if a := h.Get(fmt.Sprintf("w_aborted_%d_2", t0.Unix())); a.Archived == nil || a.Archived.Reason != "aborted" {
		t.Errorf("second restart in the same second: %+v", a.Archived)
	}
}
