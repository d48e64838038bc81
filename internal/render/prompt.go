package render

import (
	"fmt"
	"slices"
	"strings"
	"time"

	ckpt "github.com/ckpt-dev/ckpt"
)

// MaxPromptChars bounds the continuation prompt: Markdown always returns
// fewer bytes than this (Claude Code's hook output limit is 10,000
// characters, and a byte count is never below the character count).
const MaxPromptChars = 10000

// Prompt is the continuation prompt as data: what a new session needs to
// restart the work without the old conversation. `ckpt resume --json`
// prints it; Markdown renders it for an agent to read.
//
// The lists are complete (only Markdown summarises them) and never nil, so
// they encode as JSON arrays. Steps are split by status: DoneSteps holds the
// done and skipped ones, which must not be offered again; RemainingSteps the
// pending, in-progress and failed ones, in plan order.
type Prompt struct {
	ID     string `json:"id"`
	Goal   string `json:"goal"` // the title, else the task ID, else the ID
	Title  string `json:"title,omitempty"`
	TaskID string `json:"task_id,omitempty"`
	Parent string `json:"parent,omitempty"`
	Rev    int64  `json:"rev"`

	Agent     ckpt.Agent `json:"agent"`
	Session   int        `json:"session"` // the session number, 1 for the first
	SessionID string     `json:"session_id,omitempty"`

	Status            ckpt.Status   `json:"status"`
	StatusReason      string        `json:"status_reason,omitempty"`
	PartiallyComplete bool          `json:"partially_complete"`
	Resumable         bool          `json:"resumable"`
	Archived          *ckpt.Archive `json:"archived,omitempty"`

	Stage    string        `json:"stage,omitempty"`
	Phase    string        `json:"phase,omitempty"`
	Progress ckpt.Progress `json:"progress"`
	// CurrentStep describes the step under way: the in-progress step ("id:
	// title"), else the checkpoint's current_step text unless it names a
	// finished step.
	CurrentStep string `json:"current_step,omitempty"`

	DoneSteps      []ckpt.Step      `json:"done_steps"`
	RemainingSteps []ckpt.Step      `json:"remaining_steps"`
	Acceptance     []ckpt.Criterion `json:"acceptance"`
	Decisions      []ckpt.Decision  `json:"decisions"`
	ActiveBlockers []ckpt.Blocker   `json:"active_blockers"`
	ActiveErrors   []ckpt.ErrorItem `json:"active_errors"`
	FilesCreated   []string         `json:"files_created"`
	FilesModified  []string         `json:"files_modified"`
	Context        ckpt.Context     `json:"context"`

	// Asks are the user's latest prompts, oldest first (meta.asks, kept by
	// the hooks); the first prompt of the work is usually its title.
	Asks []string `json:"asks"`
	// LastWords is where the agent stopped: its last message
	// (context.last_message, else meta.last_message).
	LastWords string `json:"last_words,omitempty"`
	// Transcript is what the hooks recovered from the client's transcript
	// after a compaction: its summary and the last exchanges.
	Transcript *TranscriptTail `json:"transcript,omitempty"`
	// LastSeen is what the agent was last seen doing (its presence when
	// it was busy, e.g. in a tool it never returned from): "busy (Bash:
	// go test ./...) since T".
	LastSeen string `json:"last_seen,omitempty"`

	ResumeInstructions string `json:"resume_instructions,omitempty"`
	// NextSteps are the checkpoint's resume.next_steps without blanks and
	// without any that name a finished step.
	NextSteps []string `json:"next_steps"`
	// NextAction is the single thing to do first; see NewPrompt.
	NextAction string `json:"next_action"`

	Cycles ckpt.Cycles `json:"cycles"`
	// Code is where the code was when last recorded (render.CodeLine).
	Code *ckpt.CodeState `json:"code,omitempty"`
	// ResumesWithoutProgress counts resumes and takeovers since progress
	// last went up; CrashLoop is set when it passes ckpt.CrashLoopResumes.
	ResumesWithoutProgress int       `json:"resumes_without_progress"`
	CrashLoop              bool      `json:"crash_loop"`
	UpdatedAt              time.Time `json:"updated_at"`

	// Damaged, when set, says why the checkpoint's history failed its
	// whole-chain verification (ckpt.VerifyChain) as the session resumed:
	// the state may be incomplete and the store takes no writes to it
	// until it is repaired. The caller that verified sets it; Markdown
	// then opens with DamagedLine.
	Damaged string `json:"damaged,omitempty"`
	// Warnings are things the new session must know before it acts, most
	// important first: a crash loop, partially complete, archived, finished
	// or failed, not resumable, blocked, the cycle limit reached. A caller
	// that knows more than the state shows appends its own before rendering.
	Warnings []string `json:"warnings"`
}

// NewPrompt builds the continuation prompt of c. It does not change c, and
// the Prompt shares no slices with it.
//
// NextAction is the first of: the first of resume.next_steps that does not
// name a finished step; the in-progress step; the current_step text; the
// first pending step; the first failed step; the resume instructions; the
// first unmet acceptance criterion. With none of them it says that nothing
// is left or that nothing is recorded. When active blockers or blocking
// errors stop the work, it says to resolve them first.
func NewPrompt(c *ckpt.Checkpoint) Prompt {
	p := Prompt{
		ID:                 c.ID,
		Goal:               goal(c),
		Title:              c.Title,
		TaskID:             c.TaskID,
		Parent:             c.Parent,
		Rev:                c.Rev,
		Agent:              c.Agent,
		Session:            c.Session.Number,
		SessionID:          c.Session.ID,
		Status:             c.Status,
		StatusReason:       c.StatusReason,
		PartiallyComplete:  c.PartiallyComplete(),
		Resumable:          c.Resume.Resumable,
		Stage:              c.Stage,
		Phase:              c.Phase,
		Progress:           c.Progress,
		CurrentStep:        currentStep(c),
		DoneSteps:          []ckpt.Step{},
		RemainingSteps:     []ckpt.Step{},
		Acceptance:         cloneOrEmpty(c.Acceptance),
		Decisions:          cloneOrEmpty(c.Decisions),
		ActiveBlockers:     cloneOrEmpty(c.ActiveBlockers()),
		ActiveErrors:       cloneOrEmpty(c.ActiveErrors()),
		FilesCreated:       cloneOrEmpty(c.Files.Created),
		FilesModified:      cloneOrEmpty(c.Files.Modified),
		Context:            c.Context,
		ResumeInstructions: c.Resume.Instructions,
		NextSteps:          nextSteps(c),
		NextAction:         nextAction(c),
		Cycles:             c.Cycles,
		UpdatedAt:          c.UpdatedAt,
		Code:               codeCopy(c.Code),

		ResumesWithoutProgress: c.ResumesWithoutProgress,
		CrashLoop:              crashLoop(c),
	}
	if c.Archived != nil {
		a := *c.Archived
		p.Archived = &a
	}
	for _, s := range c.Steps {
		if s.Status.Finished() {
			p.DoneSteps = append(p.DoneSteps, s)
		} else {
			p.RemainingSteps = append(p.RemainingSteps, s)
		}
	}
	p.Warnings = warnings(c)
	fromHooks(c, &p)
	return p
}

func cloneOrEmpty[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return slices.Clone(s)
}

// goal names the work: its title, else its task ID, else its ID.
func goal(c *ckpt.Checkpoint) string {
	switch {
	case strings.TrimSpace(c.Title) != "":
		return c.Title
	case strings.TrimSpace(c.TaskID) != "":
		return c.TaskID
	}
	return c.ID
}

// stepText names a step as "id: title", or whichever of the two it has.
func stepText(s ckpt.Step) string {
	switch {
	case s.Title == "" || s.Title == s.ID:
		return s.ID
	case s.ID == "":
		return s.Title
	}
	return s.ID + ": " + s.Title
}

// activeStep returns the index of the step under way: the in-progress step
// named by current_step, else the first in-progress step, else the step
// current_step names if it is not finished; -1 if none.
func activeStep(c *ckpt.Checkpoint) int {
	if i := c.StepIndex(c.CurrentStep); i >= 0 && c.CurrentStep != "" && c.Steps[i].Status == ckpt.StepInProgress {
		return i
	}
	for i, s := range c.Steps {
		if s.Status == ckpt.StepInProgress {
			return i
		}
	}
	if i := c.StepIndex(c.CurrentStep); i >= 0 && c.CurrentStep != "" && !c.Steps[i].Status.Finished() {
		return i
	}
	return -1
}

// currentStep describes the step under way for people; "" if none.
func currentStep(c *ckpt.Checkpoint) string {
	if i := activeStep(c); i >= 0 {
		return stepText(c.Steps[i])
	}
	if c.CurrentStep == "" || namesFinishedStep(c, c.CurrentStep) {
		return ""
	}
	return c.CurrentStep
}

// namesFinishedStep reports whether text names a done or skipped step, by
// its ID, its title or "id: title", ignoring case and surrounding space.
func namesFinishedStep(c *ckpt.Checkpoint, text string) bool {
	t := strings.TrimSpace(text)
	if t == "" {
		return false
	}
	for _, s := range c.Steps {
		if !s.Status.Finished() {
			continue
		}
		if strings.EqualFold(t, s.ID) || (s.Title != "" && strings.EqualFold(t, s.Title)) || strings.EqualFold(t, stepText(s)) {
			return true
		}
	}
	return false
}

// nextSteps returns resume.next_steps without blanks and without those that
// name a finished step: done work is never offered again.
func nextSteps(c *ckpt.Checkpoint) []string {
	out := []string{}
	for _, s := range c.Resume.NextSteps {
		if strings.TrimSpace(s) != "" && !namesFinishedStep(c, s) {
			out = append(out, s)
		}
	}
	return out
}

// blockedBy counts what stops the work: active blockers and active blocking
// errors.
func blockedBy(c *ckpt.Checkpoint) (blockers, errors int) {
	blockers = len(c.ActiveBlockers())
	for _, e := range c.ActiveErrors() {
		if e.Blocking {
			errors++
		}
	}
	return blockers, errors
}

// nextAction returns the single next thing to do on c, as NewPrompt's
// NextAction documents. It is one line of plain text, not shortened.
func nextAction(c *ckpt.Checkpoint) string {
	a := firstAction(c)
	if b, e := blockedBy(c); b+e > 0 && !c.Status.Final() {
		return "First resolve the " + blockedNoun(b, e) + ", then: " + a
	}
	return a
}

func blockedNoun(b, e int) string {
	var parts []string
	if b > 0 {
		parts = append(parts, Plural(b, "active blocker", "active blockers"))
	}
	if e > 0 {
		parts = append(parts, Plural(e, "blocking error", "blocking errors"))
	}
	return strings.Join(parts, " and ")
}

func firstAction(c *ckpt.Checkpoint) string {
	if ns := nextSteps(c); len(ns) > 0 {
		return oneLine(ns[0])
	}
	if i := activeStep(c); i >= 0 {
		return "Continue step " + oneLine(stepText(c.Steps[i])) + "."
	}
	if cur := currentStep(c); cur != "" {
		return "Continue: " + oneLine(cur)
	}
	for _, s := range c.Steps {
		if s.Status == ckpt.StepPending {
			return "Start step " + oneLine(stepText(s)) + "."
		}
	}
	for _, s := range c.Steps {
		if s.Status == ckpt.StepFailed {
			return "Retry failed step " + oneLine(stepText(s)) + "."
		}
	}
	if in := oneLine(c.Resume.Instructions); in != "" {
		return in
	}
	for _, a := range c.Acceptance {
		if !a.Met {
			return "Meet acceptance criterion " + oneLine(criterionText(a)) + "."
		}
	}
	if c.Status == ckpt.StatusDone {
		return "Nothing is left to do: the work is done."
	}
	return "Decide the next step: no next step, pending step or resume instructions are recorded."
}

func criterionText(a ckpt.Criterion) string {
	if a.Title == "" || a.Title == a.ID {
		return a.ID
	}
	return a.ID + ": " + a.Title
}

// crashLoop reports more than ckpt.CrashLoopResumes resumes or takeovers
// without progress.
func crashLoop(c *ckpt.Checkpoint) bool {
	return c.ResumesWithoutProgress > ckpt.CrashLoopResumes
}

// warnings lists what a new session must know before acting.
func warnings(c *ckpt.Checkpoint) []string {
	w := []string{}
	if crashLoop(c) {
		w = append(w, fmt.Sprintf("crash loop: resumed %d times without progress (more than %d); find out why the sessions end before resuming again",
			c.ResumesWithoutProgress, ckpt.CrashLoopResumes))
	}
	if c.PartiallyComplete() {
		var unmet []string
		for _, a := range c.Acceptance {
			if !a.Met {
				unmet = append(unmet, a.ID)
			}
		}
		w = append(w, fmt.Sprintf("partially complete: marked done, but %d of %d acceptance criteria are unmet (%s)",
			len(unmet), len(c.Acceptance), strings.Join(unmet, ", ")))
	}
	if c.Archived != nil {
		w = append(w, fmt.Sprintf("archived (%s) at %s: this is a record of finished or replaced work",
			c.Archived.Reason, c.Archived.At.UTC().Format(time.RFC3339)))
	}
	switch {
	case c.Status == ckpt.StatusDone && !c.PartiallyComplete():
		w = append(w, "done: the work was finished; resume it only to redo or extend it")
	case c.Status == ckpt.StatusFailed, c.Status == ckpt.StatusAbandoned:
		s := string(c.Status)
		if c.StatusReason != "" {
			s += ": " + c.StatusReason
		}
		w = append(w, s)
	}
	if !c.Resume.Resumable {
		w = append(w, "not resumable: the checkpoint is marked not resumable; continue only if you are sure the work should go on")
	}
	if b, e := blockedBy(c); b+e > 0 {
		w = append(w, "blocked by "+blockedNoun(b, e)+": resolve before anything else")
	}
	if c.Cycles.Max > 0 && c.Cycles.Count >= c.Cycles.Max {
		w = append(w, fmt.Sprintf("cycle limit reached: %d of %d fix/retry cycles used, another will be refused; this may be a crash loop, so stop and ask for help rather than retrying",
			c.Cycles.Count, c.Cycles.Max))
	}
	return w
}
