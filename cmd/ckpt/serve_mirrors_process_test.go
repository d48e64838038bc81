package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestServeWritesTheMirrors: a real `ckpt serve` over a store with mirrors
// configured writes the seed files of the changes made through it (the
// clients have no mirror list of their own), picks up a mirror added while
// it runs, and writes the seeds' escalations itself: seed 002's CHECKPOINT
// WARNING and STALE line, seed 003's stalled STATUS.md row.
func TestServeWritesTheMirrors(t *testing.T) {
	bin := ckptBinary(t)
	store := newProcessStore(t, bin)
	project := filepath.Dir(store)
	if out, err := ckptRun(t, bin, "--store", store, "mirror", "add", "sitebuilder", "--root", project, "--prefix", "migration-"); err != nil {
		t.Fatal(err, out)
	}
	// The server's clock is 15:31; the clients write as of 14:30.
	srv := startServeEnv(t, bin, store, "127.0.0.1:0", []string{"CKPT_NOW=2026-01-15T15:31:00Z"})
	client := func(now string, args ...string) {
		t.Helper()
		env := []string{"CKPT_STORE=" + srv.url, "CKPT_TOKEN=" + srv.admin, "CKPT_NOW=" + now}
		if out, code := remoteRunIn(t, bin, t.TempDir(), env, args...); code != 0 {
			t.Fatalf("ckpt %s through the server: exit %d: %s", strings.Join(args, " "), code, out)
		}
	}

	// A mirror configured before the server started: the server writes
	// the files of a write made through it.
	client("2026-01-15T14:30:00Z", "start", "migration-T060", "--title", "Nature Trail PDFs", "--task", "T060", "--agent", "migration", "--step", "a", "--step", "b")
	client("2026-01-15T14:30:00Z", "step", "migration-T060", "a", "--done")
	waitForFile(t, filepath.Join(project, "progress", "checkpoints", "migration-T060.json"), `"progress_percent": 50`)
	waitForFile(t, filepath.Join(project, "messages", "outbox-migration.md"), "@orchestrator: Task T060 progress: 50%")
	// Seed 003's supervisor: silent 61 minutes by the server's clock.
	waitForFile(t, filepath.Join(project, "progress", "STATUS.md"), "| migration | T060 | 50% | 1 h ago | in_progress (stalled) |")

	// A mirror added while the server runs is picked up: the next write
	// through the server is mirrored, and the escalations are written.
	client("2026-01-15T14:30:00Z", "start", "kai-7/secondary_a", "--title", "Feature 02", "--agent", "Secondary-A", "--stage", "S2.P2")
	if out, err := ckptRun(t, bin, "--store", store, "mirror", "add", "agent-checkpoints", "--root", project, "--prefix", "kai-7/"); err != nil {
		t.Fatal(err, out)
	}
	inbox := filepath.Join(project, "agent_comms", "primary_to_secondary_a.md")
	waitForFile(t, inbox, "**Subject:** CHECKPOINT WARNING - No Update in 30 Minutes")
	waitForFile(t, inbox, "**Details:** Your last checkpoint was at 14:30 (61 minutes ago)")
	waitForFile(t, filepath.Join(project, "EPIC_README.md"), "Secondary-A: STALE (likely crashed)")
	client("2026-01-15T14:31:00Z", "update", "kai-7/secondary_a", "--current-step", "Writing spec.md Requirements Section 5")
	agentFile := filepath.Join(project, "agent_checkpoints", "secondary_a.json")
	waitForFile(t, agentFile, `"current_step": "Writing spec.md Requirements Section 5"`)
	waitForFile(t, agentFile, `"last_checkpoint": "2026-01-15T14:31:00Z"`)
	waitForFile(t, agentFile, `"last_epic_readme_update": "2026-01-15T15:31:00Z"`)
	client("2026-01-15T14:32:00Z", "restart", "kai-7/secondary_a")
	waitForFile(t, agentFile, `"stage": "S2.P1"`)
	waitForFile(t, filepath.Join(project, "agent_checkpoints", "secondary_a_aborted_1768487520.json"), `"stage": "S2.P2"`)
}

// waitForFile waits until the file at path holds want; the server writes
// it in the background. The bound is generous: it only ends a test whose
// server never writes.
func waitForFile(t *testing.T, path, want string) {
	t.Helper()
	var data []byte
	for deadline := time.Now().Add(90 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		data, _ = os.ReadFile(path)
		if strings.Contains(string(data), want) {
			return
		}
	}
	t.Fatalf("%s never held %q; it holds:\n%s", path, want, data)
}
