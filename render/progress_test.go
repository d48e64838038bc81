package render

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	ckpt "github.com/ckpt-dev/ckpt"
)

// seed001Sections are the headings of seed 001's progress file, in order.
var seed001Sections = []string{
	"# Session Progress", "## Completed Tasks", "## Current Task", "## Remaining Tasks",
	"## Decisions Made", "## Blockers", "## Continuation Prompt",
}

func TestProgressMarkdownGolden(t *testing.T) {
	now := ts("2026-02-01T09:31:00Z")
	for _, tc := range []struct {
		name string
		c    func(testing.TB) *ckpt.Checkpoint
	}{
		{"cia42", cia42},
		{"t060", t060},
		{"secondary_a", secondaryA},
		{"t062_partial", t062},
	} {
		t.Run(tc.name, func(t *testing.T) {
			md := ProgressMarkdown(tc.c(t), now)
			var got []string
			for _, l := range strings.Split(md, "\n") {
				if strings.HasPrefix(l, "#") {
					got = append(got, l)
				}
			}
			if strings.Join(got, "\n") != strings.Join(seed001Sections, "\n") {
				t.Errorf("headings %q, want seed 001's %q", got, seed001Sections)
			}
			golden(t, "progress_"+tc.name+".md", md)
		})
	}
}

func TestProgressMarkdownSeed001(t *testing.T) {
	md := ProgressMarkdown(cia42(t), ts("2026-02-01T09:31:00Z"))
	want := `# Session Progress

**Issue:** CIA-42 — Add retry to the webhook sender
**Session:** 2026-02-01T09:31:00Z
**Execution Mode:** exec:tdd

## Completed Tasks
- Write failing test for retry ✓

## Current Task
- Implement exponential backoff — backoff done, jitter left

## Remaining Tasks
- Wire config flag
- Update docs (failed)

## Decisions Made
- Cap retries at 5: the receiver rate-limits after 6

## Blockers
- Staging webhook endpoint is down (unblocked by: ops restoring staging)

## Continuation Prompt
Resume CIA-42. Current task: task 2 of 4 (Implement exponential backoff). Key files: internal/webhook/retry_test.go, internal/webhook/sender.go.
Next action: First resolve the 1 active blocker, then: Continue step t2: Implement exponential backoff.
`
	if md != want {
		t.Errorf("got\n%s\nwant\n%s", md, want)
	}
}

func TestProgressMarkdownFields(t *testing.T) {
	for _, tc := range []struct {
		name   string
		change func(c *ckpt.Checkpoint)
		now    time.Time
		want   []string
	}{
		{"mode already prefixed", func(c *ckpt.Checkpoint) {
			c.Meta = map[string]json.RawMessage{"execution_mode": json.RawMessage(`"exec:pair"`)}
		}, time.Time{}, []string{"**Execution Mode:** exec:pair\n"}},
		{"mode not a string", func(c *ckpt.Checkpoint) {
			c.Meta = map[string]json.RawMessage{"execution_mode": json.RawMessage(`{"x":1}`)}
		}, time.Time{}, []string{"**Execution Mode:** exec:{\"x\":1}\n"}},
		{"no mode, no time: last update", func(c *ckpt.Checkpoint) { c.Meta = nil }, time.Time{},
			[]string{"**Execution Mode:** —\n", "**Session:** 2026-02-01T09:30:00Z\n"}},
		{"no task id: the checkpoint id", func(c *ckpt.Checkpoint) { c.TaskID = "" }, time.Time{},
			[]string{"**Issue:** cia-42 — Add retry to the webhook sender\n", "\nResume cia-42. "}},
		{"blocking errors are blockers, others not", func(c *ckpt.Checkpoint) {
			c.Blockers = nil
			c.Errors = []ckpt.ErrorItem{{Type: "http", Message: "503 from staging", Blocking: true}, {Message: "lint warning"}}
		}, time.Time{}, []string{"## Blockers\n- http: 503 from staging\n\n"}},
		{"empty sections say None", func(c *ckpt.Checkpoint) {
			c.Steps, c.Decisions, c.Blockers, c.CurrentStep = nil, nil, nil, ""
		}, time.Time{}, []string{
			"## Completed Tasks\nNone\n", "## Current Task\nNone\n", "## Remaining Tasks\nNone\n",
			"## Decisions Made\nNone\n", "## Blockers\nNone\n",
		}},
		{"items stay on one line and start no block", func(c *ckpt.Checkpoint) {
			c.Steps[0].Title = "# not a heading\nsecond line"
			c.Decisions[0].Text = "```go"
		}, time.Time{}, []string{"- \\# not a heading second line ✓\n", "- \\```go: the receiver"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := cia42(t)
			tc.change(c)
			md := ProgressMarkdown(c, tc.now)
			for _, w := range tc.want {
				if !strings.Contains(md, w) {
					t.Errorf("progress file lacks %q:\n%s", w, md)
				}
			}
		})
	}
}

func TestContinuationLine(t *testing.T) {
	for _, tc := range []struct {
		name string
		c    func(testing.TB) *ckpt.Checkpoint
		want string
	}{
		{"seed 003 mid-task", t060,
			"Resume T060. Current task: task 20 of 29 (post-20). Key files: docs/content-extraction/pdfs-markdown/MANIFEST.json, docs/content-extraction/pdfs-markdown/nature-trail/post-02.md, docs/content-extraction/pdfs-markdown/nature-trail/post-01.md.\n" +
				"Next action: Continue step post-20."},
		{"seed 002 without steps in a plan", secondaryA,
			"Resume kai-7/secondary-a. Current task: Writing spec.md Requirements Section 5 (Error Handling). Key files: EPIC_README.md, feature_01_player_json/checklist.md, feature_01_player_json/spec.md.\n" +
				"Next action: Complete Requirements Section 5."},
		{"all done", t040,
			"Resume T040. Current task: all 2 tasks done. Key files: none.\nNext action: Nothing is left to do: the work is done."},
		{"huge", hugeCheckpoint,
			"Resume T999. Current task: task 481 of 500 (Convert batch 481). Key files: src/batch-4966.go, src/batch-4964.go, src/batch-4962.go, src/batch-4960.go, src/batch-4958.go, src/batch-4956.go and 4961 more.\n" +
				"Next action: First resolve the 20 active blockers, then: Step 481 needs the fresh export first."},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := ContinuationLine(tc.c(t))
			if got != tc.want {
				t.Errorf("got\n%s\nwant\n%s", got, tc.want)
			}
			md := ProgressMarkdown(tc.c(t), time.Time{})
			if !strings.HasSuffix(md, "## Continuation Prompt\n"+got+"\n") {
				t.Errorf("the progress file does not end with the continuation line")
			}
		})
	}
}
