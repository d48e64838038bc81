package plan

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sort"
	"time"
)

// StateVersion is the version of the state.json schema this package writes.
const StateVersion = 2

// Phase statuses of state.json.
const (
	PhasePending    = "pending"
	PhaseInProgress = "in_progress"
	PhaseCompleted  = "completed"
)

// UnphasedKey is the state.json phase key of the tasks that stand before the
// first CHECKPOINT marker (their Phase is ""), since a JSON key "" is a trap
// for every reader.
const UnphasedKey = "unphased"

// State is .checkpoint/state.json, the document's CheckpointState (version
// 2). Field names and shapes are the document's; Ckpt is ckpt's one
// addition, and keys ckpt does not know are kept in Extra and written back.
type State struct {
	Version        int                    `json:"version"`
	PlanID         string                 `json:"planId"`
	PlanPath       string                 `json:"planPath"`
	LastCheckpoint time.Time              `json:"lastCheckpoint"`
	Checksum       string                 `json:"checksum"`
	Progress       StateProgress          `json:"progress"`
	Phases         map[string]*PhaseState `json:"phases"`
	CurrentPhase   *string                `json:"currentPhase"`
	CurrentTask    *string                `json:"currentTask"`
	Blockers       []string               `json:"blockers"`
	Decisions      []DecisionEntry        `json:"decisions"`
	SessionNotes   *string                `json:"sessionNotes"`
	Agents         map[string]*AgentState `json:"agents"`
	// Ckpt is what ckpt needs beyond the document's schema.
	Ckpt *Bookkeeping `json:"ckpt,omitempty"`
	// Extra holds top-level keys written by other tools, verbatim.
	Extra map[string]json.RawMessage `json:"-"`
}

// StateProgress is state.json's progress summary.
type StateProgress struct {
	TotalTasks     int     `json:"totalTasks"`
	CompletedTasks int     `json:"completedTasks"`
	Percentage     float64 `json:"percentage"`
}

// PhaseState is one phase in state.json.
type PhaseState struct {
	Status      string                     `json:"status"`
	StartedAt   *time.Time                 `json:"startedAt,omitempty"`
	CompletedAt *time.Time                 `json:"completedAt,omitempty"`
	Tasks       map[string]*TaskState      `json:"tasks"`
	Acceptance  map[string]*CriterionState `json:"acceptance"`
}

// TaskState is one task in state.json. CompletedBy is "main",
// "subagent:{type}" or "team:{id}".
type TaskState struct {
	Done        bool       `json:"done"`
	CompletedAt *time.Time `json:"completedAt,omitempty"`
	CompletedBy string     `json:"completedBy,omitempty"`
}

// CriterionState is one acceptance criterion in state.json.
type CriterionState struct {
	Met        bool       `json:"met"`
	VerifiedAt *time.Time `json:"verifiedAt,omitempty"`
}

// DecisionEntry is one decision in state.json.
type DecisionEntry struct {
	Time     time.Time `json:"time"`
	Decision string    `json:"decision"`
	Reason   string    `json:"reason,omitempty"`
}

// AgentState is one agent in state.json.
type AgentState struct {
	Type           string    `json:"type"`
	AssignedTasks  []string  `json:"assignedTasks"`
	CompletedTasks []string  `json:"completedTasks"`
	LastActive     time.Time `json:"lastActive"`
}

// Bookkeeping is ckpt's addition to state.json, under the key "ckpt".
type Bookkeeping struct {
	// Checkpoints counts the checkpoints (syncs) made so far; recovery.json
	// is written at every fifth.
	Checkpoints int `json:"checkpoints"`
	// BlockersSince is when each blocker text was first seen, so that a
	// blocker keeps its age across syncs (the document's blockers are bare
	// strings).
	BlockersSince map[string]time.Time `json:"blockersSince,omitempty"`
}

// Recovery is .checkpoint/recovery.json: a copy of the state and why it was
// made.
type Recovery struct {
	SavedAt time.Time `json:"savedAt"`
	Reason  string    `json:"reason"`
	State   *State    `json:"state"`
}

// stateKeys are the top-level keys State decodes itself; others go to Extra.
var stateKeys = []string{"version", "planId", "planPath", "lastCheckpoint", "checksum", "progress", "phases",
	"currentPhase", "currentTask", "blockers", "decisions", "sessionNotes", "agents", "ckpt"}

// MarshalJSON writes the state with its Extra keys after the known ones.
func (s *State) MarshalJSON() ([]byte, error) {
	type plain State
	b, err := json.Marshal((*plain)(s))
	if err != nil || len(s.Extra) == 0 {
		return b, err
	}
	keys := make([]string, 0, len(s.Extra))
	for k := range s.Extra {
		if !slices.Contains(stateKeys, k) {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	buf := bytes.NewBuffer(b[:len(b)-1])
	for _, k := range keys {
		kb, _ := json.Marshal(k)
		buf.WriteByte(',')
		buf.Write(kb)
		buf.WriteByte(':')
		buf.Write(s.Extra[k])
	}
	buf.WriteByte('}')
	return buf.Bytes(), nil
}

// UnmarshalJSON reads a state, keeping the keys it does not know in Extra.
func (s *State) UnmarshalJSON(b []byte) error {
	type plain State
	var p plain
	if err := json.Unmarshal(b, &p); err != nil {
		return err
	}
	var all map[string]json.RawMessage
	if err := json.Unmarshal(b, &all); err != nil {
		return err
	}
	for _, k := range stateKeys {
		delete(all, k)
	}
	*s = State(p)
	if len(all) > 0 {
		s.Extra = all
	}
	return nil
}

// ErrCorrupt is wrapped by the errors DecodeState and DecodeRecovery return
// for a file that is not a usable state.
var ErrCorrupt = errors.New("corrupt")

// DecodeState reads state.json. An empty file, invalid JSON, a shape that
// does not fit the schema, or a version other than 2 is an error wrapping
// ErrCorrupt that says which.
func DecodeState(b []byte) (*State, error) {
	if len(bytes.TrimSpace(b)) == 0 {
		return nil, fmt.Errorf("%w: the file is empty", ErrCorrupt)
	}
	var s State
	if err := json.Unmarshal(b, &s); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrCorrupt, err)
	}
	if err := s.validate(); err != nil {
		return nil, err
	}
	return &s, nil
}

func (s *State) validate() error {
	if s.Version != StateVersion {
		return fmt.Errorf("%w: version %d, want %d", ErrCorrupt, s.Version, StateVersion)
	}
	for id, ph := range s.Phases {
		if ph == nil {
			return fmt.Errorf("%w: phase %q is null", ErrCorrupt, id)
		}
		for tid, t := range ph.Tasks {
			if t == nil {
				return fmt.Errorf("%w: task %q of phase %q is null", ErrCorrupt, tid, id)
			}
		}
		for cid, c := range ph.Acceptance {
			if c == nil {
				return fmt.Errorf("%w: criterion %q of phase %q is null", ErrCorrupt, cid, id)
			}
		}
	}
	for id, a := range s.Agents {
		if a == nil {
			return fmt.Errorf("%w: agent %q is null", ErrCorrupt, id)
		}
	}
	return nil
}

// DecodeRecovery reads recovery.json; a file without a valid state is an
// error wrapping ErrCorrupt.
func DecodeRecovery(b []byte) (*Recovery, error) {
	if len(bytes.TrimSpace(b)) == 0 {
		return nil, fmt.Errorf("%w: the file is empty", ErrCorrupt)
	}
	var r Recovery
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrCorrupt, err)
	}
	if r.State == nil {
		return nil, fmt.Errorf("%w: it holds no state", ErrCorrupt)
	}
	if err := r.State.validate(); err != nil {
		return nil, fmt.Errorf("its state: %w", err)
	}
	return &r, nil
}

// Checksum is the document's computeChecksum: "sha256:" and the first 16
// hex digits of the SHA-256 of the plan's bytes.
func Checksum(planContent []byte) string {
	sum := sha256.Sum256(planContent)
	return "sha256:" + hex.EncodeToString(sum[:])[:16]
}

// taskIndex maps every task ID to its state (the first phase in key order
// that has it), so a lookup per task keeps a sync linear in the plan's
// size. A nil State gives an empty index.
func (s *State) taskIndex() map[string]*TaskState {
	if s == nil {
		return map[string]*TaskState{}
	}
	keys := make([]string, 0, len(s.Phases))
	n := 0
	for k, ph := range s.Phases {
		keys = append(keys, k)
		n += len(ph.Tasks)
	}
	sort.Strings(keys)
	out := make(map[string]*TaskState, n)
	for _, k := range keys {
		for id, t := range s.Phases[k].Tasks {
			if _, ok := out[id]; !ok {
				out[id] = t
			}
		}
	}
	return out
}

// criterion returns the state of criterion id in phase key, or nil.
func (s *State) criterion(phaseKey, id string) *CriterionState {
	if s == nil || s.Phases[phaseKey] == nil {
		return nil
	}
	return s.Phases[phaseKey].Acceptance[id]
}

// doneTasks counts the tasks marked done.
func (s *State) doneTasks() int {
	n := 0
	for _, ph := range s.Phases {
		for _, t := range ph.Tasks {
			if t.Done {
				n++
			}
		}
	}
	return n
}

// phaseKey is the state.json key of a plan phase ID.
func phaseKey(id string) string {
	if id == "" {
		return UnphasedKey
	}
	return id
}

// encodeState renders a state as state.json's bytes: indented, newline at
// the end.
func encodeState(v any) ([]byte, error) {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}
