package claude

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/ckpt-dev/ckpt"
	"github.com/ckpt-dev/ckpt/internal/request"
)

// Presence: what each hook event says the agent is doing, as a beat.

// signal beats with a presence state (docs/design.md, "Liveness and
// presence"): no fsync, no history. It comes after the call's events, so
// that the state is not older than the last update (a later update voids
// a reported state).
func (c *hookCall) signal(state ckpt.PresenceState, reason string) {
	ctx := c.ctx
	if ctx.Err() != nil {
		// The call's events used up its time (a locked checkpoint, warned
		// about already). A beat takes no lock: give it a moment of its own,
		// so that presence still lands and the warning stays the one cause.
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(context.WithoutCancel(ctx), lateBeat)
		defer cancel()
	}
	if err := c.h.Store.Beat(ctx, c.id, c.newSignal(state, reason)); err != nil {
		c.warn("%s: heartbeat: %v", c.id, err)
	}
}

// lateBeat bounds a beat made after the call's deadline has passed.
const lateBeat = 200 * time.Millisecond

// newSignal carries the session with the process: a store then refuses a
// late state from a session that ended (the StopFailure beat that lands
// after SessionEnd's, ckpt.Presence.ApplySignal).
func (c *hookCall) newSignal(state ckpt.PresenceState, reason string) ckpt.Signal {
	sig := ckpt.Signal{At: c.now(), State: state, Reason: reason, Session: c.in.SessionID, Begins: c.begins}
	if c.h.Process != nil {
		sig.Process = c.h.Process()
	}
	return sig
}

// answered puts work that waits for a person (`ckpt wait`) back in
// progress when a person prompts the session: the prompt is the answer,
// and waiting clears on it (docs/design.md, "Liveness and presence"). It
// returns the checkpoint as it is then.
func (c *hookCall) answered(cp *ckpt.Checkpoint) *ckpt.Checkpoint {
	if cp == nil || cp.Status != ckpt.StatusWaiting {
		return cp
	}
	next, err := c.append(request.Status{Status: ckpt.StatusInProgress,
		Reason: "answered: a prompt in session " + orDash(c.in.SessionID)}, "")
	if err != nil {
		c.warn("%s: back to work after the answer: %v", c.id, err)
		return cp
	}
	return next
}

// finalPresence is the state PreCompact and SessionEnd report. Gemini
// CLI fires PreCompress before every model request, compressing nothing:
// it is a sign of work, not a compaction.
func (c *hookCall) finalPresence(ev Event) (ckpt.PresenceState, string) {
	switch {
	case ev == EventSessionEnd:
		return ckpt.PresenceEnded, "session ended (" + orDash(c.in.Reason) + ")"
	case c.h.Client == Gemini:
		return ckpt.PresenceWorking, "model request"
	}
	return ckpt.PresenceBusy, "compacting (" + orDash(c.in.Trigger) + ")"
}

// recordCode appends the code's state when it moved since cp recorded it,
// and returns the checkpoint as it is then.
func (c *hookCall) recordCode(cp *ckpt.Checkpoint) *ckpt.Checkpoint {
	if c.h.Code == nil || cp == nil {
		return cp
	}
	cs, err := c.h.Code(c.ctx)
	if err != nil {
		c.warn("%s: reading the code's state: %v", c.id, err)
		return cp
	}
	if cs == nil || ckpt.SameCode(cp.Code, cs) {
		return cp
	}
	next, err := c.append(request.Code{State: cs}, "")
	if err != nil {
		c.warn("%s: recording the code's state: %v", c.id, err)
		return cp
	}
	return next
}

// presence is the whole of a presence-only event: one beat, nothing read
// and nothing created; a session without a checkpoint yet stays silent.
func (c *hookCall) presence(state ckpt.PresenceState, reason string) {
	err := c.h.Store.Beat(c.ctx, c.id, c.newSignal(state, reason))
	if err != nil && !errors.Is(err, ckpt.ErrNotFound) {
		c.warn("%s: heartbeat: %v", c.id, err)
	}
}

// toolReason names the tool a PreToolUse starts, with the first line of
// its command or description when it has one: "Bash: go test ./...".
func toolReason(in Input) string {
	name := orDash(in.ToolName)
	if args, ok := objectMembers(in.ToolInput); ok {
		for _, key := range []string{"command", "description"} {
			raw, _ := args.get(key)
			if s := firstLine(lenientString(raw), 80); s != "" {
				return name + ": " + s
			}
		}
	}
	return name
}

// waitingNotification reports whether a notification type (lower case)
// means the agent waits for a person (Gemini CLI's ToolPermission
// included).
func waitingNotification(typ string) bool {
	switch typ {
	case "permission_prompt", "idle_prompt", "elicitation_dialog", "toolpermission":
		return true
	}
	return false
}

// waitingReason is why a Notification means waiting, "" when it does not
// (auth_success, …). A payload without a type (older clients) is read by
// its message.
func waitingReason(in Input) string {
	typ := strings.TrimSpace(in.NotificationType)
	if typ == "" {
		switch msg := strings.ToLower(in.Message); {
		case strings.Contains(msg, "permission"):
			typ = "permission_prompt"
		case strings.Contains(msg, "waiting for your input"):
			typ = "idle_prompt"
		}
	}
	if !waitingNotification(strings.ToLower(typ)) {
		return ""
	}
	if m := firstLine(in.Message, 120); m != "" {
		return typ + ": " + m
	}
	return typ
}
