package render

import (
	"fmt"
	"io"
	"text/tabwriter"
	"time"

	ckpt "github.com/ckpt-dev/ckpt"
)

// StaleTable writes r as `ckpt stale` prints it: one row per silent
// checkpoint (ID, agent, status, presence, how long silent, last seen,
// the warn and stale thresholds), or, when none is silent, one line saying
// so. Stored text goes through Terminal. The only error is w's.
func StaleTable(w io.Writer, r ckpt.StaleReport, now time.Time) error {
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
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s/%s\n", oneLine(e.ID), Dash(squeeze(e.Agent, 24)), e.Status, e.Presence,
			ShortDuration(time.Duration(e.SilentSeconds)*time.Second), seen,
			ShortDuration(e.WarnAfter.D()), ShortDuration(e.StaleAfter.D()))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	return out.Flush()
}
