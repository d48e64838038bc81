package agenttest

import (
	"encoding/json"
	"fmt"
	"strings"
)

// conversation is what the mock reads from a request: the first user text
// (what picks the Conversation), how many model responses the history
// holds, every text the model is shown, and whether to stream.
type conversation struct {
	first  string
	turns  int
	texts  []string
	stream bool
}

// message is one entry of a request's history, reduced to whether the
// model wrote it and its JSON.
type message struct {
	model bool
	user  bool // a user's message (not a tool result)
	raw   json.RawMessage
}

// parseConversation reads a request body of api (anthropic, openai,
// gemini). Fields the mock does not need are ignored; a body that is not a
// JSON object, or whose history is not a list, is an error.
func parseConversation(api string, body []byte) (conversation, error) {
	var doc map[string]json.RawMessage
	if err := json.Unmarshal(body, &doc); err != nil {
		return conversation{}, fmt.Errorf("request body is not a JSON object: %w", err)
	}
	var c conversation
	var msgs []message
	var err error
	switch api {
	case "anthropic":
		_ = json.Unmarshal(doc["stream"], &c.stream)
		c.texts = textsOf(doc["system"])
		msgs, err = anthropicMessages(doc["messages"])
	case "openai":
		c.stream = true
		c.texts = textsOf(doc["instructions"])
		msgs, err = openaiItems(doc["input"])
	case "gemini":
		c.texts = textsOf(doc["systemInstruction"])
		msgs, err = geminiContents(doc["contents"])
	default:
		return c, fmt.Errorf("unknown API %q", api)
	}
	if err != nil {
		return c, err
	}
	var first []string
	inFirst := true
	prevModel := false
	for _, m := range msgs {
		texts := textsOf(m.raw)
		c.texts = append(c.texts, texts...)
		if m.model {
			inFirst = false
			if !prevModel {
				c.turns++
			}
		} else if inFirst && m.user {
			first = append(first, texts...)
		}
		prevModel = m.model
	}
	c.first = strings.Join(first, "\n")
	return c, nil
}

func anthropicMessages(raw json.RawMessage) ([]message, error) {
	var list []struct {
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"`
	}
	if len(raw) > 0 {
		if err := json.Unmarshal(raw, &list); err != nil {
			return nil, fmt.Errorf("messages is not a list of messages: %w", err)
		}
	}
	out := make([]message, 0, len(list))
	for _, m := range list {
		user := m.Role == "user" && !strings.Contains(string(m.Content), `"tool_result"`)
		out = append(out, message{model: m.Role == "assistant", user: user, raw: m.Content})
	}
	return out, nil
}

func openaiItems(raw json.RawMessage) ([]message, error) {
	if len(raw) > 0 && raw[0] == '"' { // a bare string is one user message
		return []message{{user: true, raw: raw}}, nil
	}
	var list []json.RawMessage
	if len(raw) > 0 {
		if err := json.Unmarshal(raw, &list); err != nil {
			return nil, fmt.Errorf("input is not a list of items: %w", err)
		}
	}
	out := make([]message, 0, len(list))
	for _, it := range list {
		var head struct {
			Type string `json:"type"`
			Role string `json:"role"`
		}
		_ = json.Unmarshal(it, &head)
		switch {
		case head.Role == "assistant", head.Type == "function_call", head.Type == "custom_tool_call",
			head.Type == "reasoning", head.Type == "local_shell_call":
			out = append(out, message{model: true, raw: it})
		default:
			out = append(out, message{user: head.Role == "user", raw: it})
		}
	}
	return out, nil
}

func geminiContents(raw json.RawMessage) ([]message, error) {
	var list []struct {
		Role  string          `json:"role"`
		Parts json.RawMessage `json:"parts"`
	}
	if len(raw) > 0 {
		if err := json.Unmarshal(raw, &list); err != nil {
			return nil, fmt.Errorf("contents is not a list of contents: %w", err)
		}
	}
	out := make([]message, 0, len(list))
	for _, c := range list {
		user := c.Role == "user" && !strings.Contains(string(c.Parts), `"functionResponse"`)
		out = append(out, message{model: c.Role == "model", user: user, raw: c.Parts})
	}
	return out, nil
}

// textsOf collects every string value in a JSON document, depth first,
// skipping object keys; a document that does not parse yields nothing.
func textsOf(raw json.RawMessage) []string {
	if len(raw) == 0 {
		return nil
	}
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return nil
	}
	var out []string
	var walk func(any, int)
	walk = func(v any, depth int) {
		if depth > 64 {
			return
		}
		switch x := v.(type) {
		case string:
			out = append(out, x)
		case []any:
			for _, e := range x {
				walk(e, depth+1)
			}
		case map[string]any:
			for _, e := range x {
				walk(e, depth+1)
			}
		}
	}
	walk(v, 0)
	return out
}
