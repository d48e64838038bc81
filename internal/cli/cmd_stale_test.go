package cli

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	ckpt "github.com/ckpt-dev/ckpt"
	"github.com/ckpt-dev/ckpt/internal/clitest"
)

// threeAgents starts a (interval 5m), b (interval 15m, the default) and a
// done checkpoint c at t0.
func threeAgents(h *clitest.Harness) {
	h.T.Helper()
	h.OK("start", "a", "--agent", "alice", "--interval", "5m")
	h.OK("start", "b", "--agent", "bob")
	h.OK("start", "c", "--agent", "carol", "--interval", "5m")
	h.OK("done", "c")
}

func TestStaleExitCodesFollowTheThresholds(t *testing.T) {
	h := newHarness(t)
	threeAgents(h)

	h.Now = t0.Add(10 * time.Minute) // a at exactly 2x: not yet warn
	out := h.OK("stale")
	if want := "no agent is quiet: all 2 live checkpoints showed a sign of life within their warn threshold\n"; out != want {
		t.Errorf("nothing stale: %q, want %q", out, want)
	}

	h.Now = t0.Add(11 * time.Minute)
	code, out, errOut := h.Run("stale")
	if code != ExitStaleWarn {
		t.Fatalf("a warn: exit %d, want %d", code, ExitStaleWarn)
	}
	if !strings.Contains(out, "a   alice  in_progress  warn      11m     11 min ago  10m/20m") || strings.Contains(out, "\nb ") || strings.Contains(out, "\nc ") {
		t.Errorf("warn table:\n%s", out)
	}
	if want := "ckpt: 1 checkpoint is past the warn threshold (of 2 live checkpoints): take over a dead agent's work with ckpt takeover ID --agent NEW, or ask the agent to run ckpt beat ID\n"; errOut != want {
		t.Errorf("stderr %q, want %q", errOut, want)
	}

	h.Now = t0.Add(31 * time.Minute) // a stale (>20m), b warn (>30m)
	code, out, errOut = h.Run("stale", "--json")
	if code != ExitStale {
		t.Fatalf("a stale: exit %d, want %d", code, ExitStale)
	}
	var got []ckpt.StaleEntry
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].ID != "a" || got[0].Liveness != "stale" || got[0].SilentSeconds != 31*60 || got[0].Agent != "alice" ||
		got[0].WarnAfter.D() != 10*time.Minute || got[0].StaleAfter.D() != 20*time.Minute || !got[0].LastSeen.Equal(t0) ||
		got[1].ID != "b" || got[1].Liveness != "warn" || got[1].Interval.D() != 15*time.Minute {
		t.Errorf("stale --json: %+v", got)
	}
	if !strings.HasPrefix(errOut, "ckpt: 1 checkpoint is stale and 1 is past the warn threshold (of 2 live checkpoints)") {
		t.Errorf("stderr %q", errOut)
	}

	// A heartbeat is a sign of life.
	h.OK("beat", "a")
	h.OK("beat", "b")
	if out := h.OK("stale", "--json"); strings.TrimSpace(out) != "[]" {
		t.Errorf("after beats: %s", out)
	}
}

func TestStaleThresholdFlagsAndFilters(t *testing.T) {
	h := newHarness(t)
	threeAgents(h)
	h.OK("start", "kai-7/x", "--parent", "kai-7")
	h.Now = t0.Add(3 * time.Minute)
	if code, _, _ := h.Run("stale", "--warn", "2m"); code != ExitStaleWarn {
		t.Errorf("--warn 2m at 3m: exit %d", code)
	}
	if code, _, _ := h.Run("stale", "--warn", "1m", "--stale", "150s"); code != ExitStale {
		t.Errorf("--stale 150s at 3m: exit %d", code)
	}
	code, out, _ := h.Run("stale", "--stale", "2m", "--json", "--prefix", "kai-7/")
	var got []ckpt.StaleEntry
	if err := json.Unmarshal([]byte(out), &got); err != nil || code != ExitStale || len(got) != 1 || got[0].ID != "kai-7/x" {
		t.Errorf("--prefix: exit %d, %s", code, out)
	}
	if code, _, _ := h.Run("stale", "--stale", "2m", "--parent", "nothing"); code != 0 {
		t.Errorf("--parent with no match: exit %d", code)
	}
	// The done checkpoint c never goes stale, nor an archived one.
	h.Now = t0.Add(48 * time.Hour)
	h.OK("archive", "c")
	_, out, _ = h.Run("stale", "--json")
	if strings.Contains(out, `"c"`) {
		t.Errorf("a done checkpoint is listed: %s", out)
	}

	for _, args := range [][]string{
		{"stale", "--warn", "1h", "--stale", "30m"},
		{"stale", "--warn", "soon"},
		{"stale", "--stale", "0s"},
		{"stale", "extra"},
	} {
		h.Fails(ExitUsage, args...)
	}
}
