// Package plan speaks plan.md's (seed 004) "plan.md as source of truth" protocol: a
// Markdown plan whose HTML-comment markers name phases, tasks, acceptance
// criteria, decisions and blockers, with a .checkpoint directory beside it
// holding state.json (version 2), history.jsonl and recovery.json.
//
// The plan is read with a real Markdown parser (goldmark with GFM's task
// lists), so a marker inside a code fence or a code span is text, not a
// marker, and a checkbox is whatever GitHub would render as one.
package plan

import (
	"bytes"
	"fmt"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/ckpt-dev/ckpt/protocols/plan/internal/markdown/ast"
	"github.com/ckpt-dev/ckpt/protocols/plan/internal/markdown/text"
)

// MaxPlanSize is the largest plan.md Parse accepts, in bytes.
const MaxPlanSize = 16 << 20

// Plan is what a plan.md says: its phases with their tasks and acceptance
// criteria, its decisions and blockers, and the progress its tasks add up to.
// Everything is in document order.
type Plan struct {
	// Title is the first level-1 heading as written, or "".
	Title string
	// Fields are the "**Key:** value" lines that stand before the first
	// level-2 heading (Status, Plan ID, Created…), in order.
	Fields []Field
	// Phases lists the phases in the order their first CHECKPOINT marker
	// appears. Items before any CHECKPOINT marker belong to a phase with the
	// empty ID, which then comes first. A phase ID repeated by a later marker
	// names the same phase.
	Phases []*Phase
	// Decisions and Blockers are the DECISION and BLOCKER markers.
	Decisions []Note
	Blockers  []Note
	// Unmarked lists the GFM checkboxes that carry no TASK or ACCEPT marker:
	// the document does not track them, but Import can guess from them.
	Unmarked []Item
	// Headings lists every heading with the fields under it.
	Headings []Heading
	// Progress counts the tasks (not the acceptance criteria).
	Progress Progress
	// Warnings says what was ignored and why, one line each, with its line.
	Warnings []string

	// repeats maps "TASK id" and "ACCEPT id" to the lines of the markers
	// that repeat an ID, which SetTask refuses to guess between.
	repeats map[string][]int
}

// Phase is one CHECKPOINT marker's section.
type Phase struct {
	ID string // "" for the items before the first CHECKPOINT marker
	// Title is the text of the heading nearest before (or around) the marker.
	Title      string
	Line       int
	Tasks      []Item
	Acceptance []Item
}

// Item is one checkbox list item: a task, an acceptance criterion, or an
// unmarked checkbox.
type Item struct {
	ID string // the marker's ID; "" for an unmarked checkbox
	// Title is the item's first paragraph as written (Markdown and all),
	// without its checkbox and HTML comments, white space runs as one space.
	Title   string
	Checked bool   // [x] or [X]
	Phase   string // the ID of the phase it belongs to
	// Parent is the ID of the checkbox item this one is nested in, if any.
	Parent string
	Line   int // 1-based line of the checkbox
	// Start and End are the byte range of the item in the source: from its
	// list marker to the end of its first paragraph (nested items excluded).
	Start, End int
	// Box is the byte offset of the character between the brackets of the
	// checkbox: ' ' or 'x'/'X'. Changing that one byte ticks or unticks it.
	Box int
}

// Note is a DECISION or BLOCKER marker's text and where it stands.
type Note struct {
	Text string
	Line int
}

// Field is one "**Key:** value" line.
type Field struct {
	Key, Value string
	Line       int
}

// Heading is one heading and the "**Key:** value" fields in the paragraphs
// after it, up to the next heading.
type Heading struct {
	Level  int
	Text   string
	Line   int
	Fields []Field
}

// Progress is the document's progress summary, counted over the tasks.
type Progress struct {
	TotalTasks     int
	CompletedTasks int
	// Percentage is completed/total*100 rounded to one decimal as the
	// document's toFixed(1) does; 0 when there are no tasks.
	Percentage float64
}

// Tasks returns every task of every phase, in document order of phases.
func (p *Plan) Tasks() []Item {
	var out []Item
	for _, ph := range p.Phases {
		out = append(out, ph.Tasks...)
	}
	return out
}

// Acceptance returns every acceptance criterion of every phase.
func (p *Plan) Acceptance() []Item {
	var out []Item
	for _, ph := range p.Phases {
		out = append(out, ph.Acceptance...)
	}
	return out
}

// Field returns the value of the document field key (case-insensitive), and
// whether it is there.
func (p *Plan) Field(key string) (string, bool) {
	for _, f := range p.Fields {
		if strings.EqualFold(f.Key, key) {
			return f.Value, true
		}
	}
	return "", false
}

// Parse reads a plan.md. It fails only when the bytes are not a text file
// (invalid UTF-8, a NUL byte, larger than MaxPlanSize), with an error that
// names the place; any Markdown parses, and whatever looks like a marker but
// cannot count is reported in Plan.Warnings. It is safe for concurrent use.
func Parse(src []byte) (*Plan, error) {
	if len(src) > MaxPlanSize {
		return nil, fmt.Errorf("plan is %d bytes; the limit is %d: is this really a plan.md?", len(src), MaxPlanSize)
	}
	lines := newLineIndex(src)
	if i := bytes.IndexByte(src, 0); i >= 0 {
		return nil, fmt.Errorf("plan has a NUL byte on line %d: it looks binary or damaged; restore it (for example from git)", lines.line(i))
	}
	if !utf8.Valid(src) {
		i := firstInvalidUTF8(src)
		return nil, fmt.Errorf("plan is not valid UTF-8 (byte %d, line %d): save it as UTF-8", i, lines.line(i))
	}
	w := &walker{src: src, lines: lines, plan: &Plan{}, records: map[*ast.ListItem]*record{}, phases: map[string]*Phase{}}
	doc := markdownParser().Parse(text.NewReader(src))
	if err := ast.Walk(doc, w.visit); err != nil {
		return nil, err // visit returns no errors; kept for the contract of ast.Walk
	}
	w.finish()
	return w.plan, nil
}

func firstInvalidUTF8(b []byte) int {
	for i := 0; i < len(b); {
		r, n := utf8.DecodeRune(b[i:])
		if r == utf8.RuneError && n <= 1 {
			return i
		}
		i += n
	}
	return len(b)
}

// lineIndex turns byte offsets into 1-based line numbers.
type lineIndex []int // offsets of each '\n'

func newLineIndex(src []byte) lineIndex {
	var idx lineIndex
	for i, b := range src {
		if b == '\n' {
			idx = append(idx, i)
		}
	}
	return idx
}

func (l lineIndex) line(off int) int { return sort.SearchInts(l, off) + 1 }

// record is one checkbox list item while the walk is under way.
type record struct {
	item     Item
	kind     markerKind // markTask, markAccept, or 0 for unmarked
	parent   *record
	markerAt int // line of its marker, for warnings
}

type walker struct {
	src     []byte
	lines   lineIndex
	plan    *Plan
	phase   *Phase // the current phase; nil before the first marker
	phases  map[string]*Phase
	heading string // text of the last heading seen
	records map[*ast.ListItem]*record
	order   []*record
	seenH2  bool
}

func (w *walker) visit(n ast.Node, entering bool) (ast.WalkStatus, error) {
	if !entering {
		return ast.WalkContinue, nil
	}
	switch n := n.(type) {
	case *ast.FencedCodeBlock, *ast.CodeBlock, *ast.CodeSpan:
		return ast.WalkSkipChildren, nil // code is text, never markers
	case *ast.Heading:
		t := itemText(n, -1, w.src)
		w.heading = t
		if n.Level == 1 && w.plan.Title == "" {
			w.plan.Title = t
		}
		if n.Level >= 2 {
			w.seenH2 = true
		}
		w.plan.Headings = append(w.plan.Headings, Heading{Level: n.Level, Text: t, Line: w.lines.line(n.Pos())})
	case *ast.Paragraph:
		w.fields(n)
	case *ast.HTMLBlock:
		if n.HTMLBlockType == ast.HTMLBlockType1 {
			return ast.WalkSkipChildren, nil // <script>, <pre>, <style>, <textarea>: raw text
		}
		segs := n.Lines()
		var all []text.Segment
		for i := 0; i < segs.Len(); i++ {
			all = append(all, segs.At(i))
		}
		if n.HasClosure() {
			all = append(all, n.ClosureLine)
		}
		w.comments(n, all)
	case *ast.RawHTML:
		var all []text.Segment
		for i := 0; i < n.Segments.Len(); i++ {
			all = append(all, n.Segments.At(i))
		}
		w.comments(n, all)
	case *taskCheckBox:
		w.checkbox(n)
	}
	return ast.WalkContinue, nil
}

// fields collects "**Key:** value" lines from a paragraph: under the current
// heading always, and as document fields before the first level-2 heading.
func (w *walker) fields(block ast.Node) {
	if block.Parent() == nil || block.Parent().Kind() != ast.KindDocument {
		return
	}
	for _, f := range paragraphFields(block, w.src, w.lines) {
		if !w.seenH2 {
			w.plan.Fields = append(w.plan.Fields, f)
		}
		if h := len(w.plan.Headings); h > 0 {
			w.plan.Headings[h-1].Fields = append(w.plan.Headings[h-1].Fields, f)
		}
	}
}

func (w *walker) warnf(line int, format string, args ...any) {
	w.plan.Warnings = append(w.plan.Warnings, fmt.Sprintf("line %d: ", line)+fmt.Sprintf(format, args...))
}

// checkbox records a GFM task-list item. Its marker, if any, comes later in
// the walk.
func (w *walker) checkbox(cb *taskCheckBox) {
	block := cb.Parent()
	li, ok := block.Parent().(*ast.ListItem)
	if !ok {
		return
	}
	box := cb.Pos() + 1
	if cb.Pos() < 0 || box+1 >= len(w.src) || w.src[box-1] != '[' || w.src[box+1] != ']' {
		box = -1 // cannot happen with goldmark's checkbox parser; SetTask refuses such an item
	}
	start := li.Pos()
	end := start
	if l := block.Lines(); l.Len() > 0 {
		end = l.At(l.Len() - 1).Stop
		for end > start && (w.src[end-1] == '\n' || w.src[end-1] == '\r') {
			end--
		}
	}
	r := &record{item: Item{
		Title:   itemText(block, box, w.src),
		Checked: cb.IsChecked,
		Phase:   w.phaseID(),
		Line:    w.lines.line(cb.Pos()),
		Start:   start,
		End:     end,
		Box:     box,
	}}
	for p := li.Parent(); p != nil; p = p.Parent() {
		if pli, ok := p.(*ast.ListItem); ok {
			if pr := w.records[pli]; pr != nil {
				r.parent = pr
				break
			}
		}
	}
	w.records[li] = r
	w.order = append(w.order, r)
}

func (w *walker) phaseID() string {
	if w.phase == nil {
		return ""
	}
	return w.phase.ID
}

// phaseFor returns the phase with the given ID, creating it.
func (w *walker) phaseFor(id, title string, line int) *Phase {
	if ph, ok := w.phases[id]; ok {
		return ph
	}
	ph := &Phase{ID: id, Title: title, Line: line}
	w.phases[id] = ph
	w.plan.Phases = append(w.plan.Phases, ph)
	return ph
}

// comments finds the HTML comments in an HTML node's text and acts on the
// markers among them.
func (w *walker) comments(n ast.Node, segs []text.Segment) {
	var buf []byte
	var starts []int // buf offset → source offset, per segment
	for _, s := range segs {
		starts = append(starts, len(buf), s.Start)
		buf = append(buf, s.Value(w.src)...)
	}
	srcOff := func(off int) int {
		base, src := 0, 0
		for i := 0; i < len(starts); i += 2 {
			if starts[i] <= off {
				base, src = starts[i], starts[i+1]
			}
		}
		return src + off - base
	}
	for _, c := range scanComments(buf) {
		line := w.lines.line(srcOff(c.start))
		if c.unclosed {
			if m, _ := parseMarker(c.body); m.kind != 0 {
				w.warnf(line, "the comment with %s is never closed with \"-->\", so it is not a marker", m.kind)
			}
			continue
		}
		if c.nested {
			w.warnf(line, "this comment contains another \"<!--\"; HTML comments do not nest, so it ends at its first \"-->\" (line %d): markers written inside it are not markers and what follows that \"-->\" is live Markdown",
				w.lines.line(srcOff(c.end)))
		}
		m, problem := parseMarker(c.body)
		if problem != "" {
			w.warnf(line, "%s", problem)
		}
		if m.kind != 0 {
			w.marker(n, m, line)
		}
	}
}

func (w *walker) marker(n ast.Node, m marker, line int) {
	switch m.kind {
	case markCheckpoint:
		if ph, ok := w.phases[m.value]; ok {
			w.warnf(line, "CHECKPOINT %s repeats the one on line %d; what follows joins that phase", m.value, ph.Line)
		}
		w.phase = w.phaseFor(m.value, w.heading, line)
	case markDecision:
		w.plan.Decisions = append(w.plan.Decisions, Note{Text: m.value, Line: line})
	case markBlocker:
		w.plan.Blockers = append(w.plan.Blockers, Note{Text: m.value, Line: line})
	case markTask, markAccept:
		var li *ast.ListItem
		for p := n.Parent(); p != nil && li == nil; p = p.Parent() {
			li, _ = p.(*ast.ListItem)
		}
		r := w.records[li]
		switch {
		case li == nil:
			w.warnf(line, "%s %s is not in a list item; write it as \"- [ ] text <!-- %s: %s -->\"", m.kind, m.value, m.kind, m.value)
		case r == nil:
			w.warnf(line, "%s %s is on a list item without a checkbox; start the item with \"[ ] \"", m.kind, m.value)
		case r.kind != 0:
			w.warnf(line, "%s %s is the second marker on the item of line %d (%s %s); only the first counts", m.kind, m.value, r.item.Line, r.kind, r.item.ID)
		default:
			r.kind, r.item.ID, r.markerAt = m.kind, m.value, line
		}
	}
}

// finish files the checkbox items under their phases, drops repeated IDs
// with a warning, and counts the progress.
func (w *walker) finish() {
	seen := map[markerKind]map[string]int{markTask: {}, markAccept: {}}
	for _, r := range w.order {
		if r.parent != nil {
			r.item.Parent = r.parent.item.ID
		}
		if r.kind == 0 {
			w.plan.Unmarked = append(w.plan.Unmarked, r.item)
			continue
		}
		if first, dup := seen[r.kind][r.item.ID]; dup {
			w.warnf(r.markerAt, "%s ID %s repeats the one on line %d; only the first counts, give this one its own ID", r.kind, r.item.ID, first)
			if w.plan.repeats == nil {
				w.plan.repeats = map[string][]int{}
			}
			key := r.kind.String() + " " + r.item.ID
			w.plan.repeats[key] = append(w.plan.repeats[key], r.item.Line)
			continue
		}
		seen[r.kind][r.item.ID] = r.markerAt
		ph := w.phases[r.item.Phase]
		if ph == nil { // items before the first CHECKPOINT marker
			ph = w.phaseFor("", "", r.item.Line)
			w.plan.Phases = append([]*Phase{ph}, w.plan.Phases[:len(w.plan.Phases)-1]...)
		}
		if r.kind == markTask {
			ph.Tasks = append(ph.Tasks, r.item)
			w.plan.Progress.TotalTasks++
			if r.item.Checked {
				w.plan.Progress.CompletedTasks++
			}
		} else {
			ph.Acceptance = append(ph.Acceptance, r.item)
		}
	}
	w.plan.Progress.Percentage = percentage(w.plan.Progress.CompletedTasks, w.plan.Progress.TotalTasks)
}
