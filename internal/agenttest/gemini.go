package agenttest

import (
	"encoding/json"
	"net/http"
)

// writeGemini answers a generateContent request with one JSON response, or
// a streamGenerateContent one with an SSE stream of a single chunk: the
// step's text and function call as parts of one model content.
func writeGemini(w http.ResponseWriter, r *http.Request, step Step, stream bool) {
	if step.Error != nil {
		wait(r, step.Delay)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(step.Error.Status)
		_ = json.NewEncoder(w).Encode(map[string]any{
			"error": map[string]any{"code": step.Error.Status, "message": step.Error.Message, "status": step.Error.Type},
		})
		return
	}
	var parts []any
	if step.Text != "" || step.Tool == nil {
		text := step.Text
		if text == "" {
			text = "OK."
		}
		parts = append(parts, map[string]any{"text": text})
	}
	if c := step.Tool; c != nil {
		args := c.Input
		if args == nil {
			args = map[string]any{}
		}
		parts = append(parts, map[string]any{"functionCall": map[string]any{"name": c.Name, "args": args}})
	}
	in := step.InputTokens
	if in == 0 {
		in = 100
	}
	resp := map[string]any{
		"candidates": []any{map[string]any{
			"content":      map[string]any{"role": "model", "parts": parts},
			"finishReason": "STOP", "index": 0,
		}},
		"usageMetadata": map[string]any{"promptTokenCount": in, "candidatesTokenCount": 20, "totalTokenCount": in + 20},
		"modelVersion":  "gemini-mock",
	}
	if !stream {
		wait(r, step.Delay)
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(resp)
		return
	}
	sseHeaders(w)
	wait(r, step.Delay)
	sse(w, "", resp)
}
