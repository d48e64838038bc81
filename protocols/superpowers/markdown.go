package superpowers

import (
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
	"sync"

	ckpt "github.com/ckpt-dev/ckpt"
	"github.com/ckpt-dev/ckpt/internal/jsondoc"
	"github.com/ckpt-dev/ckpt/protocols"
	"github.com/ckpt-dev/ckpt/protocols/internal/mdscan"
)

// A Conductor track keeps its plan beside metadata.json: plan.md, with
// "### Task N: title" headings each followed by a "**Status:** [x]" line.
// The registry conductor/tracks.md lists the tracks in tables.

// Regular expressions are compiled on first use, not at start-up: every
// ckpt process links this package, and most never use them.
var (
	taskHeading = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?i)^task\s+([0-9][0-9.]*)\s*[:.)-]?\s*(.*)$`) })
	statusBox   = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?i)^\*\*status:?\*\*:?\s*\[([ xX~\-/])\]`) })
	listEntry   = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^\s*[-*+]\s+(?:\[([ xX])\]\s+)?(.*)$`) })
	tableRow    = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^\s*\|(.*)\|\s*$`) })
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
	var (
		phase      string
		task       = -1 // index of the step whose section we are in
		accept     bool
		noBox      []string
		acceptSeen bool
	)
	ids := map[string]bool{}
	for l := range mdscan.Lines(data) {
		if l.Fenced {
			continue
		}
		line, trimmed := l.Text, l.Trimmed
		if level, text, ok := mdscan.Heading(line); ok {
			text = strings.TrimSpace(text)
			accept = strings.HasPrefix(strings.ToLower(text), "acceptance criteria")
			acceptSeen = acceptSeen || accept
			switch {
			case level == 1 && c.Title == "":
				c.Title = text
				task = -1
			case level <= 2:
				phase, task = text, -1
				if !strings.HasPrefix(strings.ToLower(text), "phase") {
					phase = ""
				}
			default:
				task = -1
				if tm := taskHeading().FindStringSubmatch(text); tm != nil {
					id := "task-" + strings.TrimSuffix(tm[1], ".")
					for i := 2; ids[id]; i++ {
						id = fmt.Sprintf("task-%s-%d", strings.TrimSuffix(tm[1], "."), i)
					}
					ids[id] = true
					c.Steps = append(c.Steps, ckpt.Step{ID: id, Title: text, Status: ckpt.StepPending, Phase: phase})
					task = len(c.Steps) - 1
					noBox = append(noBox, id)
				}
			}
			continue
		}
		if task >= 0 {
			if m := statusBox().FindStringSubmatch(trimmed); m != nil {
				switch m[1] {
				case "x", "X":
					c.Steps[task].Status = ckpt.StepDone
				case "~", "-", "/":
					c.Steps[task].Status = ckpt.StepInProgress
				}
				noBox = removeString(noBox, c.Steps[task].ID)
				task = -1
			}
			continue
		}
		if accept {
			if m := listEntry().FindStringSubmatch(line); m != nil && strings.TrimSpace(m[2]) != "" {
				a := ckpt.Criterion{ID: fmt.Sprintf("ac-%d", len(c.Acceptance)+1), Title: strings.TrimSpace(m[2])}
				a.Met = m[1] == "x" || m[1] == "X"
				if m[1] == "" && len(c.Acceptance) == 0 {
					n.Add("acceptance criteria have no checkboxes: read as not met")
				}
				c.Acceptance = append(c.Acceptance, a)
			}
		}
	}
	if len(c.Steps) == 0 {
		return nil, fmt.Errorf(`no "### Task N: title" headings found: a track's plan.md lists its tasks that way (or import the track's metadata.json)`)
	}
	if len(noBox) > 0 {
		n.Add("tasks without a **Status:** [ ] line read as not started: %s", strings.Join(noBox, ", "))
	}
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
	n.Add("plan.md has no status or times: status %s follows from the task boxes", c.Status)
	if last != "" {
		n.Add("resume point (last_task) taken as the last checked task: %q", last)
	}
	ckpt.Derive(c)
	return c, nil
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
		m := tableRow().FindStringSubmatch(l)
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
