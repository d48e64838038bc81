package render

import (
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

// Stale judges each summarised checkpoint's presence at now under th
// (ckpt.PresenceOf, alive checking processes; nil checks none): a live one
// (in_progress, waiting, blocked, not archived) that is dead, stale or warn
// is reported; working, busy, waiting and ended ones are not. list is not
// changed.
func Stale(list []ckpt.Summary, now time.Time, th ckpt.Thresholds, alive ckpt.AliveFunc) StaleReport {
	r := StaleReport{Entries: []StaleEntry{}}
	for i := range list {
		c := &list[i]
		v := ckpt.PresenceOf(c, now, th, alive)
		lv, age := v.Alarm(), v.Silent
		if lv == ckpt.NotLive {
			continue
		}
		r.Live++
		switch lv {
		case ckpt.Stale:
			r.Stale++
		case ckpt.Warn:
			r.Warn++
		default:
			continue
		}
		warn, stale := th.ForInterval(c.Heartbeat.Interval.D())
		iv := c.Heartbeat.Interval
		if iv <= 0 {
			iv = ckpt.Duration(ckpt.DefaultInterval)
		}
		r.Entries = append(r.Entries, StaleEntry{
			ID: c.ID, Agent: AgentName(c.Agent), Title: c.Title, Status: c.Status, Liveness: lv,
			Presence: v.State, Why: v.Why,
			LastSeen: c.LastSeen(), SilentSeconds: int64(age / time.Second),
			Interval: iv, WarnAfter: ckpt.Duration(warn), StaleAfter: ckpt.Duration(stale),
			Summary: c,
		})
	}
	sort.SliceStable(r.Entries, func(i, j int) bool {
		a, b := r.Entries[i], r.Entries[j]
		return SilenceLess(a.Liveness, a.ID, b.Liveness, b.ID)
	})
	return r
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
