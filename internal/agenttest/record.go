package agenttest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// recorderScript saves one hook's stdin as <start ns>.<pid>.<event>.json in
// the directory given first (written aside, then renamed, so a reader never
// sees half a payload): one file per invocation, so hooks the client
// starts together (StopFailure and SessionEnd) cannot interleave, and the
// start time orders them.
const recorderScript = `#!/bin/sh
t=$(date +%s%N)
cat > "$1/.$t.$$.tmp" && mv "$1/.$t.$$.tmp" "$1/$t.$$.$2.json"
`

// installRecorder adds a recording hook to the project's settings file for
// every event ckpt's install registered, with no matcher (every tool, every
// source), after ckpt's own entry.
func (s *Session) installRecorder() {
	s.Record = filepath.Join(s.Root, "record")
	must(s.T, os.MkdirAll(s.Record, 0o755))
	script := filepath.Join(s.Root, "record.sh")
	must(s.T, os.WriteFile(script, []byte(recorderScript), 0o755))
	path := s.SettingsFile()
	data, err := os.ReadFile(path)
	must(s.T, err)
	var doc map[string]any
	must(s.T, json.Unmarshal(data, &doc))
	hooks, _ := doc["hooks"].(map[string]any)
	if hooks == nil {
		s.T.Fatalf("%s: no hooks after ckpt hooks install", path)
	}
	for event, v := range hooks {
		list, _ := v.([]any)
		h := map[string]any{"type": "command", "command": "sh " + script + " " + s.Record + " " + event, "timeout": 10}
		if s.Client == Gemini {
			h["name"] = "record-" + event
			h["timeout"] = 10000
		}
		hooks[event] = append(list, map[string]any{"hooks": []any{h}})
	}
	out, err := json.MarshalIndent(doc, "", "  ")
	must(s.T, err)
	must(s.T, os.WriteFile(path, out, 0o644))
}

// TraceEvent is one line of a recorded trace, in the shared format of
// internal/claude/testdata/traces: the client, its version, the hook event,
// milliseconds since the first hook, whether it came from the real client,
// and the exact JSON the client wrote on the hook's stdin.
type TraceEvent struct {
	Client   string          `json:"client"`
	Version  string          `json:"version"`
	Event    string          `json:"event"`
	OffsetMS int64           `json:"offset_ms"`
	Real     bool            `json:"real"`
	Payload  json.RawMessage `json:"payload"`
}

// Recording returns what the recording hook saved so far, in the order the
// client started the hooks. Its payloads are the client's bytes,
// compacted; a payload that is not JSON fails the test.
func (s *Session) Recording() []TraceEvent {
	s.T.Helper()
	if s.Record == "" {
		s.T.Fatal("Recording: the session was made without Options.Record")
	}
	evs, err := ReadRecording(s.Record, s.Client)
	if err != nil {
		s.T.Fatal(err)
	}
	return evs
}

// ReadRecording reads a recording hook's directory.
func ReadRecording(dir string, c Client) ([]TraceEvent, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	type rec struct {
		ns    int64
		pid   int
		event string
		name  string
	}
	var recs []rec
	for _, e := range entries {
		parts := strings.SplitN(strings.TrimSuffix(e.Name(), ".json"), ".", 3)
		if len(parts) != 3 {
			continue
		}
		ns, err1 := strconv.ParseInt(parts[0], 10, 64)
		pid, err2 := strconv.Atoi(parts[1])
		if err1 != nil || err2 != nil {
			continue
		}
		recs = append(recs, rec{ns, pid, parts[2], e.Name()})
	}
	sort.Slice(recs, func(i, j int) bool {
		if recs[i].ns != recs[j].ns {
			return recs[i].ns < recs[j].ns
		}
		return recs[i].pid < recs[j].pid
	})
	out := make([]TraceEvent, 0, len(recs))
	for _, r := range recs {
		data, err := os.ReadFile(filepath.Join(dir, r.name))
		if err != nil {
			return nil, err
		}
		var buf bytes.Buffer
		if err := json.Compact(&buf, data); err != nil {
			return nil, fmt.Errorf("%s: the %s payload is not JSON: %v", r.name, r.event, err)
		}
		out = append(out, TraceEvent{Client: c.Name, Version: c.Version, Event: r.event,
			OffsetMS: (r.ns - recs[0].ns) / 1e6, Real: true, Payload: buf.Bytes()})
	}
	return out, nil
}

// Events is the event names of a trace, in order.
func Events(tr []TraceEvent) []string {
	out := make([]string, len(tr))
	for i, e := range tr {
		out[i] = e.Event
	}
	return out
}

// WriteTrace writes a trace as JSON lines to path.
func WriteTrace(path string, tr []TraceEvent) error {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false) // the payload's bytes as the client wrote them
	for _, e := range tr {
		if err := enc.Encode(e); err != nil {
			return err
		}
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return os.WriteFile(path, b.Bytes(), 0o644)
}
