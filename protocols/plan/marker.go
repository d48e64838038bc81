package plan

import (
	"bytes"
	"math/big"
	"strings"

	"github.com/ckpt-dev/ckpt/protocols/plan/internal/markdown/ast"
)

// markerKind is the keyword of a marker comment.
type markerKind int

const (
	markCheckpoint markerKind = iota + 1
	markTask
	markAccept
	markDecision
	markBlocker
)

var markerKeywords = map[string]markerKind{
	"CHECKPOINT": markCheckpoint,
	"TASK":       markTask,
	"ACCEPT":     markAccept,
	"DECISION":   markDecision,
	"BLOCKER":    markBlocker,
}

func (k markerKind) String() string {
	for w, v := range markerKeywords {
		if v == k {
			return w
		}
	}
	return "marker"
}

// takesID reports whether the marker's value is an ID (not free text).
func (k markerKind) takesID() bool {
	return k == markCheckpoint || k == markTask || k == markAccept
}

// marker is one parsed marker comment.
type marker struct {
	kind  markerKind
	value string // the ID, or the text with runs of white space made one space
}

// comment is one HTML comment found in an HTML node's text.
type comment struct {
	start, end int    // offsets of "<!--" and of the closing "-->" in the scanned text
	body       string // what stands between them
	unclosed   bool   // no "-->" before the end of the node
	nested     bool   // the body holds another "<!--"
}

// scanComments finds the HTML comments in b as an HTML parser does: a
// comment starts at "<!--" and ends at the first "-->" after it ("<!-->" and
// "<!--->" are empty comments); comments do not nest.
func scanComments(b []byte) []comment {
	var out []comment
	s := string(b)
	for i := 0; ; {
		j := strings.Index(s[i:], "<!--")
		if j < 0 {
			return out
		}
		open := i + j
		body := open + 4
		switch {
		case strings.HasPrefix(s[body:], ">"):
			i = body + 1
			continue
		case strings.HasPrefix(s[body:], "->"):
			i = body + 2
			continue
		}
		k := strings.Index(s[body:], "-->")
		if k < 0 {
			return append(out, comment{start: open, end: len(s), body: s[body:], unclosed: true})
		}
		c := comment{start: open, end: body + k, body: s[body : body+k]}
		c.nested = strings.Contains(c.body, "<!--")
		out = append(out, c)
		i = body + k + 3
	}
}

// parseMarker reads a comment body as a marker: "KEYWORD: value" with the
// keyword in capitals. A comment that is no marker gives a zero marker and no
// problem; one that nearly is (wrong case, bad or missing ID) gives a zero
// marker and a problem that says how to write it.
func parseMarker(body string) (marker, string) {
	t := strings.TrimSpace(body)
	colon := strings.IndexByte(t, ':')
	if colon < 0 {
		return marker{}, ""
	}
	word := strings.TrimSpace(t[:colon])
	value := strings.Join(strings.Fields(t[colon+1:]), " ")
	kind, ok := markerKeywords[word]
	if !ok {
		if k, near := markerKeywords[strings.ToUpper(word)]; near {
			return marker{}, "\"" + word + ":\" is not a marker: write " + k.String() + " in capitals"
		}
		return marker{}, ""
	}
	if value == "" {
		return marker{}, kind.String() + " marker has no " + map[bool]string{true: "ID", false: "text"}[kind.takesID()]
	}
	if kind.takesID() && !validMarkerID(value) {
		return marker{}, kind.String() + " ID \"" + value + "\" is not usable: use only letters, digits, '_', '-' and '.', e.g. " + kind.String() + ": db-schema"
	}
	return marker{kind: kind, value: value}, ""
}

// validMarkerID accepts the document's [\w-]+ plus '.', at most 100 bytes.
func validMarkerID(id string) bool {
	if id == "" || len(id) > 100 || id == "." || id == ".." {
		return false
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-' || c == '.') {
			return false
		}
	}
	return true
}

// inlineText renders the inline content of a block as plain text: emphasis
// and links by their text, code spans in backticks, checkboxes and HTML left
// out, line breaks and runs of white space as one space.
func inlineText(block ast.Node, src []byte) string {
	var nodes []ast.Node
	for c := block.FirstChild(); c != nil; c = c.NextSibling() {
		nodes = append(nodes, c)
	}
	return nodesText(nodes, src)
}

// itemText is the source text of a checkbox item's first paragraph after
// the checkbox (box is the offset inside its brackets), without its HTML
// comments, white space runs made one space: the Markdown as written, so an
// Export writes it back unchanged.
func itemText(block ast.Node, box int, src []byte) string {
	var cut [][2]int // comment ranges to leave out
	_ = ast.Walk(block, func(n ast.Node, entering bool) (ast.WalkStatus, error) {
		if h, ok := n.(*ast.RawHTML); ok && entering && h.Segments.Len() > 0 {
			first := h.Segments.At(0)
			if bytes.HasPrefix(first.Value(src), []byte("<!--")) {
				cut = append(cut, [2]int{first.Start, h.Segments.At(h.Segments.Len() - 1).Stop})
			}
		}
		return ast.WalkContinue, nil
	})
	var b strings.Builder
	lines := block.Lines()
	for i := 0; i < lines.Len(); i++ {
		seg := lines.At(i)
		from := seg.Start
		if box >= 0 && from <= box+1 {
			from = box + 2
		}
		for off := from; off < seg.Stop; off++ {
			skip := false
			for _, c := range cut {
				if off >= c[0] && off < c[1] {
					skip = true
					off = c[1] - 1
					break
				}
			}
			if !skip {
				b.WriteByte(src[off])
			}
		}
		b.WriteByte(' ')
	}
	return strings.Join(strings.Fields(b.String()), " ")
}

// nodesText is inlineText over a run of sibling inline nodes.
func nodesText(nodes []ast.Node, src []byte) string {
	var b strings.Builder
	var render func(n ast.Node)
	children := func(n ast.Node) {
		for c := n.FirstChild(); c != nil; c = c.NextSibling() {
			render(c)
		}
	}
	render = func(n ast.Node) {
		switch n := n.(type) {
		case *ast.Text:
			b.Write(n.Value(src))
			if n.SoftLineBreak() || n.HardLineBreak() {
				b.WriteByte(' ')
			}
		case *ast.String:
			b.Write(n.Value)
		case *ast.CodeSpan:
			b.WriteByte('`')
			children(n)
			b.WriteByte('`')
		case *ast.AutoLink:
			b.Write(n.Label(src))
		case *ast.RawHTML, *taskCheckBox:
		default:
			children(n)
		}
	}
	for _, n := range nodes {
		render(n)
	}
	return strings.Join(strings.Fields(b.String()), " ")
}

// paragraphFields reads the lines of a paragraph that start with strong
// emphasis ending in a colon, "**Status:** done" or "**Status**: done".
func paragraphFields(block ast.Node, src []byte, lines lineIndex) []Field {
	var out []Field
	var line []ast.Node
	flush := func() {
		defer func() { line = line[:0] }()
		if len(line) == 0 {
			return
		}
		em, ok := line[0].(*ast.Emphasis)
		if !ok || em.Level != 2 {
			return
		}
		key := inlineText(em, src)
		value := nodesText(line[1:], src)
		switch {
		case strings.HasSuffix(key, ":"):
			key = strings.TrimSpace(strings.TrimSuffix(key, ":"))
		case strings.HasPrefix(value, ":"):
			value = strings.TrimSpace(value[1:])
		default:
			return
		}
		if key != "" {
			out = append(out, Field{Key: key, Value: value, Line: lines.line(em.Pos())})
		}
	}
	for c := block.FirstChild(); c != nil; c = c.NextSibling() {
		line = append(line, c)
		if t, ok := c.(*ast.Text); ok && (t.SoftLineBreak() || t.HardLineBreak()) {
			flush()
		}
	}
	flush()
	return out
}

// percentage is completed/total*100 rounded to one decimal exactly as the
// document's JavaScript (completed / total * 100).toFixed(1) rounds it: to
// the nearest tenth of the double's exact value, halves upward; 0 with no
// total. (math.Round(x*10) would round the already-rounded product x*10.)
func percentage(completed, total int) float64 {
	if total <= 0 {
		return 0
	}
	x := float64(completed) / float64(total) * 100
	f := new(big.Float).SetPrec(256).SetFloat64(x)
	f.Mul(f, big.NewFloat(10))
	f.Add(f, big.NewFloat(0.5))
	n, _ := f.Int(nil)
	return float64(n.Int64()) / 10
}
