// Package monitor watches a store for agents that go quiet. It reports each
// presence transition (working→waiting, →warn→stale→working, →dead, →ended)
// once, not at every look, runs a command or posts JSON to a webhook for
// it, and can mark a checkpoint abandoned once it has been stale for a
// grace period.
//
// It lists the store once, then follows the change feed for what writes
// change, and looks again on each tick only at what time can change: the
// checkpoints silent since the previous look (a pushed-down
// ckpt.Filter{SeenBefore} query), those whose recorded process is gone,
// and those it last reported as anything but working.
package monitor

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os/exec"
	"strings"
	"time"

	ckpt "github.com/ckpt-dev/ckpt"
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
	// Log receives one line per transition.
	Log io.Writer
	// Warn receives each failure the watch goes on after, as one message:
	// an action that failed or timed out, a checkpoint that could not be
	// read or marked abandoned. Nil writes them to Log as "monitor: …"
	// lines.
	Warn func(msg string)
	// Alive checks a checkpoint's recorded agent process (process.Alive
	// for this host); nil checks none, and nothing is seen dead.
	Alive ckpt.AliveFunc
	// Escalate, when set, runs at the end of every look with its time: the
	// seed protocols' own escalations (mirror.Store.Escalate writes seed
	// 002's warning message and stale line, sitebuilder's (seed 003) STATUS.md).
	Escalate func(ctx context.Context, now time.Time)
}

// Transition is one change of a checkpoint's presence (ckpt.PresenceOf:
// working, waiting, blocked, ended, dead, warn, stale, and once done or
// failed; busy counts as working, since a tool call is not news) or its
// being marked abandoned. It is what the
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
	switch t.To {
	case ckpt.PresenceWaiting, ckpt.PresenceDead, ckpt.PresenceBlocked, ckpt.PresenceFailed:
	default:
		t.Why = ""
	}
	if t.Why != "" {
		to += " (" + t.Why + ")"
	}
	return fmt.Sprintf("%s %s: %s → %s, silent %s", t.At.Format(time.RFC3339), who, t.From, to, t.Silent.Round(time.Second))
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
		m.warnf("--exec for %s did not finish within %s: killed it and its process group (--action-timeout sets the limit): %s",
			t.ID, m.opts.ActionTimeout, bytes.TrimSpace(out))
	case err != nil:
		m.warnf("--exec for %s failed: %v: %s", t.ID, err, bytes.TrimSpace(out))
	default:
		m.logOutput(t.ID, out)
	}
}

// logOutput writes what a successful --exec command printed to the log,
// each line under the transition it answered, so a notifier's "sent" or
// its diagnostics are not lost.
func (m *Monitor) logOutput(id string, out []byte) {
	for line := range strings.Lines(string(bytes.TrimSpace(out))) {
		fmt.Fprintf(m.opts.Log, "  --exec %s: %s\n", id, strings.TrimRight(line, "\r\n"))
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
		m.warnf("--webhook for %s failed: %v", t.ID, err)
	}
}

// alarm is the liveness level of a monitored state, for ordering.
func alarm(p ckpt.PresenceState) ckpt.Liveness {
	if p == Abandoned {
		return ckpt.Live
	}
	return ckpt.PresenceView{State: p}.Alarm()
}
