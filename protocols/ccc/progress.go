package ccc

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	ckpt "github.com/ckpt-dev/ckpt"
	"github.com/ckpt-dev/ckpt/internal/jsondoc"
	"github.com/ckpt-dev/ckpt/internal/lazyregexp"
	"github.com/ckpt-dev/ckpt/protocols/internal/mdscan"
)

// ProgressFile is the name of the handoff file in a project root.
const ProgressFile = ".ccc-progress.md"

// The sections of .ccc-progress.md, in the seed's order.
const (
	secCompleted = "Completed Tasks"
	secCurrent   = "Current Task"
	secRemaining = "Remaining Tasks"
	secDecisions = "Decisions Made"
	secBlockers  = "Blockers"
	secPrompt    = "Continuation Prompt"
)

// sectionNamed maps the names real files use onto the seed's sections. (A
// switch, not a map literal: Go builds a map literal at initialisation,
// in every ckpt process.)
func sectionNamed(k string) (string, bool) {
	switch k {
	case "completed tasks", "completed", "done":
		return secCompleted, true
	case "current task", "current tasks", "in progress":
		return secCurrent, true
	case "remaining tasks", "remaining", "next tasks", "todo":
		return secRemaining, true
	case "decisions made", "decisions":
		return secDecisions, true
	case "blockers", "blocked":
		return secBlockers, true
	case "continuation prompt":
		return secPrompt, true
	}
	return "", false
}

// Regular expressions are compiled on first use, not at start-up: every
// ckpt process links this package, and most never use them.
var (
	headerField = lazyregexp.New(`^\s*\*\*([^*]+?):?\*\*:?\s*(.*)$`)
	bulletLine  = lazyregexp.New(`^(\s*)[-*+]\s+(.*)$`)
	issueKey    = lazyregexp.New(`^[A-Za-z][A-Za-z0-9]*-[0-9]+$`)
)

// progress is .ccc-progress.md as read: the header fields, the items of
// each known section, the other sections and the prompt.
type progress struct {
	title    string // the "# " heading
	header   []field
	sections map[string][]string // known section → its items (or lines)
	extra    []section           // sections the seed does not name, verbatim
	prompt   string
	order    []string // known sections, as met
}

type field struct{ Label, Value string }

type section struct {
	Heading string `json:"heading"`
	Body    string `json:"body"`
}

// parseProgress reads the file leniently: headings inside code fences are
// not headings, section names are matched without regard to case and with
// common variants, list items may use -, * or +, a nested item belongs to
// the item above it.
func parseProgress(md []byte) progress {
	p := progress{sections: map[string][]string{}}
	var (
		cur    string // known section, or "" in the header
		extra  = -1   // index in p.extra while in an unknown section
		body   []string
		inBody bool
	)
	flush := func() {
		text := strings.Trim(strings.Join(body, "\n"), "\n")
		switch {
		case extra >= 0:
			p.extra[extra].Body = text
		case cur == secPrompt:
			p.prompt = strings.TrimSpace(text)
		case cur != "":
			p.sections[cur] = append(p.sections[cur], items(body)...)
		}
		body = nil
	}
	for l := range mdscan.Lines(md) {
		line := l.Text
		if l.Fenced {
			body = append(body, line)
			continue
		}
		if level, text, ok := mdscan.Heading(line); ok {
			if level == 1 && !inBody && p.title == "" {
				p.title = text
				continue
			}
			if level >= 3 && (cur == secPrompt || extra >= 0) {
				body = append(body, line) // a sub-heading inside a section's text
				continue
			}
			flush()
			inBody = true
			name := strings.ToLower(strings.TrimRight(text, ": "))
			if known, ok := sectionNamed(name); ok {
				cur, extra = known, -1
				if !slices.Contains(p.order, known) {
					p.order = append(p.order, known)
				}
			} else {
				cur = ""
				p.extra = append(p.extra, section{Heading: text})
				extra = len(p.extra) - 1
			}
			continue
		}
		if !inBody {
			if m := headerField.Get().FindStringSubmatch(line); m != nil {
				p.header = append(p.header, field{strings.TrimSpace(m[1]), strings.TrimSpace(m[2])})
			}
			continue
		}
		body = append(body, line)
	}
	flush()
	return p
}

// items returns a section's list items; a nested item or a continuation line
// is joined to the item above it. Lines outside any list are items too.
func items(lines []string) []string {
	var out []string
	for _, l := range lines {
		if strings.TrimSpace(l) == "" {
			continue
		}
		if m := bulletLine.Get().FindStringSubmatch(l); m != nil && len(m[1]) < 2 {
			out = append(out, strings.TrimSpace(m[2]))
			continue
		}
		if len(out) > 0 {
			out[len(out)-1] += "\n" + strings.TrimSpace(l)
			continue
		}
		out = append(out, strings.TrimSpace(l))
	}
	return out
}

// ContinuationPrompt returns the text of the "## Continuation Prompt"
// section of a .ccc-progress.md, as a resume command reads it: everything up
// to the next section heading, code blocks included, trimmed. It fails when
// the section is missing or empty, with an error that says how to write one.
func ContinuationPrompt(md []byte) (string, error) {
	p := parseProgress(md)
	if !slices.Contains(p.order, secPrompt) {
		return "", errors.New(`no "## Continuation Prompt" section in .ccc-progress.md: write one with ckpt checkpoint ID (or add the section by hand)`)
	}
	if p.prompt == "" {
		return "", errors.New(`the "## Continuation Prompt" section of .ccc-progress.md is empty: write it with ckpt checkpoint ID`)
	}
	return p.prompt, nil
}

// renderProgress writes c as .ccc-progress.md, in the seed's layout.
// extraHeader and extraSections are what an imported file had beyond the
// seed's layout; they are written back in place.
func renderProgress(c *ckpt.Checkpoint, kept keptMarkdown) []byte {
	var b strings.Builder
	b.WriteString("# Session Progress\n\n")
	fmt.Fprintf(&b, "**Issue:** %s\n", issueLine(c))
	session := !c.Session.StartedAt.IsZero()
	if session {
		fmt.Fprintf(&b, "**Session:** %s\n", jsondoc.FormatTime(c.Session.StartedAt))
	}
	fmt.Fprintf(&b, "**Execution Mode:** %s\n", orDefault(executionMode(c), "—"))
	for _, f := range kept.Header {
		if session && strings.EqualFold(f.Label, "session") {
			continue // replaced by the session's time
		}
		label := f.Label
		if label == "" {
			label = " " // a nameless field: "**:**" would read back as the label ":"
		}
		fmt.Fprintf(&b, "**%s:** %s\n", label, f.Value)
	}
	var done, current, remaining []string
	for _, s := range c.Steps {
		switch s.Status {
		case ckpt.StepDone:
			done = append(done, oneLine(s.Label())+" ✓")
		case ckpt.StepSkipped:
			done = append(done, oneLine(s.Label())+" ✓ (skipped)")
		case ckpt.StepInProgress:
			current = append(current, oneLine(s.Label())+" — "+oneLine(orDefault(s.Notes, stepDetail(c))))
		case ckpt.StepFailed:
			current = append(current, oneLine(s.Label())+" — "+oneLine(strings.TrimSuffix("failed: "+s.Notes, ": ")))
		default:
			remaining = append(remaining, oneLine(s.Label()))
		}
	}
	if c.PartiallyComplete() {
		for _, a := range c.Acceptance {
			if !a.Met {
				text := a.ID
				if a.Title != "" && a.Title != a.ID {
					text += ": " + a.Title
				}
				remaining = append(remaining, "Meet acceptance criterion "+oneLine(text)+" (unmet; the task is only partially complete)")
			}
		}
	}
	if len(current) == 0 && c.CurrentStep != "" && !namesStep(c, c.CurrentStep) {
		current = append(current, oneLine(c.CurrentStep)+" — "+strings.ReplaceAll(string(c.Status), "_", " "))
	}
	var decisions []string
	for _, d := range c.Decisions {
		if d.Reason != "" {
			decisions = append(decisions, oneLine(d.Text)+": "+oneLine(d.Reason))
		} else {
			decisions = append(decisions, oneLine(d.Text))
		}
	}
	var blockers []string
	for _, bl := range c.ActiveBlockers() {
		blockers = append(blockers, oneLine(bl.Text))
	}
	for _, s := range []struct {
		name  string
		items []string
	}{{secCompleted, done}, {secCurrent, current}, {secRemaining, remaining}, {secDecisions, decisions}, {secBlockers, blockers}} {
		fmt.Fprintf(&b, "\n## %s\n", s.name)
		if len(s.items) == 0 {
			b.WriteString("- None\n")
		}
		for _, it := range s.items {
			fmt.Fprintf(&b, "- %s\n", it)
		}
	}
	for _, s := range kept.Sections {
		fmt.Fprintf(&b, "\n%s\n", sectionHeading(s.Heading))
		if s.Body != "" {
			b.WriteString(closeFences(s.Body) + "\n")
		}
	}
	fmt.Fprintf(&b, "\n## %s\n%s\n", secPrompt, closeFences(prompt(c)))
	return []byte(b.String())
}

// sectionHeading writes a kept section's heading so that it reads back as
// the same text: with a closing '#' where the text alone would not (an
// empty text, or one that ends in '#').
func sectionHeading(text string) string {
	if text == "" || strings.HasSuffix(text, "#") {
		return "## " + text + " #"
	}
	return "## " + text
}

// closeFences closes a code fence text leaves open, so that it cannot swallow
// the sections written after it.
func closeFences(text string) string {
	if fence := mdscan.OpenFence(text); fence != "" {
		return text + "\n" + fence
	}
	return text
}

// keptMarkdown is what an imported .ccc-progress.md had beyond the seed's
// layout: header fields and sections, kept in Checkpoint.Meta to write back.
type keptMarkdown struct {
	Header   []field   `json:"header,omitempty"`
	Sections []section `json:"sections,omitempty"`
}

func orDefault(s, def string) string {
	if strings.TrimSpace(s) == "" {
		return def
	}
	return s
}

// oneLine keeps an item on its list line: line breaks become spaces.
func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// issueLine is the **Issue:** value: "CIA-123 — Title".
func issueLine(c *ckpt.Checkpoint) string {
	switch {
	case c.TaskID != "" && c.Title != "":
		return oneLine(c.TaskID) + " — " + oneLine(c.Title)
	case c.TaskID != "":
		return oneLine(c.TaskID)
	case c.Title != "":
		return oneLine(c.Title)
	}
	return oneLine(c.ID)
}

// stepDetail is what the current task line says of a step under way
// without notes: "blocked" or "waiting" when the checkpoint is, else "in
// progress".
func stepDetail(c *ckpt.Checkpoint) string {
	if c.Status == ckpt.StatusBlocked || c.Status == ckpt.StatusWaiting {
		return string(c.Status)
	}
	return "in progress"
}

// namesStep reports whether text is one of c's steps, by ID or title: a
// current_step left on a finished step is not a second current task.
func namesStep(c *ckpt.Checkpoint, text string) bool {
	return slices.ContainsFunc(c.Steps, func(s ckpt.Step) bool { return s.ID == text || s.Label() == text })
}

// executionMode returns the "exec:<mode>" label, if c has one, else the
// mode in c.Meta["execution_mode"] (as hooks record it), else "".
func executionMode(c *ckpt.Checkpoint) string {
	for _, l := range c.Labels {
		if strings.HasPrefix(l, "exec:") {
			return l
		}
	}
	var mode string
	if raw, ok := c.Meta["execution_mode"]; ok && json.Unmarshal(raw, &mode) == nil {
		if mode = oneLine(mode); mode != "" && !strings.HasPrefix(mode, "exec:") {
			mode = "exec:" + mode
		}
	}
	return mode
}

// prompt is the continuation prompt: c's resume instructions when set, else
// the seed's template filled from c.
func prompt(c *ckpt.Checkpoint) string {
	if strings.TrimSpace(c.Resume.Instructions) != "" {
		return strings.TrimSpace(c.Resume.Instructions)
	}
	return generatedPrompt(c)
}

// generatedPrompt fills the seed's template: "Resume CIA-XXX. Current task:
// [task N of M]. Key files: [file list].\nNext action: [specific next step]."
func generatedPrompt(c *ckpt.Checkpoint) string {
	issue := c.TaskID
	if issue == "" {
		issue = c.ID
	}
	task := "none"
	pos := c.Position()
	if pos.Step >= 0 {
		task = fmt.Sprintf("%s (task %d of %d)", oneLine(c.Steps[pos.Step].Label()), pos.N, pos.M)
	} else if c.CurrentStep != "" && !namesStep(c, c.CurrentStep) {
		task = oneLine(c.CurrentStep)
	} else if len(c.Steps) > 0 {
		task = fmt.Sprintf("all %d tasks done", len(c.Steps))
	}
	var files []string
	for _, f := range append(append([]string{}, c.Files.Modified...), c.Files.Created...) {
		if !slices.Contains(files, f) {
			files = append(files, f)
		}
	}
	list := "none recorded"
	if len(files) > 10 {
		list = strings.Join(files[:10], ", ") + fmt.Sprintf(" and %d more", len(files)-10)
	} else if len(files) > 0 {
		list = strings.Join(files, ", ")
	}
	next := "none recorded"
	if len(c.Resume.NextSteps) > 0 {
		next = oneLine(c.Resume.NextSteps[0])
	} else if pos.Step >= 0 {
		next = oneLine(c.Steps[pos.Step].Label())
	}
	return fmt.Sprintf("Resume %s. Current task: %s. Key files: %s.\nNext action: %s.", oneLine(issue), task, list, strings.TrimSuffix(next, "."))
}

// issueParts splits "CIA-123 — Title" into the issue key and the title.
func issueParts(v string) (key, title string) {
	for _, sep := range []string{" — ", " – ", " - ", ": "} {
		if k, t, ok := strings.Cut(v, sep); ok && issueKey.Get().MatchString(strings.TrimSpace(k)) {
			return strings.TrimSpace(k), strings.TrimSpace(t)
		}
	}
	if issueKey.Get().MatchString(strings.TrimSpace(v)) {
		return strings.TrimSpace(v), ""
	}
	return "", strings.TrimSpace(v)
}
