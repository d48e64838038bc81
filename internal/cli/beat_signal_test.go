package cli

import (
	"os"
	"strconv"
	"strings"
	"testing"

	ckpt "github.com/ckpt-dev/ckpt"
)

func TestBeatState(t *testing.T) {
	h := newHarness(t)
	h.OK("start", "a", "--title", "A")
	out := h.OK("beat", "a", "--state", "Waiting", "--reason", " approve the schema ", "--pid", strconv.Itoa(os.Getpid()))
	if !strings.HasSuffix(out, "  waiting: approve the schema\n") {
		t.Errorf("output %q", out)
	}
	p := h.Get("a").Heartbeat.Presence
	if p == nil || p.State != ckpt.PresenceWaiting || p.Reason != "approve the schema" || p.Process == nil || p.Process.PID != os.Getpid() || p.Process.Start == "" {
		t.Fatalf("presence %+v", p)
	}
	// A plain beat keeps the state; --state ended replaces it.
	h.OK("beat", "a")
	if p := h.Get("a").Heartbeat.Presence; p.State != ckpt.PresenceWaiting {
		t.Fatalf("a plain beat changed the state: %+v", p)
	}
	h.OK("beat", "a", "--state", "ended")
	if p := h.Get("a").Heartbeat.Presence; p.State != ckpt.PresenceEnded || p.Reason != "" {
		t.Fatalf("after --state ended: %+v", p)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"beat", "a", "--state", "dead"}, `unknown state "dead": use working, busy, waiting or ended`},
		{[]string{"beat", "a", "--state", "stale"}, `unknown state "stale"`},
		{[]string{"beat", "a", "--reason", "x"}, "--reason goes with --state"},
		{[]string{"beat", "a", "--state", "busy", "--pid", "999999999"}, "--pid 999999999: no such process on this host"},
	} {
		if errOut := h.Fails(ExitUsage, tc.args...); !strings.Contains(errOut, tc.want) {
			t.Errorf("%v: stderr %q, want %q", tc.args, errOut, tc.want)
		}
	}
	if p := h.Get("a").Heartbeat.Presence; p.State != ckpt.PresenceEnded {
		t.Fatalf("a refused beat changed the state: %+v", p)
	}
}
