package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/ckpt-dev/ckpt"
	"github.com/ckpt-dev/ckpt/internal/process"
	"github.com/ckpt-dev/ckpt/internal/render"
	"github.com/ckpt-dev/ckpt/internal/request"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// State is a checkpoint's state as `ckpt show --json` prints it: the JSON
// form of ckpt.Checkpoint (id, rev, status, steps, progress, decisions,
// blockers, files, heartbeat, …).
type State map[string]any

// StepInput is one step of a new checkpoint.
type StepInput struct {
	ID    string `json:"id" jsonschema:"the step's ID, unique in the checkpoint, e.g. research"`
	Title string `json:"title,omitempty" jsonschema:"what the step is, in a few words"`
}

// StartInput are ckpt_start's arguments.
type StartInput struct {
	ID        string      `json:"id" jsonschema:"the new checkpoint's ID: '/'-separated segments of letters, digits, '.', '_' and '-', e.g. kai-7/secondary-a"`
	Title     string      `json:"title,omitempty" jsonschema:"the goal of the work, in one line"`
	TaskID    string      `json:"task_id,omitempty" jsonschema:"the tracker's task or issue ID, e.g. CIA-123"`
	Parent    string      `json:"parent,omitempty" jsonschema:"the ID of a plan, epic or loop that groups this checkpoint"`
	Agent     string      `json:"agent,omitempty" jsonschema:"the agent doing the work, e.g. Secondary-A"`
	AgentType string      `json:"agent_type,omitempty" jsonschema:"the kind of agent, e.g. primary, secondary, claude-code"`
	Steps     []StepInput `json:"steps,omitempty" jsonschema:"the planned steps, in order"`
	Labels    []string    `json:"labels,omitempty" jsonschema:"labels to find the checkpoint by"`
	Interval  string      `json:"interval,omitempty" jsonschema:"how often the agent will send a heartbeat, e.g. 5m; default 15m"`
	Key       string      `json:"key,omitempty" jsonschema:"idempotency key: a call repeated with the same key writes nothing and returns the first call's result"`
}

// StateOutput is the result of a tool that writes: the checkpoint after the
// change.
type StateOutput struct {
	ID         string `json:"id" jsonschema:"the checkpoint ID"`
	Rev        int64  `json:"rev" jsonschema:"the checkpoint's revision after the change; pass it as if_rev to write only if nobody wrote in between"`
	Replayed   bool   `json:"replayed,omitempty" jsonschema:"true when the key had been used already and nothing was written"`
	Checkpoint State  `json:"checkpoint" jsonschema:"the checkpoint's state after the change, as ckpt show --json prints it"`
}

// ProgressInput is an explicit progress count.
type ProgressInput struct {
	Done  int `json:"done" jsonschema:"units done"`
	Total int `json:"total" jsonschema:"units in all"`
}

// UpdateInput are ckpt_update's arguments. Absent fields are left alone.
type UpdateInput struct {
	ID            string         `json:"id" jsonschema:"the checkpoint ID, e.g. kai-7/secondary-a"`
	IfRev         int64          `json:"if_rev,omitempty" jsonschema:"compare-and-swap: write only if the checkpoint is at this revision (rev from ckpt_show); a conflict changes nothing. 0 or absent: write unconditionally"`
	Key           string         `json:"key,omitempty" jsonschema:"idempotency key: a call repeated with the same key writes nothing and returns the first call's result"`
	Agent         string         `json:"agent,omitempty" jsonschema:"the agent making the change, recorded in the history"`
	Title         *string        `json:"title,omitempty" jsonschema:"the goal of the work"`
	TaskID        *string        `json:"task_id,omitempty" jsonschema:"the tracker's task or issue ID"`
	Parent        *string        `json:"parent,omitempty" jsonschema:"the ID of the grouping plan, epic or loop"`
	Stage         *string        `json:"stage,omitempty" jsonschema:"the stage, e.g. S2.P2"`
	Phase         *string        `json:"phase,omitempty" jsonschema:"the phase, e.g. EXECUTE"`
	CurrentStep   *string        `json:"current_step,omitempty" jsonschema:"what is being done now, in a few words"`
	Status        string         `json:"status,omitempty" jsonschema:"pending, in_progress, waiting, blocked, done, failed or abandoned (the seeds' words such as COMPLETE or PAUSED are accepted)"`
	StatusReason  *string        `json:"status_reason,omitempty" jsonschema:"why the status is what it is (waiting for what, failed how)"`
	Progress      *ProgressInput `json:"progress,omitempty" jsonschema:"explicit progress, for work without steps (refused while there are steps: progress follows them)"`
	AddLabels     []string       `json:"add_labels,omitempty" jsonschema:"labels to add"`
	RemoveLabels  []string       `json:"remove_labels,omitempty" jsonschema:"labels to remove"`
	FilesCreated  []string       `json:"files_created,omitempty" jsonschema:"files the work created (added to the list)"`
	FilesModified []string       `json:"files_modified,omitempty" jsonschema:"files the work modified (added to the list)"`
	LastProcessed *string        `json:"last_processed,omitempty" jsonschema:"the last item of a batch that was processed"`
	NextToProcess *string        `json:"next_to_process,omitempty" jsonschema:"the next item of a batch to process"`
	Notes         *string        `json:"notes,omitempty" jsonschema:"context notes (replaces them)"`
	Instructions  *string        `json:"instructions,omitempty" jsonschema:"instructions for a session that resumes this work"`
	NextSteps     []string       `json:"next_steps,omitempty" jsonschema:"the next steps for a resuming session (replaces the list)"`
	Resumable     *bool          `json:"resumable,omitempty" jsonschema:"false when the work must not be resumed"`
	MaxCycles     *int           `json:"max_cycles,omitempty" jsonschema:"the most fix or retry cycles allowed"`
	Interval      string         `json:"interval,omitempty" jsonschema:"the heartbeat interval, e.g. 5m"`
	Meta          map[string]any `json:"meta,omitempty" jsonschema:"free keys to set; a null value deletes the key"`
}

// StepChangeInput are ckpt_step's arguments.
type StepChangeInput struct {
	ID     string `json:"id" jsonschema:"the checkpoint ID, e.g. kai-7/secondary-a"`
	Step   string `json:"step" jsonschema:"the step's ID; an ID the checkpoint does not have is refused (with the closest step named) unless add is true"`
	Add    bool   `json:"add,omitempty" jsonschema:"true to add the step when the checkpoint does not have it, at the end of the plan"`
	Status string `json:"status,omitempty" jsonschema:"pending, in_progress, done, failed or skipped (start, started, complete and completed are accepted)"`
	Title  string `json:"title,omitempty" jsonschema:"what the step is"`
	Phase  string `json:"phase,omitempty" jsonschema:"the phase the step belongs to"`
	By     string `json:"by,omitempty" jsonschema:"who did the step: main, subagent:<type> or an agent ID"`
	Output string `json:"output,omitempty" jsonschema:"what the step produced, e.g. a file path"`
	Notes  string `json:"notes,omitempty" jsonschema:"notes on the step"`
	WriteArgs
}

// WriteArgs are the arguments every tool that records a change takes.
type WriteArgs struct {
	IfRev int64  `json:"if_rev,omitempty" jsonschema:"compare-and-swap: write only if the checkpoint is at this revision; 0 or absent: unconditionally"`
	Key   string `json:"key,omitempty" jsonschema:"idempotency key: a repeat with the same key writes nothing"`
	Agent string `json:"agent,omitempty" jsonschema:"the agent making the change, recorded in the history"`
}

// DecisionInput are ckpt_decision's arguments.
type DecisionInput struct {
	ID     string `json:"id" jsonschema:"the checkpoint ID, e.g. kai-7/secondary-a"`
	Text   string `json:"text" jsonschema:"the decision, e.g. Use the v2 API"`
	Reason string `json:"reason,omitempty" jsonschema:"why, e.g. v1 is rate limited"`
	WriteArgs
}

// BlockerInput are ckpt_blocker's arguments.
type BlockerInput struct {
	ID        string `json:"id" jsonschema:"the checkpoint ID, e.g. kai-7/secondary-a"`
	Action    string `json:"action,omitempty" jsonschema:"add (the default when text is given) or clear"`
	Text      string `json:"text,omitempty" jsonschema:"what blocks the work (to add a blocker)"`
	BlockerID string `json:"blocker_id,omitempty" jsonschema:"the blocker's ID: to name a new one (default b1, b2, …) or to clear one; clear without it clears every active blocker"`
	WriteArgs
}

// IDInput names one checkpoint.
type IDInput struct {
	ID string `json:"id" jsonschema:"the checkpoint ID, e.g. kai-7/secondary-a"`
}

// HeartbeatOutput is ckpt_heartbeat's result.
type HeartbeatOutput struct {
	ID string    `json:"id" jsonschema:"the checkpoint ID"`
	At time.Time `json:"at" jsonschema:"when the heartbeat was recorded (RFC 3339)"`
}

// ShowInput are ckpt_show's arguments.
type ShowInput struct {
	ID  string `json:"id" jsonschema:"the checkpoint ID, e.g. kai-7/secondary-a"`
	Rev int64  `json:"rev,omitempty" jsonschema:"show the checkpoint as it was at this revision; 0 or absent: the latest"`
}

// ShowOutput is ckpt_show's result.
type ShowOutput struct {
	ID            string    `json:"id" jsonschema:"the checkpoint ID"`
	Rev           int64     `json:"rev" jsonschema:"the revision shown"`
	Liveness      string    `json:"liveness" jsonschema:"live, warn, stale (dead counts as stale), or - for a checkpoint that cannot go stale (pending, finished, archived) and for an older revision"`
	Presence      string    `json:"presence" jsonschema:"working, busy, waiting (for a person), ended, dead (its process is gone), warn, stale, or - (not live, or an older revision)"`
	PresenceWhy   string    `json:"presence_why,omitempty" jsonschema:"what the agent runs or waits on, which process is gone, which threshold passed"`
	LastSeen      time.Time `json:"last_seen" jsonschema:"the later of the last heartbeat and the last update"`
	SilentSeconds float64   `json:"silent_seconds" jsonschema:"seconds since last_seen"`
	Checkpoint    State     `json:"checkpoint" jsonschema:"the checkpoint's state, as ckpt show --json prints it"`
}

// ResumeInput are ckpt_resume's arguments.
type ResumeInput struct {
	ID        string `json:"id" jsonschema:"the checkpoint ID, e.g. kai-7/secondary-a"`
	Agent     string `json:"agent,omitempty" jsonschema:"the agent taking the work up, if it changes"`
	AgentType string `json:"agent_type,omitempty" jsonschema:"the kind of that agent"`
	Force     bool   `json:"force,omitempty" jsonschema:"resume even a checkpoint that is done, archived or marked not resumable"`
	Key       string `json:"key,omitempty" jsonschema:"idempotency key: a repeat with the same key starts no new session"`
}

// ResumeOutput is ckpt_resume's result. The tool's text content is Prompt.
type ResumeOutput struct {
	ID        string `json:"id" jsonschema:"the checkpoint ID"`
	Rev       int64  `json:"rev" jsonschema:"the revision after the session.resumed event"`
	Session   int    `json:"session" jsonschema:"the new session's number (1 for the first session)"`
	SessionID string `json:"session_id" jsonschema:"the new session's ID"`
	Prompt    string `json:"prompt" jsonschema:"the continuation prompt (Markdown, under 10,000 characters): goal, status, progress, steps done and remaining, decisions, blockers, files, the next action"`
	// Damaged is set when the history failed verification: no session
	// was started, and the prompt opens with the damage.
	Damaged string `json:"damaged,omitempty" jsonschema:"why the checkpoint's history failed verification; when set no session was started and the checkpoint takes no writes until it is repaired (ckpt check, ckpt repair)"`
}

// ListInput are ckpt_list's arguments; all filters are optional.
type ListInput struct {
	Status          []string `json:"status,omitempty" jsonschema:"only checkpoints with one of these statuses (pending, in_progress, waiting, blocked, done, failed, abandoned)"`
	Agent           string   `json:"agent,omitempty" jsonschema:"only this agent's checkpoints (ID or name)"`
	Parent          string   `json:"parent,omitempty" jsonschema:"only checkpoints with this parent"`
	Label           string   `json:"label,omitempty" jsonschema:"only checkpoints with this label"`
	Prefix          string   `json:"prefix,omitempty" jsonschema:"only IDs that start with this, e.g. kai-7/"`
	IncludeArchived bool     `json:"include_archived,omitempty" jsonschema:"include archived checkpoints"`
}

// Summary is one checkpoint in a listing.
type Summary struct {
	ID          string        `json:"id" jsonschema:"the checkpoint ID"`
	Title       string        `json:"title,omitempty" jsonschema:"the goal"`
	Parent      string        `json:"parent,omitempty" jsonschema:"the grouping checkpoint"`
	Agent       string        `json:"agent,omitempty" jsonschema:"the agent's ID or name"`
	Status      string        `json:"status" jsonschema:"the status"`
	Progress    ckpt.Progress `json:"progress" jsonschema:"done of total, and the percentage"`
	CurrentStep string        `json:"current_step,omitempty" jsonschema:"what is being done now"`
	UpdatedAt   time.Time     `json:"updated_at" jsonschema:"the last update"`
	LastSeen    time.Time     `json:"last_seen" jsonschema:"the later of the last heartbeat and the last update"`
	Liveness    string        `json:"liveness" jsonschema:"live, warn, stale (dead counts as stale), or - when the status cannot go stale"`
	Presence    string        `json:"presence" jsonschema:"working, busy, waiting (for a person), ended, dead (its process is gone), warn, stale, or -"`
}

// ListOutput is ckpt_list's result.
type ListOutput struct {
	Count       int       `json:"count" jsonschema:"how many checkpoints matched"`
	Checkpoints []Summary `json:"checkpoints" jsonschema:"the checkpoints, by ID"`
	Damaged     []string  `json:"damaged,omitempty" jsonschema:"checkpoints that could not be read (damaged): run ckpt check, then ckpt repair"`
}

// StaleInput are ckpt_stale's arguments.
type StaleInput struct {
	Warn  string `json:"warn,omitempty" jsonschema:"silence after which a checkpoint is reported as warn, e.g. 30m or 2d; default twice its heartbeat interval"`
	Stale string `json:"stale,omitempty" jsonschema:"silence after which a checkpoint is stale, e.g. 1h or 7d; default four times its heartbeat interval; must be longer than warn"`
}

// StaleItem is a checkpoint that has gone quiet.
type StaleItem struct {
	Summary
	SilentSeconds float64 `json:"silent_seconds" jsonschema:"seconds since the last sign of life"`
	Silent        string  `json:"silent" jsonschema:"the same, as a duration such as 1h5m0s"`
}

// StaleOutput is ckpt_stale's result.
type StaleOutput struct {
	Count       int         `json:"count" jsonschema:"how many checkpoints are warn or stale"`
	Checkpoints []StaleItem `json:"checkpoints" jsonschema:"the live checkpoints (in_progress, waiting, blocked) silent past the warn or stale threshold, stale ones first, then warn, each by ID (the order of ckpt stale)"`
	Damaged     []string    `json:"damaged,omitempty" jsonschema:"checkpoints that could not be read (damaged), so not judged: run ckpt check, then ckpt repair"`
}

// handler is a tool's implementation.
type handler[In, Out any] func(ctx context.Context, req *sdk.CallToolRequest, in In) (*sdk.CallToolResult, Out, error)

// add registers a tool whose panics and errors become tool errors that say
// what went wrong.
func add[In, Out any](srv *sdk.Server, s *server, t *sdk.Tool, h handler[In, Out]) {
	sdk.AddTool(srv, t, func(ctx context.Context, req *sdk.CallToolRequest, in In) (res *sdk.CallToolResult, out Out, err error) {
		defer func() {
			if p := recover(); p != nil {
				s.log.Error("tool panicked", "tool", t.Name, "panic", p)
				var zero Out
				res, out, err = nil, zero, fmt.Errorf("internal error in %s: %v", t.Name, p)
			}
		}()
		res, out, err = h(ctx, req, in)
		if err != nil {
			s.log.Debug("tool error", "tool", t.Name, "err", err)
			var zero Out
			return nil, zero, explain(err)
		}
		return res, out, nil
	})
}

// ToolNames lists the server's tools, in the order they are registered.
var ToolNames = []string{"ckpt_start", "ckpt_update", "ckpt_step", "ckpt_decision", "ckpt_blocker", "ckpt_heartbeat", "ckpt_show", "ckpt_resume", "ckpt_list", "ckpt_stale", "ckpt_tell", "ckpt_inbox", "ckpt_why", "ckpt_bulk"}

func (s *server) addTools(srv *sdk.Server) {
	add(srv, s, &sdk.Tool{Name: "ckpt_start", Description: "Create a checkpoint for a new unit of work, with its goal and planned steps. Fails if the ID exists: use ckpt_resume to continue existing work."}, s.start)
	add(srv, s, &sdk.Tool{Name: "ckpt_update", Description: "Change fields of a checkpoint: status, stage, phase, current step, progress, files, context, resume instructions, next steps, labels, meta. Absent fields are left alone."}, s.update)
	add(srv, s, &sdk.Tool{Name: "ckpt_step", Description: "Start, finish, fail or skip a step of a checkpoint (a step it does not have yet needs add: true). Progress follows the steps."}, s.step)
	add(srv, s, &sdk.Tool{Name: "ckpt_decision", Description: "Record a decision and its reason, so a resuming session does not reopen it."}, s.decision)
	add(srv, s, &sdk.Tool{Name: "ckpt_blocker", Description: "Add a blocker (the checkpoint becomes blocked) or clear one or all (it returns to in_progress)."}, s.blocker)
	add(srv, s, &sdk.Tool{Name: "ckpt_heartbeat", Description: "Record that the agent is alive. Cheap: it does not grow the history. Call it during long work so the checkpoint does not look stale."}, s.heartbeat)
	add(srv, s, &sdk.Tool{Name: "ckpt_show", Description: "Read a checkpoint's full state (optionally at an earlier revision), with its liveness."}, s.show)
	add(srv, s, &sdk.Tool{Name: "ckpt_resume", Description: "Start a new session on a checkpoint and get its continuation prompt: what the work is, what is done, what remains, decisions, blockers, files and the next action."}, s.resume)
	add(srv, s, &sdk.Tool{Name: "ckpt_list", Description: "List checkpoints, optionally by status, agent, parent, label or ID prefix, with progress and liveness."}, s.list)
	add(srv, s, &sdk.Tool{Name: "ckpt_stale", Description: "List the live checkpoints (in_progress, waiting, blocked) whose agent has gone quiet: warn after 2x and stale after 4x the heartbeat interval, or the given thresholds."}, s.stale)
	s.addInboxTools(srv)
	add(srv, s, &sdk.Tool{Name: "ckpt_why", Description: "Explain a checkpoint's presence (working, busy, waiting, blocked, failed, dead, stale, warn, ended, done): the rule and signal that produced it, since when, the client process and session, and what would change it."}, s.why)
	s.addBulkTool(srv)
}

// argName names a request's fields as the tools' arguments do.
func argName(field string) string {
	if field == "step" {
		return "step id"
	}
	return field
}

// write appends the event of request r (package request: the same rules
// as the CLI's) to checkpoint id and returns its state.
func (s *server) write(ctx context.Context, req *sdk.CallToolRequest, id, agent string, r request.Request, ifRev int64, key string) (*sdk.CallToolResult, StateOutput, error) {
	if ifRev < 0 {
		return nil, StateOutput{}, fmt.Errorf("%w: if_rev %d is negative: give the revision ckpt_show reported, or leave it out", ckpt.ErrInvalid, ifRev)
	}
	res, err := request.Append(ctx, s.store, id, r, request.Write{At: s.now(), Actor: s.actor(req, agent), Key: key, IfRev: ifRev, Names: argName})
	if err != nil {
		return nil, StateOutput{}, err
	}
	for _, w := range res.Warnings {
		s.log.Warn("store warning", "id", id, "warning", w)
	}
	st, err := stateOf(res.State)
	if err != nil {
		return nil, StateOutput{}, err
	}
	return nil, StateOutput{ID: id, Rev: res.State.Rev, Replayed: res.Replayed, Checkpoint: st}, nil
}

// stateOf is c's JSON form as a map.
func stateOf(c *ckpt.Checkpoint) (State, error) {
	b, err := json.Marshal(c)
	if err != nil {
		return nil, fmt.Errorf("encoding checkpoint %s: %w", c.ID, err)
	}
	var st State
	if err := json.Unmarshal(b, &st); err != nil {
		return nil, fmt.Errorf("encoding checkpoint %s: %w", c.ID, err)
	}
	return st, nil
}

func (s *server) start(ctx context.Context, req *sdk.CallToolRequest, in StartInput) (*sdk.CallToolResult, StateOutput, error) {
	r := request.Start{
		Title: in.Title, TaskID: in.TaskID, Parent: in.Parent, Labels: in.Labels, Interval: in.Interval,
		Agent: ckpt.Agent{ID: in.Agent, Type: in.AgentType}, Session: ckpt.NewSessionID(),
	}
	for _, st := range in.Steps {
		r.Steps = append(r.Steps, ckpt.Step{ID: st.ID, Title: st.Title})
	}
	return s.write(ctx, req, in.ID, in.Agent, r, 0, in.Key)
}

func (s *server) update(ctx context.Context, req *sdk.CallToolRequest, in UpdateInput) (*sdk.CallToolResult, StateOutput, error) {
	r := request.Update{
		Title: in.Title, TaskID: in.TaskID, Parent: in.Parent, Stage: in.Stage, Phase: in.Phase, CurrentStep: in.CurrentStep,
		StatusReason: in.StatusReason, AddLabels: in.AddLabels, RemoveLabels: in.RemoveLabels,
		FilesCreated: in.FilesCreated, FilesModified: in.FilesModified,
		LastProcessed: in.LastProcessed, NextToProcess: in.NextToProcess, Notes: in.Notes,
		Instructions: in.Instructions, Resumable: in.Resumable, MaxCycles: in.MaxCycles,
	}
	if in.Status != "" {
		r.Status = &in.Status
	}
	if in.Interval != "" {
		r.Interval = &in.Interval
	}
	if in.Progress != nil {
		r.Progress = &ckpt.ProgressSet{Done: in.Progress.Done, Total: in.Progress.Total}
	}
	if in.NextSteps != nil {
		r.NextSteps = &in.NextSteps
	}
	for k, v := range in.Meta {
		raw, err := json.Marshal(v)
		if err != nil {
			return nil, StateOutput{}, fmt.Errorf("%w: meta %q: %v", ckpt.ErrInvalid, k, err)
		}
		if r.Meta == nil {
			r.Meta = map[string]json.RawMessage{}
		}
		r.Meta[k] = raw
	}
	_, out, err := s.write(ctx, req, in.ID, in.Agent, r, in.IfRev, in.Key)
	if errors.Is(err, request.ErrEmpty) {
		return nil, StateOutput{}, fmt.Errorf("%w: nothing to update: give at least one field to change, such as status, current_step or next_steps", ckpt.ErrInvalid)
	}
	return nil, out, err
}

func (s *server) step(ctx context.Context, req *sdk.CallToolRequest, in StepChangeInput) (*sdk.CallToolResult, StateOutput, error) {
	st, err := request.ParseStepStatus("step status", in.Status)
	if err != nil {
		return nil, StateOutput{}, err
	}
	r := request.Step{Step: in.Step, Status: st, Title: in.Title, Phase: in.Phase, By: in.By, Output: in.Output, Notes: in.Notes, Add: in.Add, Actor: s.actor(req, in.Agent).Agent}
	res, out, err := s.write(ctx, req, in.ID, in.Agent, r, in.IfRev, in.Key)
	var nf *ckpt.StepNotFoundError
	if errors.As(err, &nf) {
		// As the CLI does: a typo must not add a step and count it done.
		return nil, StateOutput{}, fmt.Errorf("%w (to add it as a new step: call ckpt_step again with add: true)", err)
	}
	return res, out, err
}

func (s *server) decision(ctx context.Context, req *sdk.CallToolRequest, in DecisionInput) (*sdk.CallToolResult, StateOutput, error) {
	return s.write(ctx, req, in.ID, in.Agent, request.Decision{Text: in.Text, Reason: in.Reason}, in.IfRev, in.Key)
}

func (s *server) blocker(ctx context.Context, req *sdk.CallToolRequest, in BlockerInput) (*sdk.CallToolResult, StateOutput, error) {
	action := strings.ToLower(strings.TrimSpace(in.Action))
	if action == "" && in.Text != "" {
		action = "add"
	}
	var r request.Request
	switch action {
	case "add":
		r = request.Block{ID: in.BlockerID, Text: in.Text}
	case "clear":
		r = request.Unblock{ID: in.BlockerID}
	case "":
		return nil, StateOutput{}, fmt.Errorf("%w: nothing to do: give text to add a blocker, or action clear to clear one", ckpt.ErrInvalid)
	default:
		return nil, StateOutput{}, fmt.Errorf("%w: action %q: use add or clear", ckpt.ErrInvalid, in.Action)
	}
	return s.write(ctx, req, in.ID, in.Agent, r, in.IfRev, in.Key)
}

func (s *server) heartbeat(ctx context.Context, _ *sdk.CallToolRequest, in IDInput) (*sdk.CallToolResult, HeartbeatOutput, error) {
	if err := ckpt.ValidateID(in.ID); err != nil {
		return nil, HeartbeatOutput{}, err
	}
	at := s.now()
	if err := s.store.Beat(ctx, in.ID, ckpt.Signal{At: at}); err != nil {
		return nil, HeartbeatOutput{}, err
	}
	return nil, HeartbeatOutput{ID: in.ID, At: at}, nil
}

func (s *server) show(ctx context.Context, _ *sdk.CallToolRequest, in ShowInput) (*sdk.CallToolResult, ShowOutput, error) {
	if err := ckpt.ValidateID(in.ID); err != nil {
		return nil, ShowOutput{}, err
	}
	if in.Rev < 0 {
		return nil, ShowOutput{}, fmt.Errorf("%w: rev %d is negative: give a revision from 1, or leave it out for the latest", ckpt.ErrInvalid, in.Rev)
	}
	c, err := s.store.Get(ctx, in.ID, in.Rev)
	if err != nil {
		return nil, ShowOutput{}, err
	}
	st, err := stateOf(c)
	if err != nil {
		return nil, ShowOutput{}, err
	}
	// The one show view (render.NewShown): an older revision has no
	// presence now, as in ckpt show --json.
	now := s.now()
	v := ckpt.PresenceView{State: ckpt.PresenceNone, Silent: max(now.Sub(c.LastSeen()), 0)}
	if p := render.NewShown(c, in.Rev == 0, now, s.opts.Thresholds, process.Alive).Presence; p != nil {
		v = *p
	}
	return nil, ShowOutput{ID: c.ID, Rev: c.Rev, Liveness: string(v.Alarm()), Presence: string(v.State), PresenceWhy: v.Why,
		LastSeen: c.LastSeen(), SilentSeconds: v.Silent.Seconds(), Checkpoint: st}, nil
}

func (s *server) resume(ctx context.Context, req *sdk.CallToolRequest, in ResumeInput) (*sdk.CallToolResult, ResumeOutput, error) {
	r := request.Resume{Agent: in.Agent, AgentType: in.AgentType, Force: in.Force}
	res, err := r.Run(ctx, s.store, in.ID, ckpt.Lifecycle{At: s.now(), Actor: s.actor(req, in.Agent), Key: in.Key}, argName)
	if err != nil {
		return nil, ResumeOutput{}, err
	}
	c := res.State
	p := render.NewPrompt(c)
	if res.Damage != nil {
		// No session was started (the store refuses writes to a damaged
		// checkpoint): the result, marked an error, is the prompt of the
		// state as last read, opening with the damage.
		p.Damaged = res.Damage.Error()
	}
	prompt := p.Markdown()
	out := ResumeOutput{ID: c.ID, Rev: c.Rev, Session: c.Session.Number, SessionID: c.Session.ID, Prompt: prompt, Damaged: p.Damaged}
	return &sdk.CallToolResult{IsError: res.Damage != nil, Content: []sdk.Content{&sdk.TextContent{Text: prompt}}}, out, nil
}

func summarize(c *ckpt.Summary, now time.Time, th ckpt.Thresholds) (Summary, time.Duration) {
	v := ckpt.PresenceOf(c, now, th, process.Alive)
	return Summary{ID: c.ID, Title: c.Title, Parent: c.Parent, Agent: c.Agent.Label(), Status: string(c.Status), Progress: c.Progress,
		CurrentStep: c.CurrentStep, UpdatedAt: c.UpdatedAt, LastSeen: c.LastSeen(), Liveness: string(v.Alarm()), Presence: string(v.State)}, v.Silent
}

func (s *server) list(ctx context.Context, _ *sdk.CallToolRequest, in ListInput) (*sdk.CallToolResult, ListOutput, error) {
	f := ckpt.Filter{Agent: in.Agent, Parent: in.Parent, Label: in.Label, Prefix: in.Prefix, IncludeArchived: in.IncludeArchived}
	for _, w := range in.Status {
		st, err := ckpt.ParseStatus(w)
		if err != nil {
			return nil, ListOutput{}, err
		}
		f.Status = append(f.Status, st)
	}
	cs, damaged, err := listReadable(ctx, s.store, f)
	if err != nil {
		return nil, ListOutput{}, err
	}
	now := s.now()
	out := ListOutput{Count: len(cs), Checkpoints: make([]Summary, 0, len(cs)), Damaged: damaged}
	for i := range cs {
		sum, _ := summarize(&cs[i], now, s.opts.Thresholds)
		out.Checkpoints = append(out.Checkpoints, sum)
	}
	return nil, out, nil
}

func (s *server) stale(ctx context.Context, _ *sdk.CallToolRequest, in StaleInput) (*sdk.CallToolResult, StaleOutput, error) {
	th, err := request.ParseThresholds(s.opts.Thresholds, "warn", in.Warn, "stale", in.Stale)
	if err != nil {
		return nil, StaleOutput{}, err
	}
	now := s.now()
	// The one stale report (ckpt.StaleFrom): the same selection and
	// order as ckpt stale; the readable checkpoints even when some are
	// damaged (named in Damaged).
	rep, err := ckpt.StaleFrom(ctx, s.store, ckpt.Filter{}, now, th, process.Alive)
	out := StaleOutput{Checkpoints: []StaleItem{}}
	if d := (*ckpt.DamagedError)(nil); errors.As(err, &d) {
		out.Damaged, err = d.IDs, nil
	}
	if err != nil {
		return nil, StaleOutput{}, err
	}
	for _, e := range rep.Entries {
		sum, silent := summarize(e.Summary, now, th)
		out.Checkpoints = append(out.Checkpoints, StaleItem{Summary: sum, SilentSeconds: silent.Seconds(), Silent: silent.Round(time.Second).String()})
	}
	out.Count = len(out.Checkpoints)
	return nil, out, nil
}

// listReadable lists what f matches; when some checkpoints are damaged it
// returns the readable ones and the damaged IDs (the Store contract), so a
// client still sees every agent that can be read.
func listReadable(ctx context.Context, st ckpt.Store, f ckpt.Filter) ([]ckpt.Summary, []string, error) {
	cs, err := ckpt.ListAll(ctx, st, f)
	var d *ckpt.DamagedError
	if errors.As(err, &d) {
		return cs, d.IDs, nil
	}
	return cs, nil, err
}
