package render

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	ckpt "github.com/ckpt-dev/ckpt"
)

// promptBudget is what Markdown aims for: about 2,000 tokens. Headings and
// the summary lines of squeezed sections may pass it a little; the hard
// bound is MaxPromptChars.
const promptBudget = 8000

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
	"Warnings", "Next action", "Resume instructions", "Active blockers", "Active errors",
	"Next steps", "Remaining steps", "Decisions", "Done steps (do not redo)",
	"Acceptance criteria", "Files created", "Files modified", "Notes",
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
	var b strings.Builder
	b.Grow(promptBudget + 1024)
	p.writeHeader(&b)
	secs := p.sections()
	left := promptBudget - b.Len()
	for i, s := range secs {
		reserve := 0
		for _, later := range secs[i+1:] {
			reserve += later.min()
		}
		out := s.render(min(s.max, left-reserve))
		b.WriteString(out)
		left -= len(out)
	}
	return fitPrompt(b.String())
}

// fitPrompt is the last guard of the MaxPromptChars bound: the budgets keep
// a prompt well under it, but if a prompt ever reaches it, whole lines are
// dropped from the end.
func fitPrompt(s string) string {
	if !utf8.ValidString(s) { // every piece is cleaned, so this cannot happen
		s = strings.ToValidUTF8(s, "\uFFFD")
	}
	if len(s) < MaxPromptChars {
		return s
	}
	const note = "\n" + ellipsis + " (prompt shortened to fit its size limit)\n"
	cut := strings.LastIndexByte(s[:MaxPromptChars-len(note)], '\n')
	if cut < 0 {
		cut = 0
	}
	return s[:cut] + note
}

func (p Prompt) writeHeader(b *strings.Builder) {
	b.WriteString("# Resume: ")
	b.WriteString(clip(p.Goal, goalMax))
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
	line("Progress", progressText(p.Progress, len(p.DoneSteps)+len(p.RemainingSteps) > 0))
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

// progressText renders progress as "65.5% (19 of 29 steps done)".
func progressText(pr ckpt.Progress, steps bool) string {
	pct := pr.Percent
	if math.IsNaN(pct) || pct < 0 {
		pct = 0
	}
	s := strconv.FormatFloat(math.Round(min(pct, 100)*10)/10, 'f', -1, 64) + "%"
	if pr.Total > 0 {
		unit := "done"
		if steps {
			unit = "steps done"
		}
		s += fmt.Sprintf(" (%d of %d %s)", pr.Done, pr.Total, unit)
	}
	return s
}

// section is one part of the prompt after the header.
type section struct {
	title string
	max   int // bytes the section may take at most
	// text sections
	text    string
	keepEnd bool // shorten by dropping whole lines from the start
	// list sections
	items    []string
	keepTail bool                      // keep the last items rather than the first
	more     func(from, to int) string // the summary of items[from:to], left out
}

// heading is the section's heading line, with the blank line before it.
func (s section) heading() string { return "\n## " + s.title + "\n" }

// min is what the section takes at least: its heading and either one
// summary line (a list) or a few words of its text.
func (s section) min() int {
	if s.items == nil {
		return len(s.heading()) + min(len(s.text), 80) + 1
	}
	return len(s.heading()) + s.summaryLen(0)
}

// summaryLen is the size of the summary line when kept items are shown; 0
// when all are.
func (s section) summaryLen(kept int) int {
	if kept >= len(s.items) {
		return 0
	}
	from, to := s.omitted(kept)
	return len(s.more(from, to)) + 1
}

// render writes the section in at most max(allow, s.min()) bytes.
func (s section) render(allow int) string {
	allow = max(allow, s.min())
	head := s.heading()
	if s.items == nil {
		if s.keepEnd {
			return head + lastLines(s.text, allow-len(head)-1) + "\n"
		}
		return head + shorten(s.text, allow-len(head)-1, false) + "\n"
	}
	size := len(head)
	for _, it := range s.items {
		size += len(it) + 1
	}
	if size <= allow {
		return head + strings.Join(s.items, "\n") + "\n"
	}
	n := len(s.items)
	// Keep items in order of relevance while they and the summary fit.
	size, kept := len(head), 0
	for kept < n {
		it := s.items[s.index(kept)]
		if size+len(it)+1+s.summaryLen(kept+1) > allow {
			break
		}
		size += len(it) + 1
		kept++
	}
	from, to := s.omitted(kept)
	summary := s.more(from, to)
	var b strings.Builder
	b.WriteString(head)
	if s.keepTail {
		b.WriteString(summary + "\n")
		for _, it := range s.items[n-kept:] {
			b.WriteString(it + "\n")
		}
	} else {
		for _, it := range s.items[:kept] {
			b.WriteString(it + "\n")
		}
		b.WriteString(summary + "\n")
	}
	return b.String()
}

// index is the position in items of the i-th most relevant item.
func (s section) index(i int) int {
	if s.keepTail {
		return len(s.items) - 1 - i
	}
	return i
}

// omitted is the range of items left out when kept of them are shown.
func (s section) omitted(kept int) (from, to int) {
	if s.keepTail {
		return 0, len(s.items) - kept
	}
	return kept, len(s.items)
}

// moreOf returns a summary function "- … and N more <noun><where>".
func moreOf(noun, where string) func(from, to int) string {
	return func(from, to int) string {
		return fmt.Sprintf("- %s and %d more %s%s", ellipsis, to-from, noun, where)
	}
}

func (p Prompt) sections() []section {
	var secs []section
	if len(p.Warnings) > 0 {
		items := make([]string, len(p.Warnings))
		for i, w := range p.Warnings {
			items[i] = "- " + blockStart(clip(w, warningMax))
		}
		secs = append(secs, section{title: "Warnings", max: 1400, items: items, more: moreOf("warnings", "")})
	}
	secs = append(secs, section{title: "Next action", max: actionMax + 40, text: blockStart(clip(p.NextAction, actionMax))})
	if in := multiLine(p.ResumeInstructions, 1400); in != "" {
		secs = append(secs, section{title: "Resume instructions", max: 1500, text: in})
	}
	if len(p.ActiveBlockers) > 0 {
		items := make([]string, len(p.ActiveBlockers))
		for i, x := range p.ActiveBlockers {
			s := "- " + blockStart(clip(x.ID, 60)+": "+clip(x.Text, itemMax))
			if !x.Since.IsZero() {
				s += " (since " + x.Since.UTC().Format(time.RFC3339) + ")"
			}
			items[i] = s
		}
		secs = append(secs, section{title: "Active blockers", max: 1000, items: items, keepTail: true, more: moreOf("active blockers", ", older")})
	}
	if len(p.ActiveErrors) > 0 {
		items := make([]string, len(p.ActiveErrors))
		for i, e := range p.ActiveErrors {
			s := clip(e.Message, itemMax)
			if t := clip(e.Type, 60); t != "" {
				s = t + ": " + s
			}
			if e.Blocking {
				s += " (blocking)"
			}
			items[i] = "- " + blockStart(s)
		}
		secs = append(secs, section{title: "Active errors", max: 1000, items: items, keepTail: true, more: moreOf("active errors", ", older")})
	}
	if len(p.NextSteps) > 0 {
		items := make([]string, len(p.NextSteps))
		for i, s := range p.NextSteps {
			items[i] = "- " + blockStart(clip(s, itemMax))
		}
		secs = append(secs, section{title: "Next steps", max: 1000, items: items, more: moreOf("next steps", "")})
	}
	if len(p.RemainingSteps) > 0 {
		items := make([]string, len(p.RemainingSteps))
		for i, s := range p.RemainingSteps {
			t := "- [ ] " + clip(stepText(s), itemMax)
			switch s.Status {
			case ckpt.StepInProgress:
				t += " (in progress)"
			case ckpt.StepFailed:
				t += " (failed"
				if n := clip(s.Notes, 120); n != "" {
					t += ": " + n
				}
				t += ")"
			}
			items[i] = t
		}
		rem := p.RemainingSteps
		more := func(from, to int) string {
			return fmt.Sprintf("- %s and %d more remaining steps, %s to %s", ellipsis, to-from,
				clip(rem[from].ID, 60), clip(rem[to-1].ID, 60))
		}
		secs = append(secs, section{title: "Remaining steps", max: 1600, items: items, more: more})
	}
	if len(p.Decisions) > 0 {
		items := make([]string, len(p.Decisions))
		for i, d := range p.Decisions {
			s := "- " + blockStart(clip(d.Text, 200))
			if r := clip(d.Reason, 200); r != "" {
				s += " — " + r
			}
			items[i] = s
		}
		secs = append(secs, section{title: "Decisions", max: 1600, items: items, keepTail: true, more: moreOf("decisions", ", earlier")})
	}
	if len(p.DoneSteps) > 0 {
		items := make([]string, len(p.DoneSteps))
		for i, s := range p.DoneSteps {
			t := "- [x] " + clip(stepText(s), itemMax)
			if s.Status == ckpt.StepSkipped {
				t += " (skipped)"
			}
			items[i] = t
		}
		done := p.DoneSteps
		more := func(from, to int) string {
			return fmt.Sprintf("- %s and %d more done steps, %s to %s", ellipsis, to-from,
				clip(done[from].ID, 60), clip(done[to-1].ID, 60))
		}
		secs = append(secs, section{title: "Done steps (do not redo)", max: 1000, items: items, keepTail: true, more: more})
	}
	if len(p.Acceptance) > 0 {
		var unmet, met []string
		for _, a := range p.Acceptance {
			if a.Met {
				met = append(met, "- [x] "+clip(criterionText(a), itemMax))
			} else {
				unmet = append(unmet, "- [ ] "+clip(criterionText(a), itemMax)+" (unmet)")
			}
		}
		secs = append(secs, section{title: "Acceptance criteria", max: 800, items: append(unmet, met...), more: moreOf("criteria", "")})
	}
	for _, f := range []struct {
		title string
		files []string
	}{{"Files created", p.FilesCreated}, {"Files modified", p.FilesModified}} {
		if len(f.files) == 0 {
			continue
		}
		items := make([]string, len(f.files))
		for i, name := range f.files {
			items[i] = "- " + blockStart(clip(name, 200))
		}
		secs = append(secs, section{title: f.title, max: 700, items: items, keepTail: true, more: moreOf("files", ", earlier")})
	}
	if notes := multiLine(tail(p.Context.Notes, 4000), 4000); notes != "" {
		secs = append(secs, section{title: "Notes", max: 900, text: notes, keepEnd: true})
	}
	return secs
}
