package claude

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/ckpt-dev/ckpt"
	"github.com/ckpt-dev/ckpt/internal/request"
)

// Defaults of a Handler.
const (
	// DefaultBackupEvery: UserPromptSubmit asks for a backup every this many
	// prompts (plan.md (seed 004)).
	DefaultBackupEvery = 5
	// DefaultCompletionToken ends a task loop when the agent's last message
	// contains it (ccc's (seed 001) TASK_COMPLETE).
	DefaultCompletionToken = "TASK_COMPLETE"
	// DefaultMaxBlocks is how many times in a row the task loop keeps the
	// agent from stopping before it lets it stop.
	DefaultMaxBlocks = 5
	// DefaultTimeout bounds one hook call; SessionEndTimeout bounds
	// SessionEnd, which Claude Code gives 1.5 s in all.
	DefaultTimeout    = 5 * time.Second
	SessionEndTimeout = time.Second
)

// EnvAgent names the agent in the events hooks write; without it the
// client's name is used (claude-code, codex, gemini-cli).
const EnvAgent = "CKPT_AGENT"

// TaskLoop makes Stop keep the agent working while steps remain. A
// checkpoint's meta key "task_loop" overrides it for that checkpoint: true
// or false (as JSON or as the string "true"/"false"), or an object
// {"enabled":…, "token":…, "max_blocks":…}.
type TaskLoop struct {
	Enabled bool
	// Token in the agent's last message lets it stop; "" means
	// DefaultCompletionToken.
	Token string
	// MaxBlocks caps consecutive blocks in one turn; 0 means
	// DefaultMaxBlocks.
	MaxBlocks int
}

// FinalStep is one extra step of the final checkpoint that PreCompact and
// SessionEnd write (ccc's (seed 001) automated profile: the progress file, the
// tracker comment). A failing step is a warning and does not stop the
// others.
type FinalStep struct {
	Name string
	Run  func(ctx context.Context, c *ckpt.Checkpoint) error
}

// Handler does what each hook event means for a checkpoint (docs/hooks.md).
// Only Store is required. A Handler is safe for concurrent use if its
// functions are.
type Handler struct {
	Store ckpt.Store
	// OpenErr, when Store is nil, says why (the store could not be found
	// or opened); it is reported as the hook's warning.
	OpenErr error
	Client  Client // who calls; the zero value is Claude

	Now      func() time.Time    // the clock; nil means time.Now
	Getenv   func(string) string // the environment; nil means none
	RepoRoot string              // the repository the session works in, "" if none

	// StateDir keeps per-checkpoint counters (prompts, consecutive Stop
	// blocks) outside the history, in StateDir/hooks/state, and the prompt
	// snapshots in StateDir/hooks/backups (see the function StateDir). ""
	// disables prompt backups and lets the task loop block only once per
	// turn.
	StateDir string

	// Prompt renders the continuation prompt SessionStart returns; nil
	// gives a one-line summary.
	Prompt func(*ckpt.Checkpoint) string
	// Backup, if set, replaces the snapshot written every BackupEvery
	// prompts (0 means DefaultBackupEvery) into StateDir/hooks/backups.
	Backup      func(ctx context.Context, id string) error
	BackupEvery int
	// SyncPlan, if set, is called with the absolute path of every plan file
	// (plan.md, phase-*.md) an edit touched; it syncs the checkpoint from
	// the plan when the checkpoint tracks that file and ignores it
	// otherwise.
	SyncPlan func(ctx context.Context, id, path string) error
	// Final lists the extra steps of the final checkpoint.
	Final []FinalStep
	// Plan, when set, runs plan.md's (seed 004) triggers for a checkpoint that
	// tracks a plan.md (plan.Triggers).
	Plan PlanTriggers
	// AtStop lists steps run at every Stop, after the turn's writes; each
	// decides itself whether it has work (ccc's (seed 001) automated profile runs
	// only while .ccc-state.json awaits a gate). A failing one is a warning.
	AtStop []FinalStep

	Loop TaskLoop

	// Code reads where the session's code is now (nil when it is not in a
	// git repository). The hooks record it (ckpt.EventCode) when it
	// differs from the recorded one: when a session starts (SessionStart
	// of an existing checkpoint, the prompt that creates or joins one),
	// after a subagent's step, at the end of a turn and in the final
	// checkpoint. nil records nothing.
	Code func(ctx context.Context) (*ckpt.CodeState, error)

	// Process returns the agent client's process, recorded with every
	// presence signal so that a view on this host can tell it died; nil
	// (or a nil result) records none.
	Process func() *ckpt.Process
}

// Result is what a hook call produced: the bytes for stdout (nil for
// nothing) and one-line warnings for stderr.
type Result struct {
	ID       string // the checkpoint concerned, "" if none
	Output   []byte
	Warnings []string
}

// Write reports res as a hook does: the output on stdout, every warning
// joined on one line on stderr ("ckpt hook EVENT: warning: …").
func (res Result) Write(event string, stdout, stderr io.Writer) {
	if len(res.Output) > 0 {
		stdout.Write(res.Output)
	}
	if len(res.Warnings) > 0 {
		line := strings.Join(strings.Fields(strings.Join(res.Warnings, "; ")), " ")
		if event == "" {
			event = "?"
		}
		fmt.Fprintf(stderr, "ckpt hook %s: warning: %s\n", event, line)
	}
}

// Handle handles one event. It never panics and never fails: every problem
// (no store, no checkpoint ID, a damaged or locked checkpoint) becomes a
// warning, and the output is only what is safe to print.
func (h *Handler) Handle(ctx context.Context, ev Event, in Input) (res Result) {
	defer func() {
		if p := recover(); p != nil {
			res.Output = nil
			res.Warnings = append(res.Warnings, fmt.Sprintf("internal error: %v", p))
		}
	}()
	if h.Store == nil {
		if h.OpenErr != nil {
			res.Warnings = append(res.Warnings, h.OpenErr.Error()+"; hooks record nothing until then")
		} else {
			res.Warnings = append(res.Warnings, "no ckpt store: run `ckpt init` in the project (or set CKPT_STORE); hooks record nothing until then")
		}
		return res
	}
	res.ID = SessionKey(in, h.Getenv, h.RepoRoot)
	if res.ID == "" {
		res.Warnings = append(res.Warnings, "cannot tell which checkpoint this session is: the payload has no session_id and there is no repository; set CKPT_ID")
		return res
	}
	timeout := DefaultTimeout
	if ev == EventSessionEnd {
		timeout = SessionEndTimeout
	}
	if d, ok := ctx.Deadline(); !ok || time.Until(d) > timeout {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, timeout)
		defer cancel()
	}
	call := &hookCall{h: h, ctx: ctx, in: in, id: res.ID, res: &res, begins: ev == EventSessionStart}
	switch ev {
	case EventSessionStart:
		call.sessionStart()
	case EventUserPromptSubmit:
		call.userPrompt()
	case EventPostToolUse:
		call.postToolUse()
	case EventSubagentStop:
		call.subagentStop()
	case EventStop:
		call.stop()
	case EventPreCompact, EventSessionEnd:
		call.final(ev)
	case EventPreToolUse:
		call.noteSpawn()
		call.presence(ckpt.PresenceBusy, toolReason(in))
	case EventPostToolUseFailure:
		call.toolFailed()
	case EventSubagentStart:
		call.subagentStart()
		call.presence(ckpt.PresenceBusy, "subagent "+orDash(in.AgentType))
	case EventNotification:
		if why := waitingReason(in); why != "" {
			call.presence(ckpt.PresenceWaiting, why)
		}
	case EventPermissionRequest:
		call.presence(ckpt.PresenceWaiting, "permission: "+orDash(in.ToolName))
	case EventStopFailure:
		call.presence(ckpt.PresenceWaiting, ckpt.ReasonTurnFailed+": "+orDash(firstLine(in.Error, 200)))
	default:
		res.Warnings = append(res.Warnings, fmt.Sprintf("ckpt does not handle the %s event", ev))
	}
	return res
}

// counterDir holds the per-checkpoint counters.
func (h *Handler) counterDir() string { return filepath.Join(h.StateDir, "hooks", "state") }

// hookCall is one Handle call.
type hookCall struct {
	h   *Handler
	ctx context.Context
	in  Input
	id  string
	res *Result
	// begins: the call's signal starts a client's life (SessionStart).
	begins bool
}

func (c *hookCall) warn(format string, args ...any) {
	c.res.Warnings = append(c.res.Warnings, fmt.Sprintf(format, args...))
}

func (c *hookCall) now() time.Time {
	if c.h.Now != nil {
		return c.h.Now().UTC()
	}
	return time.Now().UTC()
}

func (c *hookCall) agent() ckpt.Agent {
	name := map[Client]string{Codex: "codex", Gemini: "gemini-cli"}[c.h.Client]
	if name == "" {
		name = "claude-code"
	}
	id := name
	if c.h.Getenv != nil {
		if a := strings.TrimSpace(c.h.Getenv(EnvAgent)); a != "" {
			id = a
		}
	}
	return ckpt.Agent{ID: id, Type: name}
}

func (c *hookCall) actor() ckpt.Actor {
	return ckpt.Actor{Agent: c.agent().ID, Session: c.in.SessionID}
}

// append writes the event of req and returns the checkpoint as it is now; key, if
// set, makes a retried hook append nothing.
//
// For a retried event (the key was applied already) the store returns the
// state right after the first attempt, which may be older than the
// checkpoint now is: a Stop repeating the last message after `ckpt update
// ID --meta task_loop=true` would not see the loop. So after a replay the
// hook reads the current state and acts on that.
func (c *hookCall) append(req request.Request, key string) (*ckpt.Checkpoint, error) {
	e, err := request.NewEvent(req, request.Write{At: c.now(), Actor: c.actor(), Key: key})
	if err != nil {
		return nil, err
	}
	r, err := c.h.Store.Append(c.ctx, c.id, e, ckpt.AppendOptions{})
	if err != nil {
		return nil, err
	}
	for _, w := range r.Warnings {
		c.warn("%s: %s", c.id, w)
	}
	if r.Replayed {
		cur, err := c.h.Store.Get(c.ctx, c.id, 0)
		if err != nil {
			return nil, fmt.Errorf("reading the checkpoint after a retried event: %w", err)
		}
		return cur, nil
	}
	return r.State, nil
}

// joinSession starts a new ckpt session on cp when its recorded session is
// another one (a new client session continuing it, e.g. through CKPT_ID),
// unless cp is finished, archived or marked not resumable: ckpt never
// reopens finished work on its own. It runs on a session's prompts, not at
// SessionStart: a SessionStart is not proof of a session (see
// sessionStart), a prompt is. It returns the checkpoint as it is then.
func (c *hookCall) joinSession(cp *ckpt.Checkpoint) *ckpt.Checkpoint {
	sid := c.in.SessionID
	if sid == "" || cp.Session.ID == sid || cp.Archived != nil || cp.Status.Final() || !cp.Resume.Resumable {
		return cp
	}
	// Keyed by the session: a retried hook, or a later prompt of this
	// session after another session wrote, starts no further session.
	next, err := c.append(request.JoinSession{Session: sid}, "hook:resumed:"+sid)
	if err != nil {
		c.warn("%s: starting session %s: %v", c.id, sid, err)
		return cp
	}
	return next
}

// get returns the checkpoint, creating it when create is set and it does
// not exist yet. Creating it on a session's first write, never at
// SessionStart, is how a session that records nothing leaves nothing
// behind (docs/hooks.md).
func (c *hookCall) get(create bool) (cp *ckpt.Checkpoint, created bool, err error) {
	cp, err = c.h.Store.Get(c.ctx, c.id, 0)
	if err == nil || !create || !errors.Is(err, ckpt.ErrNotFound) {
		return cp, false, err
	}
	agent := c.agent()
	title := c.title()
	start := request.Start{Title: title, Agent: agent, Session: c.in.SessionID}
	if ask := c.askUpdate(&ckpt.Checkpoint{}); ask != nil {
		// The session's first prompt is its goal (docs/hooks.md).
		start.Meta = ask.Meta
		if ask.Title != nil {
			start.Title = *ask.Title
		}
	}
	cp, err = c.append(start, "")
	if errors.Is(err, ckpt.ErrExists) { // another hook created it first
		cp, err = c.h.Store.Get(c.ctx, c.id, 0)
		return cp, false, err
	}
	return cp, err == nil, err
}

func (c *hookCall) title() string {
	client := map[Client]string{Codex: "Codex", Gemini: "Gemini CLI"}[c.h.Client]
	if client == "" {
		client = "Claude Code"
	}
	where := ""
	switch {
	case c.h.RepoRoot != "":
		where = filepath.Base(c.h.RepoRoot)
	case c.in.CWD != "":
		where = filepath.Base(c.in.CWD)
	}
	if where == "" || where == "." || where == string(filepath.Separator) {
		return client + " session"
	}
	return client + " session in " + where
}

// sessionStart returns the continuation prompt of the session's
// checkpoint, and writes nothing but a heartbeat. A session that has
// recorded nothing has no checkpoint yet: its first write creates it (see
// get). This matters because a SessionStart is not proof of a session:
// `claude --resume` also fires a "startup" SessionStart with a new session
// ID that never records anything (Claude Code issues #23932 and #24265),
// and creating a checkpoint for it would leave an empty one behind; a new
// ckpt session on an existing checkpoint waits for the session's first
// prompt (joinSession) for the same reason.
func (c *hookCall) sessionStart() {
	cp, err := c.h.Store.Get(c.ctx, c.id, 0)
	if errors.Is(err, ckpt.ErrNotFound) {
		return
	}
	if err != nil {
		c.warn("%s: %v", c.id, err)
		return
	}
	cp, _ = c.planCall(cp, "session start", func(p PlanTriggers) (bool, error) {
		return p.SessionStart(c.ctx, cp, crashedBefore(cp, c.in.Source))
	})
	if c.in.Source == "compact" {
		// What the compaction kept of the conversation, for the sessions
		// after this one (the hooks never saw it).
		cp = c.recordTranscript(cp)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "ckpt: this session continues checkpoint %s. Below is where the work stands; continue from it and keep recording progress (`ckpt step %s STEP --done`).\n\n", c.id, c.id)
	b.WriteString(c.prompt(cp))
	c.res.Output = SessionStartOutput(b.String())
	c.deliverAsContext(cp, EventSessionStart)
	c.recordCode(cp)
	c.signal(ckpt.PresenceWorking, "session start: "+orDash(c.in.Source))
}

// newCheckpointNote tells the agent which checkpoint its session's work
// goes to, when the first prompt created it.
func (c *hookCall) newCheckpointNote() []byte {
	event := string(EventUserPromptSubmit)
	if c.h.Client == Gemini {
		event = "BeforeAgent" // Gemini CLI wants its own name for the event
	}
	return AdditionalContext(event, fmt.Sprintf("ckpt: this session records its work in checkpoint %s (new). Record steps with `ckpt step %s STEP --add --done`, decisions with `ckpt decision %s TEXT`, or the ckpt MCP tools.", c.id, c.id, c.id))
}

func (c *hookCall) prompt(cp *ckpt.Checkpoint) string {
	if c.h.Prompt != nil {
		return c.h.Prompt(cp)
	}
	return fmt.Sprintf("%s: %s, %d of %d steps done.", cp.ID, cp.Status, cp.Progress.Done, cp.Progress.Total)
}

// userPrompt beats and, every BackupEvery prompts, asks for a backup. The
// prompt that creates the checkpoint tells the agent its ID; the first
// prompt of a new session on an existing one starts a ckpt session on it.
func (c *hookCall) userPrompt() {
	cp, created, err := c.get(true)
	if err != nil {
		c.warn("%s: %v", c.id, err)
		return
	}
	if created {
		c.res.Output = c.newCheckpointNote()
		c.recordCode(cp)
	} else {
		next := c.joinSession(cp)
		if next != cp {
			next = c.recordCode(next)
		}
		cp = c.recordAsk(next)
	}
	cp = c.answered(cp)
	c.deliverAsContext(cp, EventUserPromptSubmit)
	c.signal(ckpt.PresenceWorking, "")
	if c.h.StateDir == "" {
		return
	}
	st := loadState(c.h.counterDir(), c.id)
	st.Prompts++
	if err := saveState(c.h.counterDir(), c.id, st); err != nil {
		c.warn("%s: %v", c.id, err)
	}
	every := c.h.BackupEvery
	if every <= 0 {
		every = DefaultBackupEvery
	}
	if st.Prompts%every == 0 {
		backup := c.h.Backup
		if backup == nil {
			backup = func(ctx context.Context, id string) error {
				return c.h.snapshot(ctx, filepath.Join(c.h.StateDir, "hooks", "backups"), id)
			}
		}
		if err := backup(c.ctx, c.id); err != nil {
			c.warn("%s: backup: %v", c.id, err)
		}
		c.planCall(cp, "backup", func(p PlanTriggers) (bool, error) { return p.Backup(c.ctx, cp) })
	}
}

// postToolUse records the files an edit wrote and syncs a tracked plan,
// the agent's own plan (a plan tool's tasks as steps), and a shell
// command's failure or the success that clears it.
func (c *hookCall) postToolUse() {
	if items, ok := planToolItems(c.in); ok {
		c.planTool(items)
		return
	}
	if cmd := c.in.command(); cmd != "" {
		c.shellDone(cmd)
		return
	}
	files := c.in.Files()
	if len(files) == 0 {
		c.presence(ckpt.PresenceWorking, "")
		return
	}
	cp, _, err := c.get(true)
	if err != nil {
		c.warn("%s: %v", c.id, err)
		return
	}
	var patch request.Update
	var plans []string
	for _, f := range files {
		abs, rel := c.paths(f.Path)
		if isPlanFile(abs) {
			plans = append(plans, abs)
		}
		switch {
		case slices.Contains(cp.Files.Created, rel):
		case f.Created:
			patch.FilesCreated = append(patch.FilesCreated, rel)
		case !slices.Contains(cp.Files.Modified, rel):
			patch.FilesModified = append(patch.FilesModified, rel)
		}
	}
	if len(patch.FilesCreated)+len(patch.FilesModified) > 0 {
		key := ""
		if c.in.ToolUseID != "" {
			key = "hook:tool:" + c.in.ToolUseID
		}
		if _, err := c.append(patch, key); err != nil {
			c.warn("%s: recording files: %v", c.id, err)
		}
	}
	if c.h.SyncPlan != nil {
		for _, p := range plans {
			if err := c.h.SyncPlan(c.ctx, c.id, p); err != nil {
				c.warn("%s: syncing %s: %v", c.id, p, err)
			}
		}
	}
	c.signal(ckpt.PresenceWorking, "")
}

// paths returns a file's absolute path and the path to record: relative to
// the repository (with '/') when inside it, else the absolute path.
func (c *hookCall) paths(p string) (abs, rec string) {
	abs = filepath.Clean(p)
	if !filepath.IsAbs(abs) {
		base := c.in.CWD
		if base == "" {
			base = c.h.RepoRoot
		}
		abs = filepath.Join(base, abs)
	}
	if c.h.RepoRoot != "" {
		if rel, err := filepath.Rel(c.h.RepoRoot, abs); err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
			return abs, filepath.ToSlash(rel)
		}
	}
	return abs, filepath.ToSlash(abs)
}

// isPlanFile reports a plan.md (seed 004) plan file: plan.md or phase-*.md.
func isPlanFile(p string) bool {
	base := strings.ToLower(filepath.Base(p))
	return base == "plan.md" || strings.HasPrefix(base, "phase-") && strings.HasSuffix(base, ".md")
}

// subagentStop records the subagent's work as a step done by
// subagent:<type>. A SubagentStop without a type is not a subagent's:
// Claude Code 2.1 fires one for a compaction, with the compaction summary
// as its message, and recording it would add a done step (0/2 would
// become 1/3). It only beats.
func (c *hookCall) subagentStop() {
	typ := strings.TrimSpace(c.in.AgentType)
	if typ == "" {
		c.presence(ckpt.PresenceWorking, "")
		return
	}
	cp, _, err := c.get(true)
	if err != nil {
		c.warn("%s: %v", c.id, err)
		return
	}
	if _, tracked := c.planCall(cp, "subagent stop", func(p PlanTriggers) (bool, error) { return p.SubagentStopped(c.ctx, cp, typ) }); tracked {
		c.signal(ckpt.PresenceWorking, "") // plan.md is the record of its work: no step of its own
		return
	}
	by := "subagent:" + typ
	label := typ + " subagent"
	var stepID, key string
	if aid := sanitizeSegment(c.in.AgentID); aid != "" {
		stepID, key = "subagent-"+aid, "hook:subagent:"+c.in.AgentID
	} else {
		prefix := "subagent-" + sanitizeSegment(strings.ToLower(typ))
		if sanitizeSegment(typ) == "" {
			prefix = "subagent"
		}
		n := 0
		for _, s := range cp.Steps {
			if rest, ok := strings.CutPrefix(s.ID, prefix+"-"); ok {
				if k, err := strconv.Atoi(rest); err == nil && k > n {
					n = k
				}
			}
		}
		stepID = fmt.Sprintf("%s-%d", prefix, n+1)
	}
	title := label
	if line := firstLine(c.in.LastAssistantMessage, 80); line != "" {
		title = label + ": " + line
	}
	step := request.Step{Step: stepID, Title: title, Status: ckpt.StepDone, By: by, Notes: shorten(c.in.LastAssistantMessage, 1000), Add: true}
	if next, err := c.append(step, key); err != nil {
		c.warn("%s: recording the subagent's step: %v", c.id, err)
	} else {
		c.recordCode(next)
	}
	c.signal(ckpt.PresenceWorking, "")
}

// stop persists the turn's last message and, in task-loop mode, keeps the
// agent working on the next step. A turn that ends without the loop
// keeping it going waits for a person.
func (c *hookCall) stop() {
	cp, _, err := c.get(true)
	if err != nil {
		c.warn("%s: %v", c.id, err)
		return
	}
	if msg := c.in.LastAssistantMessage; strings.TrimSpace(msg) != "" {
		sum := sha256.Sum256([]byte(msg))
		text := shortenMulti(Redact(msg), 2000)
		last, _ := json.Marshal(map[string]string{"at": c.now().Format(time.RFC3339), "session": c.in.SessionID, "text": text})
		next, err := c.append(request.Update{LastMessage: &text, Meta: map[string]json.RawMessage{"last_message": last}},
			"hook:stop:"+c.in.SessionID+":"+hex.EncodeToString(sum[:8]))
		if err != nil {
			c.warn("%s: saving the last message: %v", c.id, err)
		} else {
			cp = next
		}
	}
	told := c.deliverAtStop(cp)
	if !told {
		c.taskLoop(cp)
	}
	c.recordCode(cp)
	for _, s := range c.h.AtStop {
		if err := s.Run(c.ctx, cp); err != nil {
			c.warn("%s: %s failed: %v", c.id, s.Name, err)
		}
	}
	switch {
	case told:
		c.signal(ckpt.PresenceWorking, "reading a message (ckpt tell)")
	case c.res.Output != nil:
		c.signal(ckpt.PresenceWorking, "task loop")
	default:
		c.signal(ckpt.PresenceWaiting, ckpt.ReasonTurnEnded)
	}
}

// final writes the final checkpoint of PreCompact and SessionEnd: a session
// note, a heartbeat, then the extra final steps. A session without a
// checkpoint has nothing to finalise.
func (c *hookCall) final(ev Event) {
	if ev == EventPreCompact && c.h.Client == Gemini {
		// Gemini CLI fires PreCompress before every model request, whether
		// or not it compresses anything: it is no end of anything.
		c.presence(ckpt.PresenceWorking, "")
		return
	}
	cp, _, err := c.get(false)
	if errors.Is(err, ckpt.ErrNotFound) {
		return
	}
	if err != nil {
		c.warn("%s: %v", c.id, err)
		return
	}
	sid := c.in.SessionID
	var note string
	if ev == EventPreCompact {
		note = fmt.Sprintf("Context compacted (%s) in session %s", orDash(c.in.Trigger), orDash(sid))
		if ci := firstLine(c.in.CustomInstructions, 300); ci != "" {
			note += ": " + ci
		}
	} else {
		note = fmt.Sprintf("Session %s ended (%s)", orDash(sid), orDash(c.in.Reason))
	}
	note += " at " + c.now().Format(time.RFC3339)
	key := fmt.Sprintf("hook:%s:%s:%d", strings.ToLower(string(ev)), sid, c.now().Unix()/60)
	if next, err := c.append(request.Note{Text: note}, key); err != nil {
		c.warn("%s: writing the final checkpoint: %v", c.id, err)
	} else {
		cp = next
	}
	cp, _ = c.planCall(cp, "final checkpoint", func(p PlanTriggers) (bool, error) { return p.Final(c.ctx, cp, note) })
	cp = c.recordCode(cp)
	state, why := c.finalPresence(ev)
	c.signal(state, why)
	for _, s := range c.h.Final {
		if err := s.Run(c.ctx, cp); err != nil {
			c.warn("%s: final step %s failed: %v", c.id, s.Name, err)
		}
	}
	if len(c.h.Final) > 0 {
		// Again after the steps, which may have written events: the state
		// must not be older than the last update. The call's deadline may
		// have passed; a beat is cheap, give it a moment of its own.
		ctx, cancel := context.WithTimeout(context.WithoutCancel(c.ctx), lateBeat)
		defer cancel()
		if err := c.h.Store.Beat(ctx, c.id, c.newSignal(state, why)); err != nil {
			c.warn("%s: heartbeat: %v", c.id, err)
		}
	}
}

func orDash(s string) string {
	if strings.TrimSpace(s) == "" {
		return "-"
	}
	return s
}

// firstLine returns s's first non-blank line, cut to max runes.
func firstLine(s string, max int) string {
	for _, l := range strings.Split(s, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			return shorten(l, max)
		}
	}
	return ""
}

// shorten cuts s to at most max runes, marking the cut with "…".
func shorten(s string, max int) string {
	s = strings.TrimSpace(s)
	r := []rune(s)
	if len(r) <= max {
		return s
	}
	return strings.TrimSpace(string(r[:max-1])) + "…"
}
