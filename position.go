package ckpt

import (
	"fmt"
	"strings"
)

// Position is where a checkpoint's work stands: "task N of M" and the
// percentage every view shows. It is the one rule for both; the progress
// file, the tracker comment, the continuation prompt, ckpt status and the
// MCP views all read it from (*Checkpoint).Position.
type Position struct {
	// Step is the index in Steps of the current step, -1 when there is
	// none (no steps, or every step finished).
	Step int `json:"step"`
	// N is the current task's number, 1-based; 0 when there is no current
	// task. With steps it is Step+1; without, Done+1 while Done < Total.
	N int `json:"n"`
	// M is the number of tasks: the number of steps, else Progress.Total.
	M int `json:"m"`
	// Done counts the finished tasks (done or skipped steps).
	Done int `json:"done"`
	// Percent is Percent(Done, M), or 100 for a done checkpoint without
	// any count.
	Percent int `json:"percent"`
}

// AllDone reports whether there are tasks and every one is finished.
func (p Position) AllDone() bool { return p.M > 0 && p.Done >= p.M }

// Position returns where c's work stands. The current step is, in order:
// the in-progress step that CurrentStep names (by ID or title), the first
// in-progress step, the unfinished step CurrentStep names, the first
// unfinished step (pending or failed); none when every step is finished.
func (c *Checkpoint) Position() Position {
	p := Position{Step: c.CurrentStepIndex()}
	if len(c.Steps) > 0 {
		p.M = len(c.Steps)
		for _, s := range c.Steps {
			if s.Status.Finished() {
				p.Done++
			}
		}
		p.N = p.Step + 1
	} else {
		p.M, p.Done = c.Progress.Total, min(c.Progress.Done, c.Progress.Total)
		if p.Done < p.M {
			p.N = p.Done + 1
		}
	}
	switch {
	case p.M > 0:
		p.Percent = Percent(p.Done, p.M)
	case c.Status == StatusDone:
		p.Percent = 100
	}
	return p
}

// CurrentStepIndex returns the index of the current step as Position
// defines it, or -1.
func (c *Checkpoint) CurrentStepIndex() int {
	named := c.namedStep(c.CurrentStep)
	if named >= 0 && c.Steps[named].Status == StepInProgress {
		return named
	}
	for i, s := range c.Steps {
		if s.Status == StepInProgress {
			return i
		}
	}
	if named >= 0 && !c.Steps[named].Status.Finished() {
		return named
	}
	for i, s := range c.Steps {
		if !s.Status.Finished() {
			return i
		}
	}
	return -1
}

// namedStep returns the index of the step whose ID or title is text, or -1.
func (c *Checkpoint) namedStep(text string) int {
	if text == "" {
		return -1
	}
	if i := c.StepIndex(text); i >= 0 {
		return i
	}
	for i, s := range c.Steps {
		if s.Title == text {
			return i
		}
	}
	return -1
}

// Percent is done out of total as a whole percentage, rounded half up,
// except that unfinished work never shows 100 and started work never 0
// (1 of 1,000 is 1%, 999 of 1,000 is 99%). It is 0 when total <= 0.
// Every view that prints a percentage of tasks uses it.
func Percent(done, total int) int {
	if total <= 0 || done <= 0 {
		return 0
	}
	if done >= total {
		return 100
	}
	p := int((200*int64(done) + int64(total)) / (2 * int64(total)))
	return min(max(p, 1), 99)
}

// StepNotFoundError is the refusal of a change to a step that the
// checkpoint does not have, when the change asked for an existing step
// (StepChange.MustExist). It wraps ErrInvalid.
type StepNotFoundError struct {
	ID   string // the checkpoint
	Step string // the step asked for
	// Suggest lists the checkpoint's steps whose IDs are closest to Step,
	// best first; empty when none is close.
	Suggest []string
	// Steps lists every step ID the checkpoint has.
	Steps []string
}

func (e *StepNotFoundError) Error() string {
	msg := fmt.Sprintf("no step %q in %s", e.Step, e.ID)
	switch {
	case len(e.Suggest) > 0:
		msg += "; did you mean " + strings.Join(quoteAll(e.Suggest), " or ") + "?"
	case len(e.Steps) == 0:
		msg += "; it has no steps"
	default:
		msg += "; its steps are " + strings.Join(quoteAll(e.Steps), ", ")
	}
	return msg
}

func (e *StepNotFoundError) Unwrap() error { return ErrInvalid }

func quoteAll(list []string) []string {
	out := make([]string, len(list))
	for i, s := range list {
		out[i] = fmt.Sprintf("%q", s)
	}
	return out
}

// maxStepsListed bounds the step IDs a StepNotFoundError carries.
const maxStepsListed = 20

// stepNotFound builds the refusal for step in c, suggesting the step IDs
// (or titles) within a small edit distance of it, or equal ignoring case.
func stepNotFound(c *Checkpoint, step string) *StepNotFoundError {
	e := &StepNotFoundError{ID: c.ID, Step: step}
	best := -1
	want := strings.ToLower(step)
	for _, s := range c.Steps {
		if len(e.Steps) < maxStepsListed {
			e.Steps = append(e.Steps, s.ID)
		}
		d := editDistance(want, strings.ToLower(s.ID))
		if s.Title != "" {
			d = min(d, editDistance(want, strings.ToLower(s.Title)))
		}
		if d > max(1, len([]rune(step))/3) {
			continue
		}
		switch {
		case best < 0 || d < best:
			best, e.Suggest = d, []string{s.ID}
		case d == best && len(e.Suggest) < 3:
			e.Suggest = append(e.Suggest, s.ID)
		}
	}
	return e
}

// editDistance is the Levenshtein distance between a and b, in runes.
func editDistance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	if len(ra) > 200 || len(rb) > 200 {
		if a == b {
			return 0
		}
		return max(len(ra), len(rb))
	}
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(rb)]
}

// CheckProgressPatch refuses a Patch that sets progress on a checkpoint
// with steps, where progress is derived from the steps and the figure
// would be ignored. It wraps ErrInvalid.
func CheckProgressPatch(c *Checkpoint, p Patch) error {
	if p.Progress != nil && len(c.Steps) > 0 {
		pos := c.Position()
		return fmt.Errorf("%w: %s has %d steps (%d done): its progress is derived from them, so progress %d/%d would be ignored; mark steps done, skipped or pending instead",
			ErrInvalid, c.ID, pos.M, pos.Done, p.Progress.Done, p.Progress.Total)
	}
	return nil
}
