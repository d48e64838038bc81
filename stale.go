package ckpt

import (
	"context"
	"errors"
	"sort"
	"time"
)

// Which live checkpoints have gone quiet: the stale verdict. A rule every
// surface must apply alike, so it lives beside the presence it reads
// (PresenceOf); the views (internal/render's StaleTable) only print it.

// StaleEntry is one checkpoint silent past its warn or stale threshold, as
// `ckpt stale --json` prints it.
type StaleEntry struct {
	ID       string   `json:"id"`
	Agent    string   `json:"agent,omitempty"` // Agent.Label
	Title    string   `json:"title,omitempty"`
	Status   Status   `json:"status"`
	Liveness Liveness `json:"liveness"` // warn or stale (PresenceView.Alarm)
	// Presence is why: dead (its process is gone), stale or warn; Why
	// says which process or threshold.
	Presence      PresenceState `json:"presence"`
	Why           string        `json:"why,omitempty"`
	LastSeen      time.Time     `json:"last_seen"`
	SilentSeconds int64         `json:"silent_seconds"`
	Interval      Duration      `json:"interval"`
	WarnAfter     Duration      `json:"warn_after"`
	StaleAfter    Duration      `json:"stale_after"`
	// Summary is the listing the entry was made from, for surfaces that
	// show more of it.
	Summary *Summary `json:"-"`
}

// StaleReport is the one stale report every surface shows (StaleFrom):
// the CLI's `ckpt stale`, MCP's ckpt_stale, the server and the dashboard.
type StaleReport struct {
	// Entries are the silent checkpoints, stale ones first, then warn,
	// each group by ID (SilenceLess).
	Entries []StaleEntry
	// Live counts the checkpoints judged (those that can go stale);
	// Warn and Stale how many of them are silent past each threshold.
	Live, Warn, Stale int
}

// liveStatuses are the statuses a checkpoint can go stale in.
var liveStatuses = []Status{StatusInProgress, StatusWaiting, StatusBlocked}

// StaleFrom is the one stale verdict every surface shows (ckpt stale,
// MCP's ckpt_stale, the server's /v1/stale and the dashboard): the
// checkpoints of st that f matches in a live status (f's Status is
// replaced by liveStatuses), judged by their presence at now (PresenceOf
// under th, alive checking processes), listed page by page (EachPage) so
// that judging 100,000 checkpoints holds one page of summaries at a time. A *DamagedError comes with the report of the
// readable checkpoints; any other error with an empty report.
func StaleFrom(ctx context.Context, st Store, f Filter, now time.Time, th Thresholds, alive AliveFunc) (StaleReport, error) {
	f.Status = liveStatuses
	// The store may leave out the checkpoints that are live and not
	// quiet at now (a filestore does so without decoding them): they are
	// only counted.
	f.Quiet = &Quiet{At: now, Thresholds: th}
	j := NewStaleJudge(now, th, alive)
	j.confirm = func(id string, v PresenceView) PresenceView { return RejudgeDead(ctx, st, id, v, now, th, alive) }
	err := eachPage(ctx, st, f, func(p *Page) error {
		j.Add(p.Items)
		j.r.Live += p.Omitted
		return nil
	})
	if d := (*DamagedError)(nil); err != nil && !errors.As(err, &d) {
		return NewStaleJudge(now, th, alive).Report(), err
	}
	return j.Report(), err
}

// StaleJudge builds the one StaleReport page by page (EachPage),
// so that judging a large store holds one page of summaries, not all of
// them. Not safe for concurrent use.
type StaleJudge struct {
	now   time.Time
	th    Thresholds
	alive AliveFunc
	r     StaleReport
	// confirm judges a dead verdict again on a fresh read (RejudgeDead);
	// nil keeps it.
	confirm func(id string, v PresenceView) PresenceView
}

// NewStaleJudge returns a judge with StaleFrom's clock, thresholds and
// process check, and nothing judged.
func NewStaleJudge(now time.Time, th Thresholds, alive AliveFunc) *StaleJudge {
	return &StaleJudge{now: now, th: th, alive: alive, r: StaleReport{Entries: []StaleEntry{}}}
}

// Add judges each summarised checkpoint's presence (PresenceOf,
// alive checking processes; nil checks none): a live one (in_progress,
// waiting, blocked, not archived) that is dead, stale or warn is
// reported; working, busy, waiting and ended ones are not. A silent
// checkpoint's entry keeps a copy of its summary, so list may be reused
// afterwards.
func (j *StaleJudge) Add(list []Summary) {
	for i := range list {
		c := &list[i]
		v := PresenceOf(c, j.now, j.th, j.alive)
		if v.State == PresenceDead && j.confirm != nil {
			v = j.confirm(c.ID, v)
		}
		lv, age := v.Alarm(), v.Silent
		if lv == NotLive {
			continue
		}
		j.r.Live++
		switch lv {
		case Stale:
			j.r.Stale++
		case Warn:
			j.r.Warn++
		default:
			continue
		}
		warn, stale := j.th.ForInterval(c.Heartbeat.Interval.D())
		iv := c.Heartbeat.Interval
		if iv <= 0 {
			iv = Duration(DefaultInterval)
		}
		kept := *c
		j.r.Entries = append(j.r.Entries, StaleEntry{
			ID: c.ID, Agent: c.Agent.Label(), Title: c.Title, Status: c.Status, Liveness: lv,
			Presence: v.State, Why: v.Why,
			LastSeen: c.LastSeen(), SilentSeconds: int64(age / time.Second),
			Interval: iv, WarnAfter: Duration(warn), StaleAfter: Duration(stale),
			Summary: &kept,
		})
	}
}

// Report returns the report of everything added, its entries in the one
// order of silent checkpoints (SilenceLess).
func (j *StaleJudge) Report() StaleReport {
	sort.SliceStable(j.r.Entries, func(a, b int) bool {
		x, y := j.r.Entries[a], j.r.Entries[b]
		return SilenceLess(x.Liveness, x.ID, y.Liveness, y.ID)
	})
	return j.r
}

// SilenceLess is the one order of silent checkpoints: stale before warn
// before anything else, then by ID.
func SilenceLess(a Liveness, aID string, b Liveness, bID string) bool {
	if ra, rb := silenceRank(a), silenceRank(b); ra != rb {
		return ra < rb
	}
	return aID < bID
}

func silenceRank(l Liveness) int {
	switch l {
	case Stale:
		return 0
	case Warn:
		return 1
	}
	return 2
}
