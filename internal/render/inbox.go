package render

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	ckpt "github.com/ckpt-dev/ckpt"
)

// WriteInbox writes the inbox as a table: state, age, ID, agent, reason;
// then the count per state. An empty inbox says so.
func WriteInbox(w io.Writer, in ckpt.Inbox) error {
	var b strings.Builder
	if len(in.Entries) == 0 {
		b.WriteString("nothing needs you: no checkpoint is waiting, blocked, dead, stale or failed\n")
	} else {
		tw := tabwriter.NewWriter(&b, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "STATE\tAGE\tID\tAGENT\tREASON")
		for _, e := range in.Entries {
			agent := Dash(squeeze(e.Agent, 24))
			reason := squeeze(e.Reason, 80)
			if e.Messages > 0 {
				reason += fmt.Sprintf(" [%d message(s) pending]", e.Messages)
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", e.State, ShortDuration(time.Duration(e.AgeSeconds)*time.Second), oneLine(e.ID), agent, strings.TrimSpace(reason))
		}
		tw.Flush()
		var counts []string
		for _, s := range ckpt.InboxStates {
			if n := in.Counts[s]; n > 0 {
				counts = append(counts, fmt.Sprintf("%d %s", n, s))
			}
		}
		fmt.Fprintf(&b, "%d need you: %s\n", len(in.Entries), strings.Join(counts, ", "))
	}
	if len(in.Damaged) > 0 {
		fmt.Fprintf(&b, "damaged (not judged): %s: run ckpt check\n", strings.Join(in.Damaged, ", "))
	}
	_, err := io.WriteString(w, Terminal(b.String()))
	return err
}
