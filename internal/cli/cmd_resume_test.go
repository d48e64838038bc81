package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	ckpt "github.com/ckpt-dev/ckpt"
	"github.com/ckpt-dev/ckpt/internal/cmdutil"
	"github.com/ckpt-dev/ckpt/internal/render"
	"github.com/ckpt-dev/ckpt/internal/request"
	"github.com/ckpt-dev/ckpt/memstore"
)

// resumeForTest returns resume options over st with buffers for output.
func resumeForTest(st ckpt.Store, id string, out, errOut *bytes.Buffer) *ResumeOptions {
	w := testWriter(st, out, errOut)
	return &ResumeOptions{common: w.common, nextSession: nextSession{ID: id, Actor: w.Actor}}
}

func TestRunResumeStartsASessionAndPrintsThePrompt(t *testing.T) {
	h := newHarness(t)
	h.Vars[cmdutil.EnvAgent] = "Secondary-A"
	h.OK("start", "kai-7/a", "--title", "Schedule fetcher spec", "--step", "research=Read the sources", "--step", "spec=Write spec.md", "--step", "checklist")
	h.OK("step", "kai-7/a", "research", "--done")
	h.OK("step", "kai-7/a", "spec", "--start")
	h.OK("decision", "kai-7/a", "Use the v2 API", "--reason", "v1 is rate limited")
	h.OK("update", "kai-7/a", "--file-modified", "feature_02/spec.md", "--instructions", "Finish the acceptance criteria")
	before := h.Get("kai-7/a")

	h.Now = t0.Add(45 * time.Minute)
	h.Vars[cmdutil.EnvSession] = "sess-2"
	out := h.OK("resume", "kai-7/a")

	c := h.Get("kai-7/a")
	ev := h.History("kai-7/a")
	last := ev[len(ev)-1]
	if last.Type != ckpt.EventResumed || last.Seq != before.Rev+1 || !last.At.Equal(h.Now) || last.Actor.Agent != "Secondary-A" {
		t.Errorf("last event %+v, want a session.resumed at %v by Secondary-A", last, h.Now)
	}
	if c.Session.ID != "sess-2" || c.Session.Number != before.Session.Number+1 || c.Agent.ID != "Secondary-A" {
		t.Errorf("session %+v agent %+v after resume", c.Session, c.Agent)
	}
	for _, want := range []string{
		"# Resume: Schedule fetcher spec", "session 2", "1 of 3 steps done", "## Next action",
		"Finish the acceptance criteria", "Use the v2 API", "feature_02/spec.md",
		"## Done steps (do not redo)\n- [x] research: Read the sources",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("prompt lacks %q:\n%s", want, out)
		}
	}
	// A done step is never offered again.
	remaining := out[strings.Index(out, "## Remaining steps"):]
	remaining = remaining[:strings.Index(remaining, "\n\n")]
	if strings.Contains(remaining, "research") {
		t.Errorf("the done step is offered again:\n%s", remaining)
	}
	if len(out) >= render.MaxPromptChars || !utf8.ValidString(out) {
		t.Errorf("prompt is %d bytes (valid UTF-8: %v)", len(out), utf8.ValidString(out))
	}
}

func TestRunResumeJSONIsThePromptWithTheCrashLoopVerdict(t *testing.T) {
	h := newHarness(t)
	h.OK("start", "w", "--step", "a", "--step", "b")
	out := h.OK("resume", "w", "--json")
	var got map[string]any
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("resume --json is not JSON: %v\n%s", err, out)
	}
	for _, k := range []string{"id", "goal", "session", "status", "progress", "done_steps", "remaining_steps", "next_action", "warnings", "crash_loop", "resumes_without_progress"} {
		if _, ok := got[k]; !ok {
			t.Errorf("resume --json lacks %q: %s", k, out)
		}
	}
	if got["crash_loop"] != false || got["session"] != float64(2) || got["next_action"] != "Start step a." {
		t.Errorf("crash_loop %v, session %v, next_action %v", got["crash_loop"], got["session"], got["next_action"])
	}
	if _, ok := got["archived_as"]; ok {
		t.Errorf("a resume names an archive: %v", got["archived_as"])
	}
}

func TestRunResumeRefusesWithoutForce(t *testing.T) {
	cases := []struct {
		name  string
		setup [][]string
		msg   string
	}{
		{"done", [][]string{{"done", "w"}}, "w is done: pass --force"},
		{"not resumable", [][]string{{"update", "w", "--resumable=false"}}, "marked not resumable: pass --force"},
		{"archived", [][]string{{"done", "w"}, {"archive", "w"}}, "is an archive (complete"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t)
			h.OK("start", "w", "--step", "a")
			for _, args := range tc.setup {
				h.OK(args...)
			}
			rev := h.Get("w").Rev
			msg := h.Fails(ExitNotResumable, "resume", "w")
			if !strings.Contains(msg, tc.msg) || !strings.Contains(msg, "not resumable") {
				t.Errorf("refusal %q does not say %q", msg, tc.msg)
			}
			if got := h.Get("w").Rev; got != rev {
				t.Fatalf("a refused resume appended: rev %d, was %d", got, rev)
			}
			out := h.OK("resume", "w", "--force")
			c := h.Get("w")
			if c.Rev != rev+1 || c.Session.Number != 2 || !strings.Contains(out, "# Resume:") {
				t.Errorf("--force: rev %d session %d, output:\n%s", c.Rev, c.Session.Number, out)
			}
			if tc.name == "done" && (c.Status != ckpt.StatusInProgress || c.CompletedAt != nil) {
				t.Errorf("a forced resume of done work leaves status %s", c.Status)
			}
		})
	}
}

func TestRunResumeFlagsACrashLoop(t *testing.T) {
	st := memstore.New()
	startForTest(t, st, "loop/T060", "plan", "execute")
	var out, errOut bytes.Buffer
	for i := 1; i <= ckpt.CrashLoopResumes; i++ {
		out.Reset()
		errOut.Reset()
		if err := runResume(context.Background(), resumeForTest(st, "loop/T060", &out, &errOut)); err != nil {
			t.Fatal(err)
		}
		if errOut.Len() > 0 || strings.Contains(out.String(), "crash loop") {
			t.Fatalf("resume %d of %d without progress is flagged already: %s%s", i, ckpt.CrashLoopResumes, errOut.String(), out.String())
		}
	}
	out.Reset()
	if err := runResume(context.Background(), resumeForTest(st, "loop/T060", &out, &errOut)); err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprintf("crash loop: resumed %d times without progress", ckpt.CrashLoopResumes+1)
	if !strings.HasPrefix(errOut.String(), "ckpt: warning: loop/T060: "+want) || !strings.Contains(errOut.String(), "(ckpt log loop/T060 shows them)") || strings.Count(errOut.String(), "\n") != 1 {
		t.Errorf("stderr %q, want one warning line starting %q", errOut.String(), want)
	}
	warnings := out.String()[strings.Index(out.String(), "## Warnings"):]
	if !strings.Contains(warnings, want) {
		t.Errorf("prompt's warnings lack the crash loop:\n%s", out.String())
	}

	o := resumeForTest(st, "loop/T060", &out, &errOut)
	o.JSON = true
	out.Reset()
	if err := runResume(context.Background(), o); err != nil {
		t.Fatal(err)
	}
	var got render.Continuation
	if err := json.Unmarshal(out.Bytes(), &got); err != nil {
		t.Fatal(err)
	}
	if !got.CrashLoop || got.ResumesWithoutProgress != ckpt.CrashLoopResumes+2 || len(got.Warnings) == 0 || !strings.HasPrefix(got.Warnings[0], "crash loop") {
		t.Errorf("JSON crash_loop %v, resumes %d, warnings %q", got.CrashLoop, got.ResumesWithoutProgress, got.Warnings)
	}

	// Progress ends the loop.
	var w1, w2 bytes.Buffer
	if err := runStep(context.Background(), &StepOptions{writeOptions: testWriter(st, &w1, &w2), ID: "loop/T060", Change: request.Step{Step: "plan", Status: ckpt.StepDone}}); err != nil {
		t.Fatal(err)
	}
	out.Reset()
	errOut.Reset()
	if err := runResume(context.Background(), resumeForTest(st, "loop/T060", &out, &errOut)); err != nil {
		t.Fatal(err)
	}
	if errOut.Len() > 0 || strings.Contains(out.String(), "crash loop") {
		t.Errorf("a resume after progress is flagged: %s", errOut.String())
	}
}

func TestRunResumeByAnotherAgentAndIdempotencyKey(t *testing.T) {
	h := newHarness(t)
	h.OK("start", "w", "--agent", "Secondary-A", "--agent-type", "secondary")
	// The same agent keeps its recorded details.
	h.OK("resume", "w", "--agent", "Secondary-A")
	if a := h.Get("w").Agent; a != (ckpt.Agent{ID: "Secondary-A", Type: "secondary"}) {
		t.Errorf("agent after a resume by itself: %+v", a)
	}
	code, _, errOut := h.Run("resume", "w", "--agent", "Secondary-C", "--agent-name", "C")
	if code != 0 || !strings.Contains(errOut, "w was Secondary-A's; it is now Secondary-C's (ckpt takeover archives") {
		t.Errorf("resume by another agent: exit %d, stderr %q", code, errOut)
	}
	if a := h.Get("w").Agent; a != (ckpt.Agent{ID: "Secondary-C", Name: "C"}) {
		t.Errorf("agent after a resume by Secondary-C: %+v", a)
	}
	h.Fails(ExitUsage, "resume", "w", "--agent-type", "x")

	rev := h.Get("w").Rev
	h.OK("resume", "w", "--key", "session-start-7")
	h.OK("resume", "w", "--key", "session-start-7")
	if got := h.Get("w").Rev; got != rev+1 {
		t.Errorf("a resume retried with the same key appended again: rev %d, want %d", got, rev+1)
	}
	h.Fails(ExitNotFound, "resume", "nope")
	h.Fails(ExitUsage, "resume", "../x")
	h.Fails(ExitUsage, "resume")
}

func TestRunResumeSummarisesAHugeCheckpoint(t *testing.T) {
	st := memstore.New()
	ctx := context.Background()
	// One imported snapshot holds it all: 500 steps, 300 done, 300 decisions.
	state := ckpt.Checkpoint{Status: ckpt.StatusInProgress, Resume: ckpt.Resume{Resumable: true}}
	for i := 0; i < 500; i++ {
		s := ckpt.Step{ID: fmt.Sprintf("step-%03d", i), Title: strings.Repeat("long title ", 20), Status: ckpt.StepPending}
		if i < 300 {
			s.Status = ckpt.StepDone
			state.Decisions = append(state.Decisions, ckpt.Decision{At: t0, Text: strings.Repeat("decided ", 30)})
		}
		state.Steps = append(state.Steps, s)
	}
	if _, err := st.Append(ctx, "big", ckpt.MustEvent(ckpt.EventImported, t0, ckpt.Actor{}, ckpt.Snapshot{State: state}), ckpt.AppendOptions{}); err != nil {
		t.Fatal(err)
	}
	var out, errOut bytes.Buffer
	if err := runResume(ctx, resumeForTest(st, "big", &out, &errOut)); err != nil {
		t.Fatal(err)
	}
	s := out.String()
	if len(s) >= render.MaxPromptChars || !utf8.ValidString(s) {
		t.Fatalf("prompt of a 500-step checkpoint is %d bytes", len(s))
	}
	if !strings.Contains(s, "300 of 500 steps done") || !strings.Contains(s, "more done steps") {
		t.Errorf("prompt does not summarise the long lists:\n%s", s)
	}
}
