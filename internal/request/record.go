package request

import (
	"fmt"
	"strings"

	ckpt "github.com/ckpt-dev/ckpt"
)

// Step changes one step: its status, title, phase, output, notes and who
// did it.
type Step struct {
	Step                        string          // the step's ID
	Status                      ckpt.StepStatus // "" leaves it alone (ParseStepStatus reads the words)
	Title, Phase, Output, Notes string
	// By is who did it; "" is the acting agent when the status changes.
	By string
	// Add lets Step be a new step, added at the end of the plan; without
	// it a step the checkpoint does not have is refused (a typo must not
	// add a step and count it done).
	Add bool
	// Actor is the acting agent, the default of By.
	Actor string
	// After adds steps this one waits for (blank entries dropped).
	After []string
}

// Build implements Request.
func (r Step) Build(n Names) (ckpt.EventType, any, error) {
	if strings.TrimSpace(r.Step) == "" {
		return "", nil, invalid("the step ID is empty: give the step's ID, e.g. research")
	}
	if r.Status != "" && !r.Status.Valid() {
		return "", nil, invalid("step status %q: use pending, in_progress, done, failed or skipped", r.Status)
	}
	by := r.By
	if by == "" && r.Status != "" {
		by = r.Actor
	}
	return ckpt.EventStep, ckpt.StepChange{
		ID: r.Step, MustExist: !r.Add, Title: r.Title, Status: r.Status, Phase: r.Phase, By: by, Output: r.Output, Notes: r.Notes,
		DependsOn: nonEmpty(r.After),
	}, nil
}

// Decision records a decision and why it was made.
type Decision struct{ Text, Reason string }

// Build implements Request.
func (r Decision) Build(Names) (ckpt.EventType, any, error) {
	if strings.TrimSpace(r.Text) == "" {
		return "", nil, invalid("the decision's text is empty: say what was decided")
	}
	return ckpt.EventDecision, ckpt.DecisionData{Text: r.Text, Reason: r.Reason}, nil
}

// Block records a blocker (the checkpoint becomes blocked); ID "" is the
// next of b1, b2, ….
type Block struct{ ID, Text string }

// Build implements Request.
func (r Block) Build(Names) (ckpt.EventType, any, error) {
	if strings.TrimSpace(r.Text) == "" {
		return "", nil, invalid("the blocker's text is empty: say what blocks the work")
	}
	return ckpt.EventBlocker, ckpt.BlockerChange{ID: r.ID, Text: r.Text}, nil
}

// Unblock clears blocker ID, or every active blocker when ID is "".
type Unblock struct{ ID string }

// Build implements Request.
func (r Unblock) Build(Names) (ckpt.EventType, any, error) {
	return ckpt.EventBlocker, ckpt.BlockerChange{ID: r.ID, Clear: true}, nil
}

// Error records an error met (a blocking one blocks the work), or with
// Clear clears every active error, or with Type set those of that type.
type Error struct {
	Message, Type string
	Blocking      bool
	Clear         bool
}

// Build implements Request. n names "message", "type", "blocking" and
// "clear".
func (r Error) Build(n Names) (ckpt.EventType, any, error) {
	if r.Clear {
		if r.Message != "" || r.Blocking {
			return "", nil, invalid("%s takes no message or %s: clear first, then record the new error", n.of("clear"), n.of("blocking"))
		}
		return ckpt.EventError, ckpt.ErrorChange{Clear: true, Type: r.Type}, nil
	}
	if strings.TrimSpace(r.Message) == "" {
		return "", nil, invalid("the error message is empty: give it as %s, or pass %s", n.of("message"), n.of("clear"))
	}
	return ckpt.EventError, ckpt.ErrorChange{Type: r.Type, Message: r.Message, Blocking: r.Blocking}, nil
}

// Accept marks acceptance criterion ID met (or not), adding it if new.
type Accept struct {
	ID, Title string
	Unmet     bool
}

// Build implements Request.
func (r Accept) Build(Names) (ckpt.EventType, any, error) {
	if strings.TrimSpace(r.ID) == "" {
		return "", nil, invalid("the criterion ID is empty: give one, e.g. tests")
	}
	return ckpt.EventAccept, ckpt.AcceptChange{ID: r.ID, Title: r.Title, Met: !r.Unmet}, nil
}

// Cycle counts one more fix or retry cycle.
type Cycle struct{ Note string }

// Build implements Request.
func (r Cycle) Build(Names) (ckpt.EventType, any, error) {
	return ckpt.EventCycle, ckpt.CycleChange{Note: r.Note}, nil
}

// Note appends a line to the context notes.
type Note struct{ Text string }

// Build implements Request.
func (r Note) Build(Names) (ckpt.EventType, any, error) {
	if strings.TrimSpace(r.Text) == "" {
		return "", nil, invalid("the note is empty: give its text")
	}
	return ckpt.EventNote, ckpt.Note{Text: r.Text}, nil
}

func fmtField(name string, err error) error { return fmt.Errorf("%s: %w", name, err) }

// Status sets the checkpoint's status; with NeedReason (waiting, failing,
// abandoning) a reason is required.
type Status struct {
	Status     ckpt.Status
	Reason     string
	NeedReason bool
}

// Build implements Request. n names "reason".
func (r Status) Build(n Names) (ckpt.EventType, any, error) {
	if r.NeedReason && strings.TrimSpace(r.Reason) == "" {
		return "", nil, invalid("say why with %s, e.g. %s \"waiting for review\"", n.of("reason"), n.of("reason"))
	}
	return ckpt.EventStatus, ckpt.StatusChange{Status: r.Status, Reason: r.Reason}, nil
}
