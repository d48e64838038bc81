package agenttest

import (
	"encoding/json"
	"net/http"
)

// writeOpenAI answers a Responses API request with step as an SSE stream:
// response.created, one output item per message or tool call
// (output_item.added then .done), response.completed. A Tool named
// apply_patch with Raw set is a freeform custom_tool_call, any other a
// function_call.
func writeOpenAI(w http.ResponseWriter, r *http.Request, step Step, id string) {
	if step.Error != nil {
		wait(r, step.Delay)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(step.Error.Status)
		_ = json.NewEncoder(w).Encode(map[string]any{
			"error": map[string]any{"type": step.Error.Type, "message": step.Error.Message, "code": step.Error.Type},
		})
		return
	}
	var items []map[string]any
	if step.Text != "" || step.Tool == nil {
		text := step.Text
		if text == "" {
			text = "OK."
		}
		items = append(items, map[string]any{"type": "message", "role": "assistant", "id": "msg_" + id, "status": "completed",
			"content": []any{map[string]any{"type": "output_text", "text": text, "annotations": []any{}}}})
	}
	if c := step.Tool; c != nil {
		if c.Raw != "" {
			items = append(items, map[string]any{"type": "custom_tool_call", "id": "ctc_" + id, "call_id": "call_" + id,
				"name": c.Name, "input": c.Raw, "status": "completed"})
		} else {
			items = append(items, map[string]any{"type": "function_call", "id": "fc_" + id, "call_id": "call_" + id,
				"name": c.Name, "arguments": toolArgs(c), "status": "completed"})
		}
	}
	in := step.InputTokens
	if in == 0 {
		in = 100
	}
	sseHeaders(w)
	resp := map[string]any{"id": "resp_" + id, "object": "response", "status": "in_progress", "output": []any{}}
	sse(w, "response.created", map[string]any{"type": "response.created", "response": resp})
	wait(r, step.Delay)
	for i, it := range items {
		sse(w, "response.output_item.added", map[string]any{"type": "response.output_item.added", "output_index": i, "item": it})
		sse(w, "response.output_item.done", map[string]any{"type": "response.output_item.done", "output_index": i, "item": it})
	}
	resp["status"] = "completed"
	resp["output"] = items
	resp["usage"] = map[string]any{"input_tokens": in, "input_tokens_details": map[string]any{"cached_tokens": 0},
		"output_tokens": 20, "output_tokens_details": map[string]any{"reasoning_tokens": 0}, "total_tokens": in + 20}
	sse(w, "response.completed", map[string]any{"type": "response.completed", "response": resp})
}
