package plan

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// fuzzSeeds are plans that reach the parser's corners.
var fuzzSeeds = []string{
	samplePlan,
	"- [X] a <!-- TASK: a -->\n  - [ ] b <!-- TASK: b -->\n    - [x] c\n",
	"```\n- [ ] fenced <!-- TASK: f -->\n```\n- [ ] `<!-- TASK: s -->` <!-- TASK: real -->\n",
	"<!--\n<!-- DECISION: nested -->\n<!-- BLOCKER: live -->\n-->\n",
	"> - [x] quoted <!-- TASK: q -->\n>\n> <!-- CHECKPOINT: p -->\n",
	"1. [ ] loose\n\n   more <!-- TASK: l -->\n2. [\t] tab <!-- ACCEPT: t -->\n",
	"- [ ] dup <!-- TASK: d -->\n- [x] dup <!-- TASK: d -->\n- [ ] <!-- TASK: -->\n",
	"# T\r\n\r\n**Status:** done\r\n- [ ] crlf <!-- TASK: c -->\r\n",
	"<details>\n<!-- TASK: in-html -->\n- [ ] x\n</details>\n",
	"- [ ] a <!-- TASK: a\n  spans lines -->\n* [x] <!-- ACCEPT: e --> after\n",
	"| a | b |\n|---|---|\n| - [ ] cell <!-- TASK: cell --> | x |\n",
	"[x]: /url\n\n- [x] ref <!-- TASK: r -->\n- [ ] [x] <!-- TASK: s -->\n",
}

func FuzzParse(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add([]byte(s))
	}
	for _, name := range fixtures {
		if b, err := os.ReadFile(filepath.Join("testdata", name)); err == nil {
			f.Add(b)
		}
	}
	f.Fuzz(func(t *testing.T, src []byte) {
		p, err := Parse(src)
		if err != nil {
			return // not a text file: the error is the contract
		}
		checkPlan(t, src, p)
	})
}

// checkPlan asserts what every parse must satisfy: counts that add up, IDs
// that are valid and unique, items that point at their own checkboxes.
func checkPlan(t *testing.T, src []byte, p *Plan) {
	t.Helper()
	phases := map[string]bool{}
	for _, ph := range p.Phases {
		if phases[ph.ID] {
			t.Fatalf("phase %q listed twice", ph.ID)
		}
		phases[ph.ID] = true
	}
	tasks := p.Tasks()
	done := 0
	for kind, items := range map[string][]Item{"task": tasks, "accept": p.Acceptance(), "unmarked": p.Unmarked} {
		ids := map[string]bool{}
		for _, it := range items {
			if kind == "unmarked" {
				if it.ID != "" {
					t.Fatalf("unmarked item with ID %q", it.ID)
				}
			} else if !validMarkerID(it.ID) || ids[it.ID] {
				t.Fatalf("%s ID %q invalid or repeated", kind, it.ID)
			}
			ids[it.ID] = true
			if !phases[it.Phase] && kind != "unmarked" {
				t.Fatalf("%s %s in unknown phase %q", kind, it.ID, it.Phase)
			}
			if it.Box < 1 || it.Box+1 >= len(src) || src[it.Box-1] != '[' || src[it.Box+1] != ']' {
				t.Fatalf("%s %q: box %d not inside brackets", kind, it.ID, it.Box)
			}
			if isMark(src[it.Box]) != it.Checked {
				t.Fatalf("%s %q: Checked %v but the box holds %q", kind, it.ID, it.Checked, src[it.Box])
			}
			if it.Start > it.Box-1 || it.End <= it.Box+1 || it.End > len(src) || it.Line < 1 {
				t.Fatalf("%s %q: span [%d,%d) line %d around box %d", kind, it.ID, it.Start, it.End, it.Line, it.Box)
			}
			if kind == "task" && it.Checked {
				done++
			}
		}
	}
	if p.Progress.TotalTasks != len(tasks) || p.Progress.CompletedTasks != done || p.Progress.Percentage != percentage(done, len(tasks)) ||
		p.Progress.Percentage < 0 || p.Progress.Percentage > 100 {
		t.Fatalf("progress %+v for %d tasks, %d done", p.Progress, len(tasks), done)
	}
}

func FuzzSetTask(f *testing.F) {
	for i, s := range fuzzSeeds {
		f.Add([]byte(s), uint8(i), i%2 == 0)
	}
	f.Fuzz(func(t *testing.T, src []byte, pick uint8, done bool) {
		p, err := Parse(src)
		if err != nil {
			return
		}
		// Items SetTask can reach by ID: tasks, and criteria whose ID no
		// task has.
		taskIDs := map[string]bool{}
		var reachable []Item
		for _, it := range p.Tasks() {
			taskIDs[it.ID] = true
			reachable = append(reachable, it)
		}
		for _, it := range p.Acceptance() {
			if !taskIDs[it.ID] {
				reachable = append(reachable, it)
			}
		}
		path := filepath.Join(t.TempDir(), "plan.md")
		if err := os.WriteFile(path, src, 0o644); err != nil {
			t.Fatal(err)
		}
		if len(reachable) == 0 {
			if err := SetTask(path, "x", done); !errors.Is(err, ErrUnknownTask) {
				t.Fatalf("SetTask on a plan without items: %v", err)
			}
			return
		}
		it := reachable[int(pick)%len(reachable)]
		err = SetTask(path, it.ID, done)
		got, rerr := os.ReadFile(path)
		if rerr != nil {
			t.Fatal(rerr)
		}
		if err != nil {
			if len(p.repeats["TASK "+it.ID])+len(p.repeats["ACCEPT "+it.ID]) == 0 {
				t.Fatalf("SetTask(%s): %v", it.ID, err)
			}
			if string(got) != string(src) {
				t.Fatal("a refused SetTask changed the file")
			}
			return
		}
		if len(got) != len(src) {
			t.Fatalf("length %d → %d", len(src), len(got))
		}
		for i := range src {
			if src[i] != got[i] && i != it.Box {
				t.Fatalf("byte %d changed (%q → %q); only the box at %d may", i, src[i], got[i], it.Box)
			}
		}
		if isMark(src[it.Box]) != done && got[it.Box] != map[bool]byte{true: 'x', false: ' '}[done] {
			t.Fatalf("box became %q", got[it.Box])
		}
		q, err := Parse(got)
		if err != nil {
			t.Fatalf("the edited plan no longer parses: %v", err)
		}
		checkPlan(t, got, q)
		after := append(q.Tasks(), q.Acceptance()...)
		before := append(p.Tasks(), p.Acceptance()...)
		if len(after) != len(before) {
			t.Fatalf("%d items before, %d after", len(before), len(after))
		}
		for i := range before {
			want := before[i].Checked
			if before[i].Box == it.Box {
				want = done
			}
			if after[i].ID != before[i].ID || after[i].Checked != want {
				t.Fatalf("item %d: %s %v → %s %v", i, before[i].ID, before[i].Checked, after[i].ID, after[i].Checked)
			}
		}
	})
}
