package plan

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	ckpt "github.com/ckpt-dev/ckpt"
)

// Export renders c as a plan.md in the document's marker format: the title
// as a level-1 heading, the plan's "**Key:** value" lines (kept from an
// import in Meta, else **Status:**), one section with a CHECKPOINT marker
// per step phase (steps without a phase first, before any marker), each
// step as "- [x] title <!-- TASK: id -->", the acceptance criteria as
// ACCEPT items, and the decisions and active blockers as DECISION and
// BLOCKER markers. A step counts as checked when it is done or skipped.
//
// IDs that a marker cannot carry are made into ones that can (characters
// outside [A-Za-z0-9_.-] become '-'); "<!--" in a title is escaped so it
// cannot swallow the marker, and "-->" in a comment's text is broken up.
// Export fails only when the Meta plan_fields value is not the list of
// {key, value} it writes.
func (Format) Export(c *ckpt.Checkpoint) ([]byte, error) {
	var b bytes.Buffer
	title := c.Title
	if title == "" {
		title = c.ID
	}
	fmt.Fprintf(&b, "# %s\n\n", oneLine(title))

	fields := []fieldMeta{{Key: "Status", Value: string(c.Status)}}
	if _, fromPlan := c.Meta[MetaPlan]; fromPlan {
		fields = nil // a plan.md without "**Key:** value" lines gets none
	}
	if raw, ok := c.Meta[MetaFields]; ok {
		fields = nil
		if err := json.Unmarshal(raw, &fields); err != nil {
			return nil, fmt.Errorf("checkpoint %s: meta %s is not a list of {key, value}: %v", c.ID, MetaFields, err)
		}
	}
	for _, f := range fields {
		fmt.Fprintf(&b, "**%s:** %s\n", oneLine(f.Key), oneLine(f.Value))
	}
	if len(fields) > 0 {
		b.WriteByte('\n')
	}

	ids := newMarkerIDs()
	var order []string
	byPhase := map[string][]ckpt.Step{}
	for _, s := range c.Steps {
		if _, ok := byPhase[s.Phase]; !ok && s.Phase != "" {
			order = append(order, s.Phase)
		}
		byPhase[s.Phase] = append(byPhase[s.Phase], s)
	}
	writeSteps := func(steps []ckpt.Step) {
		for _, s := range steps {
			fmt.Fprintf(&b, "- [%s] %s <!-- TASK: %s -->\n", box(s.Status.Finished()), itemTitle(s.Label()), ids.get("t", s.ID))
		}
		b.WriteByte('\n')
	}
	if steps := byPhase[""]; len(steps) > 0 {
		b.WriteString("## Tasks\n\n")
		writeSteps(steps)
	}
	phaseIDs := newMarkerIDs()
	titles := map[string]string{}
	var phases []phaseMeta
	if raw, ok := c.Meta[MetaPhases]; ok && json.Unmarshal(raw, &phases) == nil {
		for _, ph := range phases {
			titles[ph.ID] = ph.Title
		}
	}
	for _, ph := range order {
		heading := ph
		if t := titles[ph]; t != "" {
			heading = t // the plan's own heading, "Phase 1: Setup"
		}
		fmt.Fprintf(&b, "## %s\n<!-- CHECKPOINT: %s -->\n\n", oneLine(heading), phaseIDs.get("p", ph))
		writeSteps(byPhase[ph])
	}
	if len(c.Acceptance) > 0 {
		b.WriteString("## Acceptance Criteria\n\n")
		for _, a := range c.Acceptance {
			t := a.Title
			if t == "" {
				t = a.ID
			}
			fmt.Fprintf(&b, "- [%s] %s <!-- ACCEPT: %s -->\n", box(a.Met), itemTitle(t), ids.get("a", a.ID))
		}
		b.WriteByte('\n')
	}
	if len(c.Decisions) > 0 {
		b.WriteString("## Decisions\n\n")
		for _, d := range c.Decisions {
			fmt.Fprintf(&b, "<!-- DECISION: %s -->\n", commentText(d.Text))
		}
		b.WriteByte('\n')
	}
	if active := c.ActiveBlockers(); len(active) > 0 {
		b.WriteString("## Blockers\n\n")
		for _, bl := range active {
			fmt.Fprintf(&b, "<!-- BLOCKER: %s -->\n", commentText(bl.Text))
		}
		b.WriteByte('\n')
	}
	return append(bytes.TrimRight(b.Bytes(), "\n"), '\n'), nil
}

func box(checked bool) string {
	if checked {
		return "x"
	}
	return " "
}

// oneLine collapses white space, newlines included, to single spaces.
func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// itemTitle is a title fit for a checkbox item: one line, and no "<!--"
// that would open a comment and swallow the marker after it (the entity
// renders the same and stays put through any number of round trips).
func itemTitle(s string) string { return strings.ReplaceAll(oneLine(s), "<!--", "&lt;!--") }

// commentText is text fit for a marker comment: one line, no "-->" to end
// the comment early, no "<!--" to nest one.
func commentText(s string) string {
	s = oneLine(s)
	s = strings.ReplaceAll(s, "-->", "-- >")
	return strings.ReplaceAll(s, "<!--", "< !--")
}

// markerIDs turns IDs into marker IDs, keeping each distinct.
type markerIDs struct {
	given map[string]string // kind+id → marker ID
	used  map[string]bool   // kind+marker ID
}

func newMarkerIDs() *markerIDs {
	return &markerIDs{given: map[string]string{}, used: map[string]bool{}}
}

func (m *markerIDs) get(kind, id string) string {
	if v, ok := m.given[kind+"\x00"+id]; ok {
		return v
	}
	v := id
	if !validMarkerID(v) {
		v = cleanSegment(strings.ReplaceAll(id, "/", "-"), maxSegment)
	}
	base := v
	for n := 2; m.used[kind+"\x00"+v]; n++ {
		v = fmt.Sprintf("%s-%d", base, n)
	}
	m.used[kind+"\x00"+v] = true
	m.given[kind+"\x00"+id] = v
	return v
}
