package claude

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/ckpt-dev/ckpt"
	"github.com/ckpt-dev/ckpt/filestore"
	"github.com/ckpt-dev/ckpt/internal/render"
)

// The presence replay corpus: every hook trace (the real clients' in
// testdata/traces, the status corpus's hand-written and generated ones in
// testdata/presence) is replayed through the hook handler into a real
// local store, and after each line the presence every view shows
// (ckpt.PresenceOf) must be the state its <trace>.states file expects.
// docs/design.md, "Liveness and presence", holds the rules; testdata/
// presence/README.md the corpus.

// replayLine is one line of a trace: the shared format (client, version,
// event, offset_ms, real, payload) and the status corpus's own fields.
type replayLine struct {
	Client   string          `json:"client"`
	Event    string          `json:"event"`
	OffsetMS int64           `json:"offset_ms"`
	Real     bool            `json:"real"`
	Payload  json.RawMessage `json:"payload"`
	// PID is the client process that started the hook (status corpus);
	// 0: the replay assigns one (a new process at each SessionStart
	// whose source is startup or resume, the same one otherwise).
	PID int `json:"pid,omitempty"`
	// DeliverMS is when the hook's writes land, for a slow hook or an
	// out-of-order delivery; 0: at offset_ms.
	DeliverMS int64 `json:"deliver_ms,omitempty"`
}

// Pseudo-events of the status corpus: what happens around the hooks.
const (
	evExit    = "#exit"    // the process PID exits (or is killed): payload {}
	evAdvance = "#advance" // time passes to offset_ms; nothing is delivered
	evStatus  = "#status"  // a person runs ckpt wait/block/done: payload {"status","reason"}
	evTakeNew = "#takeover"
)

// replayBase is the time of a trace's first hook.
var replayBase = time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)

// replayProc is the process a replay line runs in, on the replay's host.
func replayProc(pid int) *ckpt.Process {
	return &ckpt.Process{Host: "replay-host", PID: pid, Start: fmt.Sprint(1000 + pid)}
}

// replayer replays one trace.
type replayer struct {
	t       *testing.T
	h       *Handler
	store   ckpt.Store
	alive   map[int]bool
	pid     int // the process of the line being delivered
	lastPID int // the client process of the trace so far
	nextPID int
	now     time.Time // the latest delivery: when views judge
	started time.Time // the start of the hook being delivered
}

func newReplayer(t *testing.T, client Client) *replayer {
	dir := t.TempDir()
	st, err := filestore.Init(filepath.Join(dir, ".ckpt"), filestore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	r := &replayer{t: t, store: st, alive: map[int]bool{}, nextPID: 100, now: replayBase}
	r.h = &Handler{Store: st, Client: client, RepoRoot: "/w/app", StateDir: filepath.Join(dir, "state"),
		Getenv:  envOf(map[string]string{EnvID: "replay"}),
		Now:     func() time.Time { return r.started },
		Process: func() *ckpt.Process { return replayProc(r.pid) },
	}
	return r
}

// aliveFunc is the process probe of the replay's host.
func (r *replayer) aliveFunc(p *ckpt.Process) (bool, bool) {
	if p == nil || p.Host != "replay-host" {
		return false, false
	}
	return r.alive[p.PID] && p.Start == fmt.Sprint(1000+p.PID), true
}

// processOf is the process that starts line l: its own, or the trace's
// client process, a new one at a startup or resume SessionStart (the
// previous one has exited by then).
func (r *replayer) processOf(l replayLine, in Input) int {
	if l.PID != 0 {
		if _, known := r.alive[l.PID]; !known {
			r.alive[l.PID] = true
		}
		r.lastPID = l.PID
		return l.PID
	}
	ev, _ := ParseEvent(l.Event)
	if r.lastPID == 0 || ev == EventSessionStart && (in.Source == "startup" || in.Source == "resume") {
		if r.lastPID != 0 {
			r.alive[r.lastPID] = false
		}
		r.nextPID++
		r.lastPID = r.nextPID
		r.alive[r.lastPID] = true
	}
	return r.lastPID
}

// deliver runs line l.
func (r *replayer) deliver(l replayLine) {
	t := r.t
	// The hook's clock reads its start; a view judges when it landed.
	r.started = replayBase.Add(time.Duration(l.OffsetMS) * time.Millisecond)
	if at := replayBase.Add(time.Duration(max(l.OffsetMS, l.DeliverMS)) * time.Millisecond); at.After(r.now) {
		r.now = at
	}
	ctx := context.Background()
	switch l.Event {
	case evExit:
		pid := l.PID
		if pid == 0 {
			pid = r.lastPID
		}
		r.alive[pid] = false
		return
	case evAdvance:
		return
	case evStatus:
		var x struct{ Status, Reason string }
		if err := json.Unmarshal(l.Payload, &x); err != nil {
			t.Fatal(err)
		}
		r.personWrites(ctx, x.Status, x.Reason)
		return
	case evTakeNew:
		e := ckpt.MustEvent(ckpt.EventTakenOver, r.started, ckpt.Actor{Agent: "operator"}, ckpt.Takeover{To: ckpt.Agent{ID: "agent-2"}})
		if _, err := r.store.Append(ctx, "replay", e, ckpt.AppendOptions{}); err != nil {
			t.Fatalf("takeover: %v", err)
		}
		return
	}
	ev, err := ParseEvent(l.Event)
	if err != nil {
		t.Fatal(err)
	}
	in, err := ParseInput(bytes.NewReader(l.Payload))
	if err != nil {
		t.Fatalf("%s payload: %v", l.Event, err)
	}
	r.pid = r.processOf(l, in)
	if !installed(r.h.Client, l.Event, in) {
		return // ckpt's install does not run a hook for it
	}
	res := r.h.Handle(ctx, ev, in)
	for _, w := range res.Warnings {
		if !strings.Contains(w, "backup") {
			t.Logf("%s warning: %s", l.Event, w)
		}
	}
}

// installed reports whether `ckpt hooks install` registers a hook that
// the client runs for this event: the event is in hookSpecs and its
// matcher (a regular expression over the tool, the SessionStart source or
// the notification type) matches.
func installed(client Client, event string, in Input) bool {
	for _, spec := range hookSpecs(client) {
		if !strings.EqualFold(spec.event, event) {
			continue
		}
		if spec.matcher == "" {
			return true
		}
		subject := in.ToolName
		switch ev, _ := ParseEvent(event); ev {
		case EventSessionStart:
			subject = in.Source
		case EventNotification:
			subject = in.NotificationType
		}
		return regexp.MustCompile("^(?:" + spec.matcher + ")$").MatchString(subject)
	}
	return false
}

// personWrites is what a person's command writes: ckpt wait, block, done.
func (r *replayer) personWrites(ctx context.Context, status, reason string) {
	var e ckpt.Event
	actor := ckpt.Actor{Agent: "operator"}
	switch status {
	case "blocked":
		e = ckpt.MustEvent(ckpt.EventBlocker, r.started, actor, ckpt.BlockerChange{Text: reason})
	case "unblocked":
		e = ckpt.MustEvent(ckpt.EventBlocker, r.started, actor, ckpt.BlockerChange{Clear: true})
	case "blocking-error":
		e = ckpt.MustEvent(ckpt.EventError, r.started, actor, ckpt.ErrorChange{Message: reason, Blocking: true})
	case "error-cleared":
		e = ckpt.MustEvent(ckpt.EventError, r.started, actor, ckpt.ErrorChange{Clear: true})
	default:
		st := ckpt.Status(status)
		e = ckpt.MustEvent(ckpt.EventStatus, r.started, actor, ckpt.StatusChange{Status: st, Reason: reason})
	}
	if _, err := r.store.Append(ctx, "replay", e, ckpt.AppendOptions{}); err != nil {
		r.t.Fatalf("%s: %v", status, err)
	}
}

// view is the presence every view shows now, "absent" before the
// checkpoint exists; it checks that ckpt why explains it.
func (r *replayer) view() (ckpt.PresenceView, string) {
	c, err := r.store.Get(context.Background(), "replay", 0)
	if errors.Is(err, ckpt.ErrNotFound) {
		return ckpt.PresenceView{}, "absent"
	}
	if err != nil {
		r.t.Fatal(err)
	}
	s := c.Summary()
	v := ckpt.PresenceOf(&s, r.now, ckpt.Thresholds{}, r.aliveFunc)
	w := render.NewWhy(&s, r.now, ckpt.Thresholds{}, r.aliveFunc)
	rule, ok := ckpt.PresenceRuleOf(v.Rule)
	if !ok || rule.State != v.State || w.Rule.N != v.Rule || w.Rule.Change == "" || w.Presence.State != v.State {
		r.t.Errorf("ckpt why does not explain %s: rule %d (%+v), why %+v", v.State, v.Rule, rule, w.Rule)
	}
	return v, string(v.State)
}

// readTrace reads a trace file's lines.
func readTrace(t *testing.T, path string) []replayLine {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []replayLine
	for i, raw := range bytes.Split(bytes.TrimSpace(b), []byte("\n")) {
		var l replayLine
		if err := json.Unmarshal(raw, &l); err != nil {
			t.Fatalf("%s:%d: %v", path, i+1, err)
		}
		out = append(out, l)
	}
	return out
}

// readStates reads a .states file: per line "EVENT<TAB>STATE" (a comment
// after " #", lines starting with "# " and blank lines skipped), then "(end)<TAB>STATE": the state
// once every process of the trace has exited.
func readStates(t *testing.T, path string) (events, states []string) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatalf("no expectations for a trace: %v (write %s: one line per event, EVENT<TAB>STATE, then (end)<TAB>STATE)", err, filepath.Base(path))
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "# ") {
			continue // a comment; "#exit" and the like are pseudo-events
		}
		ev, st, ok := strings.Cut(line, "\t")
		if !ok {
			t.Fatalf("%s: %q: want EVENT<TAB>STATE", path, line)
		}
		if i := strings.Index(st, " #"); i >= 0 {
			st = st[:i]
		}
		events, states = append(events, ev), append(states, strings.TrimSpace(st))
	}
	return events, states
}

// clientOf maps a trace's client name to the hook handler's.
func clientOf(name string) Client {
	switch name {
	case "codex":
		return Codex
	case "gemini":
		return Gemini
	}
	return Claude
}

// replayFile replays one trace against its expectations and returns the
// number of states checked and the misclassifications.
func replayFile(t *testing.T, trace string, lines []replayLine, wantEvents, want []string) (checked int, wrong []string) {
	if len(want) != len(lines)+1 || wantEvents[len(wantEvents)-1] != "(end)" {
		t.Fatalf("%s: %d expectations for %d lines: want one per line and a last (end)", trace, len(want), len(lines))
	}
	r := newReplayer(t, clientOf(lines[0].Client))
	for i, l := range lines {
		if wantEvents[i] != l.Event {
			t.Fatalf("%s line %d: the expectation is for %s, the trace has %s", trace, i+1, wantEvents[i], l.Event)
		}
		r.deliver(l)
		v, got := r.view()
		checked++
		if got != want[i] {
			wrong = append(wrong, fmt.Sprintf("%s line %d (%s): %s (rule %d: %s), want %s", trace, i+1, l.Event, got, v.Rule, v.Why, want[i]))
		}
	}
	for pid := range r.alive {
		r.alive[pid] = false
	}
	r.now = r.now.Add(time.Second)
	v, got := r.view()
	checked++
	if got != want[len(want)-1] {
		wrong = append(wrong, fmt.Sprintf("%s (end): %s (rule %d: %s), want %s", trace, got, v.Rule, v.Why, want[len(want)-1]))
	}
	return checked, wrong
}

// corpus lists the traces: the real clients' and the status corpus's.
func corpus(t *testing.T) []string {
	var all []string
	for _, dir := range []string{"testdata/traces", "testdata/presence"} {
		m, err := filepath.Glob(filepath.Join(dir, "*.jsonl"))
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, m...)
	}
	sort.Strings(all)
	return all
}

// TestPresenceReplayCorpus replays every trace, as recorded and with every
// hook delivered twice (a retried hook), wants zero misclassifications,
// and checks that ckpt why explains every state it meets.
func TestPresenceReplayCorpus(t *testing.T) {
	traces := corpus(t)
	if len(traces) < 100 {
		t.Errorf("the corpus has %d traces, want at least 100", len(traces))
	}
	var checked, real int
	var wrong []string
	for _, path := range traces {
		lines := readTrace(t, path)
		if lines[0].Real {
			real++
		}
		events, want := readStates(t, strings.TrimSuffix(path, ".jsonl")+".states")
		name := filepath.Base(path)
		t.Run(name, func(t *testing.T) {
			n, w := replayFile(t, name, lines, events, want)
			checked += n
			wrong = append(wrong, w...)
			// Delivered twice: a retried hook changes nothing a view shows.
			var twice []replayLine
			var twiceEvents, twiceWant []string
			for i, l := range lines {
				twice, twiceEvents, twiceWant = append(twice, l), append(twiceEvents, events[i]), append(twiceWant, want[i])
				if !strings.HasPrefix(l.Event, "#") { // a hook, not what happens around it
					twice, twiceEvents, twiceWant = append(twice, l), append(twiceEvents, events[i]), append(twiceWant, want[i])
				}
			}
			twiceEvents, twiceWant = append(twiceEvents, "(end)"), append(twiceWant, want[len(want)-1])
			n, w = replayFile(t, name+" (each hook twice)", twice, twiceEvents, twiceWant)
			checked += n
			wrong = append(wrong, w...)
		})
	}
	for _, w := range wrong {
		t.Error(w)
	}
	t.Logf("%d traces (%d real), %d states checked, %d misclassified", len(traces), real, checked, len(wrong))
}
