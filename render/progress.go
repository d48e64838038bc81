package render

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	ckpt "github.com/ckpt-dev/ckpt"
)

// keyFiles is how many files the continuation line names.
const keyFiles = 6

// ProgressMarkdown renders seed 001's progress file, .ccc-progress.md, with
// its sections in its order:
//
//	# Session Progress
//
//	**Issue:** T060 — Convert the PDFs
//	**Session:** 2025-12-08T14:52:10Z
//	**Execution Mode:** exec:tdd
//
//	## Completed Tasks
//	- post-01 ✓
//
//	## Current Task
//	- post-20 — in progress
//
//	## Remaining Tasks
//	- post-21
//
//	## Decisions Made
//	- decision: rationale
//
//	## Blockers
//	- blocker description
//
//	## Continuation Prompt
//	Resume T060. Current task: task 20 of 29 (post-20). Key files: a.md, b.md.
//	Next action: Continue step post-20.
//
// The issue is c.TaskID (else c.ID) and c.Title; the session is stamped with
// now (else c.UpdatedAt); the execution mode is the string c.Meta
// ["execution_mode"], given the seed's "exec:" prefix, or "—" when absent.
// Tasks are c's steps; when no step is left to do, the remaining tasks are
// the resume next steps. A partially complete checkpoint (done, with unmet
// acceptance criteria) lists each unmet criterion as a remaining task. Blockers are the active blockers and blocking errors. An empty
// section holds "None". Lists are complete; each item is one line.
func ProgressMarkdown(c *ckpt.Checkpoint, now time.Time) string {
	var b strings.Builder
	b.WriteString("# Session Progress\n\n")
	fmt.Fprintf(&b, "**Issue:** %s\n", progressIssue(c))
	stamp := now
	if stamp.IsZero() {
		stamp = c.UpdatedAt
	}
	session := "—"
	if !stamp.IsZero() {
		session = stamp.UTC().Format(time.RFC3339)
	}
	fmt.Fprintf(&b, "**Session:** %s\n", session)
	fmt.Fprintf(&b, "**Execution Mode:** %s\n", executionMode(c))

	completed, remaining := progressTasks(c)
	writeItems(&b, "Completed Tasks", completed)
	writeItems(&b, "Current Task", progressCurrent(c))
	writeItems(&b, "Remaining Tasks", remaining)
	var decisions []string
	for _, d := range c.Decisions {
		s := oneLine(d.Text)
		if r := oneLine(d.Reason); r != "" {
			s += ": " + r
		}
		decisions = append(decisions, s)
	}
	writeItems(&b, "Decisions Made", decisions)
	writeItems(&b, "Blockers", progressBlockers(c))

	b.WriteString("\n## Continuation Prompt\n")
	b.WriteString(ContinuationLine(c))
	b.WriteString("\n")
	return b.String()
}

// progressIssue is "T060 — Convert the PDFs": the task ID (else the ID)
// and the title.
func progressIssue(c *ckpt.Checkpoint) string {
	issue := oneLine(c.TaskID)
	if issue == "" {
		issue = oneLine(c.ID)
	}
	if t := oneLine(c.Title); t != "" && t != issue {
		issue += " — " + t
	}
	return issue
}

// progressTasks sorts the steps into the completed tasks and the remaining
// ones (the active step is neither: it is the current task). With no step
// left, the resume next steps remain; a partially complete checkpoint's
// unmet criteria remain too.
func progressTasks(c *ckpt.Checkpoint) (completed, remaining []string) {
	active := activeStep(c)
	for i, s := range c.Steps {
		label := oneLine(s.Label())
		switch {
		case s.Status == ckpt.StepSkipped:
			completed = append(completed, label+" (skipped) ✓")
		case s.Status.Finished():
			completed = append(completed, label+" ✓")
		case i == active:
		case s.Status == ckpt.StepFailed:
			remaining = append(remaining, label+" (failed)")
		default:
			remaining = append(remaining, label)
		}
	}
	if len(remaining) == 0 {
		for _, s := range nextSteps(c) {
			remaining = append(remaining, oneLine(s))
		}
	}
	if c.PartiallyComplete() {
		for _, a := range c.Acceptance {
			if !a.Met {
				remaining = append(remaining, "Meet acceptance criterion "+oneLine(criterionText(a))+" (unmet; the task is only partially complete)")
			}
		}
	}
	return completed, remaining
}

// progressCurrent is the current task with what holds it ("in progress",
// blocked, waiting, or the step's notes); none when nothing is current.
func progressCurrent(c *ckpt.Checkpoint) []string {
	cur := currentStep(c)
	if cur == "" {
		return nil
	}
	active := activeStep(c)
	if active >= 0 {
		cur = c.Steps[active].Label()
	}
	detail := "in progress"
	switch c.Status {
	case ckpt.StatusBlocked, ckpt.StatusWaiting:
		detail = string(c.Status)
	}
	if active >= 0 && c.Steps[active].Notes != "" {
		detail = c.Steps[active].Notes
	}
	return []string{oneLine(cur) + " — " + oneLine(detail)}
}

// progressBlockers are the active blockers and blocking errors.
func progressBlockers(c *ckpt.Checkpoint) []string {
	var blockers []string
	for _, x := range c.ActiveBlockers() {
		blockers = append(blockers, oneLine(x.Text))
	}
	for _, e := range c.ActiveErrors() {
		if e.Blocking {
			s := oneLine(e.Message)
			if t := oneLine(e.Type); t != "" {
				s = t + ": " + s
			}
			blockers = append(blockers, s)
		}
	}
	return blockers
}

// writeItems writes a section of one-line list items, or "None".
func writeItems(b *strings.Builder, title string, items []string) {
	b.WriteString("\n## " + title + "\n")
	if len(items) == 0 {
		b.WriteString("None\n")
		return
	}
	for _, it := range items {
		b.WriteString("- " + blockStart(it) + "\n")
	}
}

// executionMode is "exec:<mode>" from c.Meta["execution_mode"], or "—".
func executionMode(c *ckpt.Checkpoint) string {
	raw, ok := c.Meta["execution_mode"]
	if !ok {
		return "—"
	}
	var mode string
	if err := json.Unmarshal(raw, &mode); err != nil {
		mode = string(raw) // not a JSON string: show it as written
	}
	mode = oneLine(mode)
	if mode == "" {
		return "—"
	}
	if !strings.HasPrefix(mode, "exec:") {
		mode = "exec:" + mode
	}
	return mode
}

// ContinuationLine returns the body of seed 001's "## Continuation Prompt"
// section, two lines without a trailing newline:
//
//	Resume T060. Current task: task 20 of 29 (post-20). Key files: a.md, b.md.
//	Next action: Continue step post-20.
//
// The reference is c.TaskID, else c.ID. The current task is the step under
// way, else the first one not finished, counted among all steps; without
// such a step it is the current_step text, else "all M tasks done". Key files are the most recently recorded files, modified then
// created, six at most. The next action is the prompt's (see NewPrompt).
// Each part is one line and shortened, so the body stays under 2,000 bytes.
func ContinuationLine(c *ckpt.Checkpoint) string {
	ref := clip(c.TaskID, 120)
	if ref == "" {
		ref = clip(c.ID, 120)
	}
	return fmt.Sprintf("Resume %s. Current task: %s Key files: %s\nNext action: %s",
		ref, sentence(currentTask(c)), sentence(keyFileList(c)), sentence(clip(nextAction(c), 500)))
}

// currentTask is "task N of M (label)" for the step under way or next.
func currentTask(c *ckpt.Checkpoint) string {
	m := len(c.Steps)
	if m == 0 {
		if cur := clip(currentStep(c), 200); cur != "" {
			return cur
		}
		return "none recorded"
	}
	i := activeStep(c)
	if i < 0 {
		i = slices.IndexFunc(c.Steps, func(s ckpt.Step) bool { return !s.Status.Finished() })
	}
	if i < 0 {
		// Every step in the plan is done, yet the agent names work under way.
		if cur := clip(currentStep(c), 200); cur != "" {
			return cur
		}
		if m == 1 {
			return "the only task is done"
		}
		return fmt.Sprintf("all %d tasks done", m)
	}
	return fmt.Sprintf("task %d of %d (%s)", i+1, m, clip(c.Steps[i].Label(), 200))
}

// keyFileList names the most recently recorded files: "a, b and 3 more".
func keyFileList(c *ckpt.Checkpoint) string {
	var files []string
	seen := map[string]bool{}
	for _, list := range [][]string{c.Files.Modified, c.Files.Created} {
		for i := len(list) - 1; i >= 0; i-- {
			if f := list[i]; f != "" && !seen[f] {
				seen[f] = true
				files = append(files, f)
			}
		}
	}
	if len(files) == 0 {
		return "none"
	}
	shown := files[:min(len(files), keyFiles)]
	names := make([]string, len(shown))
	for i, f := range shown {
		names[i] = clip(f, 160)
	}
	s := strings.Join(names, ", ")
	if more := len(files) - len(shown); more > 0 {
		s += fmt.Sprintf(" and %d more", more)
	}
	return s
}

// sentence ends s with a full stop unless it already ends in punctuation.
func sentence(s string) string {
	if s == "" {
		return "."
	}
	switch {
	case strings.HasSuffix(s, "."), strings.HasSuffix(s, "!"), strings.HasSuffix(s, "?"), strings.HasSuffix(s, ellipsis):
		return s
	}
	return s + "."
}
