package main

import (
	"context"
	"encoding/json"
	"os/exec"
	"path/filepath"
	"regexp"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/ckpt-dev/ckpt/internal/keeper"
)

// `ckpt mcp` over a PostgreSQL or server store goes through this user's
// keeper of the store, as the record commands do (keeper.Session): the
// built binary, driven over stdio by the MCP SDK's client, against the
// rigs of keeper_process_test.go.

// mcpSession starts `ckpt mcp` in k's environment and connects a client to
// it; the session ends with the test.
func (k *keeperRig) mcpSession(t *testing.T) *sdk.ClientSession {
	t.Helper()
	cmd := exec.Command(k.bin, "mcp", "--agent", "worker-1")
	cmd.Dir = k.runtime
	cmd.Env = append(k.env(), "XDG_STATE_HOME="+filepath.Join(k.runtime, "state"))
	cs, stderr := connectMCP(t, cmd)
	t.Cleanup(func() {
		cs.Close()
		if stderr.Len() != 0 {
			t.Errorf("ckpt mcp logged on stderr: %s", stderr.String())
		}
	})
	return cs
}

// waitClients waits until the keeper counts n clients connected (a
// command's connection is counted until the keeper has read its end,
// which may come after the command exited) and returns its status; ok is
// false when it never does within a minute, with the last status.
func (k *keeperRig) waitClients(n int) (keeper.Status, bool) {
	var s keeper.Status
	for end := time.Now().Add(time.Minute); time.Now().Before(end); time.Sleep(20 * time.Millisecond) {
		var ok bool
		if s, ok = k.status(); ok && s.Connections == n {
			return s, true
		}
	}
	return s, false
}

// mcpStamp masks the times, durations and session IDs (16 hex digits) in a tool's
// result, which differ between runs.
var mcpStamp = regexp.MustCompile(`\d{4}-\d\d-\d\dT[0-9:.]+(Z|[+-]\d\d:\d\d)|silent_seconds\\?":[0-9.e+-]+|\b\d+(ms|s|m)\b|\b[0-9a-f]{16}\b`)

// mcpResult calls a tool and returns its result as JSON with the times
// masked: what the agent reads, error or not.
func mcpResult(t *testing.T, cs *sdk.ClientSession, name string, args map[string]any) string {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s: protocol error %v", name, err)
	}
	b, err := json.Marshal(struct {
		IsError bool
		Text    string
		Result  any
	}{res.IsError, contentText(res.Content), res.StructuredContent})
	if err != nil {
		t.Fatal(err)
	}
	return mcpStamp.ReplaceAllString(string(b), "T")
}

// mcpKeeperParity runs the same tool calls on `ckpt mcp` writing directly
// (direct) and through k's keeper, over two stores alike, and requires the
// same results and stored checkpoints, and the keeper to have served them.
func mcpKeeperParity(t *testing.T, direct, k *keeperRig) {
	for _, r := range []*keeperRig{direct, k} {
		r.must("start", "kai-7/seed") // the record command starts k's keeper
	}
	s0 := k.waitKeeper()
	dcs, kcs := direct.mcpSession(t), k.mcpSession(t)
	id := "kai-7/mcp"
	calls := []struct {
		name string
		args map[string]any
	}{
		{"ckpt_start", map[string]any{"id": id, "title": "Spec", "steps": []map[string]string{{"id": "research"}, {"id": "spec"}}}},
		{"ckpt_step", map[string]any{"id": id, "step": "research", "status": "done"}},
		{"ckpt_decision", map[string]any{"id": id, "text": "Use the v2 API", "reason": "v1 is rate limited"}},
		{"ckpt_update", map[string]any{"id": id, "next_steps": []string{"Write section 5"}, "key": "upd-1"}},
		{"ckpt_update", map[string]any{"id": id, "next_steps": []string{"Write section 5"}, "key": "upd-1"}}, // replayed
		{"ckpt_update", map[string]any{"id": id, "title": "x", "if_rev": 1}},                                 // conflict
		{"ckpt_decision", map[string]any{"id": "kai-7/nosuch", "text": "x"}},                                 // not found
		{"ckpt_start", map[string]any{"id": id}},                                                             // exists
		{"ckpt_heartbeat", map[string]any{"id": id}},
		{"ckpt_show", map[string]any{"id": id}},
		{"ckpt_list", map[string]any{}},
		{"ckpt_resume", map[string]any{"id": id}},
	}
	for _, c := range calls {
		if d, kept := mcpResult(t, dcs, c.name, c.args), mcpResult(t, kcs, c.name, c.args); d != kept {
			t.Errorf("%s(%v):\ndirectly:           %s\nthrough the keeper: %s", c.name, c.args, d, kept)
		}
	}
	s1, ok := k.waitClients(1)
	if !ok || s1.PID != s0.PID || s1.Requests-s0.Requests < int64(len(calls)) {
		t.Fatalf("the keeper (pid %d, then %d, %v) served %d requests for %d tool calls, with %d clients connected: want the MCP server's",
			s0.PID, s1.PID, ok, s1.Requests-s0.Requests, len(calls), s1.Connections)
	}
	show := func(r *keeperRig) string { return mcpStamp.ReplaceAllString(r.must("show", id, "--json"), "T") }
	if a, b := show(direct), show(k); a != b {
		t.Errorf("%s differs:\ndirectly: %s\nthrough the keeper: %s", id, a, b)
	}
	if _, ok := direct.status(); ok {
		t.Error("CKPT_KEEPER=off started a keeper")
	}
}

// testMCPKeeper: `ckpt mcp` over PostgreSQL answers through the keeper as
// it does directly.
func testMCPKeeper(t *testing.T) {
	mcpKeeperParity(t, newKeeperRig(t, "CKPT_KEEPER=off"), newKeeperRig(t))
}

// testMCPServersShareAKeeper: two `ckpt mcp` servers of one store and user
// are two connections to one keeper, which serves both.
func testMCPServersShareAKeeper(t *testing.T) {
	k := newKeeperRig(t)
	k.must("start", "kai-7/seed")
	s0 := k.waitKeeper()
	a, b := k.mcpSession(t), k.mcpSession(t)
	mcpCall(t, a, "ckpt_start", map[string]any{"id": "kai-7/a"}, nil)
	mcpCall(t, b, "ckpt_start", map[string]any{"id": "kai-7/b"}, nil)
	mcpCall(t, a, "ckpt_decision", map[string]any{"id": "kai-7/b", "text": "seen from a"}, nil)
	s1, ok := k.waitClients(2)
	if !ok || s1.PID != s0.PID || s1.Requests-s0.Requests < 3 {
		t.Fatalf("the keeper (pid %d, then %d, %v): %d clients connected, %d requests: want both servers' connections and calls",
			s0.PID, s1.PID, ok, s1.Connections, s1.Requests-s0.Requests)
	}
}

// testMCPKeeperKilled: a keeper killed (SIGKILL) between two tool calls
// costs the session nothing: the next call is made directly, a keyed write
// is applied once, a new keeper is started and later calls go to it.
func testMCPKeeperKilled(t *testing.T) {
	k := newKeeperRig(t)
	id := "kai-7/killed"
	k.must("start", id)
	old := k.waitKeeper()
	cs := k.mcpSession(t)
	mcpCall(t, cs, "ckpt_decision", map[string]any{"id": id, "text": "before the kill"}, nil)
	k.killKeeper()
	update := map[string]any{"id": id, "next_steps": []string{"after the kill"}, "key": "upd-after-kill"}
	var first, again struct {
		Rev      int64 `json:"rev"`
		Replayed bool  `json:"replayed"`
	}
	mcpCall(t, cs, "ckpt_update", update, &first)
	s := k.waitKeeper() // the session started it
	if s.PID == old.PID {
		t.Fatalf("the killed keeper (pid %d) answers", old.PID)
	}
	mcpCall(t, cs, "ckpt_update", update, &again)
	if first.Rev != 3 || first.Replayed || again.Rev != 3 || !again.Replayed {
		t.Errorf("the keyed update after the kill: %+v, then %+v: want rev 3, then replayed", first, again)
	}
	mcpCall(t, cs, "ckpt_decision", map[string]any{"id": id, "text": "through the new keeper"}, nil)
	if s1, ok := k.waitClients(1); !ok || s1.PID != s.PID || s1.Requests-s.Requests < 2 {
		t.Errorf("the new keeper (%+v, %v) does not serve the session's later calls", s1, ok)
	}
	events, err := k.history(id)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, e := range events {
		if e.Key == "upd-after-kill" {
			n++
		}
	}
	if n != 1 || len(events) != 4 {
		t.Errorf("the keyed update is in the history %d times (%d events), want once in 4", n, len(events))
	}
}

// testMCPKeeperKilledMidRequest: a keeper killed (SIGKILL) at a tool
// call's append, before or after applying it, loses no write and doubles
// none, though the agent gave no key: the session's own key (over a
// server, the spool's) makes the direct retry a replay, which the agent
// is not told of.
func testMCPKeeperKilledMidRequest(t *testing.T) {
	mcpKeeperKilledMidRequest(t, newKeeperRig)
}

// mcpKeeperKilledMidRequest is testMCPKeeperKilledMidRequest over the
// stores of rig.
func mcpKeeperKilledMidRequest(t *testing.T, rig func(*testing.T, ...string) *keeperRig) {
	for _, when := range []string{"before", "after"} {
		k := rig(t, "CKPT_KEEPER=off")
		id := "kai-7/mcp-mid-" + when
		k.must("start", id)
		k.extra = nil
		dying := k.startDyingKeeper(t, when)
		cs := k.mcpSession(t)
		text := "decided as the keeper died " + when + " applying it"
		var res struct {
			Rev      int64 `json:"rev"`
			Replayed bool  `json:"replayed"`
		}
		mcpCall(t, cs, "ckpt_decision", map[string]any{"id": id, "text": text}, &res)
		dying.waitKilled(t)
		if res.Rev != 2 || res.Replayed {
			t.Errorf("%s: the decision's result: %+v, want rev 2, not replayed", when, res)
		}
		if n, total := k.eventsWith(t, id, text); n != 1 || total != 2 {
			t.Errorf("%s: the decision is in the history %d times (%d events), want once", when, n, total)
		}
	}
}
