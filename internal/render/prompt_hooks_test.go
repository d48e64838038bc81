package render

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	ckpt "github.com/ckpt-dev/ckpt"
)

// hugeHookCheckpoint is what 500 hook events leave: hundreds of steps,
// files and errors, the asks, a long last message and a transcript.
func hugeHookCheckpoint() *ckpt.Checkpoint {
	c := &ckpt.Checkpoint{ID: "app/session-s1", Title: "Add a retry budget to the sync worker", Status: ckpt.StatusInProgress,
		Resume: ckpt.Resume{Resumable: true}}
	for i := range 300 {
		st := ckpt.StepDone
		switch {
		case i == 150:
			st = ckpt.StepInProgress
		case i > 150:
			st = ckpt.StepPending
		}
		s := ckpt.Step{ID: fmt.Sprintf("task-%d", i+1), Title: fmt.Sprintf("Task number %d of the long refactor", i+1), Status: st}
		if i > 0 {
			s.DependsOn = []string{fmt.Sprintf("task-%d", i)}
		}
		c.Steps = append(c.Steps, s)
	}
	c.Progress = ckpt.Progress{Done: 150, Total: 300, Percent: 50}
	c.CurrentStep = c.Steps[150].Title
	for i := range 100 {
		c.Files.Modified = append(c.Files.Modified, fmt.Sprintf("internal/pkg%d/file%d.go", i, i))
		c.Errors = append(c.Errors, ckpt.ErrorItem{Type: fmt.Sprintf("command: go test ./pkg%d", i), Message: "Exit code 1\n" + strings.Repeat("noise line\n", 30) + fmt.Sprintf("--- FAIL: TestPkg%d", i)})
	}
	c.Context.LastMessage = "Next I will implement the budget in worker.go. " + strings.Repeat("More words about the plan. ", 200)
	asks, _ := json.Marshal([]map[string]string{{"text": "Add a retry budget to the sync worker"}, {"text": "also cap the backoff at 30s"}})
	tr, _ := json.Marshal(TranscriptTail{Summary: strings.Repeat("The summary says a lot. ", 100), Exchanges: []Exchange{{Role: "user", Text: "keep going"}}})
	c.Meta = map[string]json.RawMessage{"asks": asks, "transcript": tr}
	return c
}

func TestMarkdownBudgetFitsAndKeepsWhatMattersMost(t *testing.T) {
	p := NewPrompt(hugeHookCheckpoint())
	for _, budget := range []int{DefaultBudget, 1000, MinBudget, 8000} {
		md := p.MarkdownBudget(budget)
		if n := EstimateTokens(md); n > budget || len(md) >= MaxPromptChars {
			t.Errorf("budget %d: %d tokens, %d bytes", budget, n, len(md))
		}
		checkPromptInvariants(t, md)
		for _, fact := range []string{"# Resume: Add a retry budget to the sync worker", "150 of 300 steps done", "task-151: Task number 151", "## Next action"} {
			if !strings.Contains(md, fact) {
				t.Errorf("budget %d: prompt lacks %q:\n%s", budget, fact, md)
			}
		}
		if budget >= 1000 {
			for _, fact := range []string{"Next I will implement the budget in worker.go.", "--- FAIL: TestPkg99", "also cap the backoff at 30s", "(after task-151)"} {
				if !strings.Contains(md, fact) {
					t.Errorf("budget %d: prompt lacks %q:\n%s", budget, fact, md)
				}
			}
		}
	}
	if p.MarkdownBudget(DefaultBudget) != p.Markdown() && EstimateTokens(p.Markdown()) <= DefaultBudget {
		t.Error("Markdown and the default budget differ although Markdown fits")
	}
}

func TestEstimateTokens(t *testing.T) {
	for _, tc := range []struct {
		s    string
		want int
	}{{"", 0}, {"abcd", 1}, {"abcde", 2}, {"語語", 2}, {"ab語", 2}} {
		if got := EstimateTokens(tc.s); got != tc.want {
			t.Errorf("EstimateTokens(%q) = %d, want %d", tc.s, got, tc.want)
		}
	}
}
