package agenttest

import (
	"bufio"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
)

// post sends body to the mock and returns the status and the SSE events'
// data (or the whole body when it is not a stream).
func post(t *testing.T, srv *Server, path, body string) (int, []map[string]any) {
	t.Helper()
	resp, err := http.Post(srv.URL+path, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out []map[string]any
	if !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		var v map[string]any
		data, _ := io.ReadAll(resp.Body)
		if err := json.Unmarshal(data, &v); err != nil {
			t.Fatalf("%s: %v\n%s", path, err, data)
		}
		return resp.StatusCode, append(out, v)
	}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		line, ok := strings.CutPrefix(sc.Text(), "data: ")
		if !ok {
			continue
		}
		var v map[string]any
		if err := json.Unmarshal([]byte(line), &v); err != nil {
			t.Fatalf("%s: event %q: %v", path, line, err)
		}
		out = append(out, v)
	}
	return resp.StatusCode, out
}

func jsonPath(v any, keys ...string) any {
	for _, k := range keys {
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = m[k]
	}
	return v
}

func TestAnthropicStreamFollowsTheScriptByTurn(t *testing.T) {
	srv := NewServer(t, Script{Conversations: []Conversation{
		{Match: "subagent task", Steps: []Step{Say("from the subagent")}},
		{Match: "Fix it", Steps: []Step{
			Call("Bash", map[string]any{"command": "go test ./..."}),
			Say("Next I will fix it."),
		}},
	}})
	first := `{"role":"user","content":[{"type":"text","text":"<system-reminder>ctx</system-reminder>"},{"type":"text","text":"Fix it"}]}`
	_, evs := post(t, srv, "/v1/messages?beta=true", `{"stream":true,"system":"sys","messages":[`+first+`]}`)
	var types []string
	for _, e := range evs {
		types = append(types, e["type"].(string))
	}
	want := "message_start content_block_start content_block_delta content_block_stop message_delta message_stop"
	if strings.Join(types, " ") != want {
		t.Fatalf("events %v, want %s", types, want)
	}
	if jsonPath(evs[1], "content_block", "name") != "Bash" || jsonPath(evs[4], "delta", "stop_reason") != "tool_use" {
		t.Fatalf("want a Bash tool_use ending the turn, got %v / %v", evs[1], evs[4])
	}
	if got := jsonPath(evs[2], "delta", "partial_json"); got != `{"command":"go test ./..."}` {
		t.Fatalf("tool input %v", got)
	}
	// The tool's result comes back: the history holds one model turn.
	second := `{"stream":true,"messages":[` + first + `,{"role":"assistant","content":[{"type":"tool_use","id":"t1","name":"Bash","input":{}}]},` +
		`{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":"FAIL: TestRetryBudget"}]}]}`
	_, evs = post(t, srv, "/v1/messages", second)
	if got := jsonPath(evs[2], "delta", "text"); got != "Next I will fix it." {
		t.Fatalf("second answer %v", got)
	}
	// A subagent's conversation has its own script; an unknown one the default.
	_, evs = post(t, srv, "/v1/messages", `{"messages":[{"role":"user","content":"do the subagent task"}]}`)
	if got := jsonPath(evs[0], "content"); got == nil || !strings.Contains(mustJSON(got), "from the subagent") {
		t.Fatalf("subagent answer %v", evs[0])
	}
	_, evs = post(t, srv, "/v1/messages", `{"messages":[{"role":"user","content":"title please"}]}`)
	if !strings.Contains(mustJSON(evs[0]), `"OK."`) {
		t.Fatalf("default answer %v", evs[0])
	}
	reqs := srv.Requests()
	if len(reqs) != 4 || reqs[1].Turns != 1 || !reqs[1].Contains("FAIL: TestRetryBudget") || !reqs[0].Contains("sys") || reqs[3].Script {
		t.Fatalf("recorded requests: %+v", reqs)
	}
}

func TestAnthropicErrorStatus(t *testing.T) {
	srv := NewServer(t, Script{Conversations: []Conversation{{Match: "go", Steps: []Step{Fail(529, "overloaded_error", "Overloaded")}}}})
	code, evs := post(t, srv, "/v1/messages", `{"stream":true,"messages":[{"role":"user","content":"go"}]}`)
	if code != 529 || jsonPath(evs[0], "error", "type") != "overloaded_error" {
		t.Fatalf("got %d %v, want 529 overloaded_error", code, evs)
	}
}

func TestOpenAIResponsesStream(t *testing.T) {
	srv := NewServer(t, Script{Conversations: []Conversation{{Match: "Write notes", Steps: []Step{
		{Tool: &ToolCall{Name: "apply_patch", Raw: "*** Begin Patch\n*** End Patch\n"}},
		Call("exec_command", map[string]any{"cmd": "ls"}),
		Say("done"),
	}}}})
	in := `{"instructions":"be brief","input":[{"type":"message","role":"developer","content":[{"type":"input_text","text":"perms"}]},` +
		`{"type":"message","role":"user","content":[{"type":"input_text","text":"Write notes"}]}`
	_, evs := post(t, srv, "/v1/responses", in+`]}`)
	if len(evs) != 4 || jsonPath(evs[1], "item", "type") != "custom_tool_call" || jsonPath(evs[3], "type") != "response.completed" {
		t.Fatalf("events %v", evs)
	}
	_, evs = post(t, srv, "/v1/responses", in+`,{"type":"custom_tool_call","call_id":"c","name":"apply_patch","input":"x"},{"type":"custom_tool_call_output","call_id":"c","output":"ok"}]}`)
	if jsonPath(evs[1], "item", "name") != "exec_command" || jsonPath(evs[1], "item", "arguments") != `{"cmd":"ls"}` {
		t.Fatalf("second response %v", evs)
	}
}

func TestGeminiStreamAndSideRequests(t *testing.T) {
	srv := NewServer(t, Script{Conversations: []Conversation{{Match: "Create notes", Steps: []Step{
		Call("write_file", map[string]any{"file_path": "NOTES.md", "content": "x"}),
	}}}})
	body := `{"contents":[{"role":"user","parts":[{"text":"Create notes"}]}]}`
	_, evs := post(t, srv, "/v1beta/models/m:streamGenerateContent?alt=sse", body)
	if len(evs) != 1 || !strings.Contains(mustJSON(evs[0]), `"functionCall":{"args":{"content":"x","file_path":"NOTES.md"},"name":"write_file"}`) {
		t.Fatalf("stream %v", evs)
	}
	// The router asks with the same history: it gets JSON text, not the tool.
	_, evs = post(t, srv, "/v1beta/models/m:generateContent", body)
	text, _ := jsonPath(evs[0]["candidates"].([]any)[0], "content", "parts").([]any)[0].(map[string]any)["text"].(string)
	var side map[string]string
	if err := json.Unmarshal([]byte(text), &side); err != nil || side["next_speaker"] != "user" || side["model_choice"] == "" {
		t.Fatalf("side answer %q: %v", text, err)
	}
}

func TestUnknownPathsAreRecorded(t *testing.T) {
	srv := NewServer(t, Script{})
	resp, err := http.Get(srv.URL + "/api/hello")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 404 || strings.Join(srv.Other(), ",") != "GET /api/hello" {
		t.Fatalf("got %d %v", resp.StatusCode, srv.Other())
	}
}

func TestBadBodyIsRefused(t *testing.T) {
	srv := NewServer(t, Script{})
	for _, body := range []string{`not json`, `{"messages":{"role":"user"}}`} {
		resp, err := http.Post(srv.URL+"/v1/messages", "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusBadRequest {
			t.Errorf("%s: status %d, want 400", body, resp.StatusCode)
		}
	}
}

// FuzzParseConversation: the mock reads what a client sends; no body makes
// it panic, and the turn count never exceeds the history's length.
func FuzzParseConversation(f *testing.F) {
	f.Add("anthropic", `{"stream":true,"system":[{"type":"text","text":"s"}],"messages":[{"role":"user","content":"hi"},{"role":"assistant","content":[{"type":"tool_use"}]}]}`)
	f.Add("openai", `{"instructions":"i","input":[{"type":"message","role":"user","content":[{"type":"input_text","text":"go"}]},{"type":"function_call"}]}`)
	f.Add("openai", `{"input":"just text"}`)
	f.Add("gemini", `{"contents":[{"role":"user","parts":[{"text":"a"}]},{"role":"model","parts":[{"functionCall":{}}]},{"role":"user","parts":[{"functionResponse":{}}]}]}`)
	f.Add("anthropic", `[[[[[[[[[[`)
	f.Fuzz(func(t *testing.T, api, body string) {
		c, err := parseConversation(api, []byte(body))
		if err != nil {
			return
		}
		if c.turns < 0 || c.turns > len(body) {
			t.Fatalf("turns %d for a %d-byte body", c.turns, len(body))
		}
	})
}

func mustJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

func TestHookContext(t *testing.T) {
	out := `{"type":"system","subtype":"hook_started","hook_event":"SessionStart"}
{"type":"system","subtype":"hook_response","hook_event":"SessionStart","stdout":""}
{"type":"system","subtype":"hook_response","hook_event":"SessionStart","stdout":"{\"hookSpecificOutput\":{\"hookEventName\":\"SessionStart\",\"additionalContext\":\"ckpt: resume here\"}}\n"}
{"type":"system","subtype":"hook_response","hook_event":"UserPromptSubmit","stdout":"{\"hookSpecificOutput\":{\"additionalContext\":\"other\"}}"}
not json
{"type":"result"}`
	got := HookContext(out, "SessionStart")
	if len(got) != 1 || got[0] != "ckpt: resume here" {
		t.Fatalf("got %q", got)
	}
}

// FuzzHookContext: Claude Code's stdout is outside input; no line makes
// the reader panic.
func FuzzHookContext(f *testing.F) {
	f.Add(`{"type":"system","subtype":"hook_response","hook_event":"Stop","stdout":"{\"hookSpecificOutput\":{\"additionalContext\":\"x\"}}"}`, "Stop")
	f.Add("{\"type\":\"system\"}\n\n{", "")
	f.Fuzz(func(t *testing.T, out, event string) {
		for _, c := range HookContext(out, event) {
			if c == "" {
				t.Fatal("an empty context was returned")
			}
		}
	})
}
