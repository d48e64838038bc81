// Package sitebuilder reads and writes sitebuilder's (seed 003) task checkpoints:
// progress/checkpoints/<agent>-<task>.json with subtasks, acceptance
// criteria, errors, review scores, batch context, resume instructions and a
// heartbeat; the -complete archive; the outbox line an agent posts on
// progress; and the STATUS.md aggregate that orchestrators read.
//
// Everything the model has no place for is kept with the whole file in the
// checkpoint's meta, so Export writes back every field of an imported file,
// in the file's own spelling unless ckpt changed the value.
package sitebuilder

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	ckpt "github.com/ckpt-dev/ckpt"
	"github.com/ckpt-dev/ckpt/internal/jsondoc"
	"github.com/ckpt-dev/ckpt/protocols"
)

// Name is the format's name on the command line and its key in
// Checkpoint.Meta, where the file as read is kept.
const Name = "sitebuilder"

// Dir is where the checkpoint files live under a project root.
var Dir = filepath.Join("progress", "checkpoints")

// DefaultInterval is sitebuilder's (seed 003) heartbeat interval (interval_seconds 300).
const DefaultInterval = 5 * time.Minute

// Format is sitebuilder's (seed 003) checkpoint file. It has no settings; New returns it.
type Format struct{}

var _ protocols.Format = (*Format)(nil)

// New returns the format.
func New() *Format { return &Format{} }

// Name returns "sitebuilder".
func (*Format) Name() string { return Name }

// Import reads one checkpoint file. A file named <agent>-<task>-complete.json
// is read as the archived, completed checkpoint. Import fails only when the
// file is not a JSON object or holds none of the document's fields.
func (*Format) Import(path string, data []byte) (protocols.Imported, error) {
	var n jsondoc.Notes
	trimmed := bytes.TrimSpace(data)
	if len(trimmed) == 0 {
		return protocols.Imported{}, fmt.Errorf("%s is empty: a sitebuilder checkpoint is a JSON object with checkpoint_id, agent, task_id, status, …", path)
	}
	if trimmed[0] != '{' {
		return protocols.Imported{}, fmt.Errorf("%s is not JSON: a sitebuilder checkpoint is progress/checkpoints/<agent>-<task>.json (for STATUS.md use ParseStatusMarkdown)", path)
	}
	doc, err := jsondoc.ParseObject(trimmed)
	if err != nil {
		return protocols.Imported{}, fmt.Errorf("%s: %v: a sitebuilder checkpoint is one JSON object", path, err)
	}
	// ckpt's presence is liveness, not state: neither read nor kept, so a
	// later export never brings an old one back.
	if hb, ok := jsondoc.AsObject(doc.Get("heartbeat")); ok && hb.Has("presence") {
		hb.Delete("presence")
		doc.Set("heartbeat", hb.Raw())
	}
	c, err := docToState(doc, &n)
	if err != nil {
		return protocols.Imported{}, fmt.Errorf("%s: %w", path, err)
	}
	jsondoc.WriteMeta(c, Name, jsondoc.MetaSource{File: filepath.Base(path), Source: doc.Raw()})
	stem := strings.TrimSuffix(filepath.Base(path), ".json")
	if s, ok := strings.CutSuffix(stem, "-complete"); ok {
		stem = s
		at := c.UpdatedAt
		if c.CompletedAt != nil {
			at = *c.CompletedAt
		}
		c.Archived = &ckpt.Archive{Reason: "complete", At: at}
		n.Add("a -complete file: read as the archived checkpoint of %s", stem)
	}
	id := stem
	if c.Agent.ID != "" && c.TaskID != "" && ckpt.ValidateID(c.Agent.ID+"-"+c.TaskID) == nil {
		id = c.Agent.ID + "-" + c.TaskID
	}
	if ckpt.ValidateID(id) != nil || strings.Contains(id, "/") {
		id = "checkpoint"
		n.Add("neither agent-task_id nor the file name is a valid checkpoint ID: suggested ID %q", id)
	}
	c.ID = id
	return protocols.Imported{ID: id, State: c, Warnings: n}, nil
}

// known reports whether k is one of the checkpoint file's fields. (Switches,
// not map literals, here and for the status words: Go builds a map
// literal at initialisation, in every ckpt process.)
func known(k string) bool {
	switch k {
	case "checkpoint_id", "agent", "agent_name", "task_id", "task_title", "status",
		"progress_percent", "started_at", "updated_at", "completed_at", "subtasks",
		"files_created", "files_modified", "acceptance_criteria_met", "review_scores",
		"errors", "context", "resumable", "resume_instructions", "heartbeat":
		return true
	}
	return false
}

// docToState maps the document onto a checkpoint. It is deterministic: the
// same document always gives the same state (Export relies on that).
func docToState(doc *jsondoc.Object, n *jsondoc.Notes) (*ckpt.Checkpoint, error) {
	var kept []string
	for _, k := range doc.Keys() {
		if !known(k) {
			kept = append(kept, k)
		}
	}
	if len(kept) == doc.Len() {
		return nil, fmt.Errorf("none of seed 003's fields (checkpoint_id, agent, task_id, status, subtasks, …) found: is this a progress/checkpoints/<agent>-<task>.json file?")
	}
	f := jsondoc.Fields{Obj: doc, Notes: n}
	c := &ckpt.Checkpoint{}
	c.Session.ID, _ = f.Text("checkpoint_id")
	c.Agent.ID, _ = f.Text("agent")
	c.Agent.Name, _ = f.Text("agent_name")
	c.TaskID, _ = f.Text("task_id")
	c.Title, _ = f.Text("task_title")
	c.Status = f.Status("status", "seed 003")
	if t, ok := f.Time("started_at"); ok {
		c.StartedAt = t
	}
	if t, ok := f.Time("updated_at"); ok {
		c.UpdatedAt = t
	} else if !doc.Has("updated_at") {
		n.Add("no updated_at: the time of the last update is unknown")
	}
	if t, ok := f.Time("completed_at"); ok {
		c.CompletedAt = &t
	}
	readSubtasks(c, doc, n)
	if list, ok := f.Texts("files_created"); ok {
		c.Files.Created = jsondoc.UniqueNonEmpty(list)
	}
	if list, ok := f.Texts("files_modified"); ok {
		c.Files.Modified = jsondoc.UniqueNonEmpty(list)
	}
	readAcceptance(c, doc, n)
	readScores(c, doc, n)
	readErrors(c, doc, n)
	if ctx, ok := jsondoc.AsObject(doc.Get("context")); ok {
		cf := jsondoc.Fields{Obj: ctx, Notes: n, Path: "context."}
		c.Context.LastProcessed, _ = cf.Text("last_processed")
		c.Context.NextToProcess, _ = cf.Text("next_to_process")
		c.Context.Notes, _ = cf.Text("notes")
	}
	c.Resume.Resumable = true
	if b, ok := f.Bool("resumable"); ok {
		c.Resume.Resumable = b
	} else if !doc.Has("resumable") {
		n.Add("no resumable: resumable assumed")
	}
	c.Resume.Instructions, _ = f.Text("resume_instructions")
	c.Heartbeat.Interval = ckpt.Duration(DefaultInterval)
	if hb, ok := jsondoc.AsObject(doc.Get("heartbeat")); ok {
		hf := jsondoc.Fields{Obj: hb, Notes: n, Path: "heartbeat."}
		if t, ok := hf.Time("last_beat"); ok {
			c.Heartbeat.LastBeat = t
		}
		if s, ok := hf.Number("interval_seconds"); ok && s > 0 && s < 1e7 {
			c.Heartbeat.Interval = ckpt.Duration(time.Duration(s * float64(time.Second)))
		}
	} else {
		n.Add("no heartbeat: seed 003's %s interval assumed", DefaultInterval)
	}
	ckpt.Derive(c)
	if p, ok := f.Number("progress_percent"); ok && c.Progress.Total == 0 && p != 0 && c.Status != ckpt.StatusDone {
		n.Add("progress_percent %g comes with no subtask counts: ckpt has nothing to derive progress from; the file's figure is kept until progress changes", p)
	} else if ok && math.Round(p) != math.Round(c.Progress.Percent) {
		n.Add("progress_percent %g differs from the subtasks' %d/%d (%g%%): ckpt derives progress from subtasks; the file's figure is kept until progress changes", p, c.Progress.Done, c.Progress.Total, c.Progress.Percent)
	}
	kept = append(kept, nestedUnknown(doc, "subtasks", "total", "completed", "failed", "items")...)
	kept = append(kept, nestedUnknown(doc, "context", "last_processed", "next_to_process", "notes")...)
	kept = append(kept, nestedUnknown(doc, "heartbeat", "last_beat", "interval_seconds")...)
	if len(kept) > 0 {
		n.Add("kept as is, with no place in ckpt's model: %s", strings.Join(kept, ", "))
	}
	return c, nil
}

// nestedUnknown lists the members of object field that are not in known.
func nestedUnknown(doc *jsondoc.Object, field string, known ...string) []string {
	o, ok := jsondoc.AsObject(doc.Get(field))
	if !ok {
		return nil
	}
	var out []string
	for _, k := range o.Keys() {
		if !slices.Contains(known, k) {
			out = append(out, field+"."+k)
		}
	}
	return out
}

// readSubtasks reads subtasks: items become steps; without items, the counts
// are the checkpoint's explicit progress.
func readSubtasks(c *ckpt.Checkpoint, doc *jsondoc.Object, n *jsondoc.Notes) {
	st, ok := jsondoc.AsObject(doc.Get("subtasks"))
	if !ok {
		if doc.Has("subtasks") {
			n.Add("subtasks is not an object: kept as is, not read")
		}
		return
	}
	f := jsondoc.Fields{Obj: st, Notes: n, Path: "subtasks."}
	total, hasTotal := f.Count("total")
	done, hasDone := f.Count("completed")
	var items []json.RawMessage
	if v := st.Get("items"); v != nil && json.Unmarshal(v, &items) != nil {
		n.Add("subtasks.items is not a list: kept as is, not read")
	}
	seen := map[string]bool{}
	for i, raw := range items {
		it, ok := jsondoc.AsObject(raw)
		path := fmt.Sprintf("subtasks.items[%d].", i)
		if !ok {
			n.Add("%s is not an object: kept as is, not read", strings.TrimSuffix(path, "."))
			continue
		}
		itf := jsondoc.Fields{Obj: it, Notes: n, Path: path}
		id, _ := itf.Text("id")
		if id == "" || seen[id] {
			n.Add("%sid is missing or repeated: item kept as is, not read", path)
			continue
		}
		seen[id] = true
		s := ckpt.Step{ID: id, Status: ckpt.StepPending}
		if w, ok := itf.Text("status"); ok {
			s.Status = stepStatus(w, path+"status", n)
		}
		s.Output, _ = itf.Text("output")
		s.Title, _ = itf.Text("title")
		c.Steps = append(c.Steps, s)
	}
	if len(c.Steps) > 0 {
		if hasTotal && total != len(c.Steps) {
			n.Add("subtasks.items lists %d of %d subtasks: ckpt counts progress over the listed ones; total and completed are kept until progress changes", len(c.Steps), total)
		}
		return
	}
	if hasTotal || hasDone {
		if done > total {
			n.Add("subtasks.completed %d is more than subtasks.total %d: total read as %d", done, total, done)
			total = done
		}
		c.Progress.Done, c.Progress.Total = done, total
	}
}

// stepStatus maps a subtask status (complete, in_progress, pending, failed,
// skipped) onto a step status.
func stepStatus(word, field string, n *jsondoc.Notes) ckpt.StepStatus {
	if strings.EqualFold(strings.TrimSpace(word), "skipped") {
		return ckpt.StepSkipped
	}
	s := jsondoc.ReadStatus(n, field, word, "seed 003")
	switch s {
	case ckpt.StatusDone:
		return ckpt.StepDone
	case ckpt.StatusFailed:
		return ckpt.StepFailed
	case ckpt.StatusAbandoned:
		return ckpt.StepSkipped
	case ckpt.StatusPending:
		return ckpt.StepPending
	}
	if s != ckpt.StatusInProgress {
		n.Add("%s %q: the subtask is read as in progress", field, word)
	}
	return ckpt.StepInProgress
}

func readAcceptance(c *ckpt.Checkpoint, doc *jsondoc.Object, n *jsondoc.Notes) {
	v := doc.Get("acceptance_criteria_met")
	if v == nil || string(v) == "null" {
		return
	}
	if ac, ok := jsondoc.AsObject(v); ok {
		af := jsondoc.Fields{Obj: ac, Notes: n, Path: "acceptance_criteria_met."}
		for _, k := range ac.Keys() {
			if k == "" {
				n.Add("acceptance_criteria_met has an empty name: kept as is, not read")
				continue
			}
			met, ok := af.Bool(k)
			if !ok && string(ac.Get(k)) != "null" {
				continue
			}
			c.Acceptance = append(c.Acceptance, ckpt.Criterion{ID: k, Met: met})
		}
		return
	}
	if list, ok := (jsondoc.Fields{Obj: doc, Notes: n}).Texts("acceptance_criteria_met"); ok {
		n.Add("acceptance_criteria_met is a list, not an object of true/false: each named criterion read as met")
		for _, k := range jsondoc.UniqueNonEmpty(list) {
			c.Acceptance = append(c.Acceptance, ckpt.Criterion{ID: k, Met: true})
		}
	}
}

func readScores(c *ckpt.Checkpoint, doc *jsondoc.Object, n *jsondoc.Notes) {
	rs, ok := jsondoc.AsObject(doc.Get("review_scores"))
	if !ok {
		if v := doc.Get("review_scores"); v != nil && string(v) != "null" {
			n.Add("review_scores is not an object: kept as is, not read")
		}
		return
	}
	rf := jsondoc.Fields{Obj: rs, Notes: n, Path: "review_scores."}
	for _, k := range rs.Keys() {
		if c.ReviewScores == nil {
			c.ReviewScores = map[string]*float64{}
		}
		if string(rs.Get(k)) == "null" {
			c.ReviewScores[k] = nil
			continue
		}
		if v, ok := rf.Number(k); ok {
			c.ReviewScores[k] = &v
		}
	}
}

func readErrors(c *ckpt.Checkpoint, doc *jsondoc.Object, n *jsondoc.Notes) {
	v := doc.Get("errors")
	if v == nil || string(v) == "null" {
		return
	}
	var list []json.RawMessage
	if json.Unmarshal(v, &list) != nil {
		if msgs, ok := (jsondoc.Fields{Obj: doc, Notes: n}).Texts("errors"); ok {
			for _, m := range msgs {
				c.Errors = append(c.Errors, ckpt.ErrorItem{Message: m})
			}
		}
		return
	}
	undated := 0
	for i, raw := range list {
		path := fmt.Sprintf("errors[%d].", i)
		var msg string
		if json.Unmarshal(raw, &msg) == nil {
			n.Add("%s is text, not an object: read as the message of an error without type or time", strings.TrimSuffix(path, "."))
			c.Errors = append(c.Errors, ckpt.ErrorItem{Message: msg})
			continue
		}
		e, ok := jsondoc.AsObject(raw)
		if !ok {
			n.Add("%s is not an object: kept as is, not read", strings.TrimSuffix(path, "."))
			continue
		}
		ef := jsondoc.Fields{Obj: e, Notes: n, Path: path}
		var item ckpt.ErrorItem
		item.Type, _ = ef.Text("type")
		item.Message, _ = ef.Text("message")
		item.Blocking, _ = ef.Bool("blocking")
		if t, ok := ef.Time("timestamp"); ok {
			item.At = t
		} else {
			undated++
		}
		if item.Message == "" {
			item.Message = item.Type
		}
		c.Errors = append(c.Errors, item)
	}
	if undated > 0 {
		n.Add("%d error(s) without a timestamp: their time is unknown", undated)
	}
}

// Export renders c as progress/checkpoints/<agent>-<task>.json. A checkpoint
// imported from such a file gets back every field of that file: unknown
// fields verbatim, and each known field in the file's spelling unless c
// changed it.
func (*Format) Export(c *ckpt.Checkpoint) ([]byte, error) {
	doc, err := document(c)
	if err != nil {
		return nil, err
	}
	return doc.Indented(), nil
}

func document(c *ckpt.Checkpoint) (*jsondoc.Object, error) {
	src, s0, err := jsondoc.ImportedState(c, Name, docToState)
	if err != nil {
		return nil, err
	}
	if src == nil {
		return render(c), nil
	}
	if c.Heartbeat.LastBeat.IsZero() && !s0.Heartbeat.LastBeat.IsZero() {
		// The store keeps beats outside the history and an import does not
		// carry the file's last beat into it: no newer beat is known, so the
		// file's own last_beat still holds.
		cc := *c
		cc.Heartbeat.LastBeat = s0.Heartbeat.LastBeat
		c = &cc
	}
	doc := jsondoc.Merge(render(s0), render(c), src)
	carryCounts(doc, src, s0, c)
	// What a store fills in for a file that had none (a start time, a
	// session ID) is not the file's: the document's Completion example has
	// neither, and its export must not gain them.
	if !src.Has("started_at") && s0.StartedAt.IsZero() {
		doc.Delete("started_at")
	}
	if !src.Has("checkpoint_id") && s0.Session.ID == "" && (c.Agent.ID == "" || c.TaskID == "") {
		doc.Delete("checkpoint_id")
	}
	return doc, nil
}

// carryCounts keeps a file's subtask counts right when its items list only
// some of the subtasks (sitebuilder's (seed 003) example lists 4 of 29): ckpt counts the
// listed ones, so the file's counts move by what changed among them.
func carryCounts(doc, src *jsondoc.Object, s0, c *ckpt.Checkpoint) {
	if len(s0.Steps) == 0 || len(c.Steps) == 0 || c.Progress == s0.Progress {
		return
	}
	srcSub, ok := jsondoc.AsObject(src.Get("subtasks"))
	if !ok {
		return
	}
	var discard jsondoc.Notes
	sf := jsondoc.Fields{Obj: srcSub, Notes: &discard}
	total, okT := sf.Count("total")
	done, okD := sf.Count("completed")
	if !okT || !okD || (total == s0.Progress.Total && done == s0.Progress.Done) {
		return
	}
	sub, ok := jsondoc.AsObject(doc.Get("subtasks"))
	if !ok {
		return
	}
	total += c.Progress.Total - s0.Progress.Total
	done += c.Progress.Done - s0.Progress.Done
	total = max(total, 0)
	done = min(max(done, 0), total)
	sub.Put("total", total)
	sub.Put("completed", done)
	failed := func(x *ckpt.Checkpoint) int {
		n := 0
		for _, s := range x.Steps {
			if s.Status == ckpt.StepFailed {
				n++
			}
		}
		return n
	}
	if f, ok := sf.Count("failed"); ok {
		sub.Put("failed", max(f+failed(c)-failed(s0), 0))
	}
	doc.Set("subtasks", sub.Raw())
	if total > 0 {
		doc.Put("progress_percent", math.Round(float64(done)/float64(total)*100))
	}
}

// statusWord is the sitebuilder (seed 003) word written for a status.
func statusWord(k ckpt.Status) string {
	switch k {
	case ckpt.StatusPending:
		return "pending"
	case ckpt.StatusInProgress:
		return "in_progress"
	case ckpt.StatusWaiting:
		return "waiting"
	case ckpt.StatusBlocked:
		return "blocked"
	case ckpt.StatusDone:
		return "complete"
	case ckpt.StatusFailed:
		return "failed"
	case ckpt.StatusAbandoned:
		return "abandoned"
	}
	return ""
}

// stepWord is the sitebuilder word written for a step status.
func stepWord(k ckpt.StepStatus) string {
	switch k {
	case ckpt.StepPending:
		return "pending"
	case ckpt.StepInProgress:
		return "in_progress"
	case ckpt.StepDone:
		return "complete"
	case ckpt.StepFailed:
		return "failed"
	case ckpt.StepSkipped:
		return "skipped"
	}
	return ""
}

// render writes c as the document, in the document's field order.
func render(c *ckpt.Checkpoint) *jsondoc.Object {
	o := jsondoc.NewObject()
	if id := checkpointID(c); id != "" {
		o.Put("checkpoint_id", id)
	}
	if c.Agent.ID != "" {
		o.Put("agent", c.Agent.ID)
	}
	if c.Agent.Name != "" {
		o.Put("agent_name", c.Agent.Name)
	}
	if c.TaskID != "" {
		o.Put("task_id", c.TaskID)
	}
	if c.Title != "" {
		o.Put("task_title", c.Title)
	}
	o.Put("status", statusWord(c.Status))
	o.Put("progress_percent", math.Round(c.Progress.Percent))
	if !c.StartedAt.IsZero() {
		o.Put("started_at", jsondoc.FormatTime(c.StartedAt))
	}
	if !c.UpdatedAt.IsZero() {
		o.Put("updated_at", jsondoc.FormatTime(c.UpdatedAt))
	}
	if c.CompletedAt != nil {
		o.Put("completed_at", jsondoc.FormatTime(*c.CompletedAt))
	} else {
		o.Put("completed_at", nil)
	}
	if len(c.Steps) > 0 || c.Progress.Total > 0 {
		o.Set("subtasks", renderSubtasks(c).Raw())
	}
	o.Put("files_created", orEmpty(c.Files.Created))
	o.Put("files_modified", orEmpty(c.Files.Modified))
	if len(c.Acceptance) > 0 {
		ac := jsondoc.NewObject()
		for _, a := range c.Acceptance {
			ac.Put(a.ID, a.Met)
		}
		o.Set("acceptance_criteria_met", ac.Raw())
	}
	if len(c.ReviewScores) > 0 {
		o.Set("review_scores", renderReviewScores(c.ReviewScores).Raw())
	}
	o.Put("errors", renderErrors(c))
	ctx := jsondoc.NewObject()
	for _, kv := range [][2]string{{"last_processed", c.Context.LastProcessed}, {"next_to_process", c.Context.NextToProcess}, {"notes", c.Context.Notes}} {
		if kv[1] != "" {
			ctx.Put(kv[0], kv[1])
		}
	}
	if ctx.Len() > 0 {
		o.Set("context", ctx.Raw())
	}
	// Complete work is not resumed (sitebuilder (seed 003): resumable is false once the
	// task is complete).
	o.Put("resumable", c.Resume.Resumable && c.Status != ckpt.StatusDone)
	if c.Resume.Instructions != "" {
		o.Put("resume_instructions", c.Resume.Instructions)
	}
	if hb := renderHeartbeat(c); hb.Len() > 0 {
		o.Set("heartbeat", hb.Raw())
	}
	return o
}

// renderSubtasks writes c's step counts and steps as the "subtasks" object:
// total, completed and failed always, items only when c has steps.
func renderSubtasks(c *ckpt.Checkpoint) *jsondoc.Object {
	st := jsondoc.NewObject()
	failed := 0
	items := []any{}
	for _, s := range c.Steps {
		if s.Status == ckpt.StepFailed {
			failed++
		}
		it := jsondoc.NewObject()
		it.Put("id", s.ID)
		if s.Title != "" {
			it.Put("title", s.Title)
		}
		it.Put("status", stepWord(s.Status))
		if s.Output != "" {
			it.Put("output", s.Output)
		} else {
			it.Put("output", nil)
		}
		items = append(items, it.Raw())
	}
	st.Put("total", c.Progress.Total)
	st.Put("completed", c.Progress.Done)
	st.Put("failed", failed)
	if len(c.Steps) > 0 {
		st.Put("items", items)
	}
	return st
}

// renderReviewScores writes the scores (null for a review not yet scored) as
// an object with its keys sorted, so the output does not depend on map order.
func renderReviewScores(scores map[string]*float64) *jsondoc.Object {
	names := make([]string, 0, len(scores))
	for k := range scores {
		names = append(names, k)
	}
	sort.Strings(names)
	rs := jsondoc.NewObject()
	for _, k := range names {
		rs.Put(k, scores[k])
	}
	return rs
}

// renderErrors writes c's active errors as the "errors" array, empty (never
// null) when there are none.
func renderErrors(c *ckpt.Checkpoint) []any {
	errs := []any{}
	for _, e := range c.ActiveErrors() {
		eo := jsondoc.NewObject()
		if e.Type != "" {
			eo.Put("type", e.Type)
		}
		eo.Put("message", e.Message)
		if !e.At.IsZero() {
			eo.Put("timestamp", jsondoc.FormatTime(e.At))
		}
		eo.Put("blocking", e.Blocking)
		errs = append(errs, eo.Raw())
	}
	return errs
}

// renderHeartbeat writes c's last beat, interval and presence as the
// "heartbeat" object; it is empty when c has none of them.
func renderHeartbeat(c *ckpt.Checkpoint) *jsondoc.Object {
	hb := jsondoc.NewObject()
	// Before the first beat, the last sign of life is the last update: the
	// supervisor's check reads last_beat and must find one from the start.
	sum := c.Summary()
	if last := sum.LastSeen(); !last.IsZero() {
		hb.Put("last_beat", jsondoc.FormatTime(last))
	}
	if iv := c.Heartbeat.Interval.D(); iv > 0 {
		hb.Put("interval_seconds", iv.Seconds())
	}
	if p := protocols.PresenceJSON(c); p != nil {
		// ckpt's presence as of last_beat (working, busy, waiting, ended);
		// the supervisor still judges warning and stalled by last_beat.
		hb.Set("presence", p)
	}
	return hb
}

func orEmpty(list []string) []string {
	if list == nil {
		return []string{}
	}
	return list
}

// checkpointID is sitebuilder's (seed 003) checkpoint_id, stable for the task run:
// <agent>-<task>-<start as YYYYMMDD-HHMMSS> from when the checkpoint
// started (a resume's new session does not change it; a file imported with
// its own checkpoint_id keeps it), else the session ID.
func checkpointID(c *ckpt.Checkpoint) string {
	if c.Agent.ID == "" || c.TaskID == "" || c.StartedAt.IsZero() {
		return c.Session.ID
	}
	return c.Agent.ID + "-" + c.TaskID + "-" + c.StartedAt.UTC().Format("20060102-150405")
}

// OutboxLine returns the message sitebuilder (seed 003) posts to the outbox on progress,
// exactly "@orchestrator: Task {task_id} progress: {percent}%", with the
// task ID and percentage the exported file holds (the percentage a whole
// number unless the file says otherwise). The task ID falls back to c.ID.
func OutboxLine(c *ckpt.Checkpoint) string {
	task, percent := c.TaskID, strconv.FormatFloat(FilePercent(c), 'f', -1, 64)
	if doc, err := document(c); err == nil {
		var discard jsondoc.Notes
		f := jsondoc.Fields{Obj: doc, Notes: &discard}
		if t, ok := f.Text("task_id"); ok && t != "" {
			task = t
		}
	}
	if task == "" {
		task = c.ID
	}
	return "@orchestrator: Task " + task + " progress: " + percent + "%"
}

// FilePercent is the progress_percent c's checkpoint file says (the
// file's own figure while its subtasks did not change, else the derived
// one, rounded): the one progress the outbox line and STATUS.md show too.
func FilePercent(c *ckpt.Checkpoint) float64 {
	if doc, err := document(c); err == nil {
		var discard jsondoc.Notes
		if p, ok := (jsondoc.Fields{Obj: doc, Notes: &discard}).Number("progress_percent"); ok {
			return p
		}
	}
	return math.Round(c.Progress.Percent)
}
