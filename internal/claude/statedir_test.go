package claude

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/ckpt-dev/ckpt"
)

func TestStateDir(t *testing.T) {
	for _, tc := range []struct {
		env  map[string]string
		home string
		want string
	}{
		{map[string]string{EnvStateDir: "/tmp/s/"}, "/home/u", "/tmp/s"},
		{map[string]string{"XDG_STATE_HOME": "/x/state"}, "/home/u", "/x/state/ckpt"},
		{map[string]string{"XDG_STATE_HOME": "relative"}, "/home/u", "/home/u/.local/state/ckpt"},
		{nil, "/home/u", "/home/u/.local/state/ckpt"},
		{nil, "", ""},
	} {
		if got := StateDir(envOf(tc.env), tc.home); got != tc.want {
			t.Errorf("StateDir(%v, %q) = %q; want %q", tc.env, tc.home, got, tc.want)
		}
	}
}

// TestPromptSnapshotsRotate: every 5th prompt a snapshot in the state
// directory, whatever the store (here a memstore); one per revision, the
// newest ten kept, each the state as ckpt show --json prints it.
func TestPromptSnapshotsRotate(t *testing.T) {
	h := newHandler(t)
	ctx := context.Background()
	dir := filepath.Join(h.StateDir, "hooks", "backups")
	prompt := `{"session_id":"s1","cwd":"/w/app","hook_event_name":"UserPromptSubmit","prompt":"p"}`
	for i := 0; i < 5; i++ {
		if _, errs := hook(t, h, "UserPromptSubmit", prompt); errs != "" {
			t.Fatal(errs)
		}
	}
	if names, _ := filepath.Glob(filepath.Join(dir, "app~session-s1", "*")); len(names) != 1 {
		t.Fatalf("after 5 prompts: snapshots %v, want one", names)
	}
	for i := 0; i < 12; i++ {
		if err := h.snapshot(ctx, dir, id); err != nil {
			t.Fatal(err)
		}
		if err := h.snapshot(ctx, dir, id); err != nil { // same revision: kept as is
			t.Fatal(err)
		}
		e, _ := ckpt.NewEvent(ckpt.EventNote, t0, ckpt.Actor{}, ckpt.Note{Text: "n"})
		if _, err := h.Store.Append(ctx, id, e, ckpt.AppendOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	names, _ := filepath.Glob(filepath.Join(dir, "app~session-s1", "*"))
	if len(names) != DefaultBackupKeep {
		t.Fatalf("%d snapshots, want %d: %v", len(names), DefaultBackupKeep, names)
	}
	last := state(t, h, id).Rev - 1
	var c ckpt.Checkpoint
	data, _ := os.ReadFile(names[len(names)-1])
	if err := json.Unmarshal(data, &c); err != nil || c.ID != id || c.Rev != last {
		t.Fatalf("newest snapshot: %v rev %d, want rev %d", err, c.Rev, last)
	}
	if err := h.snapshot(ctx, dir, "ghost"); !errors.Is(err, ckpt.ErrNotFound) {
		t.Fatalf("snapshot of a missing checkpoint: %v", err)
	}
}
