package ckpt

import "context"

// Report is what a check or a repair found (and, for a repair, did). Every
// backend that can check speaks it, so `ckpt check` reads the same on any
// store.
type Report struct {
	Checked  int       `json:"checked"`  // checkpoints examined
	Problems []Problem `json:"problems"` // in checkpoint order
}

// Problem is one finding of a check or a repair.
type Problem struct {
	// ID is the checkpoint, or the stored name of one that is not a valid
	// ID; "" for the store as a whole.
	ID       string   `json:"id"`
	Severity Severity `json:"severity"`
	What     string   `json:"what"`             // what is wrong, and for a repair what was done
	Repair   string   `json:"repair,omitempty"` // what fixes it, e.g. "ckpt repair ID"
	Fixed    bool     `json:"fixed,omitempty"`  // the repair fixed it
}

// Severity grades a Problem.
type Severity string

// Severities: an error breaks a MUST of docs/design.md (data is damaged or
// the store would lie); a warning breaks a SHOULD (repair mends it without
// losing anything).
const (
	SeverityError   Severity = "error"
	SeverityWarning Severity = "warning"
)

// Errors counts the problems of severity error that are not fixed.
func (r *Report) Errors() int {
	n := 0
	for _, p := range r.Problems {
		if p.Severity == SeverityError && !p.Fixed {
			n++
		}
	}
	return n
}

// Checker is a store that can verify itself. Check is read-only: it changes
// nothing stored, and it may run while writers work. ids limits it to those
// checkpoints; none means the whole store.
type Checker interface {
	Check(ctx context.Context, ids []string) (*Report, error)
}

// Repairer is a store that can mend what Check reports, never by dropping
// acknowledged data: whatever it removes it saves aside first.
type Repairer interface {
	Repair(ctx context.Context, ids []string) (*Report, error)
}

// Capabilities says what a store offers beyond the Store interface.
type Capabilities struct {
	Check  bool `json:"check"`
	Repair bool `json:"repair"`
}

// CapabilitiesOf reports what s offers, itself or through a store it
// wraps (see As).
func CapabilitiesOf(s Store) Capabilities {
	_, c := As[Checker](s)
	_, r := As[Repairer](s)
	return Capabilities{Check: c, Repair: r}
}
