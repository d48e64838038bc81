package ckpt

import (
	"encoding/json"
	"fmt"
	"time"
)

// Event is one change to a checkpoint, one line of its history.
//
// Seq, Prev and Sum are set by the store when the event is appended: Seq is
// the revision the event creates (1 for the first), Prev the Sum of the event
// before it ("" for the first), Sum the checksum of the event's own line,
// which covers Prev and so chains the history (see EncodeLine).
type Event struct {
	Seq   int64     `json:"seq"`
	At    time.Time `json:"at"`
	Type  EventType `json:"type"`
	Actor Actor     `json:"actor,omitzero"`
	Key   string    `json:"key,omitempty"` // idempotency key
	// Trace is the W3C traceparent of the call that made the change (a
	// command or hook run under TRACEPARENT), so that telemetry puts the
	// change in the caller's trace; "" when there was none. Only a value
	// ParseTraceparent accepts is recorded.
	Trace string          `json:"trace,omitempty"`
	Data  json.RawMessage `json:"data,omitempty"`
	Prev  string          `json:"prev,omitempty"`
	Sum   string          `json:"-"` // written last on the line by EncodeLine
}

// Actor says who made a change.
type Actor struct {
	Agent   string `json:"agent,omitempty"`
	Session string `json:"session,omitempty"`
}

// EventType names what an event does; each has a payload type below.
type EventType string

// The event types and their Data payloads.
const (
	EventCreated   EventType = "created"         // Created
	EventUpdate    EventType = "update"          // Patch
	EventStatus    EventType = "status"          // StatusChange
	EventStep      EventType = "step"            // StepChange
	EventDecision  EventType = "decision"        // DecisionData
	EventBlocker   EventType = "blocker"         // BlockerChange
	EventError     EventType = "error"           // ErrorChange
	EventAccept    EventType = "accept"          // AcceptChange
	EventCycle     EventType = "cycle"           // CycleChange
	EventResumed   EventType = "session.resumed" // SessionChange
	EventTakenOver EventType = "taken_over"      // Takeover
	EventRestarted EventType = "restarted"       // Restart
	EventRestored  EventType = "restored"        // Snapshot
	EventImported  EventType = "imported"        // Snapshot
	EventSynced    EventType = "synced"          // Snapshot
	EventArchived  EventType = "archived"        // Archive
	EventNote      EventType = "note"            // Note
)

// Created is the payload of the first event of every checkpoint.
type Created struct {
	Patch
	Steps      []Step      `json:"steps,omitempty"`
	Acceptance []Criterion `json:"acceptance,omitempty"`
	Session    Session     `json:"session,omitzero"`
}

// Patch sets fields of a checkpoint; a nil or empty field is left alone.
// List fields that add (files, labels) never remove except where named.
type Patch struct {
	Title        *string `json:"title,omitempty"`
	TaskID       *string `json:"task_id,omitempty"`
	Parent       *string `json:"parent,omitempty"`
	Stage        *string `json:"stage,omitempty"`
	Phase        *string `json:"phase,omitempty"`
	CurrentStep  *string `json:"current_step,omitempty"`
	Status       *Status `json:"status,omitempty"`
	StatusReason *string `json:"status_reason,omitempty"`
	Agent        *Agent  `json:"agent,omitempty"`

	// Progress sets done/total explicitly; ignored while the checkpoint has steps.
	Progress *ProgressSet `json:"progress,omitempty"`

	AddLabels     []string `json:"add_labels,omitempty"`
	RemoveLabels  []string `json:"remove_labels,omitempty"`
	FilesCreated  []string `json:"files_created,omitempty"`
	FilesModified []string `json:"files_modified,omitempty"`

	LastProcessed *string `json:"last_processed,omitempty"`
	NextToProcess *string `json:"next_to_process,omitempty"`
	Notes         *string `json:"notes,omitempty"`
	// LastMessage sets context.last_message: where the agent stopped.
	LastMessage *string `json:"last_message,omitempty"`

	Resumable    *bool     `json:"resumable,omitempty"`
	Instructions *string   `json:"instructions,omitempty"`
	NextSteps    *[]string `json:"next_steps,omitempty"` // replaces the list

	MaxCycles    *int                `json:"max_cycles,omitempty"`
	ReviewScores map[string]*float64 `json:"review_scores,omitempty"` // set each named score
	// Meta sets each key; a JSON null value deletes the key.
	Meta     map[string]json.RawMessage `json:"meta,omitempty"`
	Interval *Duration                  `json:"interval,omitempty"`
}

// ProgressSet is an explicit progress count.
type ProgressSet struct {
	Done  int `json:"done"`
	Total int `json:"total"`
}

// StatusChange moves the checkpoint to a status, with an optional reason.
type StatusChange struct {
	Status Status `json:"status"`
	Reason string `json:"reason,omitempty"`
}

// StepChange creates or updates one step, found by ID. A step that does not
// exist yet is appended, unless MustExist is set: then the change is refused
// with a *StepNotFoundError. Empty fields leave the step's value alone.
type StepChange struct {
	ID        string     `json:"id"`
	MustExist bool       `json:"must_exist,omitempty"`
	Title     string     `json:"title,omitempty"`
	Status    StepStatus `json:"status,omitempty"`
	Phase     string     `json:"phase,omitempty"`
	By        string     `json:"by,omitempty"`
	Output    string     `json:"output,omitempty"`
	Notes     string     `json:"notes,omitempty"`
	// DependsOn adds step IDs this step waits for (kept once each, in
	// order); it never removes one.
	DependsOn []string `json:"depends_on,omitempty"`
}

// DecisionData records a decision.
type DecisionData struct {
	Text   string `json:"text"`
	Reason string `json:"reason,omitempty"`
}

// BlockerChange adds a blocker (Text set) or clears one (Clear with ID, or
// every active blocker when ID is empty). Adding a blocker sets the status
// to blocked; clearing the last one returns a blocked checkpoint to
// in_progress.
type BlockerChange struct {
	ID    string `json:"id,omitempty"`
	Text  string `json:"text,omitempty"`
	Clear bool   `json:"clear,omitempty"`
}

// ErrorChange records an error (Message set) or clears active errors
// (Clear): every one, or with Type set only those of that type. A blocking
// error sets the status to blocked.
type ErrorChange struct {
	Type     string `json:"type,omitempty"`
	Message  string `json:"message,omitempty"`
	Blocking bool   `json:"blocking,omitempty"`
	Clear    bool   `json:"clear,omitempty"`
}

// AcceptChange creates or updates an acceptance criterion, found by ID.
type AcceptChange struct {
	ID    string `json:"id"`
	Title string `json:"title,omitempty"`
	Met   bool   `json:"met"`
}

// CycleChange counts one more fix or retry cycle, refused past the maximum.
type CycleChange struct {
	Note string `json:"note,omitempty"`
}

// SessionChange starts a new session (resume): the number goes up by one.
type SessionChange struct {
	Session Session `json:"session"`
	Agent   *Agent  `json:"agent,omitempty"`
}

// Takeover hands the work to a new agent; the old state was archived as
// ArchivedAs.
type Takeover struct {
	From       Agent   `json:"from"`
	To         Agent   `json:"to"`
	Session    Session `json:"session"`
	ArchivedAs string  `json:"archived_as,omitempty"`
	Reason     string  `json:"reason,omitempty"`
}

// Restart starts the work from scratch: steps go back to pending, progress,
// decisions, blockers, errors, files and context are cleared. The old state
// was archived as ArchivedAs. Stage, when set, is the stage the work starts
// over from (RestartStage); the phase, which names the old stage, is
// cleared with it. A restart without one keeps the stage, as restarts
// recorded before the field did.
type Restart struct {
	ArchivedAs string  `json:"archived_as,omitempty"`
	Session    Session `json:"session"`
	Reason     string  `json:"reason,omitempty"`
	Stage      string  `json:"stage,omitempty"`
}

// Snapshot replaces the whole state (restore to a revision, import from a
// seed file, sync from plan.md). The checkpoint keeps its ID and revision
// count; Rev records the revision restored, if any.
type Snapshot struct {
	State  Checkpoint `json:"state"`
	Rev    int64      `json:"rev,omitempty"`
	Source string     `json:"source,omitempty"` // e.g. "agent-checkpoints:agent_checkpoints/a.json"
	// New makes the snapshot create the checkpoint: it is refused with
	// ErrExists if the checkpoint already exists (archive copies use it so
	// one can never overwrite another).
	New bool `json:"new,omitempty"`
}

// Note appends free text to the checkpoint's context notes.
type Note struct {
	Text string `json:"text"`
}

// NewEvent returns an event of type t with data marshalled as its payload.
// It fails only if data cannot be marshalled.
func NewEvent(t EventType, at time.Time, actor Actor, data any) (Event, error) {
	e := Event{Type: t, At: at.UTC(), Actor: actor}
	if data != nil {
		b, err := marshalJSON(data)
		if err != nil {
			return Event{}, fmt.Errorf("ckpt: encoding %s event: %w", t, err)
		}
		e.Data = b
	}
	return e, nil
}

// MustEvent is NewEvent for payloads that always marshal (the types above).
func MustEvent(t EventType, at time.Time, actor Actor, data any) Event {
	e, err := NewEvent(t, at, actor, data)
	if err != nil {
		panic(err)
	}
	return e
}
