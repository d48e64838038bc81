package monitor

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"sort"
	"strings"
	"time"

	ckpt "github.com/ckpt-dev/ckpt"
)

// Monitor keeps a view of the live checkpoints and each one's last
// reported presence. It is not safe for concurrent use; Run drives it from
// one goroutine.
type Monitor struct {
	opts    Options
	started bool
	view    map[string]ckpt.Summary       // live checkpoints as last read
	last    map[string]ckpt.PresenceState // last reported presence
	// touched are the checkpoints the feed changed since the last look:
	// a hook's presence beat comes after its events and is not in the
	// feed, so the next look reads them again.
	touched  map[string]bool
	prevLook time.Time
	damaged  string // the damaged IDs last reported
}

// New returns a Monitor. It fails (ckpt.ErrInvalid) if opts.Store is nil,
// Webhook is not an http or https URL with a host, or Exec is blank but
// not empty.
func New(opts Options) (*Monitor, error) {
	if opts.Store == nil {
		return nil, fmt.Errorf("%w: monitor needs a store", ckpt.ErrInvalid)
	}
	if opts.Webhook != "" {
		u, err := url.Parse(opts.Webhook)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return nil, fmt.Errorf("%w: webhook %q: give an http:// or https:// URL, e.g. https://hooks.example.com/ckpt", ckpt.ErrInvalid, opts.Webhook)
		}
	}
	if opts.Exec != "" && strings.TrimSpace(opts.Exec) == "" {
		return nil, fmt.Errorf("%w: the command to run is blank: give a shell command, or none", ckpt.ErrInvalid)
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
	return &Monitor{opts: opts, view: map[string]ckpt.Summary{}, last: map[string]ckpt.PresenceState{}, touched: map[string]bool{}}, nil
}

// warnf reports a failure the watch goes on after (Options.Warn).
func (m *Monitor) warnf(format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	if m.opts.Warn != nil {
		m.opts.Warn(msg)
		return
	}
	fmt.Fprintf(m.opts.Log, "monitor: %s\n", msg)
}

// Describe says in one line which thresholds and actions opts put in
// force, e.g. "warn 2x, stale 4x each checkpoint's interval; running
// --exec": what ckpt monitor prints when it starts watching.
func (opts Options) Describe() string {
	th := "warn 2x, stale 4x each checkpoint's interval"
	switch w, s := opts.Thresholds.Warn, opts.Thresholds.Stale; {
	case w > 0 && s > 0:
		th = fmt.Sprintf("warn after %s, stale after %s", w, s)
	case w > 0:
		th = fmt.Sprintf("warn after %s, stale 4x each interval", w)
	case s > 0:
		th = fmt.Sprintf("warn 2x each interval, stale after %s", s)
	}
	parts := []string{th}
	if opts.Exec != "" {
		parts = append(parts, "running --exec")
	}
	if opts.Webhook != "" {
		parts = append(parts, "posting to --webhook")
	}
	if opts.AbandonAfter > 0 {
		parts = append(parts, fmt.Sprintf("abandoning after %s stale", opts.AbandonAfter))
	}
	return strings.Join(parts, "; ")
}

// Tick looks once and returns the transitions since the previous look,
// after acting on them. The first look lists every checkpoint and reports
// each one that is not live (a monitor started late still warns). A later
// look reads only what time can have changed: the checkpoints silent since
// the previous look or past their warn threshold (one pushed-down query),
// those whose recorded process is gone, those last reported as anything
// but working (they may be back), and those the feed changed since.
// Action failures (command, webhook) are logged, not returned: one bad
// hook must not stop the watch. Only a failure to read the store is
// returned.
func (m *Monitor) Tick(ctx context.Context) ([]Transition, error) {
	now := m.opts.Now().UTC()
	var fresh []ckpt.Summary
	if !m.started {
		list, err := m.list(ctx, m.opts.Filter)
		if err != nil {
			return nil, err
		}
		m.started, m.view = true, map[string]ckpt.Summary{}
		fresh = list
	} else {
		var err error
		if fresh, err = m.recheck(ctx, now); err != nil {
			return nil, err
		}
	}
	m.prevLook, m.touched = now, map[string]bool{}
	out := m.judge(ctx, fresh, now)
	if m.opts.Escalate != nil {
		m.opts.Escalate(ctx, now)
	}
	return out, nil
}

// recheck returns the summaries the look at now must judge: a pushed-down
// listing of the live checkpoints silent since the previous look (or past
// the smallest warn threshold, if that is later), and a fresh read of each
// other checkpoint that may have moved without a change in the feed.
func (m *Monitor) recheck(ctx context.Context, now time.Time) ([]ckpt.Summary, error) {
	cutoff := m.prevLook
	if w := now.Add(-m.smallestWarn()); w.After(cutoff) {
		cutoff = w
	}
	f := m.opts.Filter
	f.SeenBefore = cutoff
	if len(f.Status) == 0 {
		f.Status = []ckpt.Status{ckpt.StatusInProgress, ckpt.StatusWaiting, ckpt.StatusBlocked}
	}
	quiet, err := m.list(ctx, f)
	if err != nil {
		return nil, err
	}
	listed := make(map[string]bool, len(quiet))
	for _, s := range quiet {
		listed[s.ID] = true
	}
	ids := make([]string, 0)
	for id, s := range m.view {
		if listed[id] {
			continue
		}
		last, known := m.last[id]
		if m.touched[id] || (known && last != ckpt.PresenceWorking) || m.processGone(&s) {
			ids = append(ids, id)
		}
	}
	sort.Strings(ids)
	for _, id := range ids {
		s, ok, err := m.read(ctx, id)
		if err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err() // stopping (Ctrl-C): not a failed read
			}
			m.warnf("reading %s: %v", id, err)
			continue
		}
		if !ok {
			m.forget(id)
			continue
		}
		quiet = append(quiet, s)
	}
	return quiet, nil
}

// smallestWarn is the shortest warn threshold of any checkpoint in view.
func (m *Monitor) smallestWarn() time.Duration {
	least, _ := m.opts.Thresholds.ForInterval(0)
	for _, s := range m.view {
		if w, _ := m.opts.Thresholds.ForInterval(s.Heartbeat.Interval.D()); w < least {
			least = w
		}
	}
	return least
}

// processGone reports whether s's recorded client process is known gone.
func (m *Monitor) processGone(s *ckpt.Summary) bool {
	p := s.Heartbeat.Presence
	if m.opts.Alive == nil || p == nil || p.Process == nil {
		return false
	}
	alive, known := m.opts.Alive(p.Process)
	return known && !alive
}

// list is ckpt.ListAll that reports a damaged checkpoint (once per change
// of the damage) and goes on with what was read.
func (m *Monitor) list(ctx context.Context, f ckpt.Filter) ([]ckpt.Summary, error) {
	cs, err := ckpt.ListAll(ctx, m.opts.Store, f)
	var damaged *ckpt.DamagedError
	if errors.As(err, &damaged) {
		// One damaged checkpoint must not blind the watch over the others.
		if key := strings.Join(damaged.IDs, " "); key != m.damaged {
			m.warnf("%v", damaged)
			m.damaged = key
		}
		return cs, nil
	}
	if err != nil {
		return nil, err
	}
	m.damaged = ""
	return cs, nil
}

// read returns checkpoint id's summary as it is now; ok is false when it
// is gone or outside the monitor's filter.
func (m *Monitor) read(ctx context.Context, id string) (s ckpt.Summary, ok bool, err error) {
	c, err := m.opts.Store.Get(ctx, id, 0)
	if errors.Is(err, ckpt.ErrNotFound) {
		return s, false, nil
	}
	if err != nil {
		return s, false, err
	}
	s = c.Summary()
	return s, m.opts.Filter.MatchSummary(&s), nil
}

func (m *Monitor) forget(id string) {
	delete(m.view, id)
	delete(m.last, id)
}

// changed takes the feed's changes: each checkpoint named is read again
// and judged at once.
func (m *Monitor) changed(ctx context.Context, changes []ckpt.Change) []Transition {
	seen := map[string]bool{}
	var fresh []ckpt.Summary
	for _, ch := range changes {
		if seen[ch.ID] {
			continue
		}
		seen[ch.ID] = true
		if ch.Kind == ckpt.ChangeDeleted {
			m.forget(ch.ID)
			continue
		}
		s, ok, err := m.read(ctx, ch.ID)
		switch {
		case err != nil && ctx.Err() != nil:
			return nil // stopping (Ctrl-C): not a failed read
		case err != nil:
			m.warnf("reading %s after a change: %v", ch.ID, err)
			continue
		case !ok:
			m.forget(ch.ID)
			continue
		}
		m.touched[ch.ID] = true
		fresh = append(fresh, s)
	}
	return m.judge(ctx, fresh, m.opts.Now().UTC())
}

// judge derives the presence of each fresh summary at now, keeps the live
// ones in view, and reports and acts on each change of presence.
func (m *Monitor) judge(ctx context.Context, fresh []ckpt.Summary, now time.Time) []Transition {
	var out []Transition
	for i := range fresh {
		c := &fresh[i]
		v := ckpt.RejudgeDead(ctx, m.opts.Store, c.ID, ckpt.PresenceOf(c, now, m.opts.Thresholds, m.opts.Alive), now, m.opts.Thresholds, m.opts.Alive)
		lv, age := v.State, v.Silent
		if lv == ckpt.PresenceBusy {
			lv = ckpt.PresenceWorking
		}
		if v.Alarm() == ckpt.Stale && m.opts.AbandonAfter > 0 {
			_, stale := m.opts.Thresholds.ForInterval(c.Heartbeat.Interval.D())
			if age > stale+m.opts.AbandonAfter {
				if done, err := m.abandon(ctx, c, age, now); err != nil {
					m.warnf("marking %s abandoned: %v", c.ID, err)
				} else if done {
					lv = Abandoned
				}
			}
		}
		from, known := m.last[c.ID]
		if !known {
			from = ckpt.PresenceWorking
		}
		if v.Alarm() == ckpt.NotLive {
			// Finished (done, failed) or no longer live: said once, when
			// the monitor knew it live, then forgotten.
			if known && lv != ckpt.PresenceNone {
				out = append(out, Transition{ID: c.ID, Agent: c.Agent.Label(), Title: c.Title, Status: c.Status, From: from, To: lv, Why: v.Why, Silent: age, LastSeen: c.LastSeen(), At: now})
			}
			m.forget(c.ID)
			continue
		}
		m.view[c.ID], m.last[c.ID] = *c, lv
		if lv == from {
			continue
		}
		out = append(out, Transition{ID: c.ID, Agent: c.Agent.Label(), Title: c.Title, Status: c.Status, From: from, To: lv, Why: v.Why, Silent: age, LastSeen: c.LastSeen(), At: now})
	}
	// The order of every stale report (ckpt.SilenceLess): dead and stale
	// first, then warn, then the rest, each by ID.
	sort.Slice(out, func(i, j int) bool {
		return ckpt.SilenceLess(alarm(out[i].To), out[i].ID, alarm(out[j].To), out[j].ID)
	})
	for _, t := range out {
		fmt.Fprintln(m.opts.Log, t)
		m.act(ctx, t)
	}
	return out
}

// Run looks once (a full listing), then follows the store's change feed,
// judging each changed checkpoint as the change arrives, and looks again
// (Tick) on every value from ticks. It returns nil when ctx is done or
// ticks is closed (Ctrl-C is a clean stop), and an error when the store
// cannot be read or its feed stops.
func (m *Monitor) Run(ctx context.Context, ticks <-chan time.Time) error {
	// The feed's end is taken before the first listing, so that no change
	// made after that listing is missed.
	head, err := m.opts.Store.Head(ctx)
	if err != nil {
		return m.stopped(ctx, err)
	}
	if _, err := m.Tick(ctx); err != nil {
		return m.stopped(ctx, err)
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	changes := make(chan ckpt.Change, 64)
	feedDone := make(chan error, 1)
	go func() {
		feedDone <- m.opts.Store.Watch(ctx, head, func(ch ckpt.Change) error {
			select {
			case changes <- ch:
				return nil
			case <-ctx.Done():
				return ctx.Err()
			}
		})
	}()
	for {
		select {
		case <-ctx.Done():
			return nil
		case ch := <-changes:
			batch := []ckpt.Change{ch}
			for more := true; more; {
				select {
				case ch := <-changes:
					batch = append(batch, ch)
				default:
					more = false
				}
			}
			m.changed(ctx, batch)
		case _, ok := <-ticks:
			if !ok {
				return nil
			}
			if _, err := m.Tick(ctx); err != nil {
				return m.stopped(ctx, err)
			}
		case err := <-feedDone:
			if ctx.Err() != nil {
				return nil
			}
			return fmt.Errorf("the store's change feed stopped: %w", err)
		}
	}
}

// stopped is err, or nil when it came from ctx ending.
func (m *Monitor) stopped(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return nil
	}
	return err
}
