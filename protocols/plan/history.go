package plan

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/ckpt-dev/ckpt/internal/atomicfile"
)

// The history.jsonl event names. The first eleven are the document's; the
// rest are ckpt's, for changes the document's log has no word for.
const (
	EventCheckpointCreated = "checkpoint_created"
	EventTaskCompleted     = "task_completed"
	EventPhaseCompleted    = "phase_completed"
	EventChecksumMismatch  = "checksum_mismatch"
	EventParseError        = "parse_error"
	EventStateCorrupted    = "state_corrupted"
	EventFullRecovery      = "full_recovery"
	EventSessionRecovered  = "session_recovered"
	EventSubagentStarted   = "subagent_started"
	EventSubagentStopped   = "subagent_stopped"
	EventSessionCrash      = "session_crash"

	EventTaskReopened   = "task_reopened"
	EventAcceptanceMet  = "acceptance_met"
	EventDecisionAdded  = "decision_added"
	EventBlockerAdded   = "blocker_added"
	EventBlockerCleared = "blocker_cleared"
)

// Event is one line of history.jsonl. Fields an event does not use are
// left out of its line.
type Event struct {
	TS    time.Time `json:"ts"`
	Event string    `json:"event"`

	PlanID     string `json:"planId,omitempty"`
	TaskID     string `json:"taskId,omitempty"`
	PhaseID    string `json:"phaseId,omitempty"`
	CriteriaID string `json:"criteriaId,omitempty"`
	By         string `json:"by,omitempty"`
	Text       string `json:"text,omitempty"`

	// checksum_mismatch: {"action":"reparse"} and the two checksums.
	Action        string `json:"action,omitempty"`
	StateChecksum string `json:"stateChecksum,omitempty"`
	PlanChecksum  string `json:"planChecksum,omitempty"`
	// parse_error: {"fallback":"state.json"}.
	Fallback string `json:"fallback,omitempty"`
	// state_corrupted: {"restored_from":"recovery.json"}.
	RestoredFrom string `json:"restored_from,omitempty"`
	// full_recovery: {"source":"plan.md_reparse"}.
	Source string `json:"source,omitempty"`
	// session_recovered: {"from":"recovery.json","tasksRestored":7}.
	From          string `json:"from,omitempty"`
	TasksRestored *int   `json:"tasksRestored,omitempty"`
	// subagent_started: {"agentType":"fullstack","tasks":["auth"]};
	// subagent_stopped: {"agentType":"fullstack","completed":1}.
	AgentType string   `json:"agentType,omitempty"`
	Tasks     []string `json:"tasks,omitempty"`
	Completed *int     `json:"completed,omitempty"`
	// session_crash: {"lastKnownState":"recovery.json"}.
	LastKnownState string `json:"lastKnownState,omitempty"`
	// Error says what was wrong, for the error events.
	Error string `json:"error,omitempty"`
}

const (
	historyFile  = "history.jsonl"
	stateFile    = "state.json"
	recoveryFile = "recovery.json"
	lockFile     = "lock"
	// RecoveryEvery is how many checkpoints apart recovery.json is written
	// when nothing significant happens.
	RecoveryEvery = 5
)

// appendHistory appends events to history.jsonl, one JSON line each, and
// fsyncs the file (and its directory when it is new) before returning. A
// last line left without its newline by a crash elsewhere is closed first,
// so it stays one damaged line instead of gluing onto the next.
func appendHistory(dir string, events []Event) error {
	if len(events) == 0 {
		return nil
	}
	var buf bytes.Buffer
	for _, e := range events {
		b, err := json.Marshal(e)
		if err != nil {
			return fmt.Errorf("encoding %s event: %w", e.Event, err)
		}
		buf.Write(b)
		buf.WriteByte('\n')
	}
	path := filepath.Join(dir, historyFile)
	_, statErr := os.Stat(path)
	created := errors.Is(statErr, fs.ErrNotExist)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return fmt.Errorf("opening %s: %w", path, err)
	}
	defer f.Close()
	if info, err := f.Stat(); err == nil && info.Size() > 0 {
		last := make([]byte, 1)
		if _, err := f.ReadAt(last, info.Size()-1); err != nil {
			return fmt.Errorf("reading the end of %s: %w", path, err)
		}
		if last[0] != '\n' {
			buf = *bytes.NewBuffer(append([]byte{'\n'}, buf.Bytes()...))
		}
	}
	if _, err := f.Write(buf.Bytes()); err != nil {
		return fmt.Errorf("appending to %s: %w", path, err)
	}
	if err := f.Sync(); err != nil {
		return fmt.Errorf("syncing %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("closing %s: %w", path, err)
	}
	if created {
		return atomicfile.SyncDir(dir)
	}
	return nil
}

// ReadHistory reads history.jsonl leniently: lines that are not JSON
// objects with an event name (a torn last line, a hand edit) are skipped and
// counted in bad. A missing file is an empty history.
func ReadHistory(path string) (events []Event, bad int, err error) {
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, 0, nil
	}
	if err != nil {
		return nil, 0, err
	}
	defer f.Close()
	r := bufio.NewReader(f)
	for {
		line, err := r.ReadBytes('\n')
		if t := bytes.TrimSpace(line); len(t) > 0 {
			var e Event
			if json.Unmarshal(t, &e) != nil || e.Event == "" {
				bad++
			} else {
				events = append(events, e)
			}
		}
		if err == io.EOF {
			return events, bad, nil
		}
		if err != nil {
			return events, bad, fmt.Errorf("reading %s: %w", path, err)
		}
	}
}

// knownFromHistory collects what the history remembers about completions:
// the last task_completed of each task not reopened since, the last
// phase_completed of each phase, the last acceptance_met of each criterion
// and the first decision_added of each decision.
func knownFromHistory(events []Event) known {
	k := known{tasks: map[string]TaskState{}, criteria: map[string]time.Time{}, phases: map[string]time.Time{}, decided: map[string]time.Time{}}
	for _, e := range events {
		ts := e.TS.UTC()
		switch e.Event {
		case EventTaskCompleted:
			if e.TaskID != "" {
				k.tasks[e.TaskID] = TaskState{Done: true, CompletedAt: &ts, CompletedBy: e.By}
			}
		case EventTaskReopened:
			delete(k.tasks, e.TaskID)
		case EventPhaseCompleted:
			if e.PhaseID != "" {
				k.phases[e.PhaseID] = ts
			}
		case EventAcceptanceMet:
			if e.CriteriaID != "" {
				k.criteria[e.CriteriaID] = ts
			}
		case EventDecisionAdded:
			if _, ok := k.decided[e.Text]; !ok && e.Text != "" {
				k.decided[e.Text] = ts
			}
		}
	}
	return k
}

// appendEvents appends events to the plan's .checkpoint/history.jsonl
// durably, under the plan's lock, for what happens outside a Sync: the
// document's subagent_started, subagent_stopped and session_crash lines.
// An event without a time gets the current one; an event without a name is
// refused, and nothing is written. The .checkpoint directory is created if
// need be.
func appendEvents(planPath string, events ...Event) error {
	abs, err := filepath.Abs(planPath)
	if err != nil {
		return fmt.Errorf("plan path %s: %w", planPath, err)
	}
	out := make([]Event, len(events))
	for i, e := range events {
		if e.Event == "" {
			return fmt.Errorf("history event %d has no name: set Event, e.g. %q", i+1, EventSubagentStarted)
		}
		if e.TS.IsZero() {
			e.TS = time.Now()
		}
		e.TS = e.TS.UTC().Truncate(time.Second)
		out[i] = e
	}
	cdir := filepath.Join(filepath.Dir(abs), CheckpointDir)
	if err := os.MkdirAll(cdir, 0o755); err != nil {
		return fmt.Errorf("creating %s: %w", cdir, err)
	}
	unlock, err := lockDir(cdir, 30*time.Second)
	if err != nil {
		return err
	}
	defer unlock()
	return appendHistory(cdir, out)
}
