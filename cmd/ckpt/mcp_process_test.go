package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ckpt-dev/ckpt/internal/mcp"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// The MCP server as a client meets it: the built `ckpt mcp` binary, started
// by the SDK's command transport (stdio) or listening on loopback HTTP,
// against a real store.

// mcpCall calls a tool that must succeed and returns its structured result
// decoded into out.
func mcpCall(t *testing.T, cs *sdk.ClientSession, name string, args map[string]any, out any) *sdk.CallToolResult {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s: protocol error %v", name, err)
	}
	if res.IsError {
		t.Fatalf("%s(%v) failed: %s", name, args, contentText(res.Content))
	}
	if out != nil {
		b, _ := json.Marshal(res.StructuredContent)
		if err := json.Unmarshal(b, out); err != nil {
			t.Fatalf("%s: decoding %s: %v", name, b, err)
		}
	}
	return res
}

func contentText(cs []sdk.Content) string {
	var b strings.Builder
	for _, c := range cs {
		if tc, ok := c.(*sdk.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

// TestMCPCommandTransport drives every tool and both resources of `ckpt
// mcp` over stdio, then reads the store back with `ckpt show --json`.
func TestMCPCommandTransport(t *testing.T) {
	bin := ckptBinary(t)
	store := newProcessStore(t, bin)
	cmd := exec.Command(bin, "mcp", "--agent", "worker-1")
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "CKPT_STORE=" + store, "HOME=" + t.TempDir()}
	cs, stderr := connectMCP(t, cmd)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	closed := false
	defer func() {
		if !closed {
			cs.Close()
		}
	}()

	tools, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range tools.Tools {
		names = append(names, tool.Name)
		if tool.InputSchema == nil || tool.Description == "" {
			t.Errorf("tool %s has no description or input schema", tool.Name)
		}
	}
	want := slices.Sorted(slices.Values(mcp.ToolNames))
	if slices.Sort(names); !slices.Equal(names, want) {
		t.Errorf("tools %v, want %v", names, want)
	}

	id := "kai-7/secondary-a"
	var st mcp.StateOutput
	mcpCall(t, cs, "ckpt_start", map[string]any{"id": id, "title": "Schedule fetcher spec", "steps": []map[string]string{{"id": "research"}, {"id": "spec", "title": "Write the spec"}}}, &st)
	if st.Rev != 1 {
		t.Fatalf("ckpt_start: rev %d", st.Rev)
	}
	mcpCall(t, cs, "ckpt_step", map[string]any{"id": id, "step": "research", "status": "done", "output": "research/NOTES.md"}, &st)
	mcpCall(t, cs, "ckpt_decision", map[string]any{"id": id, "text": "Use the v2 API", "reason": "v1 is rate limited"}, &st)
	mcpCall(t, cs, "ckpt_blocker", map[string]any{"id": id, "text": "Waiting for DISCOVERY.md"}, &st)
	mcpCall(t, cs, "ckpt_blocker", map[string]any{"id": id, "action": "clear"}, &st)
	mcpCall(t, cs, "ckpt_update", map[string]any{"id": id, "files_modified": []string{"feature_02/spec.md"}, "next_steps": []string{"Write section 5"}, "if_rev": 5, "key": "upd-1"}, &st)
	if st.Rev != 6 {
		t.Fatalf("after six writes: rev %d", st.Rev)
	}
	// The same key again: nothing written, the first result replayed.
	mcpCall(t, cs, "ckpt_update", map[string]any{"id": id, "files_modified": []string{"feature_02/spec.md"}, "next_steps": []string{"Write section 5"}, "key": "upd-1"}, &st)
	if st.Rev != 6 || !st.Replayed {
		t.Fatalf("repeated key: rev %d replayed %v", st.Rev, st.Replayed)
	}
	var beat mcp.HeartbeatOutput
	mcpCall(t, cs, "ckpt_heartbeat", map[string]any{"id": id}, &beat)
	var show mcp.ShowOutput
	mcpCall(t, cs, "ckpt_show", map[string]any{"id": id}, &show)
	if show.Rev != 6 || show.Liveness != "live" {
		t.Fatalf("ckpt_show: rev %d liveness %q", show.Rev, show.Liveness)
	}
	var list mcp.ListOutput
	mcpCall(t, cs, "ckpt_list", map[string]any{}, &list)
	if list.Count != 1 || list.Checkpoints[0].ID != id {
		t.Fatalf("ckpt_list: %+v", list)
	}
	var stale mcp.StaleOutput
	mcpCall(t, cs, "ckpt_stale", map[string]any{}, &stale)
	if stale.Count != 0 {
		t.Fatalf("ckpt_stale right after a heartbeat: %+v", stale)
	}
	var resumed mcp.ResumeOutput
	res := mcpCall(t, cs, "ckpt_resume", map[string]any{"id": id}, &resumed)
	if !strings.Contains(resumed.Prompt, "Write the spec") || contentText(res.Content) != resumed.Prompt {
		t.Fatalf("ckpt_resume: prompt %q, text %q", resumed.Prompt, contentText(res.Content))
	}

	// Bad arguments are tool errors that write nothing.
	for _, bad := range []struct {
		name string
		args map[string]any
		want string
	}{
		{"ckpt_step", map[string]any{"id": "../etc", "step": "x"}, `".." segment`},
		{"ckpt_update", map[string]any{"id": id, "status": "sleeping"}, `unknown status "sleeping"`},
		{"ckpt_update", map[string]any{"id": id, "title": "x", "if_rev": 1}, "retry with if_rev 7"},
		{"ckpt_decision", map[string]any{"id": "ghost", "text": "x"}, "checkpoint not found"},
		{"ckpt_update", map[string]any{"id": id, "if_ref": 3, "title": "x"}, "if_ref"},
	} {
		r, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: bad.name, Arguments: bad.args})
		if err != nil {
			t.Fatalf("%s(%v): protocol error %v", bad.name, bad.args, err)
		}
		if !r.IsError || !strings.Contains(contentText(r.Content), bad.want) {
			t.Errorf("%s(%v): error %v %q, want a tool error with %q", bad.name, bad.args, r.IsError, contentText(r.Content), bad.want)
		}
	}

	// Resources: the state and the prompt (reading it starts no session).
	rr, err := cs.ReadResource(ctx, &sdk.ReadResourceParams{URI: mcp.StateURI(id)})
	if err != nil {
		t.Fatal(err)
	}
	var state struct {
		Rev     int64 `json:"rev"`
		Session struct {
			Number int `json:"number"`
		} `json:"session"`
	}
	if err := json.Unmarshal([]byte(rr.Contents[0].Text), &state); err != nil || state.Rev != 7 || state.Session.Number != 2 {
		t.Fatalf("state resource: %v %+v", err, state)
	}
	pr, err := cs.ReadResource(ctx, &sdk.ReadResourceParams{URI: mcp.PromptURI(id)})
	if err != nil || !strings.HasPrefix(pr.Contents[0].Text, "# Resume: Schedule fetcher spec") {
		t.Fatalf("prompt resource: %v %+v", err, pr)
	}

	if err := cs.Close(); err != nil {
		t.Fatalf("closing the session: %v", err)
	}
	closed = true
	if stderr.Len() != 0 {
		t.Errorf("ckpt mcp logged on stderr: %s", stderr.String())
	}

	// What the tools wrote is in the store, as the CLI reads it.
	out, err := ckptRun(t, bin, "--store", store, "show", id, "--json")
	if err != nil {
		t.Fatal(err)
	}
	var c struct {
		Rev   int64 `json:"rev"`
		Steps []struct {
			ID, Status, Output string
		} `json:"steps"`
		Decisions []struct{ Text string } `json:"decisions"`
		Blockers  []struct {
			ClearedAt string `json:"cleared_at"`
		} `json:"blockers"`
		Files struct {
			Modified []string `json:"modified"`
		} `json:"files"`
	}
	if err := json.Unmarshal([]byte(out), &c); err != nil {
		t.Fatal(err)
	}
	if c.Rev != 7 || c.Steps[0].Status != "done" || c.Steps[0].Output != "research/NOTES.md" ||
		len(c.Decisions) != 1 || len(c.Blockers) != 1 || c.Blockers[0].ClearedAt == "" || !slices.Equal(c.Files.Modified, []string{"feature_02/spec.md"}) {
		t.Fatalf("stored state after the MCP session:\n%s", out)
	}
	hist, err := ckptRun(t, bin, "--store", store, "log", id, "--json")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(hist, `"agent":"worker-1"`) {
		t.Errorf("events not recorded as --agent worker-1:\n%s", hist)
	}
}

// connectMCP starts cmd, a `ckpt mcp`, and connects an MCP client to it
// over its standard streams; a server that does not answer within a minute
// fails t. What the server writes on stderr is in the returned buffer.
func connectMCP(t *testing.T, cmd *exec.Cmd) (*sdk.ClientSession, *bytes.Buffer) {
	t.Helper()
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	client := sdk.NewClient(&sdk.Implementation{Name: "ckpt-test", Version: "1"}, nil)
	cs, err := client.Connect(ctx, &sdk.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatalf("connecting to ckpt mcp: %v (stderr: %s)", err, stderr.String())
	}
	return cs, &stderr
}
