package plan

import (
	"encoding/json"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"

	"github.com/ckpt-dev/ckpt/internal/testsupport"
)

// documentJS is the document's parseProgressFromPlan and computeChecksum,
// verbatim, run by node on the plan given on stdin.
const documentJS = `
const crypto = require('crypto');
function parseProgressFromPlan(planContent) {
  const phases = {};
  const tasks = {};
  const phaseMatches = planContent.matchAll(/<!-- CHECKPOINT: ([\w-]+) -->/g);
  const taskMatches = planContent.matchAll(/- \[([ x])\] (.+?) <!-- TASK: ([\w-]+) -->/g);
  for (const match of taskMatches) {
    const [, checked, description, taskId] = match;
    tasks[taskId] = { done: checked === 'x', description: description.trim() };
  }
  const total = Object.keys(tasks).length;
  const completed = Object.values(tasks).filter(t => t.done).length;
  return { tasks, progress: { totalTasks: total, completedTasks: completed,
    percentage: total > 0 ? (completed / total * 100).toFixed(1) : 0 } };
}
function computeChecksum(content) {
  return 'sha256:' + crypto.createHash('sha256').update(content).digest('hex').slice(0, 16);
}
const input = require('fs').readFileSync(0);
const out = parseProgressFromPlan(input.toString('utf8'));
out.checksum = computeChecksum(input);
console.log(JSON.stringify(out));
`

// TestAgreesWithTheDocumentsCode runs the document's own JavaScript on plans
// it can read (no code fences, lower-case x, one task per line) and checks
// that ckpt finds the same tasks, progress and checksum.
func TestAgreesWithTheDocumentsCode(t *testing.T) {
	node := testsupport.NeedCommand(t, "node", "the document's JavaScript runs under it")
	template, err := os.ReadFile("testdata/progress-sync.feature-implementation-template.plan.md")
	if err != nil {
		t.Fatal(err)
	}
	plans := []string{
		samplePlan,
		"- [x] a <!-- TASK: a -->\n- [ ] b <!-- TASK: b -->\n- [x] c <!-- TASK: c -->\n",
		"# none\n\nno tasks\n",
		"<!-- CHECKPOINT: one -->\n- [x] 1 <!-- TASK: t1 -->\n- [ ] 2 <!-- TASK: t2 -->\n- [ ] 3 <!-- TASK: t3 -->\n" +
			"- [ ] 4 <!-- TASK: t4 -->\n- [ ] 5 <!-- TASK: t5 -->\n- [ ] 6 <!-- TASK: t6 -->\n",
	}
	for _, src := range append(plans, string(template)) {
		cmd := exec.Command(node, "-e", documentJS)
		cmd.Stdin = strings.NewReader(src)
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("node: %v", err)
		}
		var doc struct {
			Tasks    map[string]struct{ Done bool }
			Progress struct {
				TotalTasks, CompletedTasks int
				Percentage                 json.RawMessage
			}
			Checksum string
		}
		if err := json.Unmarshal(out, &doc); err != nil {
			t.Fatalf("%v: %s", err, out)
		}
		p := mustParse(t, src)
		got := map[string]bool{}
		for _, it := range p.Tasks() {
			got[it.ID] = it.Checked
		}
		want := map[string]bool{}
		for id, task := range doc.Tasks {
			want[id] = task.Done
		}
		if len(got) != len(want) {
			t.Errorf("ckpt found %d tasks, the document's code %d", len(got), len(want))
		}
		for id, done := range want {
			if g, ok := got[id]; !ok || g != done {
				t.Errorf("task %s: document done=%v, ckpt %v (found %v)", id, done, g, ok)
			}
		}
		pct, err := strconv.ParseFloat(string(trimQuotes(doc.Progress.Percentage)), 64)
		if err != nil {
			t.Fatalf("percentage %s: %v", doc.Progress.Percentage, err)
		}
		if p.Progress.TotalTasks != doc.Progress.TotalTasks || p.Progress.CompletedTasks != doc.Progress.CompletedTasks || p.Progress.Percentage != pct {
			t.Errorf("progress: ckpt %+v, document %+v", p.Progress, doc.Progress)
		}
		if c := Checksum([]byte(src)); c != doc.Checksum {
			t.Errorf("checksum: ckpt %s, document %s", c, doc.Checksum)
		}
	}
}

func trimQuotes(b []byte) []byte {
	if len(b) >= 2 && b[0] == '"' {
		return b[1 : len(b)-1]
	}
	return b
}
