package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	ckpt "github.com/ckpt-dev/ckpt"
	"github.com/ckpt-dev/ckpt/render"
)

// ShowOptions are the inputs of `ckpt show`.
type ShowOptions struct {
	common
	ID   string
	Rev  int64 // 0: the latest
	JSON bool
}

func newShowCmd(f *factory) *cobra.Command {
	o := &ShowOptions{common: f.common()}
	cmd := &cobra.Command{
		Use:   "show ID",
		Short: "Show a checkpoint: status, progress, steps, decisions, blockers, resume info",
		Long: `Show checkpoint ID as a readable summary, or with --json as the full state
(the same JSON the store keeps, plus "presence": {state, since, why} as
ckpt status derives it now, for a live checkpoint). --rev N shows it as it
was after revision N.`,
		Example: `  ckpt show kai-7/secondary-a
  ckpt show kai-7/secondary-a --json
  ckpt show kai-7/secondary-a --rev 3`,
		Args: exactArgs(1, "one checkpoint ID"),
	}
	cmd.RunE = f.runE(func(ctx context.Context, args []string) error {
		o.ID = args[0]
		return runShow(ctx, o)
	})
	cmd.Flags().Int64Var(&o.Rev, "rev", 0, "show the checkpoint as it was after revision `N`")
	cmd.Flags().BoolVar(&o.JSON, "json", false, "print the checkpoint as JSON")
	return cmd
}

func runShow(ctx context.Context, o *ShowOptions) error {
	if err := ckpt.ValidateID(o.ID); err != nil {
		return err
	}
	if o.Rev < 0 {
		return fmt.Errorf("%w: --rev %d: give a revision of 1 or more (see ckpt log %s)", ckpt.ErrInvalid, o.Rev, o.ID)
	}
	return o.withStore(func(st ckpt.Store) error {
		c, err := st.Get(ctx, o.ID, o.Rev)
		if errors.Is(err, ckpt.ErrNotFound) && o.Rev > 0 {
			if latest, lerr := st.Get(ctx, o.ID, 0); lerr == nil {
				return fmt.Errorf("%w: %s has %d revisions, not %d: see them with ckpt log %s", ckpt.ErrNotFound, o.ID, latest.Rev, o.Rev, o.ID)
			}
		}
		if err != nil {
			return err
		}
		if o.JSON {
			return writeJSON(o.IO.Out, showJSON(c, o.Rev, o.Now()))
		}
		var b strings.Builder
		renderShow(&b, c, o.Now())
		_, err = io.WriteString(o.IO.Out, render.Terminal(b.String()))
		return err
	})
}

// shownCheckpoint is `ckpt show --json`: the stored state, plus the
// presence derived from it now (ckpt.PresenceOf, docs/design.md "Liveness
// and presence") for the latest revision of a live checkpoint.
type shownCheckpoint struct {
	*ckpt.Checkpoint
	Presence *ckpt.PresenceView `json:"presence,omitempty"`
}

func showJSON(c *ckpt.Checkpoint, rev int64, now time.Time) shownCheckpoint {
	out := shownCheckpoint{Checkpoint: c}
	if rev == 0 {
		if v := presenceOf(c, now, ckpt.Thresholds{}); v.State != ckpt.PresenceNone {
			out.Presence = &v
		}
	}
	return out
}

// renderShow writes the readable summary of c as seen at now: a header of
// labelled rows, one section per list the checkpoint holds, and its
// liveness and times. Stored text is made safe for the terminal by the
// caller (render.Terminal), once, over the whole view.
func renderShow(b *strings.Builder, c *ckpt.Checkpoint, now time.Time) {
	showHeader(b, c)
	showSteps(b, c.Steps)
	showAcceptance(b, c.Acceptance)
	showDecisions(b, c.Decisions)
	showBlockers(b, c.Blockers)
	showErrors(b, c.Errors)
	showFiles(b, c.Files)
	showContext(b, c.Context)
	showResume(b, c.Resume)
	showScores(b, c.ReviewScores)
	showMeta(b, c.Meta)
	showTimes(b, c, now)
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
		showRow(b, "archived", "%s at %s%s", c.Archived.Reason, c.Archived.At.Format(timeLayout), from)
	}
	if a := agentText(c.Agent); a != "" {
		showRow(b, "agent", "%s", a)
	}
	if c.Session.ID != "" || c.Session.Number > 0 {
		s := fmt.Sprintf("#%d", c.Session.Number)
		if c.Session.ID != "" {
			s += " " + c.Session.ID
		}
		if !c.Session.StartedAt.IsZero() {
			s += " since " + c.Session.StartedAt.Format(timeLayout)
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
	showRow(b, "progress", "%s", progressText(c.Progress))
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
			extra = append(extra, s.CompletedAt.Format(timeLayout))
		} else if s.StartedAt != nil {
			extra = append(extra, "since "+s.StartedAt.Format(timeLayout))
		}
		if len(extra) > 0 {
			line += "  (" + strings.Join(extra, ", ") + ")"
		}
		if s.Output != "" {
			line += "  -> " + s.Output
		}
		fmt.Fprintln(b, line)
		if s.Notes != "" {
			fmt.Fprintf(b, "      %s\n", clip(s.Notes, 200))
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
			fmt.Fprintf(b, "  ! %s  %s  (since %s)\n", x.ID, x.Text, x.Since.Format(timeLayout))
		} else {
			fmt.Fprintf(b, "    %s  %s  (cleared %s)\n", x.ID, x.Text, x.ClearedAt.Format(timeLayout))
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
		extra = append(extra, e.At.Format(timeLayout))
		if e.ClearedAt != nil {
			extra = append(extra, "cleared")
		}
		fmt.Fprintf(b, "%s  (%s)\n", line, strings.Join(extra, ", "))
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
		fmt.Fprintf(b, "  %s  %s\n", k, clip(string(meta[k]), 200))
	}
}

// showTimes writes the heartbeat, the presence at now, where the code is,
// and the times the work started, changed and ended.
func showTimes(b *strings.Builder, c *ckpt.Checkpoint, now time.Time) {
	seen := fmt.Sprintf("last seen %s (%s)", ago(c.LastSeen(), now), c.LastSeen().Format(timeLayout))
	showRow(b, "heartbeat", "every %s; %s", shortDuration(c.Heartbeat.Interval.D()), seen)
	if p := presenceText(c, now); p != "" {
		showRow(b, "presence", "%s", p)
	}
	if c.Code != nil {
		showRow(b, "code", "%s", render.CodeLine(c.Code))
	}
	showRow(b, "started", "%s", c.StartedAt.Format(timeLayout))
	showRow(b, "updated", "%s", c.UpdatedAt.Format(timeLayout))
	if c.CompletedAt != nil {
		showRow(b, "completed", "%s", c.CompletedAt.Format(timeLayout))
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

// agentText is "ID (type, name)" with the parts that are known.
func agentText(a ckpt.Agent) string {
	var extra []string
	if a.Type != "" {
		extra = append(extra, a.Type)
	}
	if a.Name != "" && a.Name != a.ID {
		extra = append(extra, a.Name)
	}
	switch {
	case a.ID == "" && len(extra) == 0:
		return ""
	case len(extra) == 0:
		return a.ID
	case a.ID == "":
		return strings.Join(extra, ", ")
	}
	return a.ID + " (" + strings.Join(extra, ", ") + ")"
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
