// Package monitor watches a store for agents that go quiet. It reports each
// liveness transition (live→warn→stale→live…) once, not at every tick, runs
// a command or posts JSON to a webhook for it, and can mark a checkpoint
// abandoned once it has been stale for a grace period.
package monitor

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os/exec"
	"sort"
	"strings"
	"time"

	ckpt "github.com/ckpt-dev/ckpt"
	"github.com/ckpt-dev/ckpt/render"
)

// DefaultActionTimeout bounds an action when Options.ActionTimeout is 0.
const DefaultActionTimeout = 30 * time.Second

// Abandoned is the state reported when the monitor marks a checkpoint
// abandoned.
const Abandoned ckpt.PresenceState = "abandoned"

// Options configure a Monitor. Store is required; zero values elsewhere mean
// "off" (Exec, Webhook, AbandonAfter) or the default (Now: time.Now,
// Thresholds: 2× and 4× each checkpoint's interval, HTTPClient:
// http.DefaultClient's settings, ActionTimeout: DefaultActionTimeout).
type Options struct {
	Store        ckpt.Store
	Thresholds   ckpt.Thresholds
	AbandonAfter time.Duration // stale this long → status abandoned
	Exec         string        // shell command run once per transition
	Webhook      string        // URL that receives each transition as JSON
	Filter       ckpt.Filter
	Now          func() time.Time
	HTTPClient   *http.Client
	// ActionTimeout bounds each --exec command and each webhook request
	// (default DefaultActionTimeout). A command still running then is
	// killed with its whole process group; either way the watch goes on.
	ActionTimeout time.Duration
	// Log receives one line per transition and per failed action.
	Log io.Writer
	// Alive checks a checkpoint's recorded agent process (process.Alive
	// for this host); nil checks none, and nothing is seen dead.
	Alive ckpt.AliveFunc
}

// Transition is one change of a checkpoint's presence (ckpt.PresenceOf:
// working, waiting, ended, dead, warn, stale; busy counts as working, since
// a tool call is not news) or its being marked abandoned. It is what the
// webhook receives and what the command reads on its standard input.
type Transition struct {
	ID     string             `json:"id"`
	Agent  string             `json:"agent,omitempty"`
	Title  string             `json:"title,omitempty"`
	Status ckpt.Status        `json:"status"`
	From   ckpt.PresenceState `json:"from"`
	To     ckpt.PresenceState `json:"to"`
	// Why is the presence's reason: what the agent waits on, which process
	// is gone, which threshold passed.
	Why      string        `json:"why,omitempty"`
	Silent   time.Duration `json:"silent_ns"`
	LastSeen time.Time     `json:"last_seen"`
	At       time.Time     `json:"at"`
}

func (t Transition) String() string {
	who := t.ID
	if t.Agent != "" {
		who += " (" + t.Agent + ")"
	}
	to := string(t.To)
	if t.Why != "" && (t.To == ckpt.PresenceWaiting || t.To == ckpt.PresenceDead) {
		to += " (" + t.Why + ")"
	}
	return fmt.Sprintf("%s %s: %s → %s, silent %s", t.At.Format(time.RFC3339), who, t.From, to, t.Silent.Round(time.Second))
}

// Monitor remembers each checkpoint's last presence between ticks. It is
// not safe for concurrent use; Run drives it from one goroutine.
type Monitor struct {
	opts    Options
	last    map[string]ckpt.PresenceState
	damaged string // the damaged IDs last reported
}

// New returns a Monitor. It fails if opts.Store is nil.
func New(opts Options) (*Monitor, error) {
	if opts.Store == nil {
		return nil, fmt.Errorf("%w: monitor needs a store", ckpt.ErrInvalid)
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.HTTPClient == nil {
		opts.HTTPClient = &http.Client{}
	}
	if opts.ActionTimeout < 0 {
		return nil, fmt.Errorf("%w: action timeout %s is negative: give a positive duration, or 0 for the default %s", ckpt.ErrInvalid, opts.ActionTimeout, DefaultActionTimeout)
	}
	if opts.ActionTimeout == 0 {
		opts.ActionTimeout = DefaultActionTimeout
	}
	if opts.Log == nil {
		opts.Log = io.Discard
	}
	return &Monitor{opts: opts, last: map[string]ckpt.PresenceState{}}, nil
}

// Tick looks at every checkpoint once and returns the transitions since the
// previous tick, after acting on them. The first tick reports every
// checkpoint that is not live (a monitor started late still warns). Action
// failures (command, webhook) are logged, not returned: one bad hook must
// not stop the watch. Only a failure to read the store is returned.
func (m *Monitor) Tick(ctx context.Context) ([]Transition, error) {
	now := m.opts.Now().UTC()
	cs, err := ckpt.ListAll(ctx, m.opts.Store, m.opts.Filter)
	var damaged *ckpt.DamagedError
	if errors.As(err, &damaged) {
		// One damaged checkpoint must not blind the watch over the others:
		// say so when the damage changes, and go on with what was read.
		if key := strings.Join(damaged.IDs, " "); key != m.damaged {
			fmt.Fprintf(m.opts.Log, "monitor: %v\n", damaged)
			m.damaged = key
		}
	} else if err != nil {
		return nil, err
	} else {
		m.damaged = ""
	}
	seen := make(map[string]bool, len(cs))
	var out []Transition
	for i := range cs {
		c := &cs[i]
		seen[c.ID] = true
		v := ckpt.PresenceOf(c, now, m.opts.Thresholds, m.opts.Alive)
		lv, age := v.State, v.Silent
		if lv == ckpt.PresenceBusy {
			lv = ckpt.PresenceWorking
		}
		if v.Alarm() == ckpt.Stale && m.opts.AbandonAfter > 0 {
			_, stale := m.opts.Thresholds.ForInterval(c.Heartbeat.Interval.D())
			if age > stale+m.opts.AbandonAfter {
				if done, err := m.abandon(ctx, c, age, now); err != nil {
					fmt.Fprintf(m.opts.Log, "monitor: marking %s abandoned: %v\n", c.ID, err)
				} else if done {
					lv = Abandoned
				}
			}
		}
		from, known := m.last[c.ID]
		if !known {
			from = ckpt.PresenceWorking
		}
		if lv == ckpt.PresenceNone {
			delete(m.last, c.ID)
			continue
		}
		m.last[c.ID] = lv
		if lv == from {
			continue
		}
		out = append(out, Transition{ID: c.ID, Agent: render.AgentName(c.Agent), Title: c.Title, Status: c.Status, From: from, To: lv, Why: v.Why, Silent: age, LastSeen: c.LastSeen(), At: now})
	}
	for id := range m.last {
		if !seen[id] {
			delete(m.last, id)
		}
	}
	// The order of every stale report (render.SilenceLess): dead and stale
	// first, then warn, then the rest, each by ID.
	sort.Slice(out, func(i, j int) bool {
		return render.SilenceLess(alarm(out[i].To), out[i].ID, alarm(out[j].To), out[j].ID)
	})
	for _, t := range out {
		fmt.Fprintln(m.opts.Log, t)
		m.act(ctx, t)
	}
	return out, nil
}

// abandon marks c abandoned through the library's lifecycle rule, a
// compare-and-swap that looks again: an agent seen since the threshold
// (age before now) is alive and left alone, and so is work that ended.
func (m *Monitor) abandon(ctx context.Context, c *ckpt.Summary, age time.Duration, now time.Time) (bool, error) {
	_, done, err := ckpt.AbandonCheckpoint(ctx, m.opts.Store, c.ID, now.Add(-age).Add(time.Nanosecond),
		fmt.Sprintf("no sign of life for %s", age.Round(time.Second)), ckpt.Lifecycle{At: now, Actor: ckpt.Actor{Agent: "ckpt-monitor"}})
	return done, err
}

// act runs the actions for t, each bounded by ActionTimeout.
func (m *Monitor) act(ctx context.Context, t Transition) {
	body, _ := json.Marshal(t)
	if m.opts.Exec != "" {
		m.runExec(ctx, t, body)
	}
	if m.opts.Webhook != "" {
		m.postWebhook(ctx, t, body)
	}
}

// runExec runs the --exec command for t in a process group of its own.
// At the timeout (or when ctx ends) the whole group is killed: a shell that
// waits for a child it started must not hold the watch, nor leave the child
// behind. Output pipes that a leftover process still holds are closed soon
// after, so a command that exits but leaves a daemon running returns too.
func (m *Monitor) runExec(ctx context.Context, t Transition, body []byte) {
	ctx, cancel := context.WithTimeout(ctx, m.opts.ActionTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "sh", "-c", m.opts.Exec)
	cmd.Stdin = bytes.NewReader(body)
	cmd.Env = append(cmd.Environ(), "CKPT_ID="+t.ID, "CKPT_AGENT="+t.Agent, "CKPT_FROM="+string(t.From), "CKPT_TO="+string(t.To))
	ownProcessGroup(cmd)
	cmd.WaitDelay = time.Second
	out, err := cmd.CombinedOutput()
	switch {
	case ctx.Err() == context.DeadlineExceeded:
		fmt.Fprintf(m.opts.Log, "monitor: --exec for %s did not finish within %s: killed it and its process group (--action-timeout sets the limit): %s\n",
			t.ID, m.opts.ActionTimeout, bytes.TrimSpace(out))
	case err != nil:
		fmt.Fprintf(m.opts.Log, "monitor: --exec for %s failed: %v: %s\n", t.ID, err, bytes.TrimSpace(out))
	}
}

// postWebhook posts t to the webhook, giving up at the timeout.
func (m *Monitor) postWebhook(ctx context.Context, t Transition, body []byte) {
	ctx, cancel := context.WithTimeout(ctx, m.opts.ActionTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, m.opts.Webhook, bytes.NewReader(body))
	if err == nil {
		req.Header.Set("Content-Type", "application/json")
		var resp *http.Response
		if resp, err = m.opts.HTTPClient.Do(req); err == nil {
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode >= 300 {
				err = fmt.Errorf("HTTP %s", resp.Status)
			}
		}
	}
	if ctx.Err() == context.DeadlineExceeded {
		err = fmt.Errorf("no answer within %s (--action-timeout sets the limit)", m.opts.ActionTimeout)
	}
	if err != nil {
		fmt.Fprintf(m.opts.Log, "monitor: --webhook for %s failed: %v\n", t.ID, err)
	}
}

// Run ticks on every value from ticks until ctx is done or ticks is closed,
// and returns nil then (Ctrl-C is a clean stop). It ticks once at the start.
func (m *Monitor) Run(ctx context.Context, ticks <-chan time.Time) error {
	for {
		if _, err := m.Tick(ctx); err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return err
		}
		select {
		case <-ctx.Done():
			return nil
		case _, ok := <-ticks:
			if !ok {
				return nil
			}
		}
	}
}

// alarm is the liveness level of a monitored state, for ordering.
func alarm(p ckpt.PresenceState) ckpt.Liveness {
	if p == Abandoned {
		return ckpt.Live
	}
	return ckpt.PresenceView{State: p}.Alarm()
}
