package claude

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/ckpt-dev/ckpt"
	"github.com/ckpt-dev/ckpt/internal/gitroot"
	"github.com/ckpt-dev/ckpt/internal/syncbuf"
)

// Environment variables a hook call reads besides EnvAgent, EnvStateDir and
// CKPT_ID.
const (
	// EnvLoop turns the task loop on for every checkpoint the hooks write
	// (1, true, yes or on); a checkpoint's task_loop meta key overrides it.
	EnvLoop = "CKPT_LOOP"
	// EnvHookTimeout shortens the time a hook may take (a Go duration such
	// as 500ms); it never lengthens DefaultTimeout or SessionEndTimeout.
	EnvHookTimeout = "CKPT_HOOK_TIMEOUT"
)

// Call is one hook call as a client makes it: the event's name, its JSON
// payload and where to report.
type Call struct {
	Event  string // the event's name as the client passes it ("" when missing)
	Client Client
	In     io.Reader // the client's JSON payload
	// Out receives what the client should read (nothing, or one JSON
	// object); ErrOut at most one warning line.
	Out, ErrOut io.Writer
	Now         func() time.Time
	Getenv      func(string) string
	// WorkDir is where the store and the repository are looked for when
	// the payload has no usable cwd.
	WorkDir string
	// OpenStore opens the store found from start; warnings the store
	// prints while working go to warn. It runs under the hook's deadline.
	OpenStore func(start string, warn io.Writer) (ckpt.Store, error)
	// Timeout, when > 0, shortens every hook call to at most this long.
	Timeout time.Duration
	Loop    TaskLoop
	// Warnings are problems found before the call (a bad flag or
	// variable); they are reported with the call's own, on the one line.
	Warnings []string
	// Process returns the agent client's process, recorded with every
	// presence signal (Handler.Process).
	Process func() *ckpt.Process
	// Wire, when set, fills the parts of the Handler other packages own
	// (Code, Prompt, SyncPlan, Final) once the store is open (h.Store is
	// nil when it could not be), for every event but the presence-only
	// ones, which use none of them. start is the directory the session
	// works in; warnings written to warn ("ckpt: warning: …" lines) join
	// the call's. Run bounds SyncPlan and every Final step by the deadline.
	Wire func(ctx context.Context, h *Handler, start string, warn io.Writer)
}

// Run handles one hook call fail-forward: it never fails and never panics.
// Whatever goes wrong (no store, a bad payload, a locked or damaged
// checkpoint) becomes part of one warning line on ErrOut
// ("ckpt hook EVENT: warning: …"), and Out receives only what is safe for
// the client to read.
func Run(ctx context.Context, c Call) {
	warnings := append([]string(nil), c.Warnings...)
	var output []byte
	defer func() {
		if p := recover(); p != nil {
			output = nil
			warnings = append(warnings, fmt.Sprintf("internal error: %v", p))
		}
		Result{Output: output, Warnings: warnings}.Write(c.Event, c.Out, c.ErrOut)
	}()
	if c.Event == "" {
		return
	}
	ev, err := ParseEvent(c.Event)
	if err != nil {
		warnings = append(warnings, err.Error())
		return
	}
	in, err := ParseInput(c.In)
	if err != nil {
		warnings = append(warnings, err.Error())
		return
	}
	res, storeWarnings := c.handle(ctx, ev, in)
	output = res.Output
	warnings = append(warnings, res.Warnings...)
	for _, l := range strings.Split(storeWarnings.String(), "\n") {
		if l = strings.TrimSpace(strings.TrimPrefix(l, "ckpt: warning:")); l != "" {
			warnings = append(warnings, l)
		}
	}
}

// handle opens the store under the deadline, builds the Handler and
// handles ev; the store's own warnings are collected in the buffer.
func (c Call) handle(ctx context.Context, ev Event, in Input) (Result, *syncbuf.Buffer) {
	start := c.WorkDir
	// The payload's cwd is usually where the client started the hook: then
	// it is start either way, and needs no stat.
	if cwd := filepath.Clean(in.CWD); in.CWD != "" && filepath.IsAbs(cwd) && (cwd == start || isDir(cwd)) {
		start = cwd
	}
	getenv := c.Getenv
	if getenv == nil {
		getenv = func(string) string { return "" }
	}
	h := &Handler{
		Client:   c.Client,
		Now:      c.Now,
		Getenv:   getenv,
		Loop:     c.Loop,
		StateDir: StateDir(getenv, getenv("HOME")),
		Process:  c.Process,
	}
	if !ev.PresenceOnly() || sanitizeID(getenv(EnvID)) == "" {
		// The repository names the checkpoint unless CKPT_ID does, and
		// the events that write history record it.
		h.RepoRoot = gitroot.Find(start)
	}
	// The store's warnings, locked: a write the hook stopped waiting for
	// may still print while the hook reads them.
	storeWarnings := &syncbuf.Buffer{}
	// One deadline bounds the whole call, the store's opening included, so
	// SessionEnd stays within Claude Code's budget, and Handle's own bound
	// sets no second timer.
	ctx, cancel := withDeadline(ctx, time.Now().Add(c.limit(ev)))
	defer cancel()
	var st ckpt.Store
	var err error
	if ev.PresenceOnly() {
		// One beat, which takes no lock: nothing here waits on the
		// deadline but a store that does so through ctx (a server), so no
		// goroutine and no timer stand guard; a filesystem that stops
		// answering is left to the client's own limit on the hook.
		st, err = c.OpenStore(start, storeWarnings)
	} else {
		// The store's opening reads its config: a network drive may stop
		// answering.
		err = Bounded(ctx, func() error {
			var err error
			st, err = c.OpenStore(start, storeWarnings)
			return err
		})
	}
	if err != nil {
		h.OpenErr = err
	} else {
		defer st.Close()
		h.Store = &BoundedStore{Store: st}
	}
	if c.Wire != nil && !ev.PresenceOnly() {
		c.Wire(ctx, h, start, storeWarnings)
		boundSteps(h)
	}
	return h.Handle(ctx, ev, in), storeWarnings
}

// limit is how long a call of ev may take: DefaultTimeout, or
// SessionEndTimeout, shortened by c.Timeout.
func (c Call) limit(ev Event) time.Duration {
	limit := DefaultTimeout
	if ev == EventSessionEnd {
		limit = SessionEndTimeout
	}
	if c.Timeout > 0 && c.Timeout < limit {
		limit = c.Timeout
	}
	return limit
}

// boundSteps makes h's plan sync and final steps give up when their
// context ends: plan.md's lock or a tracker may keep them waiting.
func boundSteps(h *Handler) {
	if sync := h.SyncPlan; sync != nil {
		h.SyncPlan = func(ctx context.Context, id, path string) error {
			return Bounded(ctx, func() error { return sync(ctx, id, path) })
		}
	}
	for i, step := range h.Final {
		run := step.Run
		h.Final[i].Run = func(ctx context.Context, c *ckpt.Checkpoint) error {
			return Bounded(ctx, func() error { return run(ctx, c) })
		}
	}
}

// AgentID is the agent the hooks record: $CKPT_AGENT, else the client's
// name (claude-code, codex, gemini-cli).
func AgentID(c Client, getenv func(string) string) string {
	return (&hookCall{h: &Handler{Client: c, Getenv: getenv}}).agent().ID
}

// IsTruthy reads an on/off variable such as CKPT_LOOP: 1, true, yes and on
// (any case) are on, and so is whatever strconv.ParseBool takes as true.
func IsTruthy(v string) bool {
	if v == "" {
		return false // the usual case, without strconv's error for it
	}
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "1", "true", "yes", "on":
		return true
	}
	b, _ := strconv.ParseBool(v)
	return b
}

func isDir(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.IsDir()
}
