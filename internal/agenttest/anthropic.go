package agenttest

import (
	"encoding/json"
	"net/http"
)

// writeAnthropic answers a Messages API request with step: an SSE stream
// (message_start, content blocks, message_delta, message_stop) or, when the
// client did not ask to stream, one message object.
func writeAnthropic(w http.ResponseWriter, r *http.Request, step Step, id string, stream bool) {
	if step.Error != nil {
		wait(r, step.Delay)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(step.Error.Status)
		_ = json.NewEncoder(w).Encode(map[string]any{
			"type":  "error",
			"error": map[string]any{"type": step.Error.Type, "message": step.Error.Message},
		})
		return
	}
	var blocks []map[string]any
	if step.Text != "" {
		blocks = append(blocks, map[string]any{"type": "text", "text": step.Text})
	}
	stop := "end_turn"
	if step.Tool != nil {
		input := step.Tool.Input
		if input == nil {
			input = map[string]any{}
		}
		blocks = append(blocks, map[string]any{"type": "tool_use", "id": "toolu_" + id, "name": step.Tool.Name, "input": input})
		stop = "tool_use"
	}
	if len(blocks) == 0 {
		blocks = append(blocks, map[string]any{"type": "text", "text": "OK."})
	}
	in := step.InputTokens
	if in == 0 {
		in = 100
	}
	usage := map[string]any{"input_tokens": in, "output_tokens": 20, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}
	msg := map[string]any{
		"id": "msg_" + id, "type": "message", "role": "assistant", "model": "claude-mock",
		"stop_reason": nil, "stop_sequence": nil, "usage": usage,
	}
	if !stream {
		wait(r, step.Delay)
		msg["content"] = blocks
		msg["stop_reason"] = stop
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(msg)
		return
	}
	sseHeaders(w)
	msg["content"] = []any{}
	sse(w, "message_start", map[string]any{"type": "message_start", "message": msg})
	wait(r, step.Delay)
	for i, b := range blocks {
		switch b["type"] {
		case "text":
			sse(w, "content_block_start", map[string]any{"type": "content_block_start", "index": i,
				"content_block": map[string]any{"type": "text", "text": ""}})
			sse(w, "content_block_delta", map[string]any{"type": "content_block_delta", "index": i,
				"delta": map[string]any{"type": "text_delta", "text": b["text"]}})
		case "tool_use":
			sse(w, "content_block_start", map[string]any{"type": "content_block_start", "index": i,
				"content_block": map[string]any{"type": "tool_use", "id": b["id"], "name": b["name"], "input": map[string]any{}}})
			args, _ := json.Marshal(b["input"])
			sse(w, "content_block_delta", map[string]any{"type": "content_block_delta", "index": i,
				"delta": map[string]any{"type": "input_json_delta", "partial_json": string(args)}})
		}
		sse(w, "content_block_stop", map[string]any{"type": "content_block_stop", "index": i})
	}
	sse(w, "message_delta", map[string]any{"type": "message_delta",
		"delta": map[string]any{"stop_reason": stop, "stop_sequence": nil},
		"usage": map[string]any{"input_tokens": in, "output_tokens": 20}})
	sse(w, "message_stop", map[string]any{"type": "message_stop"})
}
