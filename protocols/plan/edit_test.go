package plan

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// diffOffsets lists the offsets where a and b (of equal length) differ.
func diffOffsets(t *testing.T, a, b []byte) []int {
	t.Helper()
	if len(a) != len(b) {
		t.Fatalf("length changed from %d to %d", len(a), len(b))
	}
	var out []int
	for i := range a {
		if a[i] != b[i] {
			out = append(out, i)
		}
	}
	return out
}

func TestSetTaskChangesOnlyTheBox(t *testing.T) {
	orig, err := os.ReadFile("testdata/progress-sync.feature-implementation-template.plan.md")
	if err != nil {
		t.Fatal(err)
	}
	path := newPlan(t, "template", string(orig))
	p := mustParse(t, string(orig))
	items := append(p.Tasks(), p.Acceptance()...)
	if len(items) != 23 {
		t.Fatalf("%d items in the template, want 19 tasks and 4 criteria", len(items))
	}
	for _, it := range items {
		mustSetTask(t, path, it.ID, true)
		got, _ := os.ReadFile(path)
		if d := diffOffsets(t, orig, got); len(d) != 1 || d[0] != it.Box || got[it.Box] != 'x' {
			t.Fatalf("checking %s changed offsets %v (box at %d)", it.ID, d, it.Box)
		}
		mustSetTask(t, path, it.ID, false)
		if got, _ := os.ReadFile(path); !bytes.Equal(got, orig) {
			t.Fatalf("unchecking %s did not give back the original bytes", it.ID)
		}
	}
}

func TestSetTaskForms(t *testing.T) {
	src := "# P\r\n\r\n- [X] upper <!-- TASK: upper -->\r\n- [ ] open <!-- TASK: open -->\r\n\t- [\t] tab box <!-- TASK: tab -->\r\n"
	path := newPlan(t, "p", src)
	if err := os.Chmod(path, 0o600); err != nil {
		t.Fatal(err)
	}
	before, _ := os.Stat(path)
	mustSetTask(t, path, "upper", true) // already checked: no rewrite at all
	if after, _ := os.Stat(path); !os.SameFile(before, after) {
		t.Error("a box already in the wanted state was rewritten")
	}
	mustSetTask(t, path, "open", false)
	if got, _ := os.ReadFile(path); string(got) != src {
		t.Errorf("unchecking an open box changed the file")
	}
	mustSetTask(t, path, "upper", false)
	mustSetTask(t, path, "tab", true)
	got, _ := os.ReadFile(path)
	want := strings.Replace(strings.Replace(src, "[X] upper", "[ ] upper", 1), "[\t] tab", "[x] tab", 1)
	if string(got) != want {
		t.Errorf("got %q\nwant %q", got, want)
	}
	if info, _ := os.Stat(path); info.Mode().Perm() != 0o600 {
		t.Errorf("mode %v, want the file's 0600 kept", info.Mode().Perm())
	}
	if entries, _ := os.ReadDir(filepath.Dir(path)); len(entries) != 1 {
		t.Errorf("the plan directory holds %d entries, want only plan.md (no temp files, no .checkpoint)", len(entries))
	}
}

func TestSetTaskErrors(t *testing.T) {
	src := "- [ ] real <!-- TASK: real -->\n- [ ] crit <!-- ACCEPT: crit -->\n\n```\n- [ ] fenced <!-- TASK: fenced -->\n```\n\n" +
		"`- [ ] span <!-- TASK: span -->`\n\n- [ ] one <!-- TASK: twice -->\n- [ ] two <!-- TASK: twice -->\n"
	path := newPlan(t, "p", src)
	for _, id := range []string{"fenced", "span", "nope"} {
		err := SetTask(path, id, true)
		if !errors.Is(err, ErrUnknownTask) || !strings.Contains(err.Error(), "real, twice, crit") {
			t.Errorf("SetTask(%s): %v, want ErrUnknownTask listing the IDs", id, err)
		}
	}
	if err := SetTask(path, "twice", true); err == nil || !strings.Contains(err.Error(), "line 10 and again on line(s) 11") {
		t.Errorf("SetTask(twice) = %v", err)
	}
	mustSetTask(t, path, "crit", true)
	got, _ := os.ReadFile(path)
	if d := diffOffsets(t, []byte(src), got); len(d) != 1 || got[d[0]] != 'x' || !strings.HasPrefix(string(got[d[0]-3:]), "- [x] crit") {
		t.Errorf("checking an ACCEPT item changed %v", d)
	}

	empty := newPlan(t, "empty", "# No markers\n\n- [ ] a box\n")
	if err := SetTask(empty, "a", true); !errors.Is(err, ErrUnknownTask) || !strings.Contains(err.Error(), "no <!-- TASK: id -->") {
		t.Errorf("SetTask on a plan without markers: %v", err)
	}
	bad := newPlan(t, "bad", "- [ ] a <!-- TASK: a -->\n\xff\n")
	if err := SetTask(bad, "a", true); err == nil || !strings.Contains(err.Error(), "UTF-8") {
		t.Errorf("SetTask on invalid UTF-8: %v", err)
	}
	if got, _ := os.ReadFile(bad); string(got) != "- [ ] a <!-- TASK: a -->\n\xff\n" {
		t.Error("a failed SetTask changed the file")
	}
	if err := SetTask(filepath.Join(t.TempDir(), "missing.md"), "a", true); err == nil {
		t.Error("SetTask on a missing file succeeded")
	}
}

// Concurrent SetTasks of one plan, before any .checkpoint exists, lose no
// tick: each edit is a read-modify-write of plan.md under the plan
// directory's lock.
func TestSetTaskConcurrentEditsLoseNoTick(t *testing.T) {
	var src strings.Builder
	const n = 16
	for i := 0; i < n; i++ {
		fmt.Fprintf(&src, "- [ ] t%d <!-- TASK: t%d -->\n", i, i)
	}
	path := filepath.Join(t.TempDir(), "plan.md")
	if err := os.WriteFile(path, []byte(src.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := SetTask(path, fmt.Sprintf("t%d", i), true); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	got, _ := os.ReadFile(path)
	if c := strings.Count(string(got), "- [x]"); c != n {
		t.Errorf("%d of %d boxes ticked:\n%s", c, n, got)
	}
}
