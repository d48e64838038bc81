package render

import (
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
	"time"

	ckpt "github.com/ckpt-dev/ckpt"
)

// Shown is `ckpt show --json`: the stored state, plus the presence derived
// from it now (ckpt.PresenceOf, docs/design.md "Liveness and presence")
// when it is the latest revision of a live checkpoint.
type Shown struct {
	*ckpt.Checkpoint
	Presence *ckpt.PresenceView `json:"presence,omitempty"`
}

// NewShown is c as `ckpt show --json` and MCP's ckpt_show see it: its
// presence at now under th (ckpt.PresenceOf; alive checks the agent's
// process, nil checks none) when latest says c is the checkpoint's latest
// revision and it is live; an older revision has no presence now.
func NewShown(c *ckpt.Checkpoint, latest bool, now time.Time, th ckpt.Thresholds, alive ckpt.AliveFunc) Shown {
	out := Shown{Checkpoint: c}
	if latest {
		s := c.Summary()
		if v := ckpt.PresenceOf(&s, now, th, alive); v.Alarm() != ckpt.NotLive {
			out.Presence = &v
		}
	}
	return out
}

// Show writes the readable view of c as seen at now (`ckpt show`): a
// header of labelled rows (status, archive, agent, session, task, progress
// ...), one section per list the checkpoint holds, then its heartbeat,
// presence (alive checks the agent's process; nil checks none), code and
// times. Lists are written whole, long notes and meta values shortened.
// The view goes through Terminal once, as a whole, so stored text cannot
// drive the terminal. The only error is w's.
func Show(w io.Writer, c *ckpt.Checkpoint, now time.Time, alive ckpt.AliveFunc) error {
	var b strings.Builder
	writeShow(&b, c, now, alive)
	_, err := io.WriteString(w, Terminal(b.String()))
	return err
}

func writeShow(b *strings.Builder, c *ckpt.Checkpoint, now time.Time, alive ckpt.AliveFunc) {
	showHeader(b, c)
	showSteps(b, c.Steps)
	showAcceptance(b, c.Acceptance)
	showDecisions(b, c.Decisions)
	showBlockers(b, c.Blockers)
	showErrors(b, c.Errors)
	showMessages(b, c.Messages)
	showFiles(b, c.Files)
	showContext(b, c.Context)
	showResume(b, c.Resume)
	showScores(b, c.ReviewScores)
	showMeta(b, c.Meta)
	showTimes(b, c, now, alive)
}

// showRow writes one labelled row of the header.
func showRow(b *strings.Builder, label, format string, args ...any) {
	fmt.Fprintf(b, "%-12s %s\n", label, fmt.Sprintf(format, args...))
}

// showHeader writes the ID and title, then who does what: status, archive,
// agent, session, task, grouping, stage, progress and cycles.
func showHeader(b *strings.Builder, c *ckpt.Checkpoint) {
	title := c.ID
	if c.Title != "" {
		title += "  " + c.Title
	}
	fmt.Fprintln(b, title)
	status := string(c.Status)
	if c.StatusReason != "" {
		status += ": " + c.StatusReason
	}
	if c.PartiallyComplete() {
		status += " (partially: acceptance criteria unmet)"
	}
	showRow(b, "status", "%s  (rev %d)", status, c.Rev)
	if c.Archived != nil {
		from := ""
		if c.Archived.From != "" {
			from = " from " + c.Archived.From
		}
		showRow(b, "archived", "%s at %s%s", c.Archived.Reason, c.Archived.At.Format(TimeLayout), from)
	}
	if c.Agent != (ckpt.Agent{}) {
		showRow(b, "agent", "%s", agentText(c.Agent))
	}
	if c.Session.ID != "" || c.Session.Number > 0 {
		s := fmt.Sprintf("#%d", c.Session.Number)
		if c.Session.ID != "" {
			s += " " + c.Session.ID
		}
		if !c.Session.StartedAt.IsZero() {
			s += " since " + c.Session.StartedAt.Format(TimeLayout)
		}
		showRow(b, "session", "%s", s)
	}
	optRow := func(label, v string) {
		if v != "" {
			showRow(b, label, "%s", v)
		}
	}
	optRow("task", c.TaskID)
	optRow("parent", c.Parent)
	optRow("labels", strings.Join(c.Labels, ", "))
	optRow("stage", c.Stage)
	optRow("phase", c.Phase)
	optRow("current", c.CurrentStep)
	showRow(b, "progress", "%s", c.Progress.Count())
	switch {
	case c.Cycles.Max > 0:
		showRow(b, "cycles", "%d of %d", c.Cycles.Count, c.Cycles.Max)
	case c.Cycles.Count > 0:
		showRow(b, "cycles", "%d", c.Cycles.Count)
	}
}

// showSteps writes each step with its box, status, phase, who and when,
// output and notes.
func showSteps(b *strings.Builder, steps []ckpt.Step) {
	if len(steps) == 0 {
		return
	}
	fmt.Fprintln(b, "steps")
	for _, s := range steps {
		line := fmt.Sprintf("  %s %s", stepMark(s.Status), s.ID)
		if s.Title != "" {
			line += "  " + s.Title
		}
		var extra []string
		if s.Status != ckpt.StepPending {
			extra = append(extra, string(s.Status))
		}
		if s.Phase != "" {
			extra = append(extra, "phase "+s.Phase)
		}
		if s.By != "" {
			extra = append(extra, "by "+s.By)
		}
		if s.CompletedAt != nil {
			extra = append(extra, s.CompletedAt.Format(TimeLayout))
		} else if s.StartedAt != nil {
			extra = append(extra, "since "+s.StartedAt.Format(TimeLayout))
		}
		if len(extra) > 0 {
			line += "  (" + strings.Join(extra, ", ") + ")"
		}
		if s.Output != "" {
			line += "  -> " + s.Output
		}
		fmt.Fprintln(b, line)
		if s.Notes != "" {
			fmt.Fprintf(b, "      %s\n", squeeze(s.Notes, 200))
		}
	}
}

func showAcceptance(b *strings.Builder, acc []ckpt.Criterion) {
	if len(acc) == 0 {
		return
	}
	fmt.Fprintln(b, "acceptance")
	for _, a := range acc {
		mark := "[ ]"
		if a.Met {
			mark = "[x]"
		}
		line := fmt.Sprintf("  %s %s", mark, a.ID)
		if a.Title != "" {
			line += "  " + a.Title
		}
		fmt.Fprintln(b, line)
	}
}

func showDecisions(b *strings.Builder, ds []ckpt.Decision) {
	if len(ds) == 0 {
		return
	}
	fmt.Fprintln(b, "decisions")
	for _, d := range ds {
		line := "  - " + d.Text
		if d.Reason != "" {
			line += "  (because " + d.Reason + ")"
		}
		fmt.Fprintln(b, line)
	}
}

// showBlockers writes active blockers with "!", cleared ones indented.
func showBlockers(b *strings.Builder, bs []ckpt.Blocker) {
	if len(bs) == 0 {
		return
	}
	fmt.Fprintln(b, "blockers")
	for _, x := range bs {
		if x.Active() {
			fmt.Fprintf(b, "  ! %s  %s  (since %s)\n", x.ID, x.Text, x.Since.Format(TimeLayout))
		} else {
			fmt.Fprintf(b, "    %s  %s  (cleared %s)\n", x.ID, x.Text, x.ClearedAt.Format(TimeLayout))
		}
	}
}

// showErrors writes active errors with "!", cleared ones indented.
func showErrors(b *strings.Builder, es []ckpt.ErrorItem) {
	if len(es) == 0 {
		return
	}
	fmt.Fprintln(b, "errors")
	for _, e := range es {
		line := "  ! "
		if e.ClearedAt != nil {
			line = "    "
		}
		if e.Type != "" {
			line += "[" + e.Type + "] "
		}
		line += e.Message
		var extra []string
		if e.Blocking {
			extra = append(extra, "blocking")
		}
		extra = append(extra, e.At.Format(TimeLayout))
		if e.ClearedAt != nil {
			extra = append(extra, "cleared")
		}
		fmt.Fprintf(b, "%s  (%s)\n", line, strings.Join(extra, ", "))
	}
}

// showMessages writes the messages told and not yet delivered.
func showMessages(b *strings.Builder, ms []ckpt.Message) {
	if len(ms) == 0 {
		return
	}
	fmt.Fprintln(b, "messages (pending: delivered at the agent's next hook)")
	for _, m := range ms {
		fmt.Fprintf(b, "  > %s  from %s  (%s)  %s\n", m.ID, m.From, m.At.Format(TimeLayout), squeeze(m.Text, 200))
	}
}

func showFiles(b *strings.Builder, f ckpt.Files) {
	if len(f.Created)+len(f.Modified) == 0 {
		return
	}
	fmt.Fprintln(b, "files")
	for _, p := range f.Created {
		fmt.Fprintf(b, "  + %s\n", p)
	}
	for _, p := range f.Modified {
		fmt.Fprintf(b, "  ~ %s\n", p)
	}
}

func showContext(b *strings.Builder, c ckpt.Context) {
	if c == (ckpt.Context{}) {
		return
	}
	fmt.Fprintln(b, "context")
	if c.LastProcessed != "" {
		fmt.Fprintf(b, "  last processed  %s\n", c.LastProcessed)
	}
	if c.NextToProcess != "" {
		fmt.Fprintf(b, "  next            %s\n", c.NextToProcess)
	}
	for _, l := range strings.Split(c.Notes, "\n") {
		if l != "" {
			fmt.Fprintf(b, "  note            %s\n", l)
		}
	}
}

func showResume(b *strings.Builder, r ckpt.Resume) {
	fmt.Fprintln(b, "resume")
	if r.Resumable {
		fmt.Fprintln(b, "  resumable       yes")
	} else {
		fmt.Fprintln(b, "  resumable       no")
	}
	if r.Instructions != "" {
		fmt.Fprintf(b, "  instructions    %s\n", r.Instructions)
	}
	for i, s := range r.NextSteps {
		label := ""
		if i == 0 {
			label = "next steps"
		}
		fmt.Fprintf(b, "  %-15s %d. %s\n", label, i+1, s)
	}
}

func showScores(b *strings.Builder, scores map[string]*float64) {
	if len(scores) == 0 {
		return
	}
	fmt.Fprintln(b, "review scores")
	for _, k := range sortedKeys(scores) {
		if v := scores[k]; v != nil {
			fmt.Fprintf(b, "  %s  %s\n", k, strconv.FormatFloat(*v, 'f', -1, 64))
		} else {
			fmt.Fprintf(b, "  %s  (not given)\n", k)
		}
	}
}

func showMeta(b *strings.Builder, meta map[string]json.RawMessage) {
	if len(meta) == 0 {
		return
	}
	fmt.Fprintln(b, "meta")
	for _, k := range sortedKeys(meta) {
		fmt.Fprintf(b, "  %s  %s\n", k, squeeze(string(meta[k]), 200))
	}
}

// showTimes writes the heartbeat, the presence at now, where the code is,
// and the times the work started, changed and ended.
func showTimes(b *strings.Builder, c *ckpt.Checkpoint, now time.Time, alive ckpt.AliveFunc) {
	seen := fmt.Sprintf("last seen %s (%s)", Ago(c.LastSeen(), now), c.LastSeen().Format(TimeLayout))
	showRow(b, "heartbeat", "every %s; %s", ShortDuration(c.Heartbeat.Interval.D()), seen)
	if p := presenceText(c, now, alive); p != "" {
		showRow(b, "presence", "%s", p)
	}
	if c.Code != nil {
		showRow(b, "code", "%s", CodeLine(c.Code))
	}
	showRow(b, "started", "%s", c.StartedAt.Format(TimeLayout))
	showRow(b, "updated", "%s", c.UpdatedAt.Format(TimeLayout))
	if c.CompletedAt != nil {
		showRow(b, "completed", "%s", c.CompletedAt.Format(TimeLayout))
	}
}

// stepMark is a step's box: [x] done, [>] in progress, [!] failed, [-]
// skipped, [ ] pending.
func stepMark(s ckpt.StepStatus) string {
	switch s {
	case ckpt.StepDone:
		return "[x]"
	case ckpt.StepInProgress:
		return "[>]"
	case ckpt.StepFailed:
		return "[!]"
	case ckpt.StepSkipped:
		return "[-]"
	}
	return "[ ]"
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// presenceText is the presence as Show prints it: "busy since
// 2026-07-06T14:31:05Z (12m ago): Bash: go test ./...", "dead: process
// 4242 on h1 is gone"; "" for a checkpoint that is not live.
func presenceText(c *ckpt.Checkpoint, now time.Time, alive ckpt.AliveFunc) string {
	s := c.Summary()
	v := ckpt.PresenceOf(&s, now, ckpt.Thresholds{}, alive)
	if v.Alarm() == ckpt.NotLive { // the status says it: done, failed, pending
		return ""
	}
	t := string(v.State)
	if !v.Since.IsZero() {
		t += " since " + v.Since.Format(TimeLayout) + " (" + Ago(v.Since, now) + ")"
	}
	if v.Why != "" {
		t += ": " + v.Why
	}
	return t
}
