package plan

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/gofrs/flock"

	ckpt "github.com/ckpt-dev/ckpt"
	"github.com/ckpt-dev/ckpt/internal/atomicfile"
)

// CheckpointDir is the directory beside plan.md that holds the bookkeeping.
const CheckpointDir = ".checkpoint"

// Where a state came from, in SyncResult.Recovered and the history lines.
const (
	FromRecovery = "recovery.json"
	FromReparse  = "plan.md_reparse"
)

// Option adjusts a Sync.
type Option func(*syncConfig)

type syncConfig struct {
	by          string
	notes       *string
	recovery    string
	assign      assignment
	hint        *ckpt.Checkpoint
	lockTimeout time.Duration
}

// CompletedBy sets who is credited with the tasks this sync finds newly
// checked: "main" (the default), "subagent:{type}" or "team:{id}".
func CompletedBy(who string) Option { return func(c *syncConfig) { c.by = who } }

// AssignTo adds tasks to agent's assignedTasks in state.json's agents
// ("subagent:{type}" for a subagent given them; see TasksNamedIn).
func AssignTo(agent string, tasks []string) Option {
	return func(c *syncConfig) { c.assign = assignment{agent, tasks} }
}

// SessionNotes replaces state.json's sessionNotes (the document's
// SessionEnd/Compact checkpoint "with session notes").
func SessionNotes(text string) Option { return func(c *syncConfig) { c.notes = &text } }

// RecoveryPoint makes this sync write recovery.json with the given reason
// (the document's example is "pre_subagent_spawn"), whatever the count.
func RecoveryPoint(reason string) Option { return func(c *syncConfig) { c.recovery = reason } }

// SyncResult is what a Sync did.
type SyncResult struct {
	// PlanPath is the absolute path of plan.md; ID the checkpoint ID its
	// directory suggests.
	PlanPath, ID string
	// State is the state now in state.json; when plan.md could not be read
	// it is the last known state the sync fell back to.
	State *State
	// Plan is what plan.md says; nil when it could not be read.
	Plan *Plan
	// Checkpoint is the state for ckpt to store. It is nil when plan.md
	// could not be read: the stored checkpoint is then the last known one.
	Checkpoint *ckpt.Checkpoint
	// NewlyCompleted, Reopened and NewlyMet are task and criterion IDs whose
	// boxes changed since the last checkpoint; PhasesCompleted the phases
	// this sync found newly completed.
	NewlyCompleted, Reopened, NewlyMet, PhasesCompleted []string
	// Events are the lines appended to history.jsonl.
	Events []Event
	// Recovered is where the previous state came from when state.json was
	// not usable: FromRecovery or FromReparse; "" when it was.
	Recovered string
	// RecoverySaved is the reason recovery.json was written, or "".
	RecoverySaved string
	// PlanError is why plan.md could not be read or parsed; the sync then
	// fell back to the last known state and wrote nothing but history.
	PlanError error
	// Warnings are the parser's and the sync's remarks, one line each.
	Warnings []string
}

// prior is the previous state as the document's error chain finds it.
type prior struct {
	state    *State
	source   string // stateFile, FromRecovery, or "" when there is none
	lost     bool   // bookkeeping existed but neither file was usable
	events   []Event
	stateErr error // why state.json was not used (nil when missing)
}

// readPrior follows the chain: state.json; if it is corrupt (or gone while
// other bookkeeping is there), recovery.json; if that is unusable too, no
// state at all and a full recovery from plan.md.
func readPrior(cdir string, now time.Time) prior {
	var p prior
	b, err := os.ReadFile(filepath.Join(cdir, stateFile))
	missing := errors.Is(err, fs.ErrNotExist)
	if err == nil {
		if p.state, err = DecodeState(b); err == nil {
			p.source = stateFile
			return p
		}
	}
	if !missing {
		p.stateErr = fmt.Errorf("state.json: %w", err)
	}
	rb, rerr := os.ReadFile(filepath.Join(cdir, recoveryFile))
	rmissing := errors.Is(rerr, fs.ErrNotExist)
	var rec *Recovery
	if rerr == nil {
		rec, rerr = DecodeRecovery(rb)
	}
	why := "state.json is missing"
	if p.stateErr != nil {
		why = p.stateErr.Error()
	}
	if rerr == nil {
		p.state, p.source = rec.State, FromRecovery
		n := rec.State.doneTasks()
		p.events = append(p.events,
			Event{TS: now, Event: EventStateCorrupted, RestoredFrom: FromRecovery, Error: why},
			Event{TS: now, Event: EventSessionRecovered, From: FromRecovery, TasksRestored: &n})
		return p
	}
	if missing && rmissing && !hadState(cdir) {
		return p // nothing was ever recorded: a first checkpoint
	}
	p.lost = true
	if !rmissing {
		why += "; recovery.json: " + rerr.Error()
	} else {
		why += "; recovery.json is missing"
	}
	p.events = append(p.events, Event{TS: now, Event: EventFullRecovery, Source: FromReparse, Error: why})
	return p
}

// hadState reports whether the history shows a state was ever made: it
// holds a checkpoint_created or full_recovery line (lines such as
// subagent_started can come before the first checkpoint).
func hadState(cdir string) bool {
	events, _, _ := ReadHistory(filepath.Join(cdir, historyFile))
	for _, e := range events {
		if e.Event == EventCheckpointCreated || e.Event == EventFullRecovery {
			return true
		}
	}
	return false
}

// readPlan reads and parses plan.md; the error says which step failed.
func readPlan(path string) ([]byte, *Plan, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, nil, fmt.Errorf("reading plan: %w", err)
	}
	p, err := Parse(data)
	if err != nil {
		return data, nil, fmt.Errorf("parsing %s: %w", path, err)
	}
	return data, p, nil
}

// Sync makes a checkpoint of the plan at planPath: it parses plan.md (the
// source of truth), derives the version-2 state, appends what changed to
// .checkpoint/history.jsonl, writes .checkpoint/state.json, and writes
// .checkpoint/recovery.json on the first checkpoint, every RecoveryEvery
// checkpoints, when a phase completes, after a recovery, and when
// RecoveryPoint asks. Every file is durable when Sync returns.
//
// It follows the document's error chain: a checksum different from the
// state's means plan.md changed and is re-parsed (checksum_mismatch); a
// plan.md that cannot be read or parsed leaves the last known state in
// place (parse_error, SyncResult.PlanError set, a nil error); a corrupt
// state.json is replaced from recovery.json (state_corrupted,
// session_recovered); with both corrupt the state is rebuilt from plan.md,
// taking completion times from history.jsonl where it has them
// (full_recovery). Sync fails only when nothing usable is left (plan.md
// unreadable and no valid state), when the directory's state belongs to a
// plan with another file name, or when a file cannot be written.
//
// Times are kept to the second, in UTC; a zero now means time.Now().
// Concurrent Syncs and SetTasks of one plan are serialised by a lock file,
// .checkpoint/lock (a kernel lock, released if the process dies).
func Sync(planPath string, now time.Time, opts ...Option) (*SyncResult, error) {
	cfg := syncConfig{by: "main", lockTimeout: 30 * time.Second}
	for _, o := range opts {
		o(&cfg)
	}
	abs, err := filepath.Abs(planPath)
	if err != nil {
		return nil, fmt.Errorf("plan path %s: %w", planPath, err)
	}
	cdir := filepath.Join(filepath.Dir(abs), CheckpointDir)
	if !isDir(cdir) {
		if _, _, err := readPlan(abs); err != nil {
			return nil, fmt.Errorf("%w, and there is no %s beside it to fall back to", err, CheckpointDir)
		}
		if err := os.MkdirAll(cdir, 0o755); err != nil {
			return nil, fmt.Errorf("creating %s: %w", cdir, err)
		}
	}
	unlock, err := lockDir(cdir, cfg.lockTimeout)
	if err != nil {
		return nil, err
	}
	defer unlock()
	return syncLocked(abs, now, cfg)
}

// syncLocked is Sync once .checkpoint exists and its lock is held.
func syncLocked(abs string, now time.Time, cfg syncConfig) (*SyncResult, error) {
	if now.IsZero() {
		now = time.Now()
	}
	now = now.UTC().Truncate(time.Second)
	dir := filepath.Dir(abs)
	cdir := filepath.Join(dir, CheckpointDir)
	res := &SyncResult{PlanPath: abs, ID: suggestDirID(dir)}
	data, plan, planErr := readPlan(abs)
	p := readPrior(cdir, now)
	if p.state != nil && p.state.PlanPath != "" && filepath.Base(p.state.PlanPath) != filepath.Base(abs) {
		return nil, fmt.Errorf("%s belongs to %s, not %s: sync that plan, or give this one its own directory",
			filepath.Join(cdir, stateFile), p.state.PlanPath, abs)
	}
	res.Events = append(res.Events, p.events...)
	if p.source == FromRecovery {
		res.Recovered = FromRecovery
	} else if p.lost {
		res.Recovered = FromReparse
	}

	if planErr != nil {
		return syncFallback(res, cdir, p, planErr, now)
	}
	res.Plan = plan
	res.Warnings = append(res.Warnings, plan.Warnings...)
	sum := Checksum(data)
	if p.state != nil && p.state.Checksum != sum {
		res.Events = append(res.Events, Event{TS: now, Event: EventChecksumMismatch, Action: "reparse", StateChecksum: p.state.Checksum, PlanChecksum: sum})
	}
	if p.state == nil && !p.lost {
		res.Events = append(res.Events, Event{TS: now, Event: EventCheckpointCreated, PlanID: filepath.Base(dir)})
	}
	in := deriveInput{plan: plan, planID: filepath.Base(dir), planPath: abs, checksum: sum, prev: p.state, now: now, by: cfg.by, notes: cfg.notes, assign: cfg.assign}
	in.known, in.logged = knownTimes(cdir, p, cfg, res)
	state, ch := derive(in)
	res.State = state
	res.NewlyCompleted, res.Reopened, res.NewlyMet, res.PhasesCompleted = ch.completed, ch.reopened, ch.met, ch.phasesCompleted
	res.Events = append(res.Events, changeEvents(ch, now, cfg.by, in.known)...)
	if ch.unknownTimes > 0 {
		res.Warnings = append(res.Warnings, fmt.Sprintf("%d task(s) were already checked when tracking began; their completion times are unknown", ch.unknownTimes))
	}
	if n := len(plan.Unmarked); n > 0 {
		res.Warnings = append(res.Warnings, fmt.Sprintf("%d checkbox(es) have no <!-- TASK: id --> marker and are not tracked; add one to each to track it", n))
	}
	res.RecoverySaved = recoveryReason(cfg, p, ch, state)
	if err := writeBookkeeping(cdir, res.Events, state, res.RecoverySaved, now); err != nil {
		return nil, err
	}
	res.Checkpoint = ToCheckpoint(plan, state, res.ID)
	return res, nil
}

// knownTimes returns the completion times a derivation cannot take from the
// prior state. fromElsewhere (deriveInput.known) holds, after a full
// recovery, what history.jsonl records, merged with the hint checkpoint's
// when there is one; logged holds, after a recovery from recovery.json, what
// history.jsonl logged since. A history that cannot be read adds a warning
// to res and counts as empty.
func knownTimes(cdir string, p prior, cfg syncConfig, res *SyncResult) (fromElsewhere, logged known) {
	if p.lost {
		events, _, err := ReadHistory(filepath.Join(cdir, historyFile))
		if err != nil {
			res.Warnings = append(res.Warnings, fmt.Sprintf("history.jsonl could not be read for completion times: %v", err))
		}
		fromElsewhere = knownFromHistory(events)
	}
	if p.source == FromRecovery {
		// recovery.json can be older than the last checkpoint: what the
		// history logged since was done then, not now.
		events, _, err := ReadHistory(filepath.Join(cdir, historyFile))
		if err != nil {
			res.Warnings = append(res.Warnings, fmt.Sprintf("history.jsonl could not be read for what happened since recovery.json: %v", err))
		}
		logged = knownFromHistory(events)
	}
	if cfg.hint != nil {
		fromElsewhere = mergeKnown(fromElsewhere, knownFromCheckpoint(cfg.hint))
	}
	return fromElsewhere, logged
}

// recoveryReason says why this sync saves recovery.json (the event it
// records), or "" when it need not: a requested reason first, then a
// recovery, a new phase completion, the first checkpoint, or every
// RecoveryEvery checkpoints.
func recoveryReason(cfg syncConfig, p prior, ch changes, state *State) string {
	switch {
	case cfg.recovery != "":
		return cfg.recovery
	case p.source == FromRecovery:
		return EventStateCorrupted
	case p.lost:
		return EventFullRecovery
	case len(ch.phasesCompleted) > 0:
		return EventPhaseCompleted
	case p.state == nil:
		return EventCheckpointCreated
	case state.Ckpt.Checkpoints%RecoveryEvery == 0:
		return fmt.Sprintf("every_%d_checkpoints", RecoveryEvery)
	}
	return ""
}

// syncFallback is the parse-failure branch: keep the last known state, log
// why, and restore state.json if it came from recovery.json.
func syncFallback(res *SyncResult, cdir string, p prior, planErr error, now time.Time) (*SyncResult, error) {
	res.PlanError = planErr
	fallback := p.source
	if fallback == "" {
		fallback = "none"
	}
	res.Events = append(res.Events, Event{TS: now, Event: EventParseError, Fallback: fallback, Error: planErr.Error()})
	if p.state == nil {
		if err := appendHistory(cdir, res.Events); err != nil {
			return nil, fmt.Errorf("%w; and logging it failed: %v", planErr, err)
		}
		why := "nothing was ever recorded"
		if n := len(p.events); n > 0 {
			why = p.events[n-1].Error
		}
		return nil, fmt.Errorf("%w; and no usable state to fall back to (%s): restore plan.md, for example from git, then sync again", planErr, why)
	}
	res.State = p.state
	res.Warnings = append(res.Warnings, fmt.Sprintf("%v: kept the last known state from %s; fix plan.md and sync again", planErr, fallback))
	if err := appendHistory(cdir, res.Events); err != nil {
		return nil, err
	}
	if p.source == FromRecovery {
		if err := writeJSON(filepath.Join(cdir, stateFile), p.state); err != nil {
			return nil, err
		}
	}
	return res, nil
}

// writeBookkeeping appends the events, then replaces state.json and, when
// reason is set, recovery.json. The history goes first: a crash after it
// repeats a line at worst, never loses one.
func writeBookkeeping(cdir string, events []Event, state *State, reason string, now time.Time) error {
	if err := appendHistory(cdir, events); err != nil {
		return err
	}
	if err := writeJSON(filepath.Join(cdir, stateFile), state); err != nil {
		return err
	}
	if reason == "" {
		return nil
	}
	return writeJSON(filepath.Join(cdir, recoveryFile), &Recovery{SavedAt: now, Reason: reason, State: state})
}

func writeJSON(path string, v any) error {
	b, err := encodeState(v)
	if err != nil {
		return fmt.Errorf("encoding %s: %w", filepath.Base(path), err)
	}
	return atomicfile.WriteFile(path, b, 0o644)
}

// lockDir takes .checkpoint/lock, waiting up to timeout.
func lockDir(cdir string, timeout time.Duration) (func(), error) {
	l := flock.New(filepath.Join(cdir, lockFile))
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	ok, err := l.TryLockContext(ctx, 20*time.Millisecond)
	if err != nil && !errors.Is(err, context.DeadlineExceeded) {
		return nil, fmt.Errorf("locking %s: %w", l.Path(), err)
	}
	if !ok {
		return nil, fmt.Errorf("%s is held by another process for over %s: is another ckpt syncing this plan?", l.Path(), timeout)
	}
	return func() { l.Unlock() }, nil
}

// changeEvents turns a derivation's changes into history lines.
func changeEvents(ch changes, now time.Time, by string, k known) []Event {
	var out []Event
	for _, id := range ch.completed {
		out = append(out, Event{TS: now, Event: EventTaskCompleted, TaskID: id, By: byFor(k, id, by)})
	}
	for _, id := range ch.reopened {
		out = append(out, Event{TS: now, Event: EventTaskReopened, TaskID: id})
	}
	for _, id := range ch.met {
		out = append(out, Event{TS: now, Event: EventAcceptanceMet, CriteriaID: id})
	}
	for _, id := range ch.phasesCompleted {
		out = append(out, Event{TS: now, Event: EventPhaseCompleted, PhaseID: id})
	}
	for _, t := range ch.decisions {
		out = append(out, Event{TS: now, Event: EventDecisionAdded, Text: t})
	}
	for _, t := range ch.blockersAdded {
		out = append(out, Event{TS: now, Event: EventBlockerAdded, Text: t})
	}
	for _, t := range ch.blockersCleared {
		out = append(out, Event{TS: now, Event: EventBlockerCleared, Text: t})
	}
	return out
}

func byFor(k known, id, by string) string {
	if t, ok := k.tasks[id]; ok && t.CompletedBy != "" {
		return t.CompletedBy
	}
	return by
}

// load reads the plan's state as the document's SessionStart does, without
// writing anything: plan.md and state.json with the same checksum give
// state.json as it is; a different checksum gives the state re-derived from
// plan.md (a task checked since the last checkpoint has no completion time
// until a Sync records one); a plan.md that cannot be read gives the last
// known state; a corrupt state.json is read from recovery.json, and with
// both corrupt the state is re-derived from plan.md and history.jsonl.
//
// The events are the history lines a Sync would log for what load met.
// load fails only when neither plan.md nor any state is usable.
func load(planPath string) (*State, []Event, error) {
	abs, err := filepath.Abs(planPath)
	if err != nil {
		return nil, nil, fmt.Errorf("plan path %s: %w", planPath, err)
	}
	dir := filepath.Dir(abs)
	cdir := filepath.Join(dir, CheckpointDir)
	now := time.Now().UTC().Truncate(time.Second)
	p := readPrior(cdir, now)
	events := p.events
	data, plan, planErr := readPlan(abs)
	if planErr != nil {
		fallback := p.source
		if fallback == "" {
			fallback = "none"
		}
		events = append(events, Event{TS: now, Event: EventParseError, Fallback: fallback, Error: planErr.Error()})
		if p.state == nil {
			return nil, events, fmt.Errorf("%w; and no usable state in %s to fall back to", planErr, cdir)
		}
		return p.state, events, nil
	}
	sum := Checksum(data)
	if p.state != nil && p.state.Checksum == sum {
		return p.state, events, nil
	}
	if p.state != nil {
		events = append(events, Event{TS: now, Event: EventChecksumMismatch, Action: "reparse", StateChecksum: p.state.Checksum, PlanChecksum: sum})
	}
	in := deriveInput{plan: plan, planID: filepath.Base(dir), planPath: abs, checksum: sum, prev: p.state}
	if p.lost {
		h, _, _ := ReadHistory(filepath.Join(cdir, historyFile))
		in.known = knownFromHistory(h)
	}
	s, _ := derive(in)
	return s, events, nil
}
