package superpowers

import (
	"fmt"
	"path/filepath"
	"strings"

	ckpt "github.com/ckpt-dev/ckpt"
	"github.com/ckpt-dev/ckpt/internal/jsondoc"
	"github.com/ckpt-dev/ckpt/internal/lazyregexp"
	"github.com/ckpt-dev/ckpt/protocols"
	"github.com/ckpt-dev/ckpt/protocols/internal/mdscan"
)

// A Conductor track keeps its plan beside metadata.json: plan.md, with
// "### Task N: title" headings each followed by a "**Status:** [x]" line.
// The registry conductor/tracks.md lists the tracks in tables.

// Regular expressions are compiled on first use, not at start-up: every
// ckpt process links this package, and most never use them.
var (
	taskHeading = lazyregexp.New(`(?i)^task\s+([0-9][0-9.]*)\s*[:.)-]?\s*(.*)$`)
	statusBox   = lazyregexp.New(`(?i)^\*\*status:?\*\*:?\s*\[([ xX~\-/])\]`)
	listEntry   = lazyregexp.New(`^\s*[-*+]\s+(?:\[([ xX])\]\s+)?(.*)$`)
	tableRow    = lazyregexp.New(`^\s*\|(.*)\|\s*$`)
)

// importMarkdown reads a track's plan.md, or explains why a tracks.md
// registry cannot be one checkpoint.
func importMarkdown(path string, data []byte) (protocols.Imported, error) {
	var n jsondoc.Notes
	if tracks := registryTracks(data); tracks != nil {
		return protocols.Imported{}, fmt.Errorf("%s is Conductor's track registry (tracks: %s), not one track: import each track's conductor/tracks/<track-id>/metadata.json", path, strings.Join(tracks, ", "))
	}
	c, err := readPlan(data, &n)
	if err != nil {
		return protocols.Imported{}, fmt.Errorf("%s: %w", path, err)
	}
	track := planTrack(path)
	c.TaskID = track
	id := suggestID(track, path, &n)
	c.ID = id
	return protocols.Imported{ID: id, State: c, Warnings: n}, nil
}

// planTrack is the track a plan belongs to: the directory of
// conductor/tracks/<id>/plan.md, or the name before ".plan.md".
func planTrack(path string) string {
	base := filepath.Base(path)
	if strings.EqualFold(base, "plan.md") {
		return filepath.Base(filepath.Dir(path))
	}
	if i := strings.Index(strings.ToLower(base), ".plan.md"); i > 0 {
		return base[:i]
	}
	return strings.TrimSuffix(base, filepath.Ext(base))
}

// readPlan reads plan.md: the title, one step per task, the acceptance
// criteria of an "Acceptance Criteria" section.
func readPlan(data []byte, n *jsondoc.Notes) (*ckpt.Checkpoint, error) {
	c := &ckpt.Checkpoint{Resume: ckpt.Resume{Resumable: true}}
	n.Add("read a track's plan.md: its tasks become steps; the loop state (current step, fix cycles) is in metadata.json beside it")
	r := &planReader{c: c, n: n, task: -1, ids: map[string]bool{}}
	for l := range mdscan.Lines(data) {
		if l.Fenced {
			continue
		}
		r.line(l.Text, l.Trimmed)
	}
	if len(c.Steps) == 0 {
		return nil, fmt.Errorf(`no "### Task N: title" headings found: a track's plan.md lists its tasks that way (or import the track's metadata.json)`)
	}
	if len(r.noBox) > 0 {
		n.Add("tasks without a **Status:** [ ] line read as not started: %s", strings.Join(r.noBox, ", "))
	}
	last := setPlanStatus(c)
	n.Add("plan.md has no status or times: status %s follows from the task boxes", c.Status)
	if last != "" {
		n.Add("resume point (last_task) taken as the last checked task: %q", last)
	}
	ckpt.Derive(c)
	return c, nil
}

// planReader is readPlan's state while it scans plan.md's lines.
type planReader struct {
	c      *ckpt.Checkpoint
	n      *jsondoc.Notes
	phase  string          // the current "Phase …" heading, or ""
	task   int             // index of the step whose section we are in, or -1
	accept bool            // in an "Acceptance Criteria" section
	noBox  []string        // IDs of tasks with no status box yet
	ids    map[string]bool // step IDs given so far
}

// line reads one unfenced line: a heading, the status box of the task
// whose section it is in, or an acceptance criterion.
func (r *planReader) line(line, trimmed string) {
	if level, text, ok := mdscan.Heading(line); ok {
		r.heading(level, strings.TrimSpace(text))
		return
	}
	if r.task >= 0 {
		r.taskStatus(trimmed)
		return
	}
	if r.accept {
		r.criterion(line)
	}
}

// heading reads a heading: the first level-1 heading is the title, a
// level-2 one may start a phase, and a deeper "Task N: title" adds a pending
// step with a unique task-N ID. Any heading closes the current task section.
func (r *planReader) heading(level int, text string) {
	c := r.c
	r.accept = strings.HasPrefix(strings.ToLower(text), "acceptance criteria")
	switch {
	case level == 1 && c.Title == "":
		c.Title = text
		r.task = -1
	case level <= 2:
		r.phase, r.task = text, -1
		if !strings.HasPrefix(strings.ToLower(text), "phase") {
			r.phase = ""
		}
	default:
		r.task = -1
		if tm := taskHeading.Get().FindStringSubmatch(text); tm != nil {
			id := "task-" + strings.TrimSuffix(tm[1], ".")
			for i := 2; r.ids[id]; i++ {
				id = fmt.Sprintf("task-%s-%d", strings.TrimSuffix(tm[1], "."), i)
			}
			r.ids[id] = true
			c.Steps = append(c.Steps, ckpt.Step{ID: id, Title: text, Status: ckpt.StepPending, Phase: r.phase})
			r.task = len(c.Steps) - 1
			r.noBox = append(r.noBox, id)
		}
	}
}

// taskStatus reads a line in the current task's section: a "**Status:** [x]"
// line sets the step's status ([x] done, [~] [-] [/] in progress, else
// pending) and closes the section; other lines are skipped.
func (r *planReader) taskStatus(trimmed string) {
	m := statusBox.Get().FindStringSubmatch(trimmed)
	if m == nil {
		return
	}
	s := &r.c.Steps[r.task]
	switch m[1] {
	case "x", "X":
		s.Status = ckpt.StepDone
	case "~", "-", "/":
		s.Status = ckpt.StepInProgress
	}
	r.noBox = removeString(r.noBox, s.ID)
	r.task = -1
}

// criterion reads a list entry in the Acceptance Criteria section as
// criterion ac-N, met when its box is checked; a first entry without a box
// gets a note.
func (r *planReader) criterion(line string) {
	c := r.c
	if m := listEntry.Get().FindStringSubmatch(line); m != nil && strings.TrimSpace(m[2]) != "" {
		a := ckpt.Criterion{ID: fmt.Sprintf("ac-%d", len(c.Acceptance)+1), Title: strings.TrimSpace(m[2])}
		a.Met = m[1] == "x" || m[1] == "X"
		if m[1] == "" && len(c.Acceptance) == 0 {
			r.n.Add("acceptance criteria have no checkboxes: read as not met")
		}
		c.Acceptance = append(c.Acceptance, a)
	}
}

// setPlanStatus sets c's current step (the first unfinished one), the last
// done task as the last processed, and the status the boxes imply: done when
// every task is, pending when none is done and the current one is pending,
// else in progress. It returns the last done task's title, or "".
func setPlanStatus(c *ckpt.Checkpoint) string {
	done, last := 0, ""
	for _, s := range c.Steps {
		if s.Status == ckpt.StepDone {
			done++
			last = s.Title
		}
	}
	c.Context.LastProcessed = last
	for _, s := range c.Steps {
		if !s.Status.Finished() {
			c.CurrentStep = s.ID
			break
		}
	}
	switch {
	case done == len(c.Steps):
		c.Status = ckpt.StatusDone
	case done == 0 && c.CurrentStep != "" && c.Steps[c.StepIndex(c.CurrentStep)].Status == ckpt.StepPending:
		c.Status = ckpt.StatusPending
	default:
		c.Status = ckpt.StatusInProgress
	}
	return last
}

func removeString(list []string, s string) []string {
	for i, x := range list {
		if x == s {
			return append(list[:i], list[i+1:]...)
		}
	}
	return list
}

// registryTracks returns the track IDs a tracks.md registry lists (in its
// tables' "Track ID" column), or nil when data is not a registry.
func registryTracks(data []byte) []string {
	lines := strings.Split(string(data), "\n")
	isRegistry := false
	for _, l := range lines {
		if _, text, ok := mdscan.Heading(l); ok && strings.Contains(strings.ToLower(text), "track registry") {
			isRegistry = true
		}
	}
	if !isRegistry {
		return nil
	}
	tracks := []string{}
	col := -1
	for _, l := range lines {
		m := tableRow.Get().FindStringSubmatch(l)
		if m == nil {
			col = -1
			continue
		}
		cells := strings.Split(m[1], "|")
		if col < 0 {
			for i, cell := range cells {
				if strings.EqualFold(strings.TrimSpace(cell), "track id") {
					col = i
				}
			}
			continue
		}
		if col >= len(cells) {
			continue
		}
		v := strings.Trim(strings.TrimSpace(cells[col]), "`*")
		if v == "" || strings.Trim(v, "-: ") == "" || strings.HasPrefix(v, "(") {
			continue
		}
		tracks = append(tracks, v)
	}
	if len(tracks) == 0 {
		tracks = append(tracks, "none listed")
	}
	return tracks
}
