// Package agentcheckpoints reads and writes agent-checkpoints' (seed 002) per-agent checkpoint
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
	"strconv"
	"strings"
	"time"

	ckpt "github.com/ckpt-dev/ckpt"
	"github.com/ckpt-dev/ckpt/internal/jsondoc"
	"github.com/ckpt-dev/ckpt/protocols"
)

// Name is the format's name on the command line and its key in
// Checkpoint.Meta, where the file as read is kept.
const Name = "agent-checkpoints"

// Dir is the directory, under a project root, that holds the files.
const Dir = "agent_checkpoints"

// Format is agent-checkpoints' (seed 002) file format. The zero value is not ready: use New.
// A Format is safe for concurrent use as long as its fields are not changed.
type Format struct {
	// Keep is how many backups of each file Mirror keeps (agent-checkpoints (seed 002): 10).
	Keep int
	// Now gives the time that names a backup; it is time.Now by default.
	Now func() time.Time
}

var _ protocols.Format = (*Format)(nil)

// New returns the format with agent-checkpoints' (seed 002) settings: 10 backups per file.
func New() *Format { return &Format{Keep: 10, Now: time.Now} }

// Name returns "agent-checkpoints".
func (*Format) Name() string { return Name }

// Import reads an agent checkpoint: the JSON file of agent-checkpoints (seed 002), its Markdown
// variant, or a feature STATUS file (KEY: VALUE lines). It fails only when
// the file holds none of the document's fields.
func (*Format) Import(path string, data []byte) (protocols.Imported, error) {
	var n jsondoc.Notes
	doc, file, err := readDocument(path, data, &n)
	if err != nil {
		return protocols.Imported{}, err
	}
	// ckpt's presence is liveness, not state: neither read nor kept, so a
	// later export never brings an old one back.
	doc.Delete("presence")
	c, err := docToState(doc, &n)
	if err != nil {
		return protocols.Imported{}, fmt.Errorf("%s: %w", path, err)
	}
	jsondoc.WriteMeta(c, Name, jsondoc.MetaSource{File: file, Source: doc.Raw()})
	id, guessed := idFromFile(file)
	if guessed {
		n.Add("file name %q is not a valid checkpoint ID: suggested ID %q", file, id)
	}
	c.ID = id
	return protocols.Imported{ID: id, State: c, Warnings: n}, nil
}

// readDocument turns the file into the JSON document of agent-checkpoints (seed 002) and gives
// the name of the JSON file it stands for.
func readDocument(path string, data []byte, n *jsondoc.Notes) (*jsondoc.Object, string, error) {
	base := filepath.Base(path)
	trimmed := bytes.TrimSpace(data)
	if len(trimmed) == 0 {
		return nil, "", fmt.Errorf("%s is empty: an agent checkpoint is a JSON object such as {\"agent_id\": \"Secondary-A\", \"status\": \"IN_PROGRESS\", …}", path)
	}
	if trimmed[0] == '{' {
		doc, err := jsondoc.ParseObject(trimmed)
		if err != nil {
			return nil, "", fmt.Errorf("%s: %v: an agent checkpoint is one JSON object; restore the file from agent_checkpoints/backups/ if it was damaged", path, err)
		}
		return doc, jsonName(base), nil
	}
	if doc, ok := readStatusFile(trimmed, n); ok {
		n.Add("read a feature STATUS file (KEY: VALUE lines), not an agent checkpoint: export writes the JSON checkpoint")
		return doc, jsonName(base), nil
	}
	doc, err := readMarkdown(trimmed, n)
	if err != nil {
		return nil, "", fmt.Errorf("%s: %w", path, err)
	}
	n.Add("read the Markdown variant of the checkpoint: export writes %s/%s as JSON", Dir, jsonName(base))
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

// knownField reports whether k is one of the document's fields or a name
// real files use for one.
func knownField(k string) bool {
	switch k {
	case "agent_id", "agent_type", "agent_role", "session_id", "session_started", "feature",
		"stage", "phase", "last_checkpoint", "timestamp", "next_checkpoint_expected", "status",
		"can_resume", "blockers", "files_modified", "recovery_instructions", "current_step",
		"completed_steps", "next_steps", "next_action":
		return true
	}
	return false
}

// docToState maps the document onto a checkpoint. It is deterministic: the
// same document always gives the same state (Export relies on that).
func docToState(doc *jsondoc.Object, n *jsondoc.Notes) (*ckpt.Checkpoint, error) {
	var kept []string
	anyKnown := false
	for _, k := range doc.Keys() {
		if knownField(k) {
			anyKnown = true
		} else {
			kept = append(kept, k)
		}
	}
	if !anyKnown {
		return nil, fmt.Errorf("none of seed 002's fields (agent_id, status, last_checkpoint, current_step, …) found: is this an %s/<agent>.json file?", Dir)
	}
	f := jsondoc.Fields{Obj: doc, Notes: n}
	c := &ckpt.Checkpoint{}
	c.Agent.ID, _ = f.Text("agent_id")
	c.Agent.Type, _ = f.Text("agent_type")
	c.Agent.Name, _ = f.Text("agent_role")
	c.Session.ID, _ = f.Text("session_id")
	if t, ok := f.Time("session_started"); ok {
		c.Session.StartedAt = t
	}
	c.TaskID, _ = f.Text("feature")
	c.Stage, _ = f.Text("stage")
	c.Phase, _ = f.Text("phase")
	c.CurrentStep, _ = f.Text("current_step")

	readCheckpointTimes(f, c)

	c.Status = f.Status("status", "seed 002")
	if c.Status.Final() && !c.UpdatedAt.IsZero() {
		t := c.UpdatedAt
		c.CompletedAt = &t
		n.Add("status %s carries no completion time: last_checkpoint used", c.Status)
	}

	readResume(f, c)
	readWorkLists(f, c)
	if len(kept) > 0 {
		n.Add("kept as is, with no place in ckpt's model: %s", strings.Join(kept, ", "))
	}
	ckpt.Derive(c)
	return c, nil
}

// readCheckpointTimes sets c.UpdatedAt from last_checkpoint (or, lacking
// it, timestamp) and the heartbeat interval from next_checkpoint_expected
// when that is a time after it, noting each fallback and what it ignores.
func readCheckpointTimes(f jsondoc.Fields, c *ckpt.Checkpoint) {
	doc, n := f.Obj, f.Notes
	lastKey := "last_checkpoint"
	if !doc.Has(lastKey) && doc.Has("timestamp") {
		lastKey = "timestamp"
		n.Add("no last_checkpoint: timestamp read as the time of the last checkpoint")
	}
	if t, ok := f.Time(lastKey); ok {
		c.UpdatedAt = t
	} else if !doc.Has(lastKey) {
		n.Add("no last_checkpoint: the time of the last update is unknown")
	}
	if s, ok := f.Text("next_checkpoint_expected"); ok {
		next, guess, isTime := jsondoc.ParseTime(s)
		switch {
		case !isTime:
			n.Add("next_checkpoint_expected %q is not a time: heartbeat interval left at ckpt's default (%s)", s, ckpt.DefaultInterval)
		case c.UpdatedAt.IsZero() || !next.After(c.UpdatedAt):
			n.Add("next_checkpoint_expected %q is not after last_checkpoint: heartbeat interval left at ckpt's default (%s)", s, ckpt.DefaultInterval)
		default:
			if guess != "" {
				n.Add("next_checkpoint_expected %q has %s", s, guess)
			}
			c.Heartbeat.Interval = ckpt.Duration(next.Sub(c.UpdatedAt))
		}
	}
}

// readResume sets c.Resume from can_resume (resumable when absent, with a
// note), recovery_instructions and next_steps (or, lacking it, next_action).
func readResume(f jsondoc.Fields, c *ckpt.Checkpoint) {
	doc, n := f.Obj, f.Notes
	c.Resume.Resumable = true
	if b, ok := f.Bool("can_resume"); ok {
		c.Resume.Resumable = b
	} else if !doc.Has("can_resume") {
		n.Add("no can_resume: resumable assumed")
	}
	c.Resume.Instructions, _ = f.Text("recovery_instructions")
	nextKey := "next_steps"
	if !doc.Has(nextKey) && doc.Has("next_action") {
		nextKey = "next_action"
		n.Add("no next_steps: next_action read as the next step")
	}
	if list, ok := f.Texts(nextKey); ok {
		c.Resume.NextSteps = jsondoc.NonEmpty(list)
	}
}

// readWorkLists sets c's blockers (b1, b2, …, each since c.UpdatedAt, which
// must be set before), modified files and done steps from the document's
// blockers, files_modified and completed_steps lists.
func readWorkLists(f jsondoc.Fields, c *ckpt.Checkpoint) {
	if list, ok := f.Texts("blockers"); ok {
		list = jsondoc.NonEmpty(list)
		for i, text := range list {
			c.Blockers = append(c.Blockers, ckpt.Blocker{ID: fmt.Sprintf("b%d", i+1), Text: text, Since: c.UpdatedAt})
		}
		if len(list) > 0 {
			f.Notes.Add("blockers carry no start time: last_checkpoint used as the time each began")
		}
	}
	if list, ok := f.Texts("files_modified"); ok {
		c.Files.Modified = jsondoc.UniqueNonEmpty(list)
	}
	if list, ok := f.Texts("completed_steps"); ok {
		ids := jsondoc.StepIDs{}
		for _, text := range jsondoc.NonEmpty(list) {
			c.Steps = append(c.Steps, ckpt.Step{ID: ids.Make(text), Title: text, Status: ckpt.StepDone})
		}
	}
}

// Export renders c as agent_checkpoints/<agent>.json. A checkpoint imported
// from such a file gets back every field of that file: unknown fields
// verbatim, and each known field in the file's spelling unless c changed it.
func (*Format) Export(c *ckpt.Checkpoint) ([]byte, error) {
	src, s0, err := jsondoc.ImportedState(c, Name, docToState)
	if err != nil {
		return nil, err
	}
	ours := render(c, src)
	if src == nil {
		return ours.Indented(), nil
	}
	return jsondoc.Merge(render(s0, src), ours, src).Indented(), nil
}

// statusWord is the agent-checkpoints (seed 002) word written for a status.
// (Switches, not map literals, here and for the fields and labels: Go
// builds a map literal at initialisation, in every ckpt process.)
func statusWord(k ckpt.Status) string {
	switch k {
	case ckpt.StatusPending:
		return "NOT_STARTED"
	case ckpt.StatusInProgress:
		return "IN_PROGRESS"
	case ckpt.StatusWaiting:
		return "WAITING"
	case ckpt.StatusBlocked:
		return "BLOCKED"
	case ckpt.StatusDone:
		return "COMPLETE"
	case ckpt.StatusFailed:
		return "FAILED"
	case ckpt.StatusAbandoned:
		return "ABANDONED"
	}
	return ""
}

// render writes c as the document, in the document's field order. src, the
// file c was imported from (nil if none), decides only which of two names a
// field goes under when the file used another name for it.
func render(c *ckpt.Checkpoint, src *jsondoc.Object) *jsondoc.Object {
	o := jsondoc.NewObject()
	agentID := c.Agent.ID
	if agentID == "" {
		agentID = c.Agent.Name
	}
	o.Put("agent_id", agentID)
	if c.Agent.Name != "" && c.Agent.Name != agentID {
		o.Put("agent_role", c.Agent.Name)
	}
	o.Put("agent_type", c.Agent.Type)
	if src == nil {
		o.Put("session_id", sessionID(c))
	} else {
		o.Put("session_id", c.Session.ID)
	}
	if src != nil && src.Has("session_started") && !c.Session.StartedAt.IsZero() {
		o.Put("session_started", jsondoc.FormatTime(c.Session.StartedAt))
	}
	o.Put("feature", c.TaskID)
	o.Put("stage", c.Stage)
	o.Put("phase", c.Phase)
	if last := c.LastSeen(); !last.IsZero() {
		key := "last_checkpoint"
		if src != nil && !src.Has(key) && src.Has("timestamp") {
			key = "timestamp"
		}
		iv := c.Heartbeat.Interval.D()
		if iv <= 0 {
			iv = ckpt.DefaultInterval
		}
		o.Put(key, jsondoc.FormatTime(last))
		o.Put("next_checkpoint_expected", jsondoc.FormatTime(last.Add(iv)))
	}
	o.Put("status", statusWord(c.Status))
	if p := protocols.PresenceJSON(c); p != nil {
		// ckpt's presence beside the seed's status: what the agent is
		// doing as of last_checkpoint (working, busy, waiting, ended).
		o.Set("presence", p)
	}
	o.Put("can_resume", c.Resume.Resumable)
	blockers := []string{}
	for _, b := range c.ActiveBlockers() {
		blockers = append(blockers, b.Text)
	}
	o.Put("blockers", blockers)
	files := []string{}
	files = append(files, jsondoc.UniqueNonEmpty(append(append([]string{}, c.Files.Modified...), c.Files.Created...))...)
	o.Put("files_modified", files)
	o.Put("recovery_instructions", c.Resume.Instructions)
	o.Put("current_step", c.CurrentStep)
	done := []string{}
	for _, s := range c.Steps {
		if s.Status.Finished() {
			done = append(done, s.Label())
		}
	}
	o.Put("completed_steps", done)
	next := append([]string{}, c.Resume.NextSteps...)
	if src != nil && !src.Has("next_steps") && src.Has("next_action") && len(next) <= 1 {
		o.Put("next_action", strings.Join(next, ""))
	} else {
		o.Put("next_steps", next)
	}
	if src == nil {
		// The document's coordination block, for a checkpoint that did not
		// come from a file (one that did keeps its own): unread_messages
		// are the messages told and not yet delivered. The times of the
		// agent's coordination are the mirror's (ExportCoordinated).
		co := jsondoc.NewObject()
		co.Put("unread_messages", len(c.Messages))
		if last := c.LastSeen(); !last.IsZero() {
			co.Put("last_status_update", jsondoc.FormatTime(last))
		}
		o.Set("coordination_state", co.Raw())
	}
	return o
}

// sessionID is the session_id written for a checkpoint that did not come
// from a file: its session's ID, else the document's "<agent>-<unix time>"
// form from when the session (else the checkpoint) started, so every file
// ckpt writes names its session. An imported file is written back as it
// was.
func sessionID(c *ckpt.Checkpoint) string {
	if c.Session.ID != "" {
		return c.Session.ID
	}
	start := c.Session.StartedAt
	if start.IsZero() {
		start = c.StartedAt
	}
	if start.IsZero() {
		return ""
	}
	agent := c.Agent.ID
	if agent == "" {
		agent = c.Agent.Name
	}
	var b strings.Builder
	for _, r := range strings.ToLower(agent) {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' {
			b.WriteRune(r)
		} else if b.Len() > 0 && !strings.HasSuffix(b.String(), "-") {
			b.WriteByte('-')
		}
	}
	name := strings.TrimSuffix(b.String(), "-")
	if name == "" {
		name = "agent"
	}
	return name + "-" + strconv.FormatInt(start.Unix(), 10)
}
