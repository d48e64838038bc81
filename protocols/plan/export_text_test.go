package plan

import (
	"testing"
)

// TestExportKeepsThePlansText: a plan.md in the document's own layout
// (phase headings "## Phase 1: Setup" above their CHECKPOINT markers, no
// **Key:** lines) exports to the same text, headings included, so the
// seed's readers and the person reading it find what they wrote.
func TestExportKeepsThePlansText(t *testing.T) {
	src := "# Feature plan\n\n" +
		"## Phase 1: Setup\n<!-- CHECKPOINT: phase-1-setup -->\n\n" +
		"- [ ] Create database schema <!-- TASK: db-schema -->\n" +
		"- [x] Setup auth middleware <!-- TASK: auth-middleware -->\n\n" +
		"## Phase 2: API\n<!-- CHECKPOINT: phase-2-api -->\n\n" +
		"- [ ] Write the handlers <!-- TASK: handlers -->\n"
	im, err := Format{}.Import("plans/feat/plan.md", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	out, err := Format{}.Export(im.State)
	if err != nil {
		t.Fatal(err)
	}
	if string(out) != src {
		t.Errorf("export rewrote the plan:\n--- plan.md\n%s--- export\n%s", src, out)
	}
}
