package ccc

import (
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/ckpt-dev/ckpt/internal/jsondoc"
	"github.com/ckpt-dev/ckpt/protocols/internal/adaptertest"
	"github.com/google/go-cmp/cmp"
)

func keysOf(t *testing.T, data []byte) []string {
	t.Helper()
	o, err := jsondoc.ParseObject(data)
	if err != nil {
		t.Fatal(err)
	}
	return o.Keys()
}

func TestStateWritesBackWhatItRead(t *testing.T) {
	in := adaptertest.ReadFile(t, "testdata/seed/hook.ccc-state.json")
	s, err := ReadState("testdata/seed/hook.ccc-state.json")
	if err != nil {
		t.Fatal(err)
	}
	if s.CheckpointCommentID != "0f6c1b9e-6a44-4c43-9d1e-3c8f1f0a2b77" || !slices.Equal(s.ActiveTaskFiles, []string{"worker/sync.go", "worker/budget.go"}) ||
		s.TaskIndex != 2 || s.MaxGlobalIterations != 50 || s.Gate() != "" || s.LinearIssue != "CIA-142" {
		t.Errorf("read %+v", s)
	}
	path := filepath.Join(t.TempDir(), StateFile)
	if err := WriteState(path, s); err != nil {
		t.Fatal(err)
	}
	out := adaptertest.ReadFile(t, path)
	if diff := cmp.Diff(adaptertest.Decoded(t, in), adaptertest.Decoded(t, out)); diff != "" {
		t.Errorf("written back differently (-read +written):\n%s", diff)
	}
	if !slices.Equal(keysOf(t, in), keysOf(t, out)) {
		t.Errorf("key order changed: %v", keysOf(t, out))
	}
}

func TestStateChangesKeepEveryOtherField(t *testing.T) {
	in := []byte(`{"phase":"execution","taskIndex":"2","awaitingGate":null,"custom":{"kept":[1,2]},"activeTaskFiles":"worker/sync.go","zero":0}`)
	s, notes, err := ParseState(in)
	if err != nil {
		t.Fatal(err)
	}
	if s.TaskIndex != 2 || !slices.Equal(s.ActiveTaskFiles, []string{"worker/sync.go"}) || len(notes) != 2 {
		t.Errorf("lenient read: %+v, notes %q", s, notes)
	}
	unchanged, _ := json.Marshal(s)
	if diff := cmp.Diff(adaptertest.Decoded(t, in), adaptertest.Decoded(t, unchanged)); diff != "" {
		t.Errorf("an unchanged state must keep the file's spellings (-in +out):\n%s", diff)
	}
	s.CheckpointCommentID = "comment-1"
	s.ActiveTaskFiles = append(s.ActiveTaskFiles, "worker/budget.go")
	s.TaskIndex = 3
	s.Extra["added"] = json.RawMessage(`true`)
	delete(s.Extra, "zero")
	path := filepath.Join(t.TempDir(), StateFile)
	if err := WriteState(path, s); err != nil {
		t.Fatal(err)
	}
	out := adaptertest.ReadFile(t, path)
	want := `{"phase":"execution","taskIndex":3,"awaitingGate":null,"custom":{"kept":[1,2]},"activeTaskFiles":["worker/sync.go","worker/budget.go"],"checkpointCommentId":"comment-1","added":true}`
	if diff := cmp.Diff(adaptertest.Decoded(t, []byte(want)), adaptertest.Decoded(t, out)); diff != "" {
		t.Errorf("changes (-want +got):\n%s", diff)
	}
	if got := keysOf(t, out); !slices.Equal(got, keysOf(t, []byte(want))) {
		t.Errorf("key order %v", got)
	}
	again, err := ReadState(path)
	if err != nil || again.CheckpointCommentID != "comment-1" || again.TaskIndex != 3 {
		t.Errorf("re-read %+v %v", again, err)
	}
}

func TestStateZeroValues(t *testing.T) {
	var s State
	if b, _ := json.Marshal(s); string(b) != "{}" {
		t.Errorf("zero state: %s", b)
	}
	s, _, _ = ParseState([]byte(`{"taskIndex":0,"awaitingGate":2}`))
	if b, _ := json.Marshal(s); string(b) != `{"taskIndex":0,"awaitingGate":2}` || s.Gate() != "2" {
		t.Errorf("explicit zero and gate: %s %q", b, s.Gate())
	}
	s.AwaitingGate = nil
	if b, _ := json.Marshal(s); string(b) != `{"taskIndex":0,"awaitingGate":null}` {
		t.Errorf("gate cleared: %s", b)
	}
	var u State
	if err := json.Unmarshal([]byte(`{"awaitingGate":"spec","linearIssue":"CIA-1"}`), &u); err != nil || u.Gate() != "spec" || u.LinearIssue != "CIA-1" {
		t.Errorf("Unmarshal: %+v %v", u, err)
	}
}

func TestReadStateErrors(t *testing.T) {
	dir := t.TempDir()
	if _, err := ReadState(filepath.Join(dir, StateFile)); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing file: %v", err)
	}
	bad := filepath.Join(dir, "bad.json")
	os.WriteFile(bad, []byte(`{"phase": "exec`), 0o644)
	if _, err := ReadState(bad); err == nil || !strings.Contains(err.Error(), bad) {
		t.Errorf("broken file: %v", err)
	}
}

func FuzzParseState(f *testing.F) {
	f.Add(adaptertest.ReadFile(f, "testdata/seed/hook.ccc-state.json"))
	f.Add([]byte(`{"taskIndex":"2","activeTaskFiles":"a","awaitingGate":{"x":1},"e":[1]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		s, _, err := ParseState(data)
		if err != nil {
			return
		}
		out, err := json.Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		var in, written any
		if json.Unmarshal(data, &in) == nil {
			if err := json.Unmarshal(out, &written); err != nil || !reflect.DeepEqual(in, written) {
				t.Fatalf("an unchanged state writes back differently (-in +out):\n%s", cmp.Diff(in, written))
			}
		}
		s2, _, err := ParseState(out)
		if err != nil {
			t.Fatalf("re-read: %v", err)
		}
		out2, _ := json.Marshal(s2)
		if string(out) != string(out2) {
			t.Fatalf("not stable:\n%s\n%s", out, out2)
		}
	})
}

func FuzzContinuationPrompt(f *testing.F) {
	adaptertest.AddInputs(f, ".md")
	f.Fuzz(func(t *testing.T, md []byte) {
		p, err := ContinuationPrompt(md)
		if err != nil {
			return
		}
		if p == "" || p != strings.TrimSpace(p) {
			t.Fatalf("prompt %q", p)
		}
	})
}
