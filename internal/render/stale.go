package render

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sort"
	"text/tabwriter"
	"time"

	ckpt "github.com/ckpt-dev/ckpt"
)

// AgentName is the one short name of an agent in every listing, report and
// alert (ckpt ls, status, stale, the MCP tools, the monitor's transitions):
// its ID, else its name, else "".
func AgentName(a ckpt.Agent) string {
	if a.ID != "" {
		return a.ID
	}
	return a.Name
}

// StaleEntry is one checkpoint silent past its warn or stale threshold, as
// `ckpt stale --json` prints it.
type StaleEntry struct {
	ID       string        `json:"id"`
	Agent    string        `json:"agent,omitempty"` // AgentName
	Title    string        `json:"title,omitempty"`
	Status   ckpt.Status   `json:"status"`
	Liveness ckpt.Liveness `json:"liveness"` // warn or stale (PresenceView.Alarm)
	// Presence is why: dead (its process is gone), stale or warn; Why
	// says which process or threshold.
	Presence      ckpt.PresenceState `json:"presence"`
	Why           string             `json:"why,omitempty"`
	LastSeen      time.Time          `json:"last_seen"`
	SilentSeconds int64              `json:"silent_seconds"`
	Interval      ckpt.Duration      `json:"interval"`
	WarnAfter     ckpt.Duration      `json:"warn_after"`
	StaleAfter    ckpt.Duration      `json:"stale_after"`
	// Summary is the listing the entry was made from, for surfaces that
	// show more of it.
	Summary *ckpt.Summary `json:"-"`
}

// StaleReport is the one stale report every surface shows: the CLI's
// `ckpt stale`, MCP's ckpt_stale and the dashboard.
type StaleReport struct {
	// Entries are the silent checkpoints, stale ones first, then warn,
	// each group by ID (SilenceLess).
	Entries []StaleEntry
	// Live counts the checkpoints judged (those that can go stale);
	// Warn and Stale how many of them are silent past each threshold.
	Live, Warn, Stale int
}

// LiveStatuses are the statuses a checkpoint can go stale in.
var LiveStatuses = []ckpt.Status{ckpt.StatusInProgress, ckpt.StatusWaiting, ckpt.StatusBlocked}

// StaleFrom is Stale over the checkpoints of st that f matches in a live
// status (f's Status is replaced by LiveStatuses), listed page by page
// (ckpt.EachPage), so that judging 100,000 checkpoints holds one page of
// summaries at a time. A *ckpt.DamagedError comes with the report of the
// readable checkpoints; any other error with an empty report.
func StaleFrom(ctx context.Context, st ckpt.Store, f ckpt.Filter, now time.Time, th ckpt.Thresholds, alive ckpt.AliveFunc) (StaleReport, error) {
	f.Status = LiveStatuses
	j := NewStaleJudge(now, th, alive)
	err := ckpt.EachPage(ctx, st, f, func(page []ckpt.Summary) error {
		j.Add(page)
		return nil
	})
	if d := (*ckpt.DamagedError)(nil); err != nil && !errors.As(err, &d) {
		return NewStaleJudge(now, th, alive).Report(), err
	}
	return j.Report(), err
}

// StaleJudge builds the one StaleReport page by page (ckpt.EachPage),
// so that judging a large store holds one page of summaries, not all of
// them. Not safe for concurrent use.
type StaleJudge struct {
	now   time.Time
	th    ckpt.Thresholds
	alive ckpt.AliveFunc
	r     StaleReport
}

// NewStaleJudge returns a judge with Stale's arguments and nothing judged.
func NewStaleJudge(now time.Time, th ckpt.Thresholds, alive ckpt.AliveFunc) *StaleJudge {
	return &StaleJudge{now: now, th: th, alive: alive, r: StaleReport{Entries: []StaleEntry{}}}
}

// Add judges each summarised checkpoint's presence (ckpt.PresenceOf,
// alive checking processes; nil checks none): a live one (in_progress,
// waiting, blocked, not archived) that is dead, stale or warn is
// reported; working, busy, waiting and ended ones are not. A silent
// checkpoint's entry keeps a copy of its summary, so list may be reused
// afterwards.
func (j *StaleJudge) Add(list []ckpt.Summary) {
	for i := range list {
		c := &list[i]
		v := ckpt.PresenceOf(c, j.now, j.th, j.alive)
		lv, age := v.Alarm(), v.Silent
		if lv == ckpt.NotLive {
			continue
		}
		j.r.Live++
		switch lv {
		case ckpt.Stale:
			j.r.Stale++
		case ckpt.Warn:
			j.r.Warn++
		default:
			continue
		}
		warn, stale := j.th.ForInterval(c.Heartbeat.Interval.D())
		iv := c.Heartbeat.Interval
		if iv <= 0 {
			iv = ckpt.Duration(ckpt.DefaultInterval)
		}
		kept := *c
		j.r.Entries = append(j.r.Entries, StaleEntry{
			ID: c.ID, Agent: AgentName(c.Agent), Title: c.Title, Status: c.Status, Liveness: lv,
			Presence: v.State, Why: v.Why,
			LastSeen: c.LastSeen(), SilentSeconds: int64(age / time.Second),
			Interval: iv, WarnAfter: ckpt.Duration(warn), StaleAfter: ckpt.Duration(stale),
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
func SilenceLess(a ckpt.Liveness, aID string, b ckpt.Liveness, bID string) bool {
	if ra, rb := silenceRank(a), silenceRank(b); ra != rb {
		return ra < rb
	}
	return aID < bID
}

func silenceRank(l ckpt.Liveness) int {
	switch l {
	case ckpt.Stale:
		return 0
	case ckpt.Warn:
		return 1
	}
	return 2
}

// StaleTable writes r as `ckpt stale` prints it: one row per silent
// checkpoint (ID, agent, status, presence, how long silent, last seen,
// the warn and stale thresholds), or, when none is silent, one line saying
// so. Stored text goes through Terminal. The only error is w's.
func StaleTable(w io.Writer, r StaleReport, now time.Time) error {
	if len(r.Entries) == 0 {
		_, err := fmt.Fprintf(w, "no agent is quiet: all %s showed a sign of life within their warn threshold\n",
			Plural(r.Live, "live checkpoint", "live checkpoints"))
		return err
	}
	out := NewTerminalWriter(w)
	tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tAGENT\tSTATUS\tPRESENCE\tSILENT\tLAST SEEN\tWARN/STALE AFTER")
	for _, e := range r.Entries {
		seen := "never"
		if !e.LastSeen.IsZero() {
			seen = Age(now.Sub(e.LastSeen))
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s/%s\n", e.ID, Dash(squeeze(e.Agent, 24)), e.Status, e.Presence,
			ShortDuration(time.Duration(e.SilentSeconds)*time.Second), seen,
			ShortDuration(e.WarnAfter.D()), ShortDuration(e.StaleAfter.D()))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	return out.Flush()
}
