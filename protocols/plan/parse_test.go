package plan

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// taskSummary is what most parser tests compare: ID, checked, phase, parent.
type taskSummary struct {
	ID, Phase, Parent string
	Checked           bool
}

func summarize(items []Item) []taskSummary {
	var out []taskSummary
	for _, it := range items {
		out = append(out, taskSummary{ID: it.ID, Phase: it.Phase, Parent: it.Parent, Checked: it.Checked})
	}
	return out
}

func mustParse(t *testing.T, src string) *Plan {
	t.Helper()
	p, err := Parse([]byte(src))
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	return p
}

func hasWarning(p *Plan, parts ...string) bool {
	for _, w := range p.Warnings {
		ok := true
		for _, part := range parts {
			ok = ok && strings.Contains(w, part)
		}
		if ok {
			return true
		}
	}
	return false
}

func TestParseDocumentExample(t *testing.T) {
	p := mustParse(t, `# Feature

## Phase 1: Setup
<!-- CHECKPOINT: phase-1-setup -->

- [ ] Create database schema <!-- TASK: db-schema -->
- [x] Setup auth middleware <!-- TASK: auth-middleware -->

- [ ] All migrations pass <!-- ACCEPT: migrations -->
- [x] Tests green <!-- ACCEPT: tests -->

<!-- DECISION: Using async SQLAlchemy 2.0 for better performance -->
<!-- BLOCKER: Waiting for API key from external team -->
`)
	if len(p.Phases) != 1 || p.Phases[0].ID != "phase-1-setup" || p.Phases[0].Title != "Phase 1: Setup" || p.Phases[0].Line != 4 {
		t.Fatalf("phases = %+v", p.Phases)
	}
	want := []taskSummary{{ID: "db-schema", Phase: "phase-1-setup"}, {ID: "auth-middleware", Phase: "phase-1-setup", Checked: true}}
	if d := cmp.Diff(want, summarize(p.Tasks())); d != "" {
		t.Errorf("tasks (-want +got):\n%s", d)
	}
	wantAcc := []taskSummary{{ID: "migrations", Phase: "phase-1-setup"}, {ID: "tests", Phase: "phase-1-setup", Checked: true}}
	if d := cmp.Diff(wantAcc, summarize(p.Acceptance())); d != "" {
		t.Errorf("acceptance (-want +got):\n%s", d)
	}
	if got := p.Tasks()[0].Title; got != "Create database schema" {
		t.Errorf("title = %q", got)
	}
	if len(p.Decisions) != 1 || p.Decisions[0].Text != "Using async SQLAlchemy 2.0 for better performance" || p.Decisions[0].Line != 12 {
		t.Errorf("decisions = %+v", p.Decisions)
	}
	if len(p.Blockers) != 1 || p.Blockers[0].Text != "Waiting for API key from external team" {
		t.Errorf("blockers = %+v", p.Blockers)
	}
	if p.Progress != (Progress{TotalTasks: 2, CompletedTasks: 1, Percentage: 50}) {
		t.Errorf("progress = %+v", p.Progress)
	}
	if len(p.Warnings) != 0 {
		t.Errorf("warnings = %q", p.Warnings)
	}
}

func TestParseIgnoresMarkersInCode(t *testing.T) {
	p := mustParse(t, "<!-- CHECKPOINT: real -->\n\n"+
		"```markdown\n<!-- CHECKPOINT: fenced -->\n- [ ] fenced <!-- TASK: fenced -->\n<!-- DECISION: fenced -->\n```\n\n"+
		"~~~\n- [x] tilde <!-- TASK: tilde -->\n~~~\n\n"+
		"    - [ ] indented code <!-- TASK: indented -->\n\n"+
		"- [ ] real task, with `<!-- TASK: span -->` in a code span <!-- TASK: real -->\n"+
		"- [ ] only a span `<!-- TASK: span-only -->`\n\n"+
		"Inline `<!-- BLOCKER: span -->` text.\n\n"+
		"<script>\n<!-- TASK: script -->\n</script>\n")
	if d := cmp.Diff([]taskSummary{{ID: "real", Phase: "real"}}, summarize(p.Tasks())); d != "" {
		t.Errorf("tasks (-want +got):\n%s", d)
	}
	if len(p.Phases) != 1 || len(p.Decisions) != 0 || len(p.Blockers) != 0 {
		t.Errorf("phases %d decisions %d blockers %d, want 1 0 0", len(p.Phases), len(p.Decisions), len(p.Blockers))
	}
	if len(p.Unmarked) != 1 || p.Unmarked[0].Title != "only a span `<!-- TASK: span-only -->`" {
		t.Errorf("unmarked = %+v", p.Unmarked)
	}
}

func TestParseCheckedForms(t *testing.T) {
	p := mustParse(t, "- [x] lower <!-- TASK: lower -->\n- [X] upper <!-- TASK: upper -->\n- [ ] open <!-- TASK: open -->\n"+
		"* [X] star <!-- TASK: star -->\n+ [ ] plus <!-- TASK: plus -->\n1. [X] ordered <!-- TASK: ordered -->\n")
	want := []taskSummary{{ID: "lower", Checked: true}, {ID: "upper", Checked: true}, {ID: "open"}, {ID: "star", Checked: true}, {ID: "plus"}, {ID: "ordered", Checked: true}}
	if d := cmp.Diff(want, summarize(p.Tasks())); d != "" {
		t.Errorf("tasks (-want +got):\n%s", d)
	}
	if p.Progress.CompletedTasks != 4 || p.Progress.TotalTasks != 6 || p.Progress.Percentage != 66.7 {
		t.Errorf("progress = %+v", p.Progress)
	}
}

func TestParseNestedListsAndPhases(t *testing.T) {
	p := mustParse(t, `# Plan

- [x] before any phase <!-- TASK: early -->

## One
<!-- CHECKPOINT: one -->

- [ ] parent <!-- TASK: parent -->
  - [x] child <!-- TASK: child -->
    - [ ] grandchild <!-- TASK: grandchild -->
  - plain bullet
    - [x] under a plain bullet <!-- TASK: deep -->
- [ ] sibling <!-- TASK: sibling -->

> - [x] quoted <!-- TASK: quoted -->

## Two <!-- CHECKPOINT: two -->

1. [ ] loose

   second paragraph <!-- TASK: loose -->
2. [x] next <!-- TASK: next -->
`)
	want := []taskSummary{
		{ID: "early", Checked: true},
		{ID: "parent", Phase: "one"},
		{ID: "child", Phase: "one", Parent: "parent", Checked: true},
		{ID: "grandchild", Phase: "one", Parent: "child"},
		{ID: "deep", Phase: "one", Parent: "parent", Checked: true},
		{ID: "sibling", Phase: "one"},
		{ID: "quoted", Phase: "one", Checked: true},
		{ID: "loose", Phase: "two"},
		{ID: "next", Phase: "two", Checked: true},
	}
	if d := cmp.Diff(want, summarize(p.Tasks())); d != "" {
		t.Errorf("tasks (-want +got):\n%s", d)
	}
	var ids []string
	for _, ph := range p.Phases {
		ids = append(ids, ph.ID)
	}
	if d := cmp.Diff([]string{"", "one", "two"}, ids); d != "" {
		t.Errorf("phase order (-want +got):\n%s", d)
	}
	if p.Phases[2].Title != "Two" {
		t.Errorf("phase two title = %q, want the heading around its marker", p.Phases[2].Title)
	}
	if got := p.Tasks()[7].Title; got != "loose" {
		t.Errorf("loose item title = %q, want its first paragraph", got)
	}
}

func TestParseItemPositions(t *testing.T) {
	src := "# T\r\n\r\n- [ ] one <!-- TASK: one -->\r\n  - [X] two\r\n    continued <!-- TASK: two -->\r\n"
	p := mustParse(t, src)
	tasks := p.Tasks()
	if len(tasks) != 2 {
		t.Fatalf("tasks = %+v", tasks)
	}
	for _, it := range tasks {
		if src[it.Box-1] != '[' || src[it.Box+1] != ']' {
			t.Errorf("%s: Box %d points at %q, not inside brackets", it.ID, it.Box, src[it.Box-1:it.Box+2])
		}
		if !strings.HasPrefix(src[it.Start:], "- [") {
			t.Errorf("%s: Start points at %q", it.ID, src[it.Start:])
		}
	}
	if got := src[tasks[1].Start:tasks[1].End]; got != "- [X] two\r\n    continued <!-- TASK: two -->" {
		t.Errorf("span of two = %q", got)
	}
	if tasks[0].Line != 3 || tasks[1].Line != 4 || tasks[1].Title != "two continued" {
		t.Errorf("lines/titles = %d %d %q", tasks[0].Line, tasks[1].Line, tasks[1].Title)
	}
}

func TestParseDuplicateIDs(t *testing.T) {
	p := mustParse(t, "- [x] first <!-- TASK: same -->\n- [ ] second <!-- TASK: same -->\n- [ ] crit <!-- ACCEPT: same -->\n"+
		"<!-- CHECKPOINT: ph -->\n<!-- CHECKPOINT: ph -->\n")
	if len(p.Tasks()) != 1 || !p.Tasks()[0].Checked || p.Progress.TotalTasks != 1 {
		t.Errorf("tasks = %+v, want only the first 'same'", p.Tasks())
	}
	if len(p.Acceptance()) != 1 {
		t.Errorf("an ACCEPT may share a TASK's ID: acceptance = %+v", p.Acceptance())
	}
	if !hasWarning(p, "line 2", "TASK ID same repeats the one on line 1") {
		t.Errorf("no duplicate-task warning in %q", p.Warnings)
	}
	if !hasWarning(p, "line 5", "CHECKPOINT ph repeats the one on line 4") {
		t.Errorf("no duplicate-phase warning in %q", p.Warnings)
	}
}

func TestParseWarnsAboutNearMarkers(t *testing.T) {
	p := mustParse(t, `<!-- Task: lower -->
- not a checkbox <!-- TASK: plain -->

Paragraph <!-- TASK: para -->

- [ ] bad id <!-- TASK: has space -->
- [ ] empty <!-- TASK: -->
- [ ] two markers <!-- TASK: a --> <!-- ACCEPT: b -->
<!-- DECISION: -->
<!-- an ordinary comment: with a colon -->
`)
	for _, want := range [][]string{
		{"line 1", "write TASK in capitals"},
		{"line 2", "TASK plain is on a list item without a checkbox"},
		{"line 4", "TASK para is not in a list item"},
		{"line 6", `TASK ID "has space" is not usable`},
		{"line 7", "TASK marker has no ID"},
		{"line 8", "ACCEPT b is the second marker"},
		{"line 9", "DECISION marker has no text"},
	} {
		if !hasWarning(p, want...) {
			t.Errorf("no warning with %q in:\n%s", want, strings.Join(p.Warnings, "\n"))
		}
	}
	if len(p.Warnings) != 7 {
		t.Errorf("%d warnings, want 7 (an ordinary comment is no marker):\n%s", len(p.Warnings), strings.Join(p.Warnings, "\n"))
	}
	if d := cmp.Diff([]taskSummary{{ID: "a"}}, summarize(p.Tasks())); d != "" {
		t.Errorf("tasks (-want +got):\n%s", d)
	}
}

func TestParseCommentsDoNotNest(t *testing.T) {
	p := mustParse(t, "<!--\nguide:\n<!-- DECISION: inside -->\n<!-- BLOCKER: after -->\n-->\n")
	if len(p.Decisions) != 0 {
		t.Errorf("a DECISION inside an open comment counted: %+v", p.Decisions)
	}
	if len(p.Blockers) != 1 || p.Blockers[0].Line != 4 {
		t.Errorf("blockers = %+v, want the live one on line 4", p.Blockers)
	}
	if !hasWarning(p, "line 1", "comments do not nest", "(line 3)") {
		t.Errorf("warnings = %q", p.Warnings)
	}
	p = mustParse(t, "text <!-- TASK: never closed\n")
	if len(p.Tasks()) != 0 || len(p.Warnings) != 0 {
		t.Errorf("an unclosed inline comment is text: %+v %q", p.Tasks(), p.Warnings)
	}
	p = mustParse(t, "<!-- BLOCKER: never closed\n\nmore")
	if len(p.Blockers) != 0 || !hasWarning(p, "BLOCKER is never closed") {
		t.Errorf("unclosed block comment: %+v %q", p.Blockers, p.Warnings)
	}
	p = mustParse(t, "<!--> <!---> <!-- DECISION: after empty comments -->\n")
	if len(p.Decisions) != 1 {
		t.Errorf("empty comments: decisions = %+v", p.Decisions)
	}
}

func TestParseFieldsAndHeadings(t *testing.T) {
	p := mustParse(t, "# Title *with* `code`\n\n**Plan ID:** 260220-1149-feature\n**Status**: In Progress\n\n> **Quoted:** no\n\n## Section\n\n**Status:** [x]\n")
	if p.Title != "Title *with* `code`" {
		t.Errorf("title = %q", p.Title)
	}
	if v, _ := p.Field("plan id"); v != "260220-1149-feature" {
		t.Errorf("Plan ID = %q", v)
	}
	if v, _ := p.Field("Status"); v != "In Progress" {
		t.Errorf("Status = %q (the field after the first ## must not count)", v)
	}
	if _, ok := p.Field("Quoted"); ok {
		t.Error("a field in a block quote counted")
	}
	if len(p.Headings) != 2 || len(p.Headings[1].Fields) != 1 || p.Headings[1].Fields[0].Value != "[x]" {
		t.Errorf("headings = %+v", p.Headings)
	}
}

func TestParseRejectsNonText(t *testing.T) {
	for name, src := range map[string]string{
		"invalid UTF-8": "# ok\n\n- [ ] caf\xe9 <!-- TASK: a -->\n",
		"NUL byte":      "# ok\n\x00\n",
	} {
		_, err := Parse([]byte(src))
		if err == nil || !strings.Contains(err.Error(), "line 3") && !strings.Contains(err.Error(), "line 2") {
			t.Errorf("%s: err = %v, want an error naming the line", name, err)
		}
	}
	if _, err := Parse(make([]byte, MaxPlanSize+1)); err == nil {
		t.Error("an oversized plan parsed")
	}
	if p, err := Parse(nil); err != nil || len(p.Phases) != 0 {
		t.Errorf("empty plan: %+v, %v", p, err)
	}
}

func TestPercentageMatchesToFixed(t *testing.T) {
	// Values of (c / t * 100).toFixed(1) in JavaScript.
	for _, c := range []struct {
		done, total int
		want        float64
	}{
		{0, 0, 0}, {0, 5, 0}, {1, 3, 33.3}, {2, 3, 66.7}, {1, 8, 12.5}, {1, 16, 6.3}, {3, 16, 18.8},
		{1, 6, 16.7}, {1, 7, 14.3}, {5, 5, 100}, {1, 40, 2.5}, {1, 80, 1.3}, {7, 9, 77.8},
	} {
		if got := percentage(c.done, c.total); got != c.want {
			t.Errorf("percentage(%d, %d) = %v, want %v", c.done, c.total, got, c.want)
		}
	}
}

func TestChecksumIsTheDocuments(t *testing.T) {
	// sha256("") = e3b0c44298fc1c149afbf4c8996fb924…; the document keeps 16 hex digits.
	if got := Checksum(nil); got != "sha256:e3b0c44298fc1c14" {
		t.Errorf("Checksum(empty) = %s", got)
	}
	if got := Checksum([]byte("abc")); got != "sha256:ba7816bf8f01cfea" {
		t.Errorf("Checksum(abc) = %s", got)
	}
}
