package ckpt

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Status is the state of a checkpoint's work as a whole.
type Status string

// The seven statuses. Seed-protocol words map onto them with ParseStatus.
const (
	StatusPending    Status = "pending"
	StatusInProgress Status = "in_progress"
	StatusWaiting    Status = "waiting"
	StatusBlocked    Status = "blocked"
	StatusDone       Status = "done"
	StatusFailed     Status = "failed"
	StatusAbandoned  Status = "abandoned"
)

// Statuses lists every valid Status in lifecycle order.
var Statuses = []Status{StatusPending, StatusInProgress, StatusWaiting, StatusBlocked, StatusDone, StatusFailed, StatusAbandoned}

// Valid reports whether s is one of the seven statuses.
func (s Status) Valid() bool {
	for _, v := range Statuses {
		if s == v {
			return true
		}
	}
	return false
}

// Live reports whether a checkpoint with this status is expected to show
// signs of life, and so can go stale: in_progress, waiting or blocked.
func (s Status) Live() bool {
	return s == StatusInProgress || s == StatusWaiting || s == StatusBlocked
}

// Final reports whether the work has ended: done, failed or abandoned.
func (s Status) Final() bool {
	return s == StatusDone || s == StatusFailed || s == StatusAbandoned
}

// statusWord maps the words the seed protocols use onto the seven
// statuses. (A switch, not a map literal: Go builds a map literal at
// initialisation, in every process that links the package.)
func statusWord(k string) (Status, bool) {
	switch k {
	case "pending", "not_started", "not started", "new", "todo", "ready":
		return StatusPending, true
	case "in_progress", "in-progress", "in progress", "running", "active", "resuming",
		"started":
		return StatusInProgress, true
	case "waiting", "paused", "wait":
		return StatusWaiting, true
	case "blocked":
		return StatusBlocked, true
	case "done", "passed", "complete", "completed", "success", "succeeded", "finished":
		return StatusDone, true
	case "failed", "fail", "error", "crashed":
		return StatusFailed, true
	case "abandoned", "aborted", "cancelled", "canceled", "stale":
		return StatusAbandoned, true
	}
	return "", false
}

// ParseStatus maps a status word, in any case, onto a Status: the seven
// names themselves and the seed protocols' words (NOT_STARTED→pending,
// PASSED/COMPLETE/completed→done, PAUSED→waiting, …). The error wraps
// ErrInvalid and lists the accepted names.
func ParseStatus(word string) (Status, error) {
	w := strings.ToLower(strings.TrimSpace(word))
	if s, ok := statusWord(w); ok {
		return s, nil
	}
	names := make([]string, len(Statuses))
	for i, s := range Statuses {
		names[i] = string(s)
	}
	return "", fmt.Errorf("%w: unknown status %q: use one of %s", ErrInvalid, word, strings.Join(names, ", "))
}

// StepStatus is the state of one step.
type StepStatus string

// Step statuses.
const (
	StepPending    StepStatus = "pending"
	StepInProgress StepStatus = "in_progress"
	StepDone       StepStatus = "done"
	StepFailed     StepStatus = "failed"
	StepSkipped    StepStatus = "skipped"
)

// Valid reports whether s is a known step status.
func (s StepStatus) Valid() bool {
	switch s {
	case StepPending, StepInProgress, StepDone, StepFailed, StepSkipped:
		return true
	}
	return false
}

// Finished reports whether the step needs no more work: done or skipped.
func (s StepStatus) Finished() bool { return s == StepDone || s == StepSkipped }

// Checkpoint is the state of one unit of agent work: the fold of its history.
// Times are UTC. A zero time means "never". The JSON form (snake_case, RFC
// 3339 times) is the one `ckpt show --json` prints and state files hold.
type Checkpoint struct {
	ID     string   `json:"id"`
	Rev    int64    `json:"rev"` // number of events applied
	Parent string   `json:"parent,omitempty"`
	Labels []string `json:"labels,omitempty"`

	Agent   Agent   `json:"agent"`
	Session Session `json:"session"`

	Title       string `json:"title,omitempty"`
	TaskID      string `json:"task_id,omitempty"`
	Stage       string `json:"stage,omitempty"`
	Phase       string `json:"phase,omitempty"`
	CurrentStep string `json:"current_step,omitempty"`

	Status       Status `json:"status"`
	StatusReason string `json:"status_reason,omitempty"` // why it failed, waits, or was abandoned

	Steps      []Step      `json:"steps,omitempty"`
	Progress   Progress    `json:"progress"`
	Acceptance []Criterion `json:"acceptance,omitempty"`
	Decisions  []Decision  `json:"decisions,omitempty"`
	Blockers   []Blocker   `json:"blockers,omitempty"`
	Errors     []ErrorItem `json:"errors,omitempty"`

	Files   Files   `json:"files"`
	Context Context `json:"context"`
	Resume  Resume  `json:"resume"`
	Cycles  Cycles  `json:"cycles"`

	// ReviewScores holds named review scores; a nil value is a review not yet
	// given (sitebuilder (seed 003) writes null).
	ReviewScores map[string]*float64 `json:"review_scores,omitempty"`
	// Meta holds anything else, verbatim, so an imported file round-trips.
	Meta map[string]json.RawMessage `json:"meta,omitempty"`

	Heartbeat Heartbeat `json:"heartbeat"`
	// Code is where the code was when last recorded (EventCode); nil when
	// never recorded or not in a git repository.
	Code *CodeState `json:"code,omitempty"`
	// ResumesWithoutProgress counts resumes and takeovers since progress
	// last went up: a crash loop shows as a growing count.
	ResumesWithoutProgress int `json:"resumes_without_progress,omitempty"`
	// Archived is set when the checkpoint was archived (finished, crashed,
	// aborted); archived checkpoints are hidden from listings by default.
	Archived *Archive `json:"archived,omitempty"`
	// Messages are the messages told (EventTold) and not yet delivered
	// into the agent's context (EventDelivered), oldest first.
	Messages []Message `json:"messages,omitempty"`

	StartedAt   time.Time  `json:"started_at"`
	UpdatedAt   time.Time  `json:"updated_at"`
	CompletedAt *time.Time `json:"completed_at,omitempty"`
}

// Agent identifies who works on a checkpoint.
type Agent struct {
	ID   string `json:"id,omitempty"`
	Type string `json:"type,omitempty"` // e.g. primary, secondary, claude-code
	Name string `json:"name,omitempty"`
}

// Label is the one short name of an agent in every listing, report and
// alert (ckpt ls, status, stale, the MCP tools, the monitor's transitions):
// its ID, else its name, else "".
func (a Agent) Label() string {
	if a.ID != "" {
		return a.ID
	}
	return a.Name
}

// Session is one run of an agent on a checkpoint; a resume starts a new one.
type Session struct {
	ID        string    `json:"id,omitempty"`
	Number    int       `json:"number,omitempty"` // 1 for the first session
	StartedAt time.Time `json:"started_at,omitzero"`
}

// Step is one unit of a checkpoint's plan: the seeds' subtasks, tasks,
// completed/next steps and per-skill checkpoints (PLAN, EXECUTE, FIX…).
type Step struct {
	ID          string     `json:"id"`
	Title       string     `json:"title,omitempty"`
	Status      StepStatus `json:"status"`
	Phase       string     `json:"phase,omitempty"`
	StartedAt   *time.Time `json:"started_at,omitempty"`
	CompletedAt *time.Time `json:"completed_at,omitempty"`
	By          string     `json:"by,omitempty"` // "main", "subagent:<type>", an agent ID
	Output      string     `json:"output,omitempty"`
	Notes       string     `json:"notes,omitempty"`
	// DependsOn lists the IDs of steps that must finish before this one
	// (a client's "blocked by"); the IDs need not exist yet.
	DependsOn []string `json:"depends_on,omitempty"`
}

// Label returns the step's title, or its ID when it has none.
func (s Step) Label() string {
	if s.Title != "" {
		return s.Title
	}
	return s.ID
}

// Progress is done out of total. With steps it is derived from them (done
// and skipped steps count as done); without, it is set explicitly.
type Progress struct {
	Done    int     `json:"done"`
	Total   int     `json:"total"`
	Percent float64 `json:"percent"`
}

// Count is progress as one-line views print it: "1/3, 33%".
func (p Progress) Count() string {
	return strconv.Itoa(p.Done) + "/" + strconv.Itoa(p.Total) + ", " + strconv.FormatFloat(p.Percent, 'f', 0, 64) + "%"
}

// Criterion is one acceptance criterion.
type Criterion struct {
	ID         string     `json:"id"`
	Title      string     `json:"title,omitempty"`
	Met        bool       `json:"met"`
	VerifiedAt *time.Time `json:"verified_at,omitempty"`
}

// Decision records a choice and why it was made.
type Decision struct {
	At     time.Time `json:"at"`
	Text   string    `json:"text"`
	Reason string    `json:"reason,omitempty"`
}

// Blocker is something that stops the work; it is active until cleared.
type Blocker struct {
	ID        string     `json:"id"`
	Text      string     `json:"text"`
	Since     time.Time  `json:"since"`
	ClearedAt *time.Time `json:"cleared_at,omitempty"`
}

// Active reports whether the blocker has not been cleared.
func (b Blocker) Active() bool { return b.ClearedAt == nil }

// ErrorItem is an error the agent met; a blocking one stops the work.
type ErrorItem struct {
	At        time.Time  `json:"at"`
	Type      string     `json:"type,omitempty"`
	Message   string     `json:"message"`
	Blocking  bool       `json:"blocking,omitempty"`
	ClearedAt *time.Time `json:"cleared_at,omitempty"`
}

// Files lists the files the work created and modified, each once, in the
// order first recorded.
type Files struct {
	Created  []string `json:"created,omitempty"`
	Modified []string `json:"modified,omitempty"`
}

// Context records where a batch of work stands (sitebuilder (seed 003)).
type Context struct {
	LastProcessed string `json:"last_processed,omitempty"`
	NextToProcess string `json:"next_to_process,omitempty"`
	Notes         string `json:"notes,omitempty"`
	// LastMessage is where the agent stopped: its last message of the
	// last turn (the hooks' Stop), for the next session to read.
	LastMessage string `json:"last_message,omitempty"`
}

// Resume tells a new session how to continue.
type Resume struct {
	// Resumable is false when the work must not be resumed (agent-checkpoints' (seed 002)
	// can_resume, sitebuilder's (seed 003) resumable). A new checkpoint is resumable.
	Resumable    bool     `json:"resumable"`
	Instructions string   `json:"instructions,omitempty"`
	NextSteps    []string `json:"next_steps,omitempty"`
}

// Cycles bounds a fix or retry loop: Count may not pass Max when Max > 0.
type Cycles struct {
	Count int `json:"count"`
	Max   int `json:"max,omitempty"`
}

// Heartbeat records liveness. LastBeat comes from the store's liveness record,
// not from the history; Interval is how often the agent promised to beat.
type Heartbeat struct {
	LastBeat time.Time `json:"last_beat,omitzero"`
	Interval Duration  `json:"interval,omitempty"`
	// Presence is the client's last reported state, from the liveness
	// record like LastBeat (never from the history); nil when none.
	Presence *Presence `json:"presence,omitempty"`
}

// Archive says why and when a checkpoint was archived.
type Archive struct {
	Reason string    `json:"reason"` // complete, crashed, aborted, …
	At     time.Time `json:"at"`
	From   string    `json:"from,omitempty"` // the checkpoint this is a snapshot of
}

// DefaultInterval is the heartbeat interval when none is set (agent-checkpoints (seed 002)).
const DefaultInterval = 15 * time.Minute

// LastSeen is the later of the last heartbeat and the last update.
func (c *Checkpoint) LastSeen() time.Time {
	if c.Heartbeat.LastBeat.After(c.UpdatedAt) {
		return c.Heartbeat.LastBeat
	}
	return c.UpdatedAt
}

// ActiveBlockers returns the blockers not yet cleared.
func (c *Checkpoint) ActiveBlockers() []Blocker {
	var out []Blocker
	for _, b := range c.Blockers {
		if b.Active() {
			out = append(out, b)
		}
	}
	return out
}

// ActiveErrors returns the errors not yet cleared.
func (c *Checkpoint) ActiveErrors() []ErrorItem {
	var out []ErrorItem
	for _, e := range c.Errors {
		if e.ClearedAt == nil {
			out = append(out, e)
		}
	}
	return out
}

// PartiallyComplete reports a checkpoint marked done whose acceptance
// criteria are not all met (sitebuilder (seed 003), scenario 3).
func (c *Checkpoint) PartiallyComplete() bool {
	if c.Status != StatusDone {
		return false
	}
	for _, a := range c.Acceptance {
		if !a.Met {
			return true
		}
	}
	return false
}

// OpenSteps is the IDs of the steps not yet finished (neither done nor
// skipped), in plan order: what a checkpoint marked done leaves undone.
func (c *Checkpoint) OpenSteps() []string {
	var open []string
	for _, st := range c.Steps {
		if !st.Status.Finished() {
			open = append(open, st.ID)
		}
	}
	return open
}

// StepIndex returns the index of the step with the given ID, or -1.
func (c *Checkpoint) StepIndex(id string) int {
	for i := range c.Steps {
		if c.Steps[i].ID == id {
			return i
		}
	}
	return -1
}
