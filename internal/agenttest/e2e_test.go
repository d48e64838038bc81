package agenttest

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// These tests run the real clients (CKPT_AGENT_CLIENTS, installed by
// .ci/run) against the mock, with ckpt's hooks installed, and check what
// ckpt recorded. They skip when a client is missing, and fail with CI=true.

// hookWait bounds how long a test waits for something a hook records: hooks
// run after the client's turn and, at SessionEnd, after it exits. Generous,
// never a measure of speed.
const hookWait = 60 * time.Second

// gateCommand is a shell command that blocks until the test creates the
// file GATE in the project: a tool that runs exactly as long as the test
// needs, with no clock involved.
const gateCommand = "while [ ! -e GATE ]; do sleep 0.1; done; echo migrated"

// openGate lets gateCommand finish.
func openGate(t *testing.T, s *Session) {
	t.Helper()
	must(t, os.WriteFile(filepath.Join(s.Project, "GATE"), nil, 0o644))
}

// field is the value at a dotted path of a decoded JSON object ("" when
// it is missing or not a string).
func field(v map[string]any, path string) string {
	var cur any = v
	for _, k := range strings.Split(path, ".") {
		m, ok := cur.(map[string]any)
		if !ok {
			return ""
		}
		cur = m[k]
	}
	switch x := cur.(type) {
	case string:
		return x
	case nil:
		return ""
	default:
		b, _ := json.Marshal(x)
		return string(b)
	}
}

// waitFor polls the checkpoint until cond holds, failing after hookWait
// with the last state seen.
func waitFor(t *testing.T, s *Session, id, what string, cond func(map[string]any) bool) map[string]any {
	t.Helper()
	deadline := time.Now().Add(hookWait)
	for {
		out, err := s.RunCkpt("show", id, "--json")
		var v map[string]any
		if err == nil && json.Unmarshal([]byte(out), &v) == nil && cond(v) {
			return v
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: not %s after %s; last:\n%s%v", id, what, hookWait, out, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// waitPresence waits until the checkpoint's presence is state.
func waitPresence(t *testing.T, s *Session, id, state string) map[string]any {
	t.Helper()
	return waitFor(t, s, id, "presence "+state, func(v map[string]any) bool {
		return field(v, "presence.state") == state
	})
}

func hasFile(v map[string]any, kind, name string) bool {
	return strings.Contains(field(v, "files."+kind), `"`+name+`"`)
}

func decode(t *testing.T, raw []byte) map[string]any {
	t.Helper()
	var v map[string]any
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatalf("%v: %s", err, raw)
	}
	return v
}

// pollCheckpoint waits until the session's hooks have created exactly one
// checkpoint and returns its ID.
func pollCheckpoint(t *testing.T, s *Session) string {
	t.Helper()
	deadline := time.Now().Add(hookWait)
	for {
		out, err := s.RunCkpt("ls", "--json")
		var list []map[string]any
		if err == nil && json.Unmarshal([]byte(out), &list) == nil && len(list) > 0 {
			if len(list) > 1 {
				t.Fatalf("more than one checkpoint: %s", out)
			}
			return field(list[0], "id")
		}
		if time.Now().After(deadline) {
			t.Fatalf("no checkpoint after %s: %s %v", hookWait, out, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
