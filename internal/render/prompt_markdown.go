package render

import (
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	ckpt "github.com/ckpt-dev/ckpt"
)

// promptBudget is what Markdown aims for: DefaultBudget tokens of
// BytesPerToken bytes.
const promptBudget = DefaultBudget * BytesPerToken

// Per-item limits, in bytes, for text taken from the checkpoint.
const (
	goalMax    = 200
	fieldMax   = 160
	itemMax    = 240
	actionMax  = 500
	warningMax = 320
)

// promptHeadings are the section headings Markdown may write, in order.
// Tests use them to prove that no text from a checkpoint adds a heading.
var promptHeadings = []string{
	"Warnings", "Next action", "Where it stopped (the agent's last message)", "Resume instructions", "Active blockers", "Active errors",
	"Next steps", "What the user asked (latest last)", "Remaining steps", "Decisions", "Done steps (do not redo)",
	"After the last compaction", "Acceptance criteria", "Files created", "Files modified", "Notes",
}

// Markdown renders the continuation prompt: a heading with the goal, a
// summary of where the work stands, then sections in order of importance
// (warnings, next action, resume instructions, blockers, errors, next steps,
// remaining steps, decisions, done steps, acceptance criteria, files, notes).
// Empty sections are left out.
//
// The result is valid UTF-8 and always shorter than MaxPromptChars bytes;
// it aims at about 8,000 bytes. Long lists are summarised with a line such as
// "… and 480 more done steps", keeping the most relevant items (the next
// remaining steps, the most recent decisions, done steps and files); lines
// are never cut. A long single text is shortened at a rune boundary and ends
// with "…". Text from the checkpoint cannot add headings or code blocks.
func (p Prompt) Markdown() string {
	return p.MarkdownBudget(DefaultBudget)
}

// render is Markdown within budget bytes: the sections get what is left
// after the header, in order of importance.
func (p Prompt) render(budget int) string {
	var b strings.Builder
	b.Grow(budget + 1024)
	p.writeHeader(&b)
	secs := p.sections()
	left := budget - b.Len()
	for i, s := range secs {
		reserve := 0
		for _, later := range secs[i+1:] {
			reserve += later.min()
		}
		out := s.render(min(s.max, left-reserve))
		b.WriteString(out)
		left -= len(out)
	}
	return fitPrompt(b.String(), MaxPromptChars-1)
}

// fitPrompt is the last guard of the MaxPromptChars bound: the budgets keep
// a prompt well under it, but if a prompt ever reaches it, whole lines are
// dropped from the end.
func fitPrompt(s string, limit int) string {
	if !utf8.ValidString(s) { // every piece is cleaned, so this cannot happen
		s = strings.ToValidUTF8(s, "\uFFFD")
	}
	if len(s) <= limit {
		return s
	}
	const note = "\n" + ellipsis + " (prompt shortened to fit its size limit)\n"
	cut := strings.LastIndexByte(s[:max(limit-len(note), 0)], '\n')
	if cut < 0 {
		cut = 0
	}
	return s[:cut] + note
}

// DamagedLine is the first line of a continuation prompt whose history
// failed verification: what was found and what to do. why is the
// verification's error message.
func DamagedLine(id, why string) string {
	return "**Warning: the history of " + clip(id, fieldMax) + " is damaged** (" + clip(oneLine(why), fieldMax) +
		"): the state below may be incomplete, and nothing can be recorded on it until it is repaired. " +
		"Run `ckpt check` to see the damage and `ckpt repair` to mend it before you go on.\n\n"
}

func (p Prompt) writeHeader(b *strings.Builder) {
	if p.Damaged != "" {
		b.WriteString(DamagedLine(p.ID, p.Damaged))
	}
	g := clip(p.Goal, goalMax)
	if g == "" {
		g = "(untitled checkpoint)"
	}
	b.WriteString("# Resume: ")
	b.WriteString(g)
	b.WriteString("\n\n")
	line := func(label, value string) {
		b.WriteString("- **")
		b.WriteString(label)
		b.WriteString(":** ")
		b.WriteString(value)
		b.WriteString("\n")
	}
	line("Checkpoint", clip(p.ID, fieldMax)+" (revision "+strconv.FormatInt(p.Rev, 10)+")")
	if p.TaskID != "" && p.TaskID != p.Goal {
		line("Task", clip(p.TaskID, fieldMax))
	}
	if p.Parent != "" {
		line("Parent", clip(p.Parent, fieldMax))
	}
	agent := agentText(p.Agent)
	if p.Session > 0 {
		agent += ", session " + strconv.Itoa(p.Session)
	}
	line("Agent", agent)
	status := clip(string(p.Status), 40)
	if p.PartiallyComplete {
		status += " (partially complete)"
	}
	if p.StatusReason != "" {
		status += " — " + clip(p.StatusReason, fieldMax)
	}
	line("Status", status)
	line("Progress", progressText(p.Progress, len(p.DoneSteps)+len(p.RemainingSteps) > 0, p.Status))
	if p.Stage != "" || p.Phase != "" {
		var parts []string
		if p.Stage != "" {
			parts = append(parts, clip(p.Stage, fieldMax))
		}
		if p.Phase != "" {
			parts = append(parts, clip(p.Phase, fieldMax))
		}
		line("Stage", strings.Join(parts, " · "))
	}
	if p.CurrentStep != "" {
		line("Current step", clip(p.CurrentStep, itemMax))
	}
	if p.Code != nil {
		line("Code", CodeLine(p.Code))
	}
	if p.LastSeen != "" {
		line("Last seen", clip(p.LastSeen, itemMax)+": if the session ended there, check what that left behind")
	}
	if p.Context.LastProcessed != "" {
		line("Last processed", clip(p.Context.LastProcessed, fieldMax))
	}
	if p.Context.NextToProcess != "" {
		line("Next to process", clip(p.Context.NextToProcess, fieldMax))
	}
	if p.Cycles.Max > 0 || p.Cycles.Count > 0 {
		c := strconv.Itoa(p.Cycles.Count)
		if p.Cycles.Max > 0 {
			c += " of " + strconv.Itoa(p.Cycles.Max)
		}
		line("Cycles", c)
	}
	if !p.UpdatedAt.IsZero() {
		line("Last update", p.UpdatedAt.UTC().Format(time.RFC3339))
	}
}

// agentText names an agent as "id (type, name)", with what it has.
func agentText(a ckpt.Agent) string {
	name := clip(a.ID, fieldMax)
	var extra []string
	if t := clip(a.Type, 60); t != "" {
		extra = append(extra, t)
	}
	if n := clip(a.Name, 60); n != "" && n != name {
		extra = append(extra, n)
	}
	if name == "" {
		if len(extra) == 0 {
			return "unknown"
		}
		return strings.Join(extra, ", ")
	}
	if len(extra) > 0 {
		name += " (" + strings.Join(extra, ", ") + ")"
	}
	return name
}

// progressText renders progress as "66% (19 of 29 steps done)", the
// percentage rounded as every other view rounds it (percentText). Work that
// is not done never reads as 100%: when every recorded step is done but the
// checkpoint is not (agent-checkpoints' (seed 002) files list only the steps completed so
// far), it says so instead of a percentage.
func progressText(pr ckpt.Progress, steps bool, status ckpt.Status) string {
	if steps && pr.Total > 0 && pr.Done >= pr.Total && status != ckpt.StatusDone {
		return fmt.Sprintf("all %d recorded steps done, but the work is not marked done: more steps may follow", pr.Total)
	}
	s := percentText(pr.Percent)
	if pr.Total > 0 {
		unit := "done"
		if steps {
			unit = "steps done"
		}
		s += fmt.Sprintf(" (%d of %d %s)", pr.Done, pr.Total, unit)
	}
	return s
}

// section is one part of the prompt after the header: a text, or a list
// whose items are formatted only when looked at, so that a list of
// thousands costs only the items that can be shown.
type section struct {
	title string
	max   int // bytes the section may take at most
	// text sections
	text    string
	keepEnd bool // shorten by dropping whole lines from the start
	// list sections
	n        int                       // number of items; 0 for a text section
	item     func(i int) string        // the i-th item's line, in display order
	keepTail bool                      // keep the last items rather than the first
	more     func(from, to int) string // the summary of items from:to, left out
}

// heading is the section's heading line, with the blank line before it.
func (s section) heading() string { return "\n## " + s.title + "\n" }

// min is what the section takes at least: its heading and either one
// summary line (a list) or a few words of its text.
func (s section) min() int {
	if s.n == 0 {
		return len(s.heading()) + min(len(s.text), 80) + 1
	}
	return len(s.heading()) + s.summaryLen(0)
}

// summaryLen is the size of the summary line when kept items are shown; 0
// when all are.
func (s section) summaryLen(kept int) int {
	if kept >= s.n {
		return 0
	}
	from, to := s.omitted(kept)
	return len(s.more(from, to)) + 1
}

// render writes the section in at most max(allow, s.min()) bytes.
func (s section) render(allow int) string {
	allow = max(allow, s.min())
	head := s.heading()
	if s.n == 0 {
		if s.keepEnd {
			return head + lastLines(s.text, allow-len(head)-1) + "\n"
		}
		return head + shorten(s.text, allow-len(head)-1, false) + "\n"
	}
	// Format items in order of relevance while they fit: all of them if
	// they fit, else as many as fit beside the summary line.
	lines := make([]string, 0, min(s.n, 64))
	size := len(head)
	for len(lines) < s.n && size <= allow {
		it := s.item(s.index(len(lines)))
		size += len(it) + 1
		lines = append(lines, it)
	}
	if size > allow {
		size = len(head)
		kept := 0
		for kept < len(lines) && size+len(lines[kept])+1+s.summaryLen(kept+1) <= allow {
			size += len(lines[kept]) + 1
			kept++
		}
		lines = lines[:kept]
	}
	from, to := s.omitted(len(lines))
	var b strings.Builder
	b.Grow(size + 128)
	b.WriteString(head)
	if from < to && s.keepTail {
		b.WriteString(s.more(from, to) + "\n")
	}
	for i := range lines {
		if s.keepTail {
			i = len(lines) - 1 - i // lines are newest first; show them in order
		}
		b.WriteString(lines[i] + "\n")
	}
	if from < to && !s.keepTail {
		b.WriteString(s.more(from, to) + "\n")
	}
	return b.String()
}

// index is the display position of the i-th most relevant item.
func (s section) index(i int) int {
	if s.keepTail {
		return s.n - 1 - i
	}
	return i
}

// omitted is the range of items left out when kept of them are shown.
func (s section) omitted(kept int) (from, to int) {
	if s.keepTail {
		return 0, s.n - kept
	}
	return kept, s.n
}

// moreOf returns a summary function "- … and N more <noun><where>".
func moreOf(noun, where string) func(from, to int) string {
	return func(from, to int) string {
		return fmt.Sprintf("- %s and %d more %s%s", ellipsis, to-from, noun, where)
	}
}

// list makes a list section of n items.
func list(title string, max, n int, item func(i int) string, keepTail bool, more func(from, to int) string) section {
	return section{title: title, max: max, n: n, item: item, keepTail: keepTail, more: more}
}

// stepRange summarises steps[from:to] as "… and N more <noun>, a to b".
func stepRange(steps []ckpt.Step, noun string) func(from, to int) string {
	return func(from, to int) string {
		return fmt.Sprintf("- %s and %d more %s, %s to %s", ellipsis, to-from, noun,
			clip(steps[from].ID, 60), clip(steps[to-1].ID, 60))
	}
}

// sections are the prompt's parts after the header, in order: what to do
// now first (sectionsNow), then the record of the work (sectionsRecord).
func (p Prompt) sections() []section {
	return append(p.sectionsNow(), p.sectionsRecord()...)
}

// sectionsNow: warnings, the next action, resume instructions, active
// blockers and errors, next steps.
func (p Prompt) sectionsNow() []section {
	var secs []section
	if n := len(p.Warnings); n > 0 {
		secs = append(secs, list("Warnings", 1400, n, func(i int) string {
			return "- " + blockStart(clip(p.Warnings[i], warningMax))
		}, false, moreOf("warnings", "")))
	}
	secs = append(secs, section{title: "Next action", max: actionMax + 40, text: blockStart(clip(p.NextAction, actionMax))})
	if w := multiLine(p.LastWords, 1200); w != "" {
		secs = append(secs, section{title: "Where it stopped (the agent's last message)", max: 900, text: w})
	}
	if in := multiLine(p.ResumeInstructions, 1400); in != "" {
		secs = append(secs, section{title: "Resume instructions", max: 1500, text: in})
	}
	if n := len(p.ActiveBlockers); n > 0 {
		secs = append(secs, list("Active blockers", 1000, n, func(i int) string {
			x := p.ActiveBlockers[i]
			s := "- " + blockStart(clip(x.ID, 60)+": "+clip(x.Text, itemMax))
			if !x.Since.IsZero() {
				s += " (since " + x.Since.UTC().Format(time.RFC3339) + ")"
			}
			return s
		}, true, moreOf("active blockers", ", older")))
	}
	if n := len(p.ActiveErrors); n > 0 {
		secs = append(secs, list("Active errors", 1600, n, func(i int) string {
			return errorItem(p.ActiveErrors[i])
		}, true, moreOf("active errors", ", older")))
	}
	if n := len(p.NextSteps); n > 0 {
		secs = append(secs, list("Next steps", 1000, n, func(i int) string {
			return "- " + blockStart(clip(p.NextSteps[i], itemMax))
		}, false, moreOf("next steps", "")))
	}
	if asks := p.asksToShow(); len(asks) > 0 {
		secs = append(secs, list("What the user asked (latest last)", 1000, len(asks), func(i int) string {
			return "- " + blockStart(clip(oneLine(asks[i]), 300))
		}, true, moreOf("asks", ", earlier")))
	}
	return secs
}

// sectionsRecord: remaining steps, decisions, done steps, acceptance
// criteria, files, notes.
func (p Prompt) sectionsRecord() []section {
	var secs []section
	if n := len(p.RemainingSteps); n > 0 {
		secs = append(secs, list("Remaining steps", 1600, n, func(i int) string {
			s := p.RemainingSteps[i]
			t := "- [ ] " + clip(stepText(s), itemMax) + afterText(s)
			switch s.Status {
			case ckpt.StepInProgress:
				t += " (in progress)"
				if n := clip(oneLine(s.Notes), 200); n != "" {
					t += " — " + n // what the task is, for the step under way
				}
			case ckpt.StepFailed:
				t += " (failed"
				if n := clip(s.Notes, 120); n != "" {
					t += ": " + n
				}
				t += ")"
			}
			return t
		}, false, stepRange(p.RemainingSteps, "remaining steps")))
	}
	if n := len(p.Decisions); n > 0 {
		secs = append(secs, list("Decisions", 1600, n, func(i int) string {
			d := p.Decisions[i]
			s := "- " + blockStart(clip(d.Text, 200))
			if r := clip(d.Reason, 200); r != "" {
				s += " — " + r
			}
			return s
		}, true, moreOf("decisions", ", earlier")))
	}
	if n := len(p.DoneSteps); n > 0 {
		secs = append(secs, list("Done steps (do not redo)", 1000, n, func(i int) string {
			s := p.DoneSteps[i]
			t := "- [x] " + clip(stepText(s), itemMax)
			if s.Status == ckpt.StepSkipped {
				t += " (skipped)"
			}
			return t
		}, true, stepRange(p.DoneSteps, "done steps")))
	}
	if tr := p.transcriptText(); tr != "" {
		secs = append(secs, section{title: "After the last compaction", max: 1200, text: tr, keepEnd: true})
	}
	if n := len(p.Acceptance); n > 0 {
		order := unmetFirst(p.Acceptance)
		secs = append(secs, list("Acceptance criteria", 800, n, func(i int) string {
			if a := order[i]; !a.Met {
				return "- [ ] " + clip(criterionText(a), itemMax) + " (unmet)"
			}
			return "- [x] " + clip(criterionText(order[i]), itemMax)
		}, false, moreOf("criteria", "")))
	}
	for _, f := range []struct {
		title string
		files []string
	}{{"Files created", p.FilesCreated}, {"Files modified", p.FilesModified}} {
		if n := len(f.files); n > 0 {
			secs = append(secs, list(f.title, 700, n, func(i int) string {
				return "- " + blockStart(clip(f.files[i], 200))
			}, true, moreOf("files", ", earlier")))
		}
	}
	if notes := multiLine(tail(p.Context.Notes, 4000), 4000); notes != "" {
		secs = append(secs, section{title: "Notes", max: 900, text: notes, keepEnd: true})
	}
	return secs
}

// unmetFirst orders criteria unmet first: they are the work left.
func unmetFirst(acc []ckpt.Criterion) []ckpt.Criterion {
	order := make([]ckpt.Criterion, 0, len(acc))
	for _, a := range acc {
		if !a.Met {
			order = append(order, a)
		}
	}
	for _, a := range acc {
		if a.Met {
			order = append(order, a)
		}
	}
	return order
}
