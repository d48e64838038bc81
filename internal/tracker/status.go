package tracker

import (
	"fmt"
	"strings"
	"time"

	ckpt "github.com/ckpt-dev/ckpt"
)

// The status words of ccc's (seed 001) comment, and the ones ckpt adds for work
// that has ended.
const (
	StateInProgress = "In Progress"
	StateBlocked    = "Blocked"
	StateResuming   = "Resuming"
	StatePending    = "Pending"
	StateDone       = "Done"
	StateFailed     = "Failed"
	StateAbandoned  = "Abandoned"
)

// MaxDecisions is how many of the latest decisions UpdateFromCheckpoint puts
// in the comment; the full list stays in the checkpoint.
const MaxDecisions = 5

// StatusUpdate holds the values of the "## Checkpoint Status" comment.
type StatusUpdate struct {
	Updated     time.Time // shown in UTC, RFC 3339
	Task        int       // N of "Task N of M", 1-based
	Total       int       // M; 0 when the work has no task list
	Description string    // what task N is
	State       string    // In Progress, Blocked, Resuming (or Pending, Done, Failed, Abandoned)
	Decisions   []string  // key decisions since the last checkpoint
	Blockers    []string  // active blockers
	Next        string    // the specific next action
}

// StatusComment renders u as ccc's (seed 001) comment body:
//
//	## Checkpoint Status
//
//	**Updated:** 2026-03-02T14:05:00Z
//	**Task:** 3 of 8 — Write the parser
//	**Status:** In Progress
//
//	**Decisions:** Use encoding/csv: it handles quoting; Keep IDs stable
//	**Blockers:** None
//	**Next:** Write the header test
//
// With Total 0 the Task line shows only the description. Empty Decisions,
// Blockers or Next show "None"; an empty State shows "In Progress"; a zero
// Updated shows "unknown". Several decisions or blockers are joined with
// "; ". Line breaks inside values become spaces, so no value can add a line
// to the comment.
func StatusComment(u StatusUpdate) string {
	updated := "unknown"
	if !u.Updated.IsZero() {
		updated = u.Updated.UTC().Format(time.RFC3339)
	}
	task := oneLine(u.Description)
	if u.Total > 0 {
		n := min(max(u.Task, 1), u.Total)
		if task == "" {
			task = fmt.Sprintf("%d of %d", n, u.Total)
		} else {
			task = fmt.Sprintf("%d of %d — %s", n, u.Total, task)
		}
	}
	if task == "" {
		task = "None"
	}
	state := oneLine(u.State)
	if state == "" {
		state = StateInProgress
	}
	var b strings.Builder
	b.WriteString("## Checkpoint Status\n\n")
	b.WriteString("**Updated:** " + updated + "\n")
	b.WriteString("**Task:** " + task + "\n")
	b.WriteString("**Status:** " + state + "\n\n")
	b.WriteString("**Decisions:** " + joinOrNone(u.Decisions) + "\n")
	b.WriteString("**Blockers:** " + joinOrNone(u.Blockers) + "\n")
	b.WriteString("**Next:** " + orNone(oneLine(u.Next)) + "\n")
	return b.String()
}

// UpdateFromCheckpoint fills a StatusUpdate from c at time now (zero: c's
// UpdatedAt), with the decisions recorded at or after since (zero: all;
// at most the MaxDecisions latest).
//
// Task N is the current step as (*ckpt.Checkpoint).Position defines it,
// else (every step finished) the last; M is the number of steps. Without steps, N and M come from c.Progress and
// the description is c.CurrentStep or c.Title. State is Blocked for a
// blocked checkpoint or one with active blockers, Resuming for one a new
// session resumed and has not changed since (ccc's (seed 001) handoff picked up
// by /ccc:go), In Progress for one in progress or waiting (at a gate, for
// a person: the work is not blocked), and Pending, Done, Failed or
// Abandoned otherwise. Next is the first of c.Resume.NextSteps, else
// c.Context.NextToProcess, else the first unfinished step after task N.
func UpdateFromCheckpoint(c *ckpt.Checkpoint, since, now time.Time) StatusUpdate {
	u := StatusUpdate{Updated: now}
	if now.IsZero() {
		u.Updated = c.UpdatedAt
	}
	cur := currentStep(c)
	if len(c.Steps) > 0 {
		u.Task, u.Total = cur+1, len(c.Steps)
		u.Description = c.Steps[cur].Label()
	} else {
		pos := c.Position()
		u.Total, u.Task = pos.M, pos.N
		if u.Task == 0 {
			u.Task = pos.M // all done: the last task
		}
		u.Description = c.CurrentStep
		if u.Description == "" {
			u.Description = c.Title
		}
	}

	active := c.ActiveBlockers()
	switch {
	case c.Status == ckpt.StatusBlocked || len(active) > 0:
		u.State = StateBlocked
	case c.Status == ckpt.StatusInProgress && resumedUntouched(c):
		u.State = StateResuming
	case c.Status == ckpt.StatusInProgress || c.Status == ckpt.StatusWaiting:
		u.State = StateInProgress
	case c.Status == ckpt.StatusDone:
		u.State = StateDone
	case c.Status == ckpt.StatusFailed:
		u.State = StateFailed
	case c.Status == ckpt.StatusAbandoned:
		u.State = StateAbandoned
	default:
		u.State = StatePending
	}

	for _, d := range c.Decisions {
		if d.At.Before(since) {
			continue
		}
		text := d.Text
		if d.Reason != "" {
			text += ": " + d.Reason
		}
		u.Decisions = append(u.Decisions, text)
	}
	if len(u.Decisions) > MaxDecisions {
		u.Decisions = u.Decisions[len(u.Decisions)-MaxDecisions:]
	}
	for _, b := range active {
		u.Blockers = append(u.Blockers, b.Text)
	}

	switch {
	case len(c.Resume.NextSteps) > 0:
		u.Next = c.Resume.NextSteps[0]
	case c.Context.NextToProcess != "":
		u.Next = c.Context.NextToProcess
	case len(c.Steps) > 0:
		for _, s := range c.Steps[cur+1:] {
			if !s.Status.Finished() {
				u.Next = s.Label()
				break
			}
		}
	}
	return u
}

// currentStep returns the index of task N in c.Steps: the current step as
// (*ckpt.Checkpoint).Position defines it (the one rule every view uses),
// else the last step once all are finished (0 when there are none).
func currentStep(c *ckpt.Checkpoint) int {
	if i := c.Position().Step; i >= 0 {
		return i
	}
	return max(len(c.Steps)-1, 0)
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

func orNone(s string) string {
	if s == "" {
		return "None"
	}
	return s
}

func joinOrNone(items []string) string {
	var kept []string
	for _, it := range items {
		if it = oneLine(it); it != "" {
			kept = append(kept, it)
		}
	}
	return orNone(strings.Join(kept, "; "))
}

// resumedUntouched reports a checkpoint a session resumed (or took over)
// that has made no progress since.
func resumedUntouched(c *ckpt.Checkpoint) bool { return c.ResumesWithoutProgress > 0 }
