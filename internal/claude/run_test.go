package claude

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gofrs/flock"

	"github.com/ckpt-dev/ckpt"
	"github.com/ckpt-dev/ckpt/filestore"
	"github.com/ckpt-dev/ckpt/internal/testsupport"
	"github.com/ckpt-dev/ckpt/memstore"
)

var runT0 = time.Date(2026, 1, 15, 14, 0, 0, 0, time.UTC)

func createCheckpoint(t testing.TB, st ckpt.Store, id string) {
	t.Helper()
	title := "t"
	e := ckpt.MustEvent(ckpt.EventCreated, runT0, ckpt.Actor{Agent: "t"}, ckpt.Created{Patch: ckpt.Patch{Title: &title}})
	if _, err := st.Append(context.Background(), id, e, ckpt.AppendOptions{}); err != nil {
		t.Fatal(err)
	}
}

// TestBoundedStoreLocked: while another open file description holds the
// checkpoint's flock, Append gives up at the deadline, writing nothing;
// after the release it writes.
func TestBoundedStoreLocked(t *testing.T) {
	st, err := filestore.Init(filepath.Join(t.TempDir(), ".ckpt"), filestore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	createCheckpoint(t, st, "kai-7/a")
	lock := flock.New(filepath.Join(st.Dir(), "checkpoints", "kai-7+a", "lock"))
	if err := lock.Lock(); err != nil {
		t.Fatal(err)
	}
	bs := &BoundedStore{Store: st}
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	e := ckpt.MustEvent(ckpt.EventNote, runT0, ckpt.Actor{}, ckpt.Note{Text: "x"})
	_, err = bs.Append(ctx, "kai-7/a", e, ckpt.AppendOptions{})
	if err == nil || !strings.Contains(err.Error(), "locked by another process") {
		t.Fatalf("Append under a held lock: %v", err)
	}
	if c, _ := st.Get(context.Background(), "kai-7/a", 0); c.Rev != 1 {
		t.Fatalf("rev %d after a refused append", c.Rev)
	}
	lock.Unlock()
	res, err := bs.Append(context.Background(), "kai-7/a", e, ckpt.AppendOptions{})
	if err != nil || res.State.Rev != 2 {
		t.Fatalf("Append after the release: %v %+v", err, res)
	}
	// A new checkpoint has no lock file yet: nothing to wait for.
	createCheckpoint(t, bs, "fresh")
}

func TestBounded(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	block := make(chan struct{})
	defer close(block)
	if err := Bounded(ctx, func() error { <-block; return nil }); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("a blocked function: %v", err)
	}
	if err := Bounded(context.Background(), func() error { panic("boom") }); err == nil || !strings.Contains(err.Error(), "boom") {
		t.Fatalf("a panicking function: %v", err)
	}
	want := errors.New("mine")
	if err := Bounded(context.Background(), func() error { return want }); err != want {
		t.Fatalf("the function's error: %v", err)
	}
}

func TestIsTruthy(t *testing.T) {
	for _, v := range []string{"1", "true", "TRUE", " yes ", "on", "t"} {
		if !IsTruthy(v) {
			t.Errorf("IsTruthy(%q) = false", v)
		}
	}
	for _, v := range []string{"", "0", "false", "off", "no", "2", "loop"} {
		if IsTruthy(v) {
			t.Errorf("IsTruthy(%q) = true", v)
		}
	}
}

// FuzzRun feeds arbitrary bytes to every event as its payload (as
// `ckpt hook EVENT` runs it): it prints nothing
// or one JSON object of the fields the event may print (additionalContext
// for SessionStart and for the prompt that creates the checkpoint, a
// decision for Stop), under the limit, and at most one warning line.
func FuzzRun(f *testing.F) {
	for _, seed := range []string{
		`{"session_id":"s1","source":"startup"}`,
		`{"session_id":"s1","tool_name":"Write","tool_input":{"file_path":"/a/b.go"},"tool_response":{"type":"create"},"tool_use_id":"t"}`,
		`{"session_id":"s1","tool_name":"apply_patch","tool_input":{"command":"*** Add File: x\n*** Update File: ../../etc/passwd"}}`,
		`{"session_id":"s1","agent_id":"a/../b","agent_type":"Explore","last_assistant_message":"done\nmore"}`,
		`{"session_id":"s1","stop_hook_active":"yes","last_assistant_message":"TASK_COMPLETE"}`,
		`{"sessionId":12,"trigger":"manual","custom_instructions":"` + strings.Repeat("x", 400) + `"}`,
		`{"session_id":"..","cwd":"/"}`, `null`, `[]`, ``, `{"session_id":"\u0000"}`,
	} {
		f.Add(seed)
	}
	events := []string{"SessionStart", "UserPromptSubmit", "PreToolUse", "Notification", "PostToolUse", "SubagentStop", "Stop", "PreCompact", "SessionEnd"}
	allowed := map[string]bool{"hookSpecificOutput": true, "decision": true, "reason": true}
	f.Fuzz(func(t *testing.T, payload string) {
		store := memstore.New()
		for _, ev := range events {
			var out, errOut bytes.Buffer
			Run(context.Background(), Call{
				In:        strings.NewReader(payload),
				Out:       &out,
				ErrOut:    &errOut,
				Event:     ev,
				Now:       func() time.Time { return runT0 },
				Getenv:    func(string) string { return "" },
				WorkDir:   "/nonexistent-ckpt-fuzz",
				OpenStore: func(string, io.Writer) (ckpt.Store, error) { return store, nil },
				Loop:      TaskLoop{Enabled: true},
			})
			testsupport.FailForward(t, out.String(), errOut.String())
			if out.Len() == 0 {
				continue
			}
			var v map[string]json.RawMessage
			json.Unmarshal(out.Bytes(), &v)
			for k := range v {
				if !allowed[k] {
					t.Fatalf("%s printed field %q: %s", ev, k, out.String())
				}
			}
			if _, ok := v["decision"]; ok && ev != "Stop" {
				t.Fatalf("%s printed a decision: %s", ev, out.String())
			}
			if raw, ok := v["hookSpecificOutput"]; ok {
				var specific struct {
					HookEventName string `json:"hookEventName"`
				}
				json.Unmarshal(raw, &specific)
				if ev != "SessionStart" && ev != "UserPromptSubmit" || specific.HookEventName != ev {
					t.Fatalf("%s printed hookSpecificOutput for %q: %s", ev, specific.HookEventName, out.String())
				}
			}
		}
	})
}

// waitingStore is a store whose beats wait for ctx, as a server store
// does when the server does not answer.
type waitingStore struct{ ckpt.Store }

func (s waitingStore) Beat(ctx context.Context, id string, sig ckpt.Signal) error {
	<-ctx.Done()
	return ctx.Err()
}

// TestPresenceEventsKeepTheTimeLimit: a presence-only event (one beat,
// run without a goroutine or timer of its own) records the client's
// process, and gives up at the hook's time limit on a store that does not
// answer: exit as usual, one warning.
func TestPresenceEventsKeepTheTimeLimit(t *testing.T) {
	store := memstore.New()
	createCheckpoint(t, store, "kai-7/a")
	proc := &ckpt.Process{Host: "h1", PID: 4242, Start: "99"}
	call := func(st ckpt.Store, limit time.Duration) (string, string) {
		var out, errOut bytes.Buffer
		Run(context.Background(), Call{
			Event:     "PreToolUse",
			In:        strings.NewReader(`{"session_id":"s1","hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"make"}}`),
			Out:       &out,
			ErrOut:    &errOut,
			Now:       func() time.Time { return runT0 },
			Getenv:    func(k string) string { return map[string]string{EnvID: "kai-7/a"}[k] },
			WorkDir:   t.TempDir(),
			OpenStore: func(string, io.Writer) (ckpt.Store, error) { return st, nil },
			Process:   func() *ckpt.Process { return proc },
			Timeout:   limit,
		})
		testsupport.FailForward(t, out.String(), errOut.String())
		return out.String(), errOut.String()
	}
	if out, errs := call(store, 0); out != "" || errs != "" {
		t.Fatalf("PreToolUse: out %q, err %q", out, errs)
	}
	c, err := store.Get(context.Background(), "kai-7/a", 0)
	if err != nil {
		t.Fatal(err)
	}
	if p := c.Heartbeat.Presence; p == nil || p.State != ckpt.PresenceBusy || p.Reason != "Bash: make" || p.Process == nil || *p.Process != *proc {
		t.Fatalf("presence %+v; want busy, Bash: make, %+v", p, proc)
	}
	start := time.Now()
	_, errs := call(waitingStore{store}, 50*time.Millisecond)
	if took := time.Since(start); took >= DefaultTimeout {
		t.Fatalf("a store that does not answer held PreToolUse for %v, past its 50ms limit", took)
	}
	if !strings.HasPrefix(errs, "ckpt hook PreToolUse: warning: kai-7/a: heartbeat:") || !strings.Contains(errs, "deadline exceeded") {
		t.Fatalf("stderr %q; want one heartbeat warning naming the deadline", errs)
	}
}
