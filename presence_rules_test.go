package ckpt

import (
	"os"
	"strconv"
	"strings"
	"testing"
)

// TestPresenceRulesDocumented: docs/design.md's table of presence rules is
// PresenceRules, row for row, so that the documentation an operator reads
// is the function every view calls.
func TestPresenceRulesDocumented(t *testing.T) {
	doc, err := os.ReadFile("docs/design.md")
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	b.WriteString("| # | when | state | signal | what changes it |\n|---|---|---|---|---|\n")
	for i, r := range PresenceRules {
		if r.N != i+1 {
			t.Fatalf("rule %d is numbered %d", i+1, r.N)
		}
		b.WriteString("| " + strconv.Itoa(r.N) + " | " + r.When + " | `" + string(r.State) + "` | " + r.Signal + " | " + r.Change + " |\n")
	}
	if !strings.Contains(string(doc), b.String()) {
		t.Fatalf("docs/design.md does not hold the presence rules as PresenceRules has them; put this table under \"Liveness and presence\":\n%s", b.String())
	}
	seen := map[PresenceState]bool{}
	for _, r := range PresenceRules {
		seen[r.State] = true
	}
	for _, st := range ViewStates {
		if !seen[st] {
			t.Errorf("no rule gives %s", st)
		}
	}
}
