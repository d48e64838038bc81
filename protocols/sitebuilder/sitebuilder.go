// Package sitebuilder reads and writes seed 003's task checkpoints:
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
	"github.com/ckpt-dev/ckpt/protocols"
)

// Name is the format's name on the command line and its key in
// Checkpoint.Meta, where the file as read is kept.
const Name = "sitebuilder"

// Dir is where the checkpoint files live under a project root.
var Dir = filepath.Join("progress", "checkpoints")

// DefaultInterval is seed 003's heartbeat interval (interval_seconds 300).
const DefaultInterval = 5 * time.Minute

// Format is seed 003's checkpoint file. It has no settings; New returns it.
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
	var n notes
	trimmed := bytes.TrimSpace(data)
	if len(trimmed) == 0 {
		return protocols.Imported{}, fmt.Errorf("%s is empty: a sitebuilder checkpoint is a JSON object with checkpoint_id, agent, task_id, status, …", path)
	}
	if trimmed[0] != '{' {
		return protocols.Imported{}, fmt.Errorf("%s is not JSON: a sitebuilder checkpoint is progress/checkpoints/<agent>-<task>.json (for STATUS.md use ParseStatusMarkdown)", path)
	}
	doc, err := parseObject(trimmed)
	if err != nil {
		return protocols.Imported{}, fmt.Errorf("%s: %v: a sitebuilder checkpoint is one JSON object", path, err)
	}
	c, err := docToState(doc, &n)
	if err != nil {
		return protocols.Imported{}, fmt.Errorf("%s: %w", path, err)
	}
	writeMeta(c, Name, metaSource{File: filepath.Base(path), Source: doc.raw()})
	stem := strings.TrimSuffix(filepath.Base(path), ".json")
	if s, ok := strings.CutSuffix(stem, "-complete"); ok {
		stem = s
		at := c.UpdatedAt
		if c.CompletedAt != nil {
			at = *c.CompletedAt
		}
		c.Archived = &ckpt.Archive{Reason: "complete", At: at}
		n.add("a -complete file: read as the archived checkpoint of %s", stem)
	}
	id := stem
	if c.Agent.ID != "" && c.TaskID != "" && ckpt.ValidateID(c.Agent.ID+"-"+c.TaskID) == nil {
		id = c.Agent.ID + "-" + c.TaskID
	}
	if ckpt.ValidateID(id) != nil || strings.Contains(id, "/") {
		id = "checkpoint"
		n.add("neither agent-task_id nor the file name is a valid checkpoint ID: suggested ID %q", id)
	}
	c.ID = id
	return protocols.Imported{ID: id, State: c, Warnings: n}, nil
}

var known = map[string]bool{
	"checkpoint_id": true, "agent": true, "agent_name": true, "task_id": true, "task_title": true,
	"status": true, "progress_percent": true, "started_at": true, "updated_at": true, "completed_at": true,
	"subtasks": true, "files_created": true, "files_modified": true, "acceptance_criteria_met": true,
	"review_scores": true, "errors": true, "context": true, "resumable": true, "resume_instructions": true,
	"heartbeat": true,
}

// docToState maps the document onto a checkpoint. It is deterministic: the
// same document always gives the same state (Export relies on that).
func docToState(doc *object, n *notes) (*ckpt.Checkpoint, error) {
	var kept []string
	for _, k := range doc.keys {
		if !known[k] {
			kept = append(kept, k)
		}
	}
	if len(kept) == len(doc.keys) {
		return nil, fmt.Errorf("none of seed 003's fields (checkpoint_id, agent, task_id, status, subtasks, …) found: is this a progress/checkpoints/<agent>-<task>.json file?")
	}
	f := fields{o: doc, n: n}
	c := &ckpt.Checkpoint{}
	c.Session.ID, _ = f.str("checkpoint_id")
	c.Agent.ID, _ = f.str("agent")
	c.Agent.Name, _ = f.str("agent_name")
	c.TaskID, _ = f.str("task_id")
	c.Title, _ = f.str("task_title")
	c.Status = ckpt.StatusInProgress
	if w, ok := f.str("status"); ok {
		s, guessed := statusFromWord(w)
		if guessed {
			n.add("status %q is not a seed 003 status: read as %s", w, s)
		}
		c.Status = s
	} else {
		n.add("no status: in_progress assumed")
	}
	if t, ok := f.when("started_at"); ok {
		c.StartedAt = t
	}
	if t, ok := f.when("updated_at"); ok {
		c.UpdatedAt = t
	} else if !doc.has("updated_at") {
		n.add("no updated_at: the time of the last update is unknown")
	}
	if t, ok := f.when("completed_at"); ok {
		c.CompletedAt = &t
	}
	readSubtasks(c, doc, n)
	if list, ok := f.strs("files_created"); ok {
		c.Files.Created = unique(list)
	}
	if list, ok := f.strs("files_modified"); ok {
		c.Files.Modified = unique(list)
	}
	readAcceptance(c, doc, n)
	readScores(c, doc, n)
	readErrors(c, doc, n)
	if ctx, ok := asObject(doc.get("context")); ok {
		cf := fields{o: ctx, n: n, path: "context."}
		c.Context.LastProcessed, _ = cf.str("last_processed")
		c.Context.NextToProcess, _ = cf.str("next_to_process")
		c.Context.Notes, _ = cf.str("notes")
	}
	c.Resume.Resumable = true
	if b, ok := f.boolean("resumable"); ok {
		c.Resume.Resumable = b
	} else if !doc.has("resumable") {
		n.add("no resumable: resumable assumed")
	}
	c.Resume.Instructions, _ = f.str("resume_instructions")
	c.Heartbeat.Interval = ckpt.Duration(DefaultInterval)
	if hb, ok := asObject(doc.get("heartbeat")); ok {
		hf := fields{o: hb, n: n, path: "heartbeat."}
		if t, ok := hf.when("last_beat"); ok {
			c.Heartbeat.LastBeat = t
		}
		if s, ok := hf.number("interval_seconds"); ok && s > 0 && s < 1e7 {
			c.Heartbeat.Interval = ckpt.Duration(time.Duration(s * float64(time.Second)))
		}
	} else {
		n.add("no heartbeat: seed 003's %s interval assumed", DefaultInterval)
	}
	deriveProgress(c)
	if p, ok := f.number("progress_percent"); ok && c.Progress.Total == 0 && p != 0 && c.Status != ckpt.StatusDone {
		n.add("progress_percent %g comes with no subtask counts: ckpt has nothing to derive progress from; the file's figure is kept until progress changes", p)
	} else if ok && math.Round(p) != math.Round(c.Progress.Percent) {
		n.add("progress_percent %g differs from the subtasks' %d/%d (%g%%): ckpt derives progress from subtasks; the file's figure is kept until progress changes", p, c.Progress.Done, c.Progress.Total, c.Progress.Percent)
	}
	kept = append(kept, nestedUnknown(doc, "subtasks", "total", "completed", "failed", "items")...)
	kept = append(kept, nestedUnknown(doc, "context", "last_processed", "next_to_process", "notes")...)
	kept = append(kept, nestedUnknown(doc, "heartbeat", "last_beat", "interval_seconds")...)
	if len(kept) > 0 {
		n.add("kept as is, with no place in ckpt's model: %s", strings.Join(kept, ", "))
	}
	return c, nil
}

// nestedUnknown lists the members of object field that are not in known.
func nestedUnknown(doc *object, field string, known ...string) []string {
	o, ok := asObject(doc.get(field))
	if !ok {
		return nil
	}
	var out []string
	for _, k := range o.keys {
		if !slices.Contains(known, k) {
			out = append(out, field+"."+k)
		}
	}
	return out
}

func unique(list []string) []string {
	var out []string
	for _, s := range list {
		if strings.TrimSpace(s) != "" && !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	return out
}

// readSubtasks reads subtasks: items become steps; without items, the counts
// are the checkpoint's explicit progress.
func readSubtasks(c *ckpt.Checkpoint, doc *object, n *notes) {
	st, ok := asObject(doc.get("subtasks"))
	if !ok {
		if doc.has("subtasks") {
			n.add("subtasks is not an object: kept as is, not read")
		}
		return
	}
	f := fields{o: st, n: n, path: "subtasks."}
	total, hasTotal := f.count("total")
	done, hasDone := f.count("completed")
	var items []json.RawMessage
	if v := st.get("items"); v != nil && json.Unmarshal(v, &items) != nil {
		n.add("subtasks.items is not a list: kept as is, not read")
	}
	seen := map[string]bool{}
	for i, raw := range items {
		it, ok := asObject(raw)
		path := fmt.Sprintf("subtasks.items[%d].", i)
		if !ok {
			n.add("%s is not an object: kept as is, not read", strings.TrimSuffix(path, "."))
			continue
		}
		itf := fields{o: it, n: n, path: path}
		id, _ := itf.str("id")
		if id == "" || seen[id] {
			n.add("%sid is missing or repeated: item kept as is, not read", path)
			continue
		}
		seen[id] = true
		s := ckpt.Step{ID: id, Status: ckpt.StepPending}
		if w, ok := itf.str("status"); ok {
			s.Status = stepStatus(w, path+"status", n)
		}
		s.Output, _ = itf.str("output")
		s.Title, _ = itf.str("title")
		c.Steps = append(c.Steps, s)
	}
	if len(c.Steps) > 0 {
		if hasTotal && total != len(c.Steps) {
			n.add("subtasks.items lists %d of %d subtasks: ckpt counts progress over the listed ones; total and completed are kept until progress changes", len(c.Steps), total)
		}
		return
	}
	if hasTotal || hasDone {
		if done > total {
			n.add("subtasks.completed %d is more than subtasks.total %d: total read as %d", done, total, done)
			total = done
		}
		c.Progress.Done, c.Progress.Total = done, total
	}
}

// stepStatus maps a subtask status (complete, in_progress, pending, failed,
// skipped) onto a step status.
func stepStatus(word, field string, n *notes) ckpt.StepStatus {
	if strings.EqualFold(strings.TrimSpace(word), "skipped") {
		return ckpt.StepSkipped
	}
	s, guessed := statusFromWord(word)
	if guessed {
		n.add("%s %q is not a seed 003 status: read as %s", field, word, s)
	}
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
		n.add("%s %q: the subtask is read as in progress", field, word)
	}
	return ckpt.StepInProgress
}

func readAcceptance(c *ckpt.Checkpoint, doc *object, n *notes) {
	v := doc.get("acceptance_criteria_met")
	if v == nil || string(v) == "null" {
		return
	}
	if ac, ok := asObject(v); ok {
		af := fields{o: ac, n: n, path: "acceptance_criteria_met."}
		for _, k := range ac.keys {
			if k == "" {
				n.add("acceptance_criteria_met has an empty name: kept as is, not read")
				continue
			}
			met, ok := af.boolean(k)
			if !ok && string(ac.get(k)) != "null" {
				continue
			}
			c.Acceptance = append(c.Acceptance, ckpt.Criterion{ID: k, Met: met})
		}
		return
	}
	if list, ok := (fields{o: doc, n: n}).strs("acceptance_criteria_met"); ok {
		n.add("acceptance_criteria_met is a list, not an object of true/false: each named criterion read as met")
		for _, k := range unique(list) {
			c.Acceptance = append(c.Acceptance, ckpt.Criterion{ID: k, Met: true})
		}
	}
}

func readScores(c *ckpt.Checkpoint, doc *object, n *notes) {
	rs, ok := asObject(doc.get("review_scores"))
	if !ok {
		if v := doc.get("review_scores"); v != nil && string(v) != "null" {
			n.add("review_scores is not an object: kept as is, not read")
		}
		return
	}
	rf := fields{o: rs, n: n, path: "review_scores."}
	for _, k := range rs.keys {
		if c.ReviewScores == nil {
			c.ReviewScores = map[string]*float64{}
		}
		if string(rs.get(k)) == "null" {
			c.ReviewScores[k] = nil
			continue
		}
		if v, ok := rf.number(k); ok {
			c.ReviewScores[k] = &v
		}
	}
}

func readErrors(c *ckpt.Checkpoint, doc *object, n *notes) {
	v := doc.get("errors")
	if v == nil || string(v) == "null" {
		return
	}
	var list []json.RawMessage
	if json.Unmarshal(v, &list) != nil {
		if msgs, ok := (fields{o: doc, n: n}).strs("errors"); ok {
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
			n.add("%s is text, not an object: read as the message of an error without type or time", strings.TrimSuffix(path, "."))
			c.Errors = append(c.Errors, ckpt.ErrorItem{Message: msg})
			continue
		}
		e, ok := asObject(raw)
		if !ok {
			n.add("%s is not an object: kept as is, not read", strings.TrimSuffix(path, "."))
			continue
		}
		ef := fields{o: e, n: n, path: path}
		var item ckpt.ErrorItem
		item.Type, _ = ef.str("type")
		item.Message, _ = ef.str("message")
		item.Blocking, _ = ef.boolean("blocking")
		if t, ok := ef.when("timestamp"); ok {
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
		n.add("%d error(s) without a timestamp: their time is unknown", undated)
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
	return doc.indented(), nil
}

func document(c *ckpt.Checkpoint) (*object, error) {
	_, src, err := readMeta(c, Name)
	if err != nil {
		return nil, err
	}
	if src == nil {
		return render(c), nil
	}
	var discard notes
	s0, err := docToState(src, &discard)
	if err != nil {
		return nil, fmt.Errorf("meta %q holds a file ckpt cannot read back (%v): remove it with ckpt update %s --meta %s=null", Name, err, c.ID, Name)
	}
	if c.Heartbeat.LastBeat.IsZero() && !s0.Heartbeat.LastBeat.IsZero() {
		// The store keeps beats outside the history and an import does not
		// carry the file's last beat into it: no newer beat is known, so the
		// file's own last_beat still holds.
		cc := *c
		cc.Heartbeat.LastBeat = s0.Heartbeat.LastBeat
		c = &cc
	}
	doc := mergeDocument(render(s0), render(c), src)
	carryCounts(doc, src, s0, c)
	return doc, nil
}

// carryCounts keeps a file's subtask counts right when its items list only
// some of the subtasks (seed 003's example lists 4 of 29): ckpt counts the
// listed ones, so the file's counts move by what changed among them.
func carryCounts(doc, src *object, s0, c *ckpt.Checkpoint) {
	if len(s0.Steps) == 0 || len(c.Steps) == 0 || c.Progress == s0.Progress {
		return
	}
	srcSub, ok := asObject(src.get("subtasks"))
	if !ok {
		return
	}
	var discard notes
	sf := fields{o: srcSub, n: &discard}
	total, okT := sf.count("total")
	done, okD := sf.count("completed")
	if !okT || !okD || (total == s0.Progress.Total && done == s0.Progress.Done) {
		return
	}
	sub, ok := asObject(doc.get("subtasks"))
	if !ok {
		return
	}
	total += c.Progress.Total - s0.Progress.Total
	done += c.Progress.Done - s0.Progress.Done
	total = max(total, 0)
	done = min(max(done, 0), total)
	sub.put("total", total)
	sub.put("completed", done)
	failed := func(x *ckpt.Checkpoint) int {
		n := 0
		for _, s := range x.Steps {
			if s.Status == ckpt.StepFailed {
				n++
			}
		}
		return n
	}
	if f, ok := sf.count("failed"); ok {
		sub.put("failed", max(f+failed(c)-failed(s0), 0))
	}
	doc.set("subtasks", sub.raw())
	if total > 0 {
		doc.put("progress_percent", math.Round(float64(done)/float64(total)*100))
	}
}

// statusWords are the seed 003 words written for each status.
var statusWords = map[ckpt.Status]string{
	ckpt.StatusPending:    "pending",
	ckpt.StatusInProgress: "in_progress",
	ckpt.StatusWaiting:    "waiting",
	ckpt.StatusBlocked:    "blocked",
	ckpt.StatusDone:       "complete",
	ckpt.StatusFailed:     "failed",
	ckpt.StatusAbandoned:  "abandoned",
}

var stepWords = map[ckpt.StepStatus]string{
	ckpt.StepPending: "pending", ckpt.StepInProgress: "in_progress", ckpt.StepDone: "complete",
	ckpt.StepFailed: "failed", ckpt.StepSkipped: "skipped",
}

// render writes c as the document, in the document's field order.
func render(c *ckpt.Checkpoint) *object {
	o := newObject()
	if id := checkpointID(c); id != "" {
		o.put("checkpoint_id", id)
	}
	if c.Agent.ID != "" {
		o.put("agent", c.Agent.ID)
	}
	if c.Agent.Name != "" {
		o.put("agent_name", c.Agent.Name)
	}
	if c.TaskID != "" {
		o.put("task_id", c.TaskID)
	}
	if c.Title != "" {
		o.put("task_title", c.Title)
	}
	o.put("status", statusWords[c.Status])
	o.put("progress_percent", math.Round(c.Progress.Percent))
	if !c.StartedAt.IsZero() {
		o.put("started_at", formatTime(c.StartedAt))
	}
	if !c.UpdatedAt.IsZero() {
		o.put("updated_at", formatTime(c.UpdatedAt))
	}
	if c.CompletedAt != nil {
		o.put("completed_at", formatTime(*c.CompletedAt))
	} else {
		o.put("completed_at", nil)
	}
	if len(c.Steps) > 0 || c.Progress.Total > 0 {
		st := newObject()
		failed := 0
		items := []any{}
		for _, s := range c.Steps {
			if s.Status == ckpt.StepFailed {
				failed++
			}
			it := newObject()
			it.put("id", s.ID)
			if s.Title != "" {
				it.put("title", s.Title)
			}
			it.put("status", stepWords[s.Status])
			if s.Output != "" {
				it.put("output", s.Output)
			} else {
				it.put("output", nil)
			}
			items = append(items, it.raw())
		}
		st.put("total", c.Progress.Total)
		st.put("completed", c.Progress.Done)
		st.put("failed", failed)
		if len(c.Steps) > 0 {
			st.put("items", items)
		}
		o.set("subtasks", st.raw())
	}
	o.put("files_created", orEmpty(c.Files.Created))
	o.put("files_modified", orEmpty(c.Files.Modified))
	if len(c.Acceptance) > 0 {
		ac := newObject()
		for _, a := range c.Acceptance {
			ac.put(a.ID, a.Met)
		}
		o.set("acceptance_criteria_met", ac.raw())
	}
	if len(c.ReviewScores) > 0 {
		names := make([]string, 0, len(c.ReviewScores))
		for k := range c.ReviewScores {
			names = append(names, k)
		}
		sort.Strings(names)
		rs := newObject()
		for _, k := range names {
			rs.put(k, c.ReviewScores[k])
		}
		o.set("review_scores", rs.raw())
	}
	errs := []any{}
	for _, e := range c.ActiveErrors() {
		eo := newObject()
		if e.Type != "" {
			eo.put("type", e.Type)
		}
		eo.put("message", e.Message)
		if !e.At.IsZero() {
			eo.put("timestamp", formatTime(e.At))
		}
		eo.put("blocking", e.Blocking)
		errs = append(errs, eo.raw())
	}
	o.put("errors", errs)
	ctx := newObject()
	for _, kv := range [][2]string{{"last_processed", c.Context.LastProcessed}, {"next_to_process", c.Context.NextToProcess}, {"notes", c.Context.Notes}} {
		if kv[1] != "" {
			ctx.put(kv[0], kv[1])
		}
	}
	if len(ctx.keys) > 0 {
		o.set("context", ctx.raw())
	}
	o.put("resumable", c.Resume.Resumable)
	if c.Resume.Instructions != "" {
		o.put("resume_instructions", c.Resume.Instructions)
	}
	hb := newObject()
	if !c.Heartbeat.LastBeat.IsZero() {
		hb.put("last_beat", formatTime(c.Heartbeat.LastBeat))
	}
	if iv := c.Heartbeat.Interval.D(); iv > 0 {
		hb.put("interval_seconds", iv.Seconds())
	}
	if len(hb.keys) > 0 {
		o.set("heartbeat", hb.raw())
	}
	return o
}

func orEmpty(list []string) []string {
	if list == nil {
		return []string{}
	}
	return list
}

// checkpointID is seed 003's checkpoint_id: the session ID when set, else
// <agent>-<task>-<start as YYYYMMDD-HHMMSS>.
func checkpointID(c *ckpt.Checkpoint) string {
	if c.Session.ID != "" {
		return c.Session.ID
	}
	if c.Agent.ID == "" || c.TaskID == "" || c.StartedAt.IsZero() {
		return ""
	}
	return c.Agent.ID + "-" + c.TaskID + "-" + c.StartedAt.UTC().Format("20060102-150405")
}

// OutboxLine returns the message seed 003 posts to the outbox on progress,
// exactly "@orchestrator: Task {task_id} progress: {percent}%", with the
// task ID and percentage the exported file holds (the percentage a whole
// number unless the file says otherwise). The task ID falls back to c.ID.
func OutboxLine(c *ckpt.Checkpoint) string {
	task, percent := c.TaskID, strconv.FormatFloat(math.Round(c.Progress.Percent), 'f', -1, 64)
	if doc, err := document(c); err == nil {
		var discard notes
		f := fields{o: doc, n: &discard}
		if t, ok := f.str("task_id"); ok && t != "" {
			task = t
		}
		if p, ok := f.number("progress_percent"); ok {
			percent = strconv.FormatFloat(p, 'f', -1, 64)
		}
	}
	if task == "" {
		task = c.ID
	}
	return "@orchestrator: Task " + task + " progress: " + percent + "%"
}
