package agentcheckpoints

import (
	"encoding/json"
	"errors"
	"strconv"
	"strings"

	"github.com/ckpt-dev/ckpt/internal/jsondoc"
	"github.com/ckpt-dev/ckpt/internal/lazyregexp"
	"github.com/ckpt-dev/ckpt/protocols/internal/mdscan"
)

// The Markdown variant (KAI-8's agent_checkpoints/*_checkpoint.md) writes the
// document's fields as "**Label:** value" lines and "## Section" lists. It is
// read into the JSON document so that one mapping serves both.

// Regular expressions are compiled on first use, not at start-up: every
// ckpt process links this package, and most never use them.
var (
	boldField  = lazyregexp.New(`^\s*(?:[-*+]\s+)?\*\*([^*]+?):?\*\*:?\s*(.*)$`)
	listItem   = lazyregexp.New(`^(\s*)[-*+]\s+(.*)$`)
	statusLine = lazyregexp.New(`^([A-Z][A-Z0-9_]*):[ \t]?(.*)$`)
	trailNote  = lazyregexp.New(`^(.*\S)\s+\(([^()]*)\)$`)
)

// labelKey maps a Markdown label (lower case) onto the document's field.
func labelKey(k string) (string, bool) {
	switch k {
	case "agent id", "agent":
		return "agent_id", true
	case "agent type":
		return "agent_type", true
	case "session id":
		return "session_id", true
	case "session started":
		return "session_started", true
	case "feature":
		return "feature", true
	case "last updated", "last checkpoint", "updated":
		return "last_checkpoint", true
	case "next checkpoint expected", "next checkpoint":
		return "next_checkpoint_expected", true
	case "stage":
		return "stage", true
	case "phase":
		return "phase", true
	case "status":
		return "status", true
	case "can resume":
		return "can_resume", true
	case "current step":
		return "current_step", true
	case "completed steps", "completed":
		return "completed_steps", true
	case "next steps":
		return "next_steps", true
	case "next action":
		return "next_action", true
	case "blockers":
		return "blockers", true
	case "files modified":
		return "files_modified", true
	case "recovery instructions":
		return "recovery_instructions", true
	}
	return "", false
}

// listKey reports whether field k holds a list.
func listKey(k string) bool {
	switch k {
	case "completed_steps", "next_steps", "blockers", "files_modified":
		return true
	}
	return false
}

// readMarkdown reads the Markdown variant into the document.
func readMarkdown(data []byte, n *jsondoc.Notes) (*jsondoc.Object, error) {
	r := &markdownReader{
		n:     n,
		doc:   jsondoc.NewObject(),
		coord: jsondoc.NewObject(),
		lists: map[string][]string{},
		paras: map[string][]string{},
	}
	for l := range mdscan.Lines(data) {
		if l.Fenced {
			continue
		}
		r.line(l.Text, l.Trimmed)
	}
	doc := r.doc
	for key, items := range r.lists {
		if key == "files_modified" {
			items = filePaths(items, n)
		}
		doc.Put(key, items)
	}
	r.putParagraphs()
	if r.coord.Len() > 0 {
		doc.Set("coordination_state", r.coord.Raw())
	}
	if doc.Len() == 0 {
		return nil, errors.New(`no "**Field:** value" lines or sections of an agent checkpoint found: give the agent_checkpoints/<agent>.json file`)
	}
	return doc, nil
}

// markdownReader is readMarkdown's state while it scans the lines.
type markdownReader struct {
	n     *jsondoc.Notes
	doc   *jsondoc.Object     // the fields read, in first-seen order
	coord *jsondoc.Object     // the "Coordination State" section's fields
	lists map[string][]string // list items per field
	paras map[string][]string // text lines per section
	// paraOrder holds the sections with text, in order.
	paraOrder []string
	section   string // the current "## " section, lower case
	listKey   string // the field list items go to
	flattened bool   // whether nested items were noted already
}

// line reads one unfenced line: a heading starts a section, a
// "**Label:** value" line sets a field (or opens a list), a list item goes
// to the open list, and other text is kept under its section.
func (r *markdownReader) line(line, trimmed string) {
	if _, text, ok := mdscan.Heading(line); ok {
		r.section = strings.ToLower(strings.TrimSpace(text))
		r.listKey = ""
		if k, _ := labelKey(r.section); listKey(k) {
			r.listKey = k
		}
		return
	}
	if m := boldField.Get().FindStringSubmatch(line); m != nil {
		r.field(strings.ToLower(strings.TrimSpace(m[1])), strings.TrimSpace(m[2]))
		return
	}
	if m := listItem.Get().FindStringSubmatch(line); m != nil && r.listKey != "" {
		if len(m[1]) >= 2 && !r.flattened {
			r.n.Add("nested list items under %s flattened into one list", r.listKey)
			r.flattened = true
		}
		r.addList(r.listKey, strings.TrimSpace(m[2]))
		return
	}
	if trimmed == "" {
		return
	}
	if k, isSectionList := labelKey(r.section); !isSectionList || !listKey(k) {
		r.listKey = ""
	}
	if r.paras[r.section] == nil {
		r.paraOrder = append(r.paraOrder, r.section)
	}
	r.paras[r.section] = append(r.paras[r.section], trimmed)
}

// field reads a "**label:** value" line (label in lower case): in the
// Coordination State section it is a typed coordination field; elsewhere an
// empty value opens the list that follows, and a value sets the field
// (a list field's text only when no item came first).
func (r *markdownReader) field(label, value string) {
	if r.section == "coordination state" {
		r.coord.Put(snake(label), typedValue(value))
		return
	}
	key, ok := labelKey(label)
	if !ok {
		key = snake(label)
	}
	if value == "" {
		r.listKey = key
		return
	}
	r.listKey = ""
	switch {
	case listKey(key):
		if !r.doc.Has(key) {
			r.doc.Put(key, value) // a list written as text ("None"): read leniently
		}
	case key == "can_resume":
		r.doc.Put(key, typedValue(value))
	default:
		r.doc.Put(key, value)
	}
}

// addList appends item to the list field key, reserving the field's place
// in the document at its first item.
func (r *markdownReader) addList(key, item string) {
	if !r.doc.Has(key) {
		r.doc.Set(key, json.RawMessage(`[]`))
	}
	r.lists[key] = append(r.lists[key], item)
}

// putParagraphs sets the fields the sections' text gives, in section order:
// a known section's field (a list field as its lines, unless set already),
// or an unknown section's text as a field named after it, with a note,
// unless a field of that name exists.
func (r *markdownReader) putParagraphs() {
	doc := r.doc
	for _, section := range r.paraOrder {
		lines := r.paras[section]
		key, ok := labelKey(section)
		if !ok {
			key = snake(section)
			if section == "" {
				key = "notes"
			}
			if doc.Has(key) {
				continue
			}
			r.n.Add("text under %q kept as the field %s", section, key)
		}
		text := strings.Join(lines, "\n")
		switch {
		case key == "blockers" && jsondoc.IsNone(text):
			if !doc.Has(key) {
				doc.Put(key, []string{})
			}
		case listKey(key):
			if !doc.Has(key) {
				doc.Put(key, lines)
			}
		default:
			doc.Put(key, text)
		}
	}
}

// filePaths reads "path (note)" list items as their path; an item that is
// only a note, such as "(None yet - just starting)", names no file.
func filePaths(items []string, n *jsondoc.Notes) []string {
	out := []string{}
	noted := false
	for _, it := range items {
		if strings.HasPrefix(it, "(") && strings.HasSuffix(it, ")") {
			n.Add("files_modified item %q names no file: skipped", it)
			continue
		}
		if m := trailNote.Get().FindStringSubmatch(it); m != nil {
			if !noted {
				n.Add("files_modified items carry notes such as %q: only the paths are kept", "("+m[2]+")")
				noted = true
			}
			it = m[1]
		}
		out = append(out, strings.Trim(it, "`"))
	}
	return out
}

// readStatusFile reads a feature STATUS file: KEY: VALUE lines, nothing else.
func readStatusFile(data []byte, n *jsondoc.Notes) (*jsondoc.Object, bool) {
	doc := jsondoc.NewObject()
	lines := 0
	for _, line := range strings.Split(string(data), "\n") {
		line = strings.TrimRight(line, " \t\r")
		if line == "" {
			continue
		}
		m := statusLine.Get().FindStringSubmatch(line)
		if m == nil {
			return nil, false
		}
		lines++
		value := strings.TrimSpace(m[2])
		switch key := strings.ToLower(m[1]); key {
		case "stage", "phase", "status", "feature", "session_id", "current_step", "agent_id", "blockers", "next_action":
			doc.Put(key, value)
		case "agent":
			doc.Put("agent_role", value)
		case "updated", "last_updated", "last_checkpoint":
			doc.Put("last_checkpoint", value)
		case "can_resume":
			doc.Put(key, typedValue(value))
		default:
			doc.Put(key, typedValue(value))
		}
	}
	return doc, lines >= 2
}

// typedValue reads Markdown text as the JSON value it spells: true, false, a
// whole number, or else the text.
func typedValue(s string) any {
	switch strings.ToLower(s) {
	case "true":
		return true
	case "false":
		return false
	}
	if i, err := strconv.ParseInt(s, 10, 64); err == nil && len(s) < 16 {
		return i
	}
	return s
}

// snake turns a label into a field name: "Last README Update" →
// "last_readme_update".
func snake(label string) string {
	var b strings.Builder
	under := false
	for _, r := range strings.ToLower(label) {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' {
			if under && b.Len() > 0 {
				b.WriteByte('_')
			}
			under = false
			b.WriteRune(r)
			continue
		}
		under = true
	}
	if b.Len() == 0 {
		return "field"
	}
	return b.String()
}
