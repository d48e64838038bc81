package agenttest

import (
	"bufio"
	"encoding/json"
	"strings"
)

// HookContext returns the additionalContext each hook of event added, as
// Claude Code reported it on stdout (ClaudeArgs: stream-json with
// --include-hook-events): the hook_response events' stdout, decoded.
// Lines that are not such events, or hooks that printed nothing or no
// JSON, are skipped.
func HookContext(streamJSON, event string) []string {
	var out []string
	sc := bufio.NewScanner(strings.NewReader(streamJSON))
	sc.Buffer(nil, 16<<20)
	for sc.Scan() {
		var ev struct {
			Type      string `json:"type"`
			Subtype   string `json:"subtype"`
			HookEvent string `json:"hook_event"`
			Stdout    string `json:"stdout"`
		}
		if json.Unmarshal(sc.Bytes(), &ev) != nil || ev.Type != "system" || ev.Subtype != "hook_response" ||
			ev.HookEvent != event || strings.TrimSpace(ev.Stdout) == "" {
			continue
		}
		var hook struct {
			HookSpecificOutput struct {
				AdditionalContext string `json:"additionalContext"`
			} `json:"hookSpecificOutput"`
		}
		if json.Unmarshal([]byte(ev.Stdout), &hook) != nil || hook.HookSpecificOutput.AdditionalContext == "" {
			continue
		}
		out = append(out, hook.HookSpecificOutput.AdditionalContext)
	}
	return out
}
