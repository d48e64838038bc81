package ccc

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"

	"github.com/ckpt-dev/ckpt/internal/atomicfile"
	"github.com/ckpt-dev/ckpt/internal/jsondoc"
)

// StateFile is the name of the runtime state file in a project root.
const StateFile = ".ccc-state.json"

// State is .ccc-state.json: the seed's checkpointCommentId and
// activeTaskFiles, the fields ccc's stop hook drives its task loop with, and
// every other field in Extra. A State read from a file writes back with the
// file's key order and, for each field not changed, the file's own value,
// so tools that keep other fields there (and jq scripts that rewrite it)
// lose nothing.
//
// The zero State is an empty file's state. A State is a value; copy it
// freely, but do not use one copy's Extra map from two goroutines.
type State struct {
	// CheckpointCommentID is the issue-tracker comment the checkpoint status
	// is written to; empty until the first checkpoint created it.
	CheckpointCommentID string
	// ActiveTaskFiles are the in-scope files a git snapshot may stage.
	ActiveTaskFiles []string

	LinearIssue         string // e.g. "CIA-123"
	Phase               string // intake, spec, review, decompose, execution, verification, closure, replan
	TaskIndex           int    // tasks done; the loop ends when it reaches TotalTasks
	TotalTasks          int
	TaskIteration       int // attempts at the current task
	MaxTaskIterations   int
	GlobalIteration     int
	MaxGlobalIterations int
	ExecutionMode       string // quick, tdd, pair, checkpoint, swarm
	// AwaitingGate is the human gate the loop waits for, as its JSON value
	// (a number or a name); nil or JSON null when none.
	AwaitingGate  json.RawMessage
	SpecPath      string
	ReplanCount   int
	LastUpdatedAt string

	// Extra holds every other field of the file, verbatim.
	Extra map[string]json.RawMessage

	read *stateRead // the file as read, for key order and spellings
}

type stateRead struct {
	doc  *jsondoc.Object
	vals map[string]json.RawMessage // each typed field's value as read
}

// stateField is one typed field of State and its name in the file.
type stateField struct {
	key  string
	get  func(*State) any
	read func(*State, jsondoc.Fields) bool
}

var stateFields = []stateField{
	{"checkpointCommentId", func(s *State) any { return s.CheckpointCommentID }, func(s *State, f jsondoc.Fields) (ok bool) {
		s.CheckpointCommentID, ok = f.Text("checkpointCommentId")
		return
	}},
	{"activeTaskFiles", func(s *State) any { return s.ActiveTaskFiles }, func(s *State, f jsondoc.Fields) (ok bool) {
		s.ActiveTaskFiles, ok = f.Texts("activeTaskFiles")
		return
	}},
	{"linearIssue", func(s *State) any { return s.LinearIssue }, func(s *State, f jsondoc.Fields) (ok bool) {
		s.LinearIssue, ok = f.Text("linearIssue")
		return
	}},
	{"phase", func(s *State) any { return s.Phase }, func(s *State, f jsondoc.Fields) (ok bool) { s.Phase, ok = f.Text("phase"); return }},
	{"taskIndex", func(s *State) any { return s.TaskIndex }, func(s *State, f jsondoc.Fields) (ok bool) { s.TaskIndex, ok = f.Count("taskIndex"); return }},
	{"totalTasks", func(s *State) any { return s.TotalTasks }, func(s *State, f jsondoc.Fields) (ok bool) { s.TotalTasks, ok = f.Count("totalTasks"); return }},
	{"taskIteration", func(s *State) any { return s.TaskIteration }, func(s *State, f jsondoc.Fields) (ok bool) {
		s.TaskIteration, ok = f.Count("taskIteration")
		return
	}},
	{"maxTaskIterations", func(s *State) any { return s.MaxTaskIterations }, func(s *State, f jsondoc.Fields) (ok bool) {
		s.MaxTaskIterations, ok = f.Count("maxTaskIterations")
		return
	}},
	{"globalIteration", func(s *State) any { return s.GlobalIteration }, func(s *State, f jsondoc.Fields) (ok bool) {
		s.GlobalIteration, ok = f.Count("globalIteration")
		return
	}},
	{"maxGlobalIterations", func(s *State) any { return s.MaxGlobalIterations }, func(s *State, f jsondoc.Fields) (ok bool) {
		s.MaxGlobalIterations, ok = f.Count("maxGlobalIterations")
		return
	}},
	{"executionMode", func(s *State) any { return s.ExecutionMode }, func(s *State, f jsondoc.Fields) (ok bool) {
		s.ExecutionMode, ok = f.Text("executionMode")
		return
	}},
	{"awaitingGate", func(s *State) any { return gateValue(s.AwaitingGate) }, func(s *State, f jsondoc.Fields) bool {
		v := f.Obj.Get("awaitingGate")
		if v == nil {
			return false
		}
		s.AwaitingGate = append(json.RawMessage(nil), v...)
		return true
	}},
	{"specPath", func(s *State) any { return s.SpecPath }, func(s *State, f jsondoc.Fields) (ok bool) { s.SpecPath, ok = f.Text("specPath"); return }},
	{"replanCount", func(s *State) any { return s.ReplanCount }, func(s *State, f jsondoc.Fields) (ok bool) {
		s.ReplanCount, ok = f.Count("replanCount")
		return
	}},
	{"lastUpdatedAt", func(s *State) any { return s.LastUpdatedAt }, func(s *State, f jsondoc.Fields) (ok bool) {
		s.LastUpdatedAt, ok = f.Text("lastUpdatedAt")
		return
	}},
}

func gateValue(v json.RawMessage) json.RawMessage {
	if len(v) == 0 {
		return json.RawMessage("null")
	}
	return v
}

// Gate returns the awaited gate as text ("2", "spec"), or "" when none.
func (s State) Gate() string {
	v := strings.TrimSpace(string(s.AwaitingGate))
	if v == "" || v == "null" || v == `""` || v == "false" {
		return ""
	}
	var text string
	if json.Unmarshal(s.AwaitingGate, &text) == nil {
		return text
	}
	return v
}

// ParseState reads .ccc-state.json content. Values of another type than the
// hook writes (a number as text, a file as a string) are read leniently;
// the notes say what was converted. It fails only on content that is not a
// JSON object.
func ParseState(data []byte) (State, []string, error) {
	doc, err := jsondoc.ParseObject(data)
	if err != nil {
		return State{}, nil, fmt.Errorf("%s: %v: the file is one JSON object such as {\"linearIssue\": \"CIA-123\", \"phase\": \"execution\"}", StateFile, err)
	}
	var n jsondoc.Notes
	s := State{read: &stateRead{doc: doc, vals: map[string]json.RawMessage{}}}
	f := jsondoc.Fields{Obj: doc, Notes: &n}
	known := map[string]bool{}
	for _, sf := range stateFields {
		known[sf.key] = true
		if sf.read(&s, f) {
			s.read.vals[sf.key] = jsondoc.Encode(sf.get(&s))
		}
	}
	for _, k := range doc.Keys() {
		if !known[k] {
			if s.Extra == nil {
				s.Extra = map[string]json.RawMessage{}
			}
			s.Extra[k] = doc.Get(k)
		}
	}
	return s, n, nil
}

// UnmarshalJSON reads a State as ParseState does.
func (s *State) UnmarshalJSON(data []byte) error {
	v, _, err := ParseState(data)
	if err != nil {
		return err
	}
	*s = v
	return nil
}

// MarshalJSON writes the state: the file's keys in their order, each typed
// field the file had, in the file's spelling unless its value changed, new
// or changed fields after, Extra's fields verbatim. Zero-valued typed fields
// the file did not have are left out.
func (s State) MarshalJSON() ([]byte, error) { return s.document().Raw(), nil }

func (s State) document() *jsondoc.Object {
	out := jsondoc.NewObject()
	var doc *jsondoc.Object
	if s.read != nil {
		doc = s.read.doc
	}
	typed := map[string]stateField{}
	for _, sf := range stateFields {
		typed[sf.key] = sf
	}
	var zero State
	emit := func(sf stateField) {
		v := jsondoc.Encode(sf.get(&s))
		if doc != nil && doc.Has(sf.key) {
			if was, ok := s.read.vals[sf.key]; ok && jsondoc.Equal(was, v) {
				out.Set(sf.key, doc.Get(sf.key))
				return
			}
			if _, ok := s.read.vals[sf.key]; !ok && jsondoc.Equal(v, jsondoc.Encode(sf.get(&zero))) {
				out.Set(sf.key, doc.Get(sf.key)) // kept as is: it could not be read
				return
			}
			out.Set(sf.key, v)
			return
		}
		if !jsondoc.Equal(v, jsondoc.Encode(sf.get(&zero))) {
			out.Set(sf.key, v)
		}
	}
	if doc != nil {
		for _, k := range doc.Keys() {
			if sf, ok := typed[k]; ok {
				emit(sf)
			} else if v, ok := s.Extra[k]; ok {
				out.Set(k, v)
			}
		}
	}
	for _, sf := range stateFields {
		if !out.Has(sf.key) && (doc == nil || !doc.Has(sf.key)) {
			emit(sf)
		}
	}
	for _, k := range sortedKeys(s.Extra) {
		if !out.Has(k) {
			out.Set(k, s.Extra[k])
		}
	}
	return out
}

// ReadState reads the state file at path. A missing file is an error
// wrapping fs.ErrNotExist.
func ReadState(path string) (State, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return State{}, fmt.Errorf("no %s at %s: it is created when a ccc session starts: %w", StateFile, path, err)
		}
		return State{}, err
	}
	s, _, err := ParseState(data)
	if err != nil {
		return State{}, fmt.Errorf("%s: %w", path, err)
	}
	return s, nil
}

// WriteState writes s to path durably (temporary file, fsync, rename,
// directory fsync), two-space indented, keeping every field s was read with.
func WriteState(path string, s State) error {
	return atomicfile.WriteFile(path, s.document().Indented(), 0o644)
}
