package render

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	ckpt "github.com/ckpt-dev/ckpt"
	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/text"
)

func TestPromptMarkdownGolden(t *testing.T) {
	for _, tc := range []struct {
		name string
		c    func(testing.TB) *ckpt.Checkpoint
	}{
		{"t060", t060},                // seed 003 mid-progress
		{"t060_blocked", blockedT060}, // seed 003 blocked by an error
		{"t062_partial", t062},        // seed 003 scenario 3: partial completion
		{"secondary_a", secondaryA},   // seed 002: no steps, next steps in words
		{"cia42", cia42},              // seed 001: failed step, blocker, decision
	} {
		t.Run(tc.name, func(t *testing.T) {
			md := NewPrompt(tc.c(t)).Markdown()
			checkPromptInvariants(t, md)
			golden(t, "prompt_"+tc.name+".md", md)
		})
	}
}

func TestPromptNextAction(t *testing.T) {
	base := func() *ckpt.Checkpoint {
		return &ckpt.Checkpoint{
			ID: "a", Status: ckpt.StatusInProgress, Resume: ckpt.Resume{Resumable: true},
			Steps: []ckpt.Step{
				{ID: "s1", Title: "Read guide", Status: ckpt.StepDone},
				{ID: "s2", Title: "Write spec", Status: ckpt.StepInProgress},
				{ID: "s3", Title: "Write tests", Status: ckpt.StepPending},
				{ID: "s4", Title: "Fix lint", Status: ckpt.StepFailed},
			},
		}
	}
	for _, tc := range []struct {
		name   string
		change func(c *ckpt.Checkpoint)
		want   string
	}{
		{"next step first", func(c *ckpt.Checkpoint) { c.Resume.NextSteps = []string{"Ask the reviewer", "Write tests"} }, "Ask the reviewer"},
		{"next steps naming done steps are skipped", func(c *ckpt.Checkpoint) {
			c.Resume.NextSteps = []string{"s1", " read GUIDE ", "s1: Read guide", "", "Ship it"}
		}, "Ship it"},
		{"in-progress step", nil, "Continue step s2: Write spec."},
		{"in-progress step named by current_step wins", func(c *ckpt.Checkpoint) {
			c.Steps = append(c.Steps, ckpt.Step{ID: "s5", Status: ckpt.StepInProgress})
			c.CurrentStep = "s5"
		}, "Continue step s5."},
		{"current_step in words", func(c *ckpt.Checkpoint) {
			c.Steps[1].Status = ckpt.StepPending
			c.CurrentStep = "Writing section 5"
		}, "Continue: Writing section 5"},
		{"current_step naming a done step is ignored", func(c *ckpt.Checkpoint) {
			c.Steps[1].Status = ckpt.StepDone
			c.CurrentStep = "s1"
		}, "Start step s3: Write tests."},
		{"first pending step", func(c *ckpt.Checkpoint) { c.Steps[1].Status = ckpt.StepDone }, "Start step s3: Write tests."},
		{"failed step", func(c *ckpt.Checkpoint) {
			c.Steps[1].Status, c.Steps[2].Status = ckpt.StepDone, ckpt.StepSkipped
		}, "Retry failed step s4: Fix lint."},
		{"instructions", func(c *ckpt.Checkpoint) {
			c.Steps = nil
			c.Resume.Instructions = "Resume from S2.P2.\nThen  write tests."
		}, "Resume from S2.P2. Then write tests."},
		{"unmet criterion", func(c *ckpt.Checkpoint) {
			c.Steps, c.Status = nil, ckpt.StatusDone
			c.Acceptance = []ckpt.Criterion{{ID: "a1", Met: true}, {ID: "a2", Title: "docs updated"}}
		}, "Meet acceptance criterion a2: docs updated."},
		{"done", func(c *ckpt.Checkpoint) { c.Steps, c.Status = nil, ckpt.StatusDone }, "Nothing is left to do: the work is done."},
		{"nothing recorded", func(c *ckpt.Checkpoint) { c.Steps = nil },
			"Decide the next step: no next step, pending step or resume instructions are recorded."},
		{"blocked", func(c *ckpt.Checkpoint) {
			c.Status = ckpt.StatusBlocked
			c.Blockers = []ckpt.Blocker{{ID: "b1", Text: "no token"}}
			c.Errors = []ckpt.ErrorItem{{Message: "boom", Blocking: true}, {Message: "minor"}}
		}, "First resolve the 1 active blocker and 1 blocking error, then: Continue step s2: Write spec."},
		{"cleared blockers do not block", func(c *ckpt.Checkpoint) {
			c.Blockers = []ckpt.Blocker{{ID: "b1", Text: "no token", ClearedAt: ptr(time.Now())}}
		}, "Continue step s2: Write spec."},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := base()
			if tc.change != nil {
				tc.change(c)
			}
			if got := NewPrompt(c).NextAction; got != tc.want {
				t.Errorf("NextAction = %q, want %q", got, tc.want)
			}
		})
	}
}

// TestPromptDoneStepsNeverOffered: a done step is listed as done and
// appears in no list of work to do, not even when stale next_steps name it.
func TestPromptDoneStepsNeverOffered(t *testing.T) {
	for _, c := range []*ckpt.Checkpoint{t060(t), secondaryA(t), hugeCheckpoint(t)} {
		t.Run(c.ID, func(t *testing.T) {
			p := NewPrompt(c)
			done := map[string]bool{}
			for _, s := range c.Steps {
				if s.Status.Finished() {
					done[s.ID] = true
				}
			}
			if len(p.DoneSteps)+len(p.RemainingSteps) != len(c.Steps) {
				t.Fatalf("%d done + %d remaining steps, want %d in all", len(p.DoneSteps), len(p.RemainingSteps), len(c.Steps))
			}
			for _, s := range p.DoneSteps {
				if !done[s.ID] {
					t.Errorf("step %s listed as done, status %s", s.ID, s.Status)
				}
			}
			for _, s := range p.RemainingSteps {
				if done[s.ID] {
					t.Errorf("done step %s listed as remaining", s.ID)
				}
			}
			for _, s := range p.NextSteps {
				if done[s] {
					t.Errorf("done step %s offered as a next step", s)
				}
			}
			md := p.Markdown()
			for _, sec := range []string{"Next action", "Next steps", "Remaining steps"} {
				body := sectionBody(md, sec)
				for _, line := range strings.Split(body, "\n") {
					for id := range done {
						if strings.Contains(line, "[ ] "+id+" ") || strings.HasSuffix(line, "[ ] "+id) || line == "- "+id || line == id {
							t.Errorf("section %s offers done step %s: %q", sec, id, line)
						}
					}
				}
			}
			for id := range done {
				if strings.Contains(p.NextAction, id) {
					t.Errorf("next action %q names done step %s", p.NextAction, id)
				}
			}
		})
	}
	// Seed 002's example lists "S2.P1 complete" both as a completed step and
	// as a next step: it must not be offered.
	p := NewPrompt(secondaryA(t))
	if p.NextAction != "Complete Requirements Section 5" {
		t.Errorf("NextAction = %q, want the first next step that is not done", p.NextAction)
	}
	if slices.Contains(p.NextSteps, "S2.P1 complete") {
		t.Errorf("NextSteps %q offers a done step", p.NextSteps)
	}
}

// sectionBody returns the text under "## title" up to the next heading.
func sectionBody(md, title string) string {
	_, after, ok := strings.Cut(md, "\n## "+title+"\n")
	if !ok {
		return ""
	}
	body, _, _ := strings.Cut(after, "\n## ")
	return body
}

func TestPromptWarnings(t *testing.T) {
	for _, tc := range []struct {
		name   string
		c      func(testing.TB) *ckpt.Checkpoint
		change func(c *ckpt.Checkpoint)
		want   []string
	}{
		{"live work has none", t060, nil, []string{}},
		{"partial completion", t062, nil, []string{
			"partially complete: marked done, but 1 of 2 acceptance criteria are unmet (85_images_catalogued)",
		}},
		{"done", t040, nil, []string{"done: the work was finished; resume it only to redo or extend it"}},
		{"blocked", blockedT060, nil, []string{"blocked by 1 blocking error: resolve before anything else"}},
		{"resumed without progress, not yet a loop", t060, func(c *ckpt.Checkpoint) {
			c.ResumesWithoutProgress = ckpt.CrashLoopResumes
		}, []string{}},
		{"crash loop, not resumable, failed, cycle limit, archived", t060, func(c *ckpt.Checkpoint) {
			c.ResumesWithoutProgress = ckpt.CrashLoopResumes + 1
			c.Resume.Resumable = false
			c.Status, c.StatusReason = ckpt.StatusFailed, "tests keep failing"
			c.Cycles = ckpt.Cycles{Count: 3, Max: 3}
			c.Archived = &ckpt.Archive{Reason: "crashed", At: ts("2025-12-08T15:00:00Z")}
		}, []string{
			"crash loop: resumed 4 times without progress (more than 3); find out why the sessions end before resuming again",
			"archived (crashed) at 2025-12-08T15:00:00Z: this is a record of finished or replaced work",
			"failed: tests keep failing",
			"not resumable: the checkpoint is marked not resumable; continue only if you are sure the work should go on",
			"cycle limit reached: 3 of 3 fix/retry cycles used, another will be refused; this may be a crash loop, so stop and ask for help rather than retrying",
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := tc.c(t)
			if tc.change != nil {
				tc.change(c)
			}
			p := NewPrompt(c)
			if p.CrashLoop != (c.ResumesWithoutProgress > ckpt.CrashLoopResumes) {
				t.Errorf("CrashLoop = %v after %d resumes without progress", p.CrashLoop, c.ResumesWithoutProgress)
			}
			if !slices.Equal(p.Warnings, tc.want) {
				t.Errorf("Warnings =\n%q\nwant\n%q", p.Warnings, tc.want)
			}
			md := p.Markdown()
			for _, w := range tc.want {
				if !strings.Contains(sectionBody(md, "Warnings"), "- "+w+"\n") {
					t.Errorf("Markdown lacks warning %q:\n%s", w, md)
				}
			}
		})
	}
	// A caller that knows more adds its own warning.
	p := NewPrompt(t060(t))
	p.Warnings = append(p.Warnings, "the old session's worktree is gone")
	if !strings.Contains(p.Markdown(), "## Warnings\n- the old session's worktree is gone\n") {
		t.Errorf("an appended warning is not rendered:\n%s", p.Markdown())
	}
}

func TestPromptPartialCompletionShown(t *testing.T) {
	p := NewPrompt(t062(t))
	if !p.PartiallyComplete {
		t.Error("PartiallyComplete = false for a done checkpoint with an unmet criterion")
	}
	md := p.Markdown()
	for _, want := range []string{
		"- **Status:** done (partially complete)\n",
		"- [ ] 85_images_catalogued: all 85 images catalogued (unmet)\n",
		"## Next action\nMeet acceptance criterion 85_images_catalogued: all 85 images catalogued.\n",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("Markdown lacks %q:\n%s", want, md)
		}
	}
}

func TestPromptJSON(t *testing.T) {
	b, err := json.Marshal(NewPrompt(t060(t)))
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{
		"id", "goal", "task_id", "status", "progress", "current_step", "done_steps", "remaining_steps",
		"decisions", "active_blockers", "active_errors", "files_created", "files_modified",
		"resume_instructions", "next_steps", "next_action", "session", "agent", "cycles", "warnings",
		"partially_complete", "resumable", "acceptance", "context", "updated_at", "crash_loop", "resumes_without_progress",
	} {
		if _, ok := m[key]; !ok {
			t.Errorf("JSON lacks %q: %s", key, b)
		}
	}
	// Empty lists are arrays, not null, so consumers can iterate them.
	for _, key := range []string{"active_blockers", "active_errors", "warnings", "next_steps"} {
		if _, ok := m[key].([]any); !ok {
			t.Errorf("%s = %v, want a JSON array", key, m[key])
		}
	}
	if m["goal"] != "Convert Nature Trail PDFs to Markdown" || m["current_step"] != "post-20" || m["session"] != 1.0 {
		t.Errorf("goal, current_step, session = %v, %v, %v", m["goal"], m["current_step"], m["session"])
	}
	if n := len(m["done_steps"].([]any)); n != 19 {
		t.Errorf("%d done steps in JSON, want 19", n)
	}
}

func TestNewPromptSharesNothing(t *testing.T) {
	c := t060(t)
	before, _ := json.Marshal(c)
	p := NewPrompt(c)
	p.Decisions[0].Text = "changed"
	p.FilesCreated[0] = "changed"
	p.DoneSteps[0].ID = "changed"
	p.Acceptance[0].Met = true
	_ = p.Markdown()
	after, _ := json.Marshal(c)
	if string(before) != string(after) {
		t.Error("changing the prompt or rendering it changed the checkpoint")
	}
}

// TestPromptBound renders a checkpoint built from 10,000 events: 500 steps,
// 2,000 decisions, many files, errors and blockers, and huge strings.
func TestPromptBound(t *testing.T) {
	c := hugeCheckpoint(t)
	if c.Rev != 10000 {
		t.Fatalf("huge checkpoint has %d events, want 10,000", c.Rev)
	}
	p := NewPrompt(c)
	md := p.Markdown()
	checkPromptInvariants(t, md)
	if len(md) >= MaxPromptChars {
		t.Fatalf("prompt is %d bytes, want < %d", len(md), MaxPromptChars)
	}
	if len(md) > promptBudget+500 {
		t.Errorf("prompt is %d bytes, want about %d (~2,000 tokens)", len(md), promptBudget)
	}
	t.Logf("prompt: %d bytes, %d runes", len(md), utf8.RuneCountInString(md))

	// Lists are summarised, keeping the most relevant items.
	for _, want := range []string{
		"- … and ", " more done steps, step-001 to ",
		" more decisions, earlier\n",
		"- [x] step-480: Convert batch 480\n", // the most recent done step
		"- [ ] step-481: Convert batch 481 (in progress)\n",
		"- Decision 2000 ", // the latest decision
		"- **Current step:** step-481: Convert batch 481\n",
		"## Next action\nFirst resolve the 20 active blockers, then: Step 481 needs the fresh export first\n",
		"## Notes\n… (earlier notes left out)\n",
		"note 9999: 語 checked\n", // the latest note
	} {
		if !strings.Contains(md, want) {
			t.Errorf("prompt lacks %q", want)
		}
	}
	for _, gone := range []string{"- Decision 0001 ", "- [x] step-001:"} {
		if strings.Contains(md, gone) {
			t.Errorf("prompt keeps %q, an old item that should be summarised", gone)
		}
	}
	// Every line is whole: a line of the unabridged rendering, or a summary.
	whole := map[string]bool{}
	for _, s := range p.sections() {
		for _, l := range strings.Split(s.render(1<<40), "\n") {
			whole[l] = true
		}
	}
	var header strings.Builder
	p.writeHeader(&header)
	for _, l := range strings.Split(header.String(), "\n") {
		whole[l] = true
	}
	for _, l := range strings.Split(md, "\n") {
		if !whole[l] && !strings.HasPrefix(l, "- … and ") && l != "… (earlier notes left out)" {
			t.Errorf("line %q is not a whole line of the prompt", l)
		}
	}
	// The huge strings are shortened with an ellipsis at a rune boundary.
	title, _, _ := strings.Cut(md, "\n")
	if !strings.HasPrefix(title, "# Resume: Ünïcödé goal ") || !strings.HasSuffix(title, "…") || len(title) > goalMax+12 {
		t.Errorf("title line %q: want the huge title shortened to %d bytes with an ellipsis", title, goalMax)
	}
	if in := sectionBody(md, "Resume instructions"); !strings.HasSuffix(in, "…\n") || len(in) > 1500 {
		t.Errorf("instructions (%d bytes) not shortened with an ellipsis", len(in))
	}
}

// hugeCheckpoint folds 10,000 events: 500 steps (480 done, one in progress),
// 2,000 decisions, 2,000 notes, 3,000 file updates, 50 errors, 20 blockers,
// a 200 KB title and 300 KB of instructions.
func hugeCheckpoint(tb testing.TB) *ckpt.Checkpoint {
	at := ts("2026-03-01T08:00:00Z")
	var evs []ev
	add := func(typ ckpt.EventType, data any) {
		evs = append(evs, ev{at.Add(time.Duration(len(evs)) * time.Second), typ, data})
	}
	steps := make([]ckpt.Step, 500)
	for i := range steps {
		steps[i] = ckpt.Step{ID: stepID(i + 1), Title: "Convert batch " + itoa3(i+1)}
	}
	add(ckpt.EventCreated, ckpt.Created{
		Patch: ckpt.Patch{
			TaskID: ptr("T999"), Agent: &ckpt.Agent{ID: "migration", Name: "Riley"},
			Title:        ptr(strings.Repeat("Ünïcödé goal ", 200000/len("Ünïcödé goal "))),
			Instructions: ptr(strings.Repeat("Convert the next batch; check the 日本語 headings.\n", 6000)),
		},
		Steps: steps,
	})
	for i := 1; i <= 480; i++ {
		add(ckpt.EventStep, ckpt.StepChange{ID: stepID(i), Status: ckpt.StepInProgress})
		add(ckpt.EventStep, ckpt.StepChange{ID: stepID(i), Status: ckpt.StepDone})
	}
	add(ckpt.EventStep, ckpt.StepChange{ID: stepID(481), Status: ckpt.StepInProgress})
	add(ckpt.EventUpdate, ckpt.Patch{CurrentStep: ptr(stepID(481)), NextSteps: &[]string{stepID(3), "Step 481 needs the fresh export first"}})
	for i := 1; i <= 2000; i++ {
		add(ckpt.EventDecision, ckpt.DecisionData{Text: "Decision " + itoa4(i) + " about batch layout", Reason: strings.Repeat("because ", 40)})
	}
	for i := 1; i <= 50; i++ {
		add(ckpt.EventError, ckpt.ErrorChange{Type: "io", Message: "read failed " + itoa3(i) + strings.Repeat(" detail", 100)})
	}
	for i := 1; i <= 20; i++ {
		add(ckpt.EventBlocker, ckpt.BlockerChange{ID: "b" + itoa3(i), Text: "waiting on upstream " + itoa3(i)})
	}
	for i := 1; len(evs) < 10000-2000; i++ {
		p := ckpt.Patch{FilesCreated: []string{"out/batch-" + itoa4(i) + ".md"}}
		if i%2 == 0 {
			p = ckpt.Patch{FilesModified: []string{"src/batch-" + itoa4(i) + ".go"}}
		}
		add(ckpt.EventUpdate, p)
	}
	for len(evs) < 10000 {
		add(ckpt.EventNote, ckpt.Note{Text: "note " + itoa4(len(evs)) + ": 語 checked"})
	}
	return fold(tb, "fleet/migration-T999", evs...)
}

func stepID(i int) string { return fmt.Sprintf("step-%03d", i) }

func itoa3(i int) string { return fmt.Sprintf("%03d", i) }
func itoa4(i int) string { return fmt.Sprintf("%04d", i) }

// checkPromptInvariants asserts what every prompt must be: valid UTF-8,
// under MaxPromptChars, no ellipsis after a cut rune, and Markdown whose
// headings are exactly the prompt's own (checked with a real parser), so no
// text from the checkpoint added a heading or hid one in a code block.
func checkPromptInvariants(t testing.TB, md string) {
	t.Helper()
	if !utf8.ValidString(md) {
		t.Fatalf("prompt is not valid UTF-8: %q", md)
	}
	if len(md) >= MaxPromptChars {
		t.Fatalf("prompt is %d bytes, want < %d", len(md), MaxPromptChars)
	}
	for i := 0; ; {
		j := strings.Index(md[i:], ellipsis)
		if j < 0 {
			break
		}
		if !utf8.ValidString(md[:i+j]) {
			t.Fatalf("ellipsis at byte %d follows a cut rune", i+j)
		}
		i += j + len(ellipsis)
	}
	var raw []string
	for _, l := range strings.Split(md, "\n") {
		if strings.HasPrefix(l, "# ") || strings.HasPrefix(l, "## ") {
			raw = append(raw, strings.TrimRight(l, " "))
		}
	}
	if len(raw) == 0 || !strings.HasPrefix(raw[0], "# Resume: ") {
		t.Fatalf("prompt does not start with its title heading:\n%s", md)
	}
	last := -1
	for _, h := range raw[1:] {
		i := slices.Index(promptHeadings, strings.TrimPrefix(h, "## "))
		if i < 0 || i <= last && h != "## Notes" {
			t.Fatalf("unexpected or out-of-order heading %q", h)
		}
		last = i
	}
	parsed := markdownHeadings([]byte(md))
	if len(parsed) != len(raw) {
		t.Fatalf("a Markdown parser sees %d headings %q, the prompt wrote %d %q:\n%s", len(parsed), parsed, len(raw), raw, md)
	}
	for i := range raw {
		if !strings.HasPrefix(raw[i], parsed[i]) {
			t.Fatalf("heading %d parses as %q, written as %q", i, parsed[i], raw[i])
		}
	}
}

// markdownHeadings parses src as CommonMark and returns each heading as
// "# text" or "## text", wherever it is (lists and quotes included).
func markdownHeadings(src []byte) []string {
	doc := goldmark.New().Parser().Parse(text.NewReader(src))
	var out []string
	_ = ast.Walk(doc, func(n ast.Node, entering bool) (ast.WalkStatus, error) {
		if h, ok := n.(*ast.Heading); ok && entering {
			var b strings.Builder
			lines := h.Lines()
			for i := 0; i < lines.Len(); i++ {
				seg := lines.At(i)
				b.Write(seg.Value(src))
			}
			out = append(out, strings.Repeat("#", h.Level)+" "+strings.TrimSpace(b.String()))
		}
		return ast.WalkContinue, nil
	})
	return out
}

// TestFitPrompt covers the last guard of the bound, which the budgets keep
// from ever being needed: whole lines are dropped from the end.
func TestFitPrompt(t *testing.T) {
	long := strings.Repeat("- a line of the prompt, 語\n", 1000)
	got := fitPrompt(long, MaxPromptChars-1)
	if len(got) >= MaxPromptChars || !utf8.ValidString(got) {
		t.Fatalf("fitPrompt gave %d bytes, valid %v", len(got), utf8.ValidString(got))
	}
	body, ok := strings.CutSuffix(got, "\n… (prompt shortened to fit its size limit)\n")
	if !ok {
		t.Fatalf("no shortening note at the end: %q", got[len(got)-80:])
	}
	for _, l := range strings.Split(body, "\n") {
		if l != "- a line of the prompt, 語" {
			t.Fatalf("cut line %q", l)
		}
	}
	if short := "# Resume: x\n"; fitPrompt(short, MaxPromptChars-1) != short {
		t.Error("fitPrompt changed a prompt within the bound")
	}
}
