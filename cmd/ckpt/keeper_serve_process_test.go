package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ckpt-dev/ckpt"
	"github.com/ckpt-dev/ckpt/internal/keeper"
)

// The keeper of a server store: commands over CKPT_STORE=http://… with
// CKPT_TOKEN go through this user's keeper of that server and token (a
// real server over a real filestore, startScriptServer), as they do over
// PostgreSQL (keeper_process_test.go).

// TestKeeperOverServer runs the keeper's tests over server stores.
func TestKeeperOverServer(t *testing.T) {
	if !keeper.Supported {
		t.Skip("the keeper runs on Linux only")
	}
	t.Run("SameAsDirect", func(t *testing.T) {
		keeperParity(t, newServerRig(t, "CKPT_KEEPER=off"), newServerRig(t))
	})
	t.Run("KilledMidRequest", func(t *testing.T) { keeperKilledMidRequest(t, newServerRig) })
	t.Run("MCP", func(t *testing.T) { mcpKeeperParity(t, newServerRig(t, "CKPT_KEEPER=off"), newServerRig(t)) })
	t.Run("MCPKilledMidRequest", func(t *testing.T) { mcpKeeperKilledMidRequest(t, newServerRig) })
	t.Run("OneKeeperPerToken", testKeeperPerToken)
	t.Run("ServerAway", testKeeperServerAway)
}

// newServerRig is a rig over a server of its own (a filestore), with the
// server's write token.
func newServerRig(t *testing.T, extra ...string) *keeperRig {
	t.Helper()
	srv := newRigServer(t)
	return serverRig(t, srv, srv.write, extra...)
}

// newRigServer starts a server over a fresh filestore until t ends.
func newRigServer(t *testing.T) *scriptServer {
	t.Helper()
	srv, err := startScriptServer(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.close)
	return srv
}

// serverRig is a rig of srv with token.
func serverRig(t *testing.T, srv *scriptServer, token string, extra ...string) *keeperRig {
	t.Helper()
	k := newRig(t, "http://"+srv.addr, token, extra...)
	k.history = func(id string) ([]ckpt.Event, error) { return srv.store.History(context.Background(), id, 1, 0) }
	return k
}

// testKeeperPerToken: two tokens of one server are two keepers, so a
// scoped token is refused through its keeper as it is directly, even
// while a keeper of a token that may write runs.
func testKeeperPerToken(t *testing.T) {
	srv := newRigServer(t)
	wide := serverRig(t, srv, srv.write)
	kai := serverRig(t, srv, srv.kai)
	kai.runtime = wide.runtime // one user: one keeper directory
	wide.must("start", "other/task")
	ws := wide.waitKeeper()
	if kai.paths().Socket == wide.paths().Socket {
		t.Fatal("two tokens share a keeper's socket")
	}
	if strings.Contains(kai.paths().Socket, srv.kai) || strings.Contains(wide.paths().Socket, srv.write) {
		t.Fatal("a keeper's socket names its token")
	}
	refused := func(when string) {
		out, errOut, code := kai.run("note", "other/task", "not mine")
		if code == 0 || !strings.Contains(errOut, "kai-7/") {
			t.Errorf("%s: the kai-7/ token wrote other/task: exit %d: %s%s", when, code, out, errOut)
		}
	}
	refused("before its keeper runs")
	ks := kai.waitKeeper()
	if ks.PID == ws.PID {
		t.Fatalf("the two tokens' keepers are one process (pid %d)", ks.PID)
	}
	refused("through its keeper")
	kai.must("start", "kai-7/task")
	if after, ok := kai.status(); !ok || after.PID != ks.PID || after.Requests < ks.Requests+2 {
		t.Errorf("the kai-7/ token's commands did not go through its keeper: %+v then %+v", ks, after)
	}
	if after, ok := wide.status(); !ok || after.Requests != ws.Requests+1 { // +1: this status request
		t.Errorf("the other token's keeper served %d requests of the kai-7/ token", after.Requests-ws.Requests-1)
	}
	events, err := srv.store.History(context.Background(), "other/task", 1, 0)
	if err != nil || len(events) != 1 {
		t.Errorf("other/task has %d events (%v), want its start only", len(events), err)
	}
}

// testKeeperServerAway: with the server stopped, a hook through the keeper
// spools its write and exits 0 with the warning, as directly; once the
// server is back the next command delivers the spooled writes, in order,
// before its own.
func testKeeperServerAway(t *testing.T) {
	srv := newRigServer(t)
	k := serverRig(t, srv, srv.write)
	if err := os.MkdirAll(filepath.Join(k.runtime, "app", ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	hook := func(event, payload string) (string, string, int) {
		return k.runIn(strings.ReplaceAll(payload, "@", k.runtime), "hook", event)
	}
	if _, errOut, code := hook("UserPromptSubmit", `{"session_id":"s1","cwd":"@/app","hook_event_name":"UserPromptSubmit","prompt":"Refactor parseConfig"}`); code != 0 {
		t.Fatalf("the first prompt: exit %d: %s", code, errOut)
	}
	s0 := k.waitKeeper()
	srv.down()
	away := []struct{ event, payload string }{
		{"PostToolUse", `{"session_id":"s1","cwd":"@/app","hook_event_name":"PostToolUse","tool_name":"Write","tool_input":{"file_path":"@/app/new.go","content":"package app\n"},"tool_response":{"type":"create","filePath":"@/app/new.go"},"tool_use_id":"toolu_01"}`},
		{"Stop", `{"session_id":"s1","cwd":"@/app","hook_event_name":"Stop","stop_hook_active":false,"last_assistant_message":"Refactored."}`},
	}
	for _, h := range away {
		out, errOut, code := hook(h.event, h.payload)
		if code != 0 || !strings.Contains(errOut, "spooled") || !strings.Contains(errOut, "cannot reach ckpt serve") {
			t.Fatalf("hook %s with the server away: exit %d: %s%s", h.event, code, out, errOut)
		}
	}
	if s, ok := k.status(); !ok || s.PID != s0.PID || s.Requests < s0.Requests+int64(len(away)) {
		t.Fatalf("the hooks did not go through the keeper: %+v then %+v", s0, s)
	}
	id := "app/session-s1"
	before, err := srv.store.History(context.Background(), id, 1, 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.up(srv.addr); err != nil {
		t.Fatal(err)
	}
	k.must("note", id, "after the server came back")
	events, err := srv.store.History(context.Background(), id, 1, 0)
	if err != nil {
		t.Fatal(err)
	}
	var got []ckpt.EventType
	for _, e := range events[len(before):] {
		got = append(got, e.Type)
	}
	if len(got) < 3 || got[len(got)-1] != ckpt.EventNote || !strings.Contains(string(events[len(events)-1].Data), "after the server came back") {
		t.Fatalf("after the server came back the history gained %v, want the hooks' writes then the note", got)
	}
	// The spooled writes come first, in the order they were made: the
	// write's file change before the stop.
	if i, j := indexOf(events[len(before):], "new.go"), indexOf(events[len(before):], "Refactored."); i < 0 || j < 0 || i > j {
		t.Errorf("the spooled writes were delivered out of order: %v (file change at %d, stop at %d)", got, i, j)
	}
	if s, ok := k.status(); !ok || s.PID != s0.PID {
		t.Errorf("the keeper did not outlive the server's absence: %+v then %+v", s0, s)
	}
}

// indexOf is the index of the first event whose data holds s, -1 if none.
func indexOf(events []ckpt.Event, s string) int {
	for i, e := range events {
		if strings.Contains(string(e.Data), s) {
			return i
		}
	}
	return -1
}
