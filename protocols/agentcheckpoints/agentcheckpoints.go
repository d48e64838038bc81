// Package agentcheckpoints reads and writes seed 002's per-agent checkpoint
// files, agent_checkpoints/<agent>.json, used to recover parallel agents
// that crashed or lost their context.
//
// Every field of the document maps onto the ckpt model (see the table in
// docs/formats.md); fields the model has no place for (coordination_state,
// gate records, …) are kept verbatim in the checkpoint's meta, with the whole
// file as read, so that Export writes back every field with its spelling
// unless ckpt changed its value. Real files drift from the document: a string
// where an array was promised, PAUSED, "N/A (paused)", a timestamp under
// another name, the Markdown variant (*_checkpoint.md) and the per-feature
// STATUS file are all read, with a warning for each guess.
package agentcheckpoints

import (
	"bytes"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	ckpt "github.com/ckpt-dev/ckpt"
	"github.com/ckpt-dev/ckpt/protocols"
)

// Name is the format's name on the command line and its key in
// Checkpoint.Meta, where the file as read is kept.
const Name = "agent-checkpoints"

// Dir is the directory, under a project root, that holds the files.
const Dir = "agent_checkpoints"

// Format is seed 002's file format. The zero value is not ready: use New.
// A Format is safe for concurrent use as long as its fields are not changed.
type Format struct {
	// Keep is how many backups of each file Mirror keeps (seed 002: 10).
	Keep int
	// Now gives the time that names a backup; it is time.Now by default.
	Now func() time.Time
}

var _ protocols.Format = (*Format)(nil)

// New returns the format with seed 002's settings: 10 backups per file.
func New() *Format { return &Format{Keep: 10, Now: time.Now} }

// Name returns "agent-checkpoints".
func (*Format) Name() string { return Name }

// Import reads an agent checkpoint: the JSON file of seed 002, its Markdown
// variant, or a feature STATUS file (KEY: VALUE lines). It fails only when
// the file holds none of the document's fields.
func (*Format) Import(path string, data []byte) (protocols.Imported, error) {
	var n notes
	doc, file, err := readDocument(path, data, &n)
	if err != nil {
		return protocols.Imported{}, err
	}
	c, err := docToState(doc, &n)
	if err != nil {
		return protocols.Imported{}, fmt.Errorf("%s: %w", path, err)
	}
	writeMeta(c, Name, metaSource{File: file, Source: doc.raw()})
	id, guessed := idFromFile(file)
	if guessed {
		n.add("file name %q is not a valid checkpoint ID: suggested ID %q", file, id)
	}
	c.ID = id
	return protocols.Imported{ID: id, State: c, Warnings: n}, nil
}

// readDocument turns the file into the JSON document of seed 002 and gives
// the name of the JSON file it stands for.
func readDocument(path string, data []byte, n *notes) (*object, string, error) {
	base := filepath.Base(path)
	trimmed := bytes.TrimSpace(data)
	if len(trimmed) == 0 {
		return nil, "", fmt.Errorf("%s is empty: an agent checkpoint is a JSON object such as {\"agent_id\": \"Secondary-A\", \"status\": \"IN_PROGRESS\", …}", path)
	}
	if trimmed[0] == '{' {
		doc, err := parseObject(trimmed)
		if err != nil {
			return nil, "", fmt.Errorf("%s: %v: an agent checkpoint is one JSON object; restore the file from agent_checkpoints/backups/ if it was damaged", path, err)
		}
		return doc, jsonName(base), nil
	}
	if doc, ok := readStatusFile(trimmed, n); ok {
		n.add("read a feature STATUS file (KEY: VALUE lines), not an agent checkpoint: export writes the JSON checkpoint")
		return doc, jsonName(base), nil
	}
	doc, err := readMarkdown(trimmed, n)
	if err != nil {
		return nil, "", fmt.Errorf("%s: %w", path, err)
	}
	n.add("read the Markdown variant of the checkpoint: export writes %s/%s as JSON", Dir, jsonName(base))
	return doc, jsonName(base), nil
}

// jsonName is the JSON file a checkpoint file stands for:
// "secondary_a_checkpoint.md" → "secondary_a.json".
func jsonName(base string) string {
	stem := base
	if ext := filepath.Ext(stem); ext != "" && len(ext) <= 8 {
		stem = strings.TrimSuffix(stem, ext)
	}
	if !strings.HasSuffix(strings.ToLower(base), ".json") {
		stem = strings.TrimSuffix(stem, "_checkpoint")
	}
	if stem == "" {
		stem = "agent"
	}
	return stem + ".json"
}

// idFromFile suggests a checkpoint ID from a file name: its stem, with any
// character an ID cannot hold replaced by '-'.
func idFromFile(file string) (string, bool) {
	stem := strings.TrimSuffix(file, ".json")
	if ckpt.ValidateID(stem) == nil {
		return stem, false
	}
	b := []byte(stem)
	for i, c := range b {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-') {
			b[i] = '-'
		}
	}
	id := strings.Trim(string(b), ".")
	if len(id) > 100 {
		id = id[:100]
	}
	if ckpt.ValidateID(id) != nil {
		id = "agent"
	}
	return id, true
}

// known lists the document's fields and the names real files use for them.
var known = map[string]bool{
	"agent_id": true, "agent_type": true, "agent_role": true, "session_id": true, "session_started": true,
	"feature": true, "stage": true, "phase": true, "last_checkpoint": true, "timestamp": true,
	"next_checkpoint_expected": true, "status": true, "can_resume": true, "blockers": true,
	"files_modified": true, "recovery_instructions": true, "current_step": true,
	"completed_steps": true, "next_steps": true, "next_action": true,
}

// docToState maps the document onto a checkpoint. It is deterministic: the
// same document always gives the same state (Export relies on that).
func docToState(doc *object, n *notes) (*ckpt.Checkpoint, error) {
	var kept []string
	anyKnown := false
	for _, k := range doc.keys {
		if known[k] {
			anyKnown = true
		} else {
			kept = append(kept, k)
		}
	}
	if !anyKnown {
		return nil, fmt.Errorf("none of seed 002's fields (agent_id, status, last_checkpoint, current_step, …) found: is this an %s/<agent>.json file?", Dir)
	}
	f := fields{o: doc, n: n}
	c := &ckpt.Checkpoint{}
	c.Agent.ID, _ = f.str("agent_id")
	c.Agent.Type, _ = f.str("agent_type")
	c.Agent.Name, _ = f.str("agent_role")
	c.Session.ID, _ = f.str("session_id")
	if t, ok := f.when("session_started"); ok {
		c.Session.StartedAt = t
	}
	c.TaskID, _ = f.str("feature")
	c.Stage, _ = f.str("stage")
	c.Phase, _ = f.str("phase")
	c.CurrentStep, _ = f.str("current_step")

	lastKey := "last_checkpoint"
	if !doc.has(lastKey) && doc.has("timestamp") {
		lastKey = "timestamp"
		n.add("no last_checkpoint: timestamp read as the time of the last checkpoint")
	}
	if t, ok := f.when(lastKey); ok {
		c.UpdatedAt = t
	} else if !doc.has(lastKey) {
		n.add("no last_checkpoint: the time of the last update is unknown")
	}
	if s, ok := f.str("next_checkpoint_expected"); ok {
		next, guess, isTime := parseTime(s)
		switch {
		case !isTime:
			n.add("next_checkpoint_expected %q is not a time: heartbeat interval left at ckpt's default (%s)", s, ckpt.DefaultInterval)
		case c.UpdatedAt.IsZero() || !next.After(c.UpdatedAt):
			n.add("next_checkpoint_expected %q is not after last_checkpoint: heartbeat interval left at ckpt's default (%s)", s, ckpt.DefaultInterval)
		default:
			if guess != "" {
				n.add("next_checkpoint_expected %q has %s", s, guess)
			}
			c.Heartbeat.Interval = ckpt.Duration(next.Sub(c.UpdatedAt))
		}
	}

	c.Status = ckpt.StatusInProgress
	if w, ok := f.str("status"); ok {
		s, guessed := statusFromWord(w)
		if guessed {
			n.add("status %q is not a seed 002 status: read as %s", w, s)
		}
		c.Status = s
	} else {
		n.add("no status: in_progress assumed")
	}
	if c.Status.Final() && !c.UpdatedAt.IsZero() {
		t := c.UpdatedAt
		c.CompletedAt = &t
		n.add("status %s carries no completion time: last_checkpoint used", c.Status)
	}

	c.Resume.Resumable = true
	if b, ok := f.boolean("can_resume"); ok {
		c.Resume.Resumable = b
	} else if !doc.has("can_resume") {
		n.add("no can_resume: resumable assumed")
	}
	c.Resume.Instructions, _ = f.str("recovery_instructions")
	nextKey := "next_steps"
	if !doc.has(nextKey) && doc.has("next_action") {
		nextKey = "next_action"
		n.add("no next_steps: next_action read as the next step")
	}
	if list, ok := f.strs(nextKey); ok {
		c.Resume.NextSteps = nonEmpty(list)
	}

	if list, ok := f.strs("blockers"); ok {
		list = nonEmpty(list)
		for i, text := range list {
			c.Blockers = append(c.Blockers, ckpt.Blocker{ID: fmt.Sprintf("b%d", i+1), Text: text, Since: c.UpdatedAt})
		}
		if len(list) > 0 {
			n.add("blockers carry no start time: last_checkpoint used as the time each began")
		}
	}
	if list, ok := f.strs("files_modified"); ok {
		c.Files.Modified = uniqueNonEmpty(list)
	}
	if list, ok := f.strs("completed_steps"); ok {
		ids := stepIDs{}
		for _, text := range nonEmpty(list) {
			c.Steps = append(c.Steps, ckpt.Step{ID: ids.make(text), Title: text, Status: ckpt.StepDone})
		}
	}
	if len(kept) > 0 {
		n.add("kept as is, with no place in ckpt's model: %s", strings.Join(kept, ", "))
	}
	deriveProgress(c)
	return c, nil
}

func nonEmpty(list []string) []string {
	out := make([]string, 0, len(list))
	for _, s := range list {
		if strings.TrimSpace(s) != "" {
			out = append(out, s)
		}
	}
	return out
}

func uniqueNonEmpty(list []string) []string {
	var out []string
	seen := map[string]bool{}
	for _, s := range list {
		if strings.TrimSpace(s) != "" && !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	return out
}

// Export renders c as agent_checkpoints/<agent>.json. A checkpoint imported
// from such a file gets back every field of that file: unknown fields
// verbatim, and each known field in the file's spelling unless c changed it.
func (*Format) Export(c *ckpt.Checkpoint) ([]byte, error) {
	_, src, err := readMeta(c, Name)
	if err != nil {
		return nil, err
	}
	ours := render(c, src)
	if src == nil {
		return ours.indented(), nil
	}
	var discard notes
	s0, err := docToState(src, &discard)
	if err != nil {
		return nil, fmt.Errorf("meta %q holds a file ckpt cannot read back (%v): remove it with ckpt update %s --meta %s=null", Name, err, c.ID, Name)
	}
	return mergeDocument(render(s0, src), ours, src).indented(), nil
}

// statusWords are the seed 002 words written for each status.
var statusWords = map[ckpt.Status]string{
	ckpt.StatusPending:    "NOT_STARTED",
	ckpt.StatusInProgress: "IN_PROGRESS",
	ckpt.StatusWaiting:    "WAITING",
	ckpt.StatusBlocked:    "BLOCKED",
	ckpt.StatusDone:       "COMPLETE",
	ckpt.StatusFailed:     "FAILED",
	ckpt.StatusAbandoned:  "ABANDONED",
}

// render writes c as the document, in the document's field order. src, the
// file c was imported from (nil if none), decides only which of two names a
// field goes under when the file used another name for it.
func render(c *ckpt.Checkpoint, src *object) *object {
	o := newObject()
	agentID := c.Agent.ID
	if agentID == "" {
		agentID = c.Agent.Name
	}
	o.put("agent_id", agentID)
	if c.Agent.Name != "" && c.Agent.Name != agentID {
		o.put("agent_role", c.Agent.Name)
	}
	o.put("agent_type", c.Agent.Type)
	o.put("session_id", c.Session.ID)
	if src != nil && src.has("session_started") && !c.Session.StartedAt.IsZero() {
		o.put("session_started", formatTime(c.Session.StartedAt))
	}
	o.put("feature", c.TaskID)
	o.put("stage", c.Stage)
	o.put("phase", c.Phase)
	if last := c.LastSeen(); !last.IsZero() {
		key := "last_checkpoint"
		if src != nil && !src.has(key) && src.has("timestamp") {
			key = "timestamp"
		}
		iv := c.Heartbeat.Interval.D()
		if iv <= 0 {
			iv = ckpt.DefaultInterval
		}
		o.put(key, formatTime(last))
		o.put("next_checkpoint_expected", formatTime(last.Add(iv)))
	}
	o.put("status", statusWords[c.Status])
	o.put("can_resume", c.Resume.Resumable)
	blockers := []string{}
	for _, b := range c.ActiveBlockers() {
		blockers = append(blockers, b.Text)
	}
	o.put("blockers", blockers)
	files := []string{}
	files = append(files, uniqueNonEmpty(append(append([]string{}, c.Files.Modified...), c.Files.Created...))...)
	o.put("files_modified", files)
	o.put("recovery_instructions", c.Resume.Instructions)
	o.put("current_step", c.CurrentStep)
	done := []string{}
	for _, s := range c.Steps {
		if s.Status.Finished() {
			done = append(done, s.Label())
		}
	}
	o.put("completed_steps", done)
	next := append([]string{}, c.Resume.NextSteps...)
	if src != nil && !src.has("next_steps") && src.has("next_action") && len(next) <= 1 {
		o.put("next_action", strings.Join(next, ""))
	} else {
		o.put("next_steps", next)
	}
	return o
}
