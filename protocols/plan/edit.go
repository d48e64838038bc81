package plan

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/ckpt-dev/ckpt/internal/atomicfile"
)

// ErrUnknownTask is wrapped by SetTask's error for an ID that no TASK or
// ACCEPT marker in the plan carries.
var ErrUnknownTask = errors.New("no such task")

// SetTask ticks (done) or unticks the checkbox of the task with the given
// ID in plan.md itself: the one byte between the brackets becomes 'x' or
// ' ', and every other byte of the file stays as it was. The new file
// replaces the old atomically and durably, keeping its mode. A box already
// in the wanted state is left alone and the file is not rewritten.
//
// The ID is looked up among the TASK markers, then among the ACCEPT markers
// (so acceptance criteria can be checked the same way). A marker inside a
// code fence or code span is no marker and is not found. An unknown ID is
// an error wrapping ErrUnknownTask that lists the IDs there are; an ID that
// two markers share is an error naming their lines. SetTask does not
// update .checkpoint: run Sync after it (the document's PostToolUse:Edit
// trigger does the same). It holds a lock on the plan's directory, so two
// SetTasks never interleave (one would write plan.md without the other's
// box), and .checkpoint/lock when that directory exists, so it does not
// interleave with a Sync.
func SetTask(planPath, taskID string, done bool) error {
	abs, err := filepath.Abs(planPath)
	if err != nil {
		return fmt.Errorf("plan path %s: %w", planPath, err)
	}
	release, err := lockPlanDir(filepath.Dir(abs), 30*time.Second)
	if err != nil {
		return err
	}
	defer release()
	if cdir := filepath.Join(filepath.Dir(abs), CheckpointDir); isDir(cdir) {
		unlock, err := lockDir(cdir, 30*time.Second)
		if err != nil {
			return err
		}
		defer unlock()
	}
	info, err := os.Stat(abs)
	if err != nil {
		return fmt.Errorf("reading plan: %w", err)
	}
	data, p, err := readPlan(abs)
	if err != nil {
		return err
	}
	out, changed, err := setBox(data, p, taskID, done)
	if err != nil {
		return fmt.Errorf("%s: %w", abs, err)
	}
	if !changed {
		return nil
	}
	return atomicfile.WriteFile(abs, out, info.Mode().Perm())
}

func isDir(path string) bool {
	info, err := os.Stat(path)
	return err == nil && info.IsDir()
}

// setBox returns src with the box of item id set to done, and whether that
// changed a byte. src is not modified.
func setBox(src []byte, p *Plan, id string, done bool) ([]byte, bool, error) {
	it, err := findItem(p, id)
	if err != nil {
		return nil, false, err
	}
	return setItemBox(src, it, done)
}

// setItemBox is setBox for an item already found.
func setItemBox(src []byte, it Item, done bool) ([]byte, bool, error) {
	if it.Box < 0 || it.Box >= len(src) {
		return nil, false, fmt.Errorf("the checkbox of %s on line %d cannot be located; tick it by hand", it.ID, it.Line)
	}
	want := byte(' ')
	if done {
		want = 'x'
	}
	cur := src[it.Box]
	if isMark(cur) == done {
		return src, false, nil
	}
	out := slices.Clone(src)
	out[it.Box] = want
	return out, true, nil
}

func isMark(b byte) bool { return b == 'x' || b == 'X' }

// findItem finds the task, or else the acceptance criterion, with ID id.
func findItem(p *Plan, id string) (Item, error) {
	for _, kind := range []markerKind{markTask, markAccept} {
		if lines := p.repeats[kind.String()+" "+id]; len(lines) > 0 {
			first := itemByID(p, kind, id)
			return Item{}, fmt.Errorf("%s ID %s is on line %d and again on line(s) %s: give each its own ID, then try again",
				kind, id, first.Line, joinInts(lines))
		}
		if it := itemByID(p, kind, id); it.ID != "" {
			return it, nil
		}
	}
	var ids []string
	for _, t := range p.Tasks() {
		ids = append(ids, t.ID)
	}
	for _, a := range p.Acceptance() {
		ids = append(ids, a.ID)
	}
	switch {
	case len(ids) == 0:
		return Item{}, fmt.Errorf("%w %q: the plan has no <!-- TASK: id --> or <!-- ACCEPT: id --> markers (a marker in a code block does not count)", ErrUnknownTask, id)
	case len(ids) > 30:
		ids = append(ids[:30], fmt.Sprintf("and %d more", len(ids)-30))
	}
	return Item{}, fmt.Errorf("%w %q: the plan's task and criterion IDs are %s", ErrUnknownTask, id, strings.Join(ids, ", "))
}

func itemByID(p *Plan, kind markerKind, id string) Item {
	list := p.Tasks()
	if kind == markAccept {
		list = p.Acceptance()
	}
	for _, it := range list {
		if it.ID == id {
			return it
		}
	}
	return Item{}
}

func joinInts(v []int) string {
	s := make([]string, len(v))
	for i, n := range v {
		s[i] = fmt.Sprint(n)
	}
	return strings.Join(s, ", ")
}

// errNotExist reports whether err means a file is missing.
func errNotExist(err error) bool { return errors.Is(err, fs.ErrNotExist) }
