package servercli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	ckpt "github.com/ckpt-dev/ckpt"
	"github.com/ckpt-dev/ckpt/internal/mirror"
	"github.com/ckpt-dev/ckpt/protocols/agentcheckpoints"
)

// TestMonitorPicksUpAMirrorAddedWhileItRuns: ckpt monitor reads the mirror
// list at every look, so an agent-checkpoints mirror added while it runs
// gets seed 002's escalations at the next look.
func TestMonitorPicksUpAMirrorAddedWhileItRuns(t *testing.T) {
	h := newHarness(t)
	st := h.Store
	h.OK("start", "kai-7/secondary_a", "--agent", "Secondary-A")
	dir := t.TempDir()
	list := mirror.ForFile(filepath.Join(dir, mirror.ProjectFile))
	m := startMonitor(t, st, func(o *MonitorOptions) {
		o.Mirrors = func(s ckpt.Store) (ckpt.Store, mirror.List) { return s, list }
	})
	inbox := mirror.InboxPath(dir, "secondary_a.json")
	m.look(t0.Add(31 * time.Minute))
	m.waitIdle()
	if _, err := os.Stat(inbox); err == nil {
		t.Fatal("an escalation was written with no mirror configured")
	}
	if _, err := list.Edit(func(cfg *mirror.Config) error {
		cfg.Mirrors = append(cfg.Mirrors, mirror.Entry{Format: agentcheckpoints.Name, Root: ".", Prefix: "kai-7/"})
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	m.look(t0.Add(32 * time.Minute))
	m.waitIdle()
	data, err := os.ReadFile(inbox)
	if err != nil || !strings.Contains(string(data), "CHECKPOINT WARNING - No Update in 30 Minutes") {
		t.Errorf("the mirror added while the monitor ran got no warning: %v\n%s", err, data)
	}
	if err := m.stop(); err != nil {
		t.Fatal(err)
	}
}
