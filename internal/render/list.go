package render

import (
	"bufio"
	"fmt"
	"io"
	"text/tabwriter"
	"time"

	ckpt "github.com/ckpt-dev/ckpt"
	"github.com/ckpt-dev/ckpt/internal/wire"
)

// ListTable writes `ckpt ls`'s table of list, one row per summary in the
// order given: ID, status, progress, agent (AgentName), current step and
// when it was last seen (Ago). An archived checkpoint's status reads
// "done (archived)", so a listing that includes archives tells them apart.
// The presence is added to LAST SEEN when it is news (ListPresence). An
// empty list writes only the header; the caller says what to do instead.
// Stored text goes through Terminal. The only error is w's.
func ListTable(w io.Writer, list []ckpt.Summary, now time.Time, alive ckpt.AliveFunc) error {
	out := NewTerminalWriter(w)
	tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tSTATUS\tPROGRESS\tAGENT\tCURRENT\tLAST SEEN")
	for i := range list {
		c := &list[i]
		seen := Ago(c.LastSeen(), now)
		if p := ListPresence(c, now, alive); p != "" {
			seen += " (" + string(p) + ")"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", oneLine(c.ID), listStatus(c),
			fmt.Sprintf("%d/%d %.0f%%", c.Progress.Done, c.Progress.Total, c.Progress.Percent),
			Dash(squeeze(c.Agent.Label(), 40)), Dash(squeeze(c.CurrentStep, 40)), seen)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	return out.Flush()
}

// ListPresence is c's presence at now when a listing should say it: not
// working, not "-", not what the status column says already (done,
// failed, blocked, the waiting of `ckpt wait`); "" otherwise.
func ListPresence(c *ckpt.Summary, now time.Time, alive ckpt.AliveFunc) ckpt.PresenceState {
	v := ckpt.PresenceOf(c, now, ckpt.Thresholds{}, alive)
	switch v.State {
	case ckpt.PresenceWorking, ckpt.PresenceNone, ckpt.PresenceDone, ckpt.PresenceFailed, ckpt.PresenceBlocked:
		return ""
	case ckpt.PresenceWaiting:
		if c.Status == ckpt.StatusWaiting {
			return ""
		}
	}
	return v.State
}

// listStatus is the status, with "(archived)" for an archive.
func listStatus(c *ckpt.Summary) string {
	if c.Archived != nil {
		return string(c.Status) + " (archived)"
	}
	return string(c.Status)
}

// SummariesJSON writes list as a JSON array, one compact ckpt.Summary per
// line (so a listing of thousands stays fast and greppable), "[]" when
// empty. The only error is w's.
func SummariesJSON(w io.Writer, list []ckpt.Summary) error {
	js := NewSummariesJSON(w)
	if err := js.Add(list); err != nil {
		return err
	}
	return js.Close()
}

// SummariesJSONWriter writes SummariesJSON's array page by page, so that a
// listing of 100,000 (ckpt.EachPage) never holds more than a page.
type SummariesJSONWriter struct {
	bw *bufio.Writer
	n  int
	b  []byte
}

// NewSummariesJSON starts an array on w; Close ends it.
func NewSummariesJSON(w io.Writer) *SummariesJSONWriter {
	return &SummariesJSONWriter{bw: bufio.NewWriterSize(w, 64<<10)}
}

// Add writes list's summaries. The only error is w's (or a summary's that
// cannot be encoded).
func (js *SummariesJSONWriter) Add(list []ckpt.Summary) error {
	for i := range list {
		var err error
		if js.b, err = wire.Append(js.b[:0], &list[i]); err != nil {
			return err
		}
		js.AddJSON(js.b)
	}
	return nil
}

// AddJSON writes one summary already encoded (as wire.Append writes a
// ckpt.Summary: a store that holds its summaries' JSON copies it). The
// error is w's, possibly from an earlier write.
func (js *SummariesJSONWriter) AddJSON(row []byte) error {
	if js.n == 0 {
		js.bw.WriteString("[\n")
	} else {
		js.bw.WriteString(",\n")
	}
	js.n++
	_, err := js.bw.Write(row)
	return err
}

// Close ends the array ("[]" when nothing was added) and flushes it.
func (js *SummariesJSONWriter) Close() error {
	if js.n == 0 {
		js.bw.WriteString("[]\n")
	} else {
		js.bw.WriteString("\n]\n")
	}
	return js.bw.Flush()
}
