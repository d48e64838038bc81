package render

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	ckpt "github.com/ckpt-dev/ckpt"
)

// Column widths, in runes, of the terminal status table.
const (
	agentWidth = 20
	taskWidth  = 40
	stepWidth  = 36
	barWidth   = 10
)

// StatusTable writes the terminal table of cs, one row per checkpoint in the
// order given: ID, agent, task, status, a progress bar with its percent, the
// current step, when it was last seen ("2 min ago", "-" if never) and its
// presence at now under th (ckpt.PresenceOf with alive: working, busy,
// waiting, ended, dead, warn, stale, or "-" for a checkpoint that is not
// live) with how long it has held and why (PresenceCell). A done
// checkpoint whose acceptance
// criteria are not all met shows its status as "done (partial)". Long cells
// are shortened with "…". With no checkpoints it writes "No checkpoints.".
// The only error is w's.
func StatusTable(w io.Writer, cs []*ckpt.Checkpoint, now time.Time, th ckpt.Thresholds, alive ckpt.AliveFunc) error {
	if len(cs) == 0 {
		_, err := io.WriteString(w, "No checkpoints.\n")
		return err
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tAGENT\tTASK\tSTATUS\tPROGRESS\tCURRENT STEP\tLAST SEEN\tPRESENCE")
	for _, c := range cs {
		v := presenceOf(c, now, th, alive)
		seen := "-"
		if !c.LastSeen().IsZero() {
			seen = Age(v.Silent)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s %4s\t%s\t%s\t%s\n",
			oneLine(c.ID), // never shortened: an ID is what a person copies into the next command
			tableCell(c.Agent.Label(), agentWidth),
			tableCell(taskText(c), taskWidth),
			tableCell(statusWord(c), 24),
			bar(c.Progress.Percent, barWidth), percentText(c.Progress.Percent),
			tableCell(currentStep(c), stepWidth),
			seen,
			PresenceCell(v, now))
	}
	return tw.Flush()
}

// presenceWidth bounds the presence cell of the status table, in runes.
const presenceWidth = 48

// PresenceCell is a presence in one short table cell: the state, how long
// it has held when known and why, e.g. "waiting 12m: approve the schema",
// "dead 3m: process 4242 on h1 is gone", "working", "-". Long reasons are
// shortened with "…".
func PresenceCell(v ckpt.PresenceView, now time.Time) string {
	s := string(v.State)
	if v.State == ckpt.PresenceNone {
		return s
	}
	if !v.Since.IsZero() && !v.Since.After(now) {
		s += " " + Span(now.Sub(v.Since))
	}
	if v.Why != "" {
		s += ": " + v.Why
	}
	return clipRunes(s, presenceWidth)
}

// Span writes a duration coarsely, for cells: 45s, 12m, 3h, 2d (rounded
// down; negative is 0s).
func Span(d time.Duration) string {
	switch {
	case d < time.Minute:
		return fmt.Sprintf("%ds", int(max(d, 0)/time.Second))
	case d < time.Hour:
		return fmt.Sprintf("%dm", int(d/time.Minute))
	case d < 24*time.Hour:
		return fmt.Sprintf("%dh", int(d/time.Hour))
	}
	return fmt.Sprintf("%dd", int(d/(24*time.Hour)))
}

// tableCell makes s one short line for the terminal table; "-" if empty,
// as in every table ckpt prints (Dash).
func tableCell(s string, n int) string {
	return Dash(clipRunes(s, n))
}

// taskText is "T060 Convert the PDFs", or whichever of task ID and title
// the checkpoint has.
func taskText(c *ckpt.Checkpoint) string {
	switch {
	case c.TaskID == "":
		return c.Title
	case c.Title == "" || c.Title == c.TaskID:
		return c.TaskID
	}
	return c.TaskID + " " + c.Title
}

// statusWord is the status, with "(partial)" for partial completion and
// "(archived)" for an archive, which only --all lists.
func statusWord(c *ckpt.Checkpoint) string {
	switch partial, archived := c.PartiallyComplete(), c.Archived != nil; {
	case partial && archived:
		return string(c.Status) + " (partial, archived)"
	case partial:
		return string(c.Status) + " (partial)"
	case archived:
		return string(c.Status) + " (archived)"
	}
	return string(c.Status)
}

// seedStatus is the word sitebuilder's (seed 003) STATUS.md uses for a
// status. (A switch, not a map literal: Go builds a map literal at
// initialisation, in every ckpt process.)
func seedStatus(k ckpt.Status) (string, bool) {
	switch k {
	case ckpt.StatusPending:
		return "not started", true
	case ckpt.StatusInProgress:
		return "in_progress", true
	case ckpt.StatusWaiting:
		return "waiting", true
	case ckpt.StatusBlocked:
		return "blocked", true
	case ckpt.StatusDone:
		return "complete", true
	case ckpt.StatusFailed:
		return "failed", true
	case ckpt.StatusAbandoned:
		return "abandoned", true
	}
	return "", false
}

// StatusMarkdown renders sitebuilder's (seed 003) progress/STATUS.md aggregate of cs:
//
//	# Orchestration Status
//
//	**Last Updated**: 2025-12-08T14:54:10Z
//	**Overall Progress**: 55% (1/3 tasks complete)
//
//	---
//
//	## Active Checkpoints
//
//	| Agent | Task | Progress | Last Update | Status |
//	|-------|------|----------|-------------|--------|
//	| migration | T060 | 65% | 2 min ago | in_progress |
//
// One row per checkpoint in the order given. Last Updated is now; Overall
// Progress is ckpt.OverallProgress: the mean of the checkpoints' percents
// and how many are done. Task is the task ID, else the title, else the ID. Last Update is the age of
// the last sign of life ("—" if none); Status is the seed's word (not
// started, in_progress, waiting, blocked, complete, failed, abandoned), with
// "(partial)" for a complete checkpoint whose acceptance criteria are not all
// met and, by its presence at now under th (ckpt.PresenceOf with alive),
// "(warning)" or "(stalled)" for a live one silent past the thresholds,
// "(dead)" for one whose agent's process is gone, "(waiting for a person:
// why)" for one whose agent waits for a reply and "(session ended)" for one
// whose session closed cleanly. Partially complete checkpoints are then listed with
// their unmet criteria under "## Partially Complete".
func StatusMarkdown(cs []*ckpt.Checkpoint, now time.Time, th ckpt.Thresholds, alive ckpt.AliveFunc) string {
	var b strings.Builder
	overall, done := ckpt.OverallProgress(cs)
	b.WriteString("# Orchestration Status\n\n")
	fmt.Fprintf(&b, "**Last Updated**: %s\n", now.UTC().Format(time.RFC3339))
	fmt.Fprintf(&b, "**Overall Progress**: %s (%d/%d tasks complete)\n\n---\n\n", percentText(overall), done, len(cs))
	b.WriteString("## Active Checkpoints\n\n")
	b.WriteString("| Agent | Task | Progress | Last Update | Status |\n")
	b.WriteString("|-------|------|----------|-------------|--------|\n")
	var partial []*ckpt.Checkpoint
	for _, c := range cs {
		v := presenceOf(c, now, th, alive)
		last := "—" // seed 003: a task not started has no last update
		if !c.LastSeen().IsZero() && c.Status != ckpt.StatusPending {
			last = Age(v.Silent)
		}
		status := seedStatusWord(c, v)
		if c.PartiallyComplete() {
			partial = append(partial, c)
		}
		task := c.TaskID
		if task == "" {
			task = goal(c)
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s |\n",
			cell(c.Agent.Label(), 40), cell(task, 60), percentText(c.Progress.Percent), last, cell(status, 80))
	}
	writePartial(&b, partial)
	return b.String()
}

// presenceOf is c's presence at now (ckpt.PresenceOf).
func presenceOf(c *ckpt.Checkpoint, now time.Time, th ckpt.Thresholds, alive ckpt.AliveFunc) ckpt.PresenceView {
	s := c.Summary()
	return ckpt.PresenceOf(&s, now, th, alive)
}

// StatusRow is one checkpoint as `ckpt status --json` prints it.
type StatusRow struct {
	ID                string        `json:"id"`
	Agent             string        `json:"agent,omitempty"` // AgentName
	TaskID            string        `json:"task_id,omitempty"`
	Title             string        `json:"title,omitempty"`
	Status            ckpt.Status   `json:"status"`
	PartiallyComplete bool          `json:"partially_complete"`
	Progress          ckpt.Progress `json:"progress"`
	CurrentStep       string        `json:"current_step,omitempty"`
	LastSeen          time.Time     `json:"last_seen,omitzero"`
	SilentSeconds     int64         `json:"silent_seconds"`
	Liveness          ckpt.Liveness `json:"liveness"` // PresenceView.Alarm
	// Presence is {state, since, why} (docs/design.md, "Liveness and
	// presence").
	Presence ckpt.PresenceView `json:"presence"`
	Archived *ckpt.Archive     `json:"archived,omitempty"`
}

// NewStatusRow is s's row at now under th (ckpt.PresenceOf with alive).
func NewStatusRow(s *ckpt.Summary, now time.Time, th ckpt.Thresholds, alive ckpt.AliveFunc) StatusRow {
	v := ckpt.PresenceOf(s, now, th, alive)
	return StatusRow{
		ID: s.ID, Agent: s.Agent.Label(), TaskID: s.TaskID, Title: s.Title,
		Status: s.Status, PartiallyComplete: s.Partial, Progress: s.Progress,
		CurrentStep: s.CurrentStep, LastSeen: s.LastSeen(), SilentSeconds: int64(v.Silent / time.Second),
		Liveness: v.Alarm(), Presence: v, Archived: s.Archived,
	}
}

// StatusJSON writes `ckpt status --json`: an indented JSON array of
// NewStatusRow for each summary, in list's order ("[]" for none). Every
// field is in the summaries: no state is read. The only error is w's.
func StatusJSON(w io.Writer, list []ckpt.Summary, now time.Time, th ckpt.Thresholds, alive ckpt.AliveFunc) error {
	rows := make([]StatusRow, 0, len(list))
	for i := range list {
		rows = append(rows, NewStatusRow(&list[i], now, th, alive))
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(rows)
}

// seedStatusWord is a row's Status in STATUS.md: the seed's word, marked
// partial, and the presence v when it is news (StatusMarkdown).
func seedStatusWord(c *ckpt.Checkpoint, v ckpt.PresenceView) string {
	status, ok := seedStatus(c.Status)
	if !ok {
		status = string(c.Status)
	}
	if c.PartiallyComplete() {
		status += " (partial)"
	}
	switch v.State {
	case ckpt.PresenceWaiting:
		if c.Status == ckpt.StatusWaiting && v.Why == c.StatusReason {
			break // the seed's word says it already
		}
		status += " (waiting for a " + v.For
		if v.Why != "" {
			status += ": " + v.Why
		}
		status += ")"
	case ckpt.PresenceEnded:
		status += " (session ended)"
	case ckpt.PresenceWarn:
		status += " (warning)"
	case ckpt.PresenceStale:
		status += " (stalled)"
	case ckpt.PresenceDead:
		status += " (dead)"
	}
	return status
}

// writePartial writes "## Partially Complete": each checkpoint with its
// unmet criteria.
func writePartial(b *strings.Builder, partial []*ckpt.Checkpoint) {
	if len(partial) == 0 {
		return
	}
	b.WriteString("\n## Partially Complete\n\n")
	for _, c := range partial {
		var unmet []string
		for _, a := range c.Acceptance {
			if !a.Met {
				unmet = append(unmet, a.ID)
			}
		}
		name := clip(c.TaskID, 60)
		if name == "" {
			name = clip(goal(c), 60)
		}
		if a := clip(c.Agent.Label(), 40); a != "" {
			name = a + " " + name
		}
		fmt.Fprintf(b, "- %s: unmet %s\n", blockStart(name), clip(strings.Join(unmet, ", "), 400))
	}
}
