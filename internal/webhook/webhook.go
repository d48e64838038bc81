// Package webhook posts a JSON body to each configured URL on every
// transition of a checkpoint into a state that needs a person or ends the
// work (waiting, blocked, dead, stale, failed, done), as `ckpt serve
// --webhook` does: signed with HMAC-SHA256 when a secret is set, retried
// with backoff, never in a writer's way.
//
// A Notifier follows the store's change feed (status changes are seen at
// once) and looks at the live checkpoints on every tick (what time and
// heartbeats change: stale, dead, waiting). It judges each checkpoint with
// ckpt.StateOf, the state every view shows. Each URL has its own queue
// and sender goroutine: a slow or failing receiver delays only its own
// deliveries, and a full queue drops (counted) rather than block.
package webhook

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	ckpt "github.com/ckpt-dev/ckpt"
	"github.com/ckpt-dev/ckpt/internal/backoff"
)

// States are the states a webhook is told about by default.
var States = []ckpt.PresenceState{"waiting", "blocked", "dead", "stale", "failed", "done"}

// HeaderSignature carries "sha256=" and the hex HMAC-SHA256 of the body
// under the secret.
const HeaderSignature = "X-Ckpt-Signature"

// Target is one webhook: where, which transitions, which body.
type Target struct {
	URL    string               // where to POST (the fragment, if any, removed)
	States []ckpt.PresenceState // the states it is told about (default States)
	Prefix string               // only IDs under it ("" for all)
	Slack  bool                 // a Slack-compatible body {"text": …}
}

// ParseTarget reads a --webhook value: an http or https URL whose
// fragment may hold options, e.g.
//
//	https://hooks.example.com/ckpt#state=waiting,dead&prefix=kai-7/&format=slack
//
// The fragment is never sent (browsers and HTTP clients keep it local), so
// it cannot leak to the receiver. state lists states (of States), prefix
// keeps IDs under it, format is json (default) or slack.
func ParseTarget(raw string) (Target, error) {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return Target{}, fmt.Errorf("%w: --webhook %q: give an http:// or https:// URL, e.g. https://hooks.example.com/ckpt", ckpt.ErrInvalid, raw)
	}
	opts, err := url.ParseQuery(u.Fragment)
	if err != nil {
		return Target{}, fmt.Errorf("%w: --webhook %q: the options after # are key=value pairs joined by &: %v", ckpt.ErrInvalid, raw, err)
	}
	u.Fragment, u.RawFragment = "", ""
	t := Target{URL: u.String(), States: States}
	for k, vs := range opts {
		v := strings.Join(vs, ",")
		switch k {
		case "state":
			t.States = nil
			for _, w := range strings.Split(v, ",") {
				st := ckpt.PresenceState(strings.TrimSpace(w))
				if !slices.Contains(States, st) {
					return Target{}, fmt.Errorf("%w: --webhook %q: state %q: use some of waiting, blocked, dead, stale, failed, done", ckpt.ErrInvalid, raw, w)
				}
				t.States = append(t.States, st)
			}
		case "prefix":
			t.Prefix = v
		case "format":
			switch v {
			case "json":
			case "slack":
				t.Slack = true
			default:
				return Target{}, fmt.Errorf("%w: --webhook %q: format %q: use json or slack", ckpt.ErrInvalid, raw, v)
			}
		default:
			return Target{}, fmt.Errorf("%w: --webhook %q: unknown option %q after #: use state, prefix or format", ckpt.ErrInvalid, raw, k)
		}
	}
	return t, nil
}

// wants reports whether t is told about e.
func (t Target) wants(e Event) bool {
	return slices.Contains(t.States, e.To) && strings.HasPrefix(e.ID, t.Prefix)
}

// Event is the JSON body a webhook receives for one transition.
type Event struct {
	Type   string             `json:"type"` // "transition"
	ID     string             `json:"id"`
	Title  string             `json:"title,omitempty"`
	Agent  string             `json:"agent,omitempty"`
	Parent string             `json:"parent,omitempty"`
	Status ckpt.Status        `json:"status"`
	From   ckpt.PresenceState `json:"from"` // "" when first seen
	To     ckpt.PresenceState `json:"to"`
	Reason string             `json:"reason,omitempty"`
	Rev    int64              `json:"rev"`
	At     time.Time          `json:"at"`
	// Delivery names the transition the same on every server that judges
	// it (DeliveryID), also sent as X-Ckpt-Delivery: a receiver that must
	// act once drops a delivery it has seen (see the lease's hold window).
	Delivery string `json:"delivery"`
}

// DeliveryID is the Delivery of checkpoint id's transition to state to at
// revision rev, in the state that began at since.
func DeliveryID(id string, to ckpt.PresenceState, rev int64, since time.Time) string {
	h := sha256.Sum256(fmt.Appendf(nil, "%s\x00%s\x00%d\x00%d", id, to, rev, since.UnixNano()))
	return hex.EncodeToString(h[:16])
}

// body encodes e for t.
func (t Target) body(e Event) []byte {
	var v any = e
	if t.Slack {
		line := fmt.Sprintf("ckpt: %s", e.ID)
		if e.Agent != "" {
			line += " (" + e.Agent + ")"
		}
		line += " is " + string(e.To)
		if e.Reason != "" {
			line += ": " + e.Reason
		}
		if e.Title != "" {
			line += " — " + e.Title
		}
		v = struct {
			Text string `json:"text"`
		}{line}
	}
	b, _ := json.Marshal(v) // strings and times always encode
	return b
}

// Sign is the X-Ckpt-Signature value of body under secret.
func Sign(secret, body []byte) string {
	m := hmac.New(sha256.New, secret)
	m.Write(body)
	return "sha256=" + hex.EncodeToString(m.Sum(nil))
}

// Counter counts deliveries; the server exports it in /metrics.
type Counter interface {
	// Count records one result: delivered, retried, failed (given up after
	// the last attempt) or dropped (the queue was full).
	Count(result string)
}

// sender delivers to one target from its queue.
type sender struct {
	t       Target
	queue   chan Event
	secret  []byte
	client  *http.Client
	backoff backoff.Policy
	retries int
	count   Counter
	warn    func(string)

	done   chan struct{} // closed when run returns
	unsent []Event       // what run did not deliver when ctx ended, in order
}

// run posts each queued event until ctx is done, then keeps in unsent
// what it did not deliver: the event under way, if its delivery did not
// finish, and the queue.
func (s *sender) run(ctx context.Context) {
	defer close(s.done)
	for {
		select {
		case <-ctx.Done():
			for {
				select {
				case e := <-s.queue:
					s.unsent = append(s.unsent, e)
				default:
					return
				}
			}
		case e := <-s.queue:
			if !s.deliver(ctx, e) {
				s.unsent = append(s.unsent, e)
			}
		}
	}
}

// deliver posts e, retrying after each backoff step on a failure (a
// network error, a 5xx or 429); a 4xx other than 429 is not retried. It
// returns false when ctx ended before e was delivered or given up.
func (s *sender) deliver(ctx context.Context, e Event) bool {
	body := s.t.body(e)
	var err error
	for attempt := 0; ; attempt++ {
		var retry bool
		if retry, err = s.post(ctx, body, e); err == nil {
			s.count.Count("delivered")
			return true
		}
		if ctx.Err() != nil {
			return false
		}
		if !retry || attempt >= s.retries {
			break
		}
		s.count.Count("retried")
		if s.backoff.Wait(ctx, attempt+1) != nil {
			return false
		}
	}
	s.count.Count("failed")
	s.warn(fmt.Sprintf("webhook %s: gave up on %s → %s: %v", s.t.URL, e.ID, e.To, err))
	return true
}

func (s *sender) post(ctx context.Context, body []byte, e Event) (retry bool, err error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.t.URL, bytes.NewReader(body))
	if err != nil {
		return false, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "ckpt-webhook")
	req.Header.Set("X-Ckpt-Event", "transition")
	req.Header.Set("X-Ckpt-Delivery", e.Delivery)
	if len(s.secret) > 0 {
		req.Header.Set(HeaderSignature, Sign(s.secret, body))
	}
	resp, err := s.client.Do(req)
	if err != nil {
		return true, err
	}
	io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	resp.Body.Close()
	switch {
	case resp.StatusCode < 300:
		return false, nil
	case resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode >= 500:
		return true, fmt.Errorf("HTTP %s", resp.Status)
	}
	return false, fmt.Errorf("HTTP %s (not retried)", resp.Status)
}
