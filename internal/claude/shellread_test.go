package claude

import (
	"context"
	"path/filepath"
	"sync/atomic"
	"testing"

	"github.com/ckpt-dev/ckpt"
	"github.com/ckpt-dev/ckpt/filestore"
)

// getCounter counts whole-state reads of the store it wraps.
type getCounter struct {
	ckpt.Store
	gets atomic.Int32
}

func (s *getCounter) Get(ctx context.Context, id string, rev int64) (*ckpt.Checkpoint, error) {
	s.gets.Add(1)
	return s.Store.Get(ctx, id, rev)
}

func (s *getCounter) Unwrap() ckpt.Store { return s.Store }

// TestASucceededCommandReadsOnlyOpenErrors pins what the PostToolUse of a
// shell command reads on success, the most common hook event: the
// checkpoint's open errors (ckpt.OpenErrors: from a filestore, without
// decoding a state that has none), never the whole state; and it still
// clears the command's failure, and writes nothing when there is none.
// Failures read no more either, but to create a missing checkpoint.
func TestASucceededCommandReadsOnlyOpenErrors(t *testing.T) {
	fs, err := filestore.Init(filepath.Join(t.TempDir(), filestore.StoreDirName), filestore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	st := &getCounter{Store: fs}
	h := newHandler(t)
	h.Store = st
	hook(t, h, "UserPromptSubmit", `{"session_id":"s1","cwd":"/w/app","prompt":"go"}`)
	ok := `{"session_id":"s1","cwd":"/w/app","tool_name":"Bash","tool_use_id":"OK","tool_input":{"command":"go test ./..."},"tool_response":{"stdout":"ok","stderr":"","interrupted":false}}`
	succeed := func(what string, n int) {
		t.Helper()
		before := state(t, h, id).Rev
		st.gets.Store(0)
		if _, stderr := hook(t, h, "PostToolUse", ok); stderr != "" {
			t.Fatalf("%s: %s", what, stderr)
		}
		if n := st.gets.Load(); n != 0 {
			t.Errorf("%s: the hook read the whole state %d times", what, n)
		}
		if rev := state(t, h, id).Rev; rev != before+int64(n) {
			t.Errorf("%s: revision %d after the hook, want %d", what, rev, before+int64(n))
		}
		if p := state(t, h, id).Heartbeat.Presence; p == nil || p.State != ckpt.PresenceWorking {
			t.Errorf("%s: presence %+v, want working", what, p)
		}
	}
	succeed("no errors", 0)
	// Failures read no more than the open errors either, once the
	// checkpoint exists; the same failure again adds nothing.
	st.gets.Store(0)
	hook(t, h, "PostToolUseFailure", `{"session_id":"s1","cwd":"/w/app","tool_name":"Bash","tool_use_id":"F","tool_input":{"command":"go test ./..."},"error":"Exit code 1\nFAIL"}`)
	hook(t, h, "PostToolUse", `{"session_id":"s1","cwd":"/w/app","tool_name":"Bash","tool_use_id":"G","tool_input":{"command":"make lint"},"tool_response":"Exit code: 2\nunused"}`)
	hook(t, h, "PostToolUse", `{"session_id":"s1","cwd":"/w/app","tool_name":"Bash","tool_use_id":"H","tool_input":{"command":"make lint"},"tool_response":"Exit code: 2\nunused"}`)
	if n := st.gets.Load(); n != 0 {
		t.Errorf("recording failures read the whole state %d times", n)
	}
	if errs := state(t, h, id).ActiveErrors(); len(errs) != 2 {
		t.Fatalf("errors after two failures: %+v", errs)
	}
	succeed("the command's failure open", 1)
	if errs := state(t, h, id).ActiveErrors(); len(errs) != 1 || errs[0].Type != "command: make lint" {
		t.Errorf("after the success: %+v, want only make lint's", errs)
	}
	succeed("its failure cleared, another open", 0)
	// A failure in a session without a checkpoint creates it.
	hook(t, h, "PostToolUseFailure", `{"session_id":"s2","cwd":"/w/app","tool_name":"Bash","tool_use_id":"N","tool_input":{"command":"go vet ./..."},"error":"Exit code 1\nvet"}`)
	if errs := state(t, h, "app/session-s2").ActiveErrors(); len(errs) != 1 || errs[0].Type != "command: go vet ./..." {
		t.Errorf("a new session's failure: %+v", errs)
	}
}
