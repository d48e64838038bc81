package claude

import (
	"bytes"
	"encoding/json"
	"strings"
	"unicode/utf8"
)

// MaxOutputChars bounds a hook's whole output: Claude Code caps what a hook
// injects at 10,000 characters. Every builder here returns fewer characters
// than this (counted as UTF-16 code units, as Claude Code counts), newline
// included, shortening the text at a rune boundary when it must.
const MaxOutputChars = 10000

// shortenedMarker ends a text that was cut to fit.
const shortenedMarker = "\n\n[shortened by ckpt to stay under the 10,000-character hook output limit]"

// AdditionalContext returns the output that adds text to the agent's
// context for the events that document hookSpecificOutput.additionalContext
// (Claude Code's SessionStart, UserPromptSubmit and PostToolUse; Codex's
// SessionStart and UserPromptSubmit; Gemini CLI's SessionStart, BeforeAgent
// and AfterTool):
//
//	{"hookSpecificOutput":{"hookEventName":"SessionStart","additionalContext":"…"}}
//
// hookEventName must be the event's name as the client calls it. An empty
// text gives nil: nothing to print.
func AdditionalContext(hookEventName, text string) []byte {
	if text == "" {
		return nil
	}
	return fit(text, func(t string) any {
		type specific struct {
			HookEventName     string `json:"hookEventName"`
			AdditionalContext string `json:"additionalContext"`
		}
		return struct {
			HookSpecificOutput specific `json:"hookSpecificOutput"`
		}{specific{hookEventName, t}}
	})
}

// SessionStartOutput returns SessionStart's output adding context (the
// continuation prompt) to the new session. An empty context gives nil.
func SessionStartOutput(context string) []byte {
	return AdditionalContext(string(EventSessionStart), context)
}

// UserPromptSubmitOutput returns UserPromptSubmit's output adding context
// to the prompt. An empty context gives nil.
func UserPromptSubmitOutput(context string) []byte {
	return AdditionalContext(string(EventUserPromptSubmit), context)
}

// BlockStop returns the output of a Stop or SubagentStop hook that keeps
// the agent working, with reason as its next instruction:
//
//	{"decision":"block","reason":"…"}
//
// Codex reads the same shape; Gemini CLI's AfterAgent reads "block" as an
// alias of "deny" and sends the reason as the agent's next prompt. An empty
// reason gives nil, since a block without a reason is invalid.
func BlockStop(reason string) []byte {
	if strings.TrimSpace(reason) == "" {
		return nil
	}
	return fit(reason, func(t string) any {
		return struct {
			Decision string `json:"decision"`
			Reason   string `json:"reason"`
		}{"block", t}
	})
}

// fit encodes wrap(text) and, if the result is not under MaxOutputChars,
// the longest prefix of text (plus a marker saying it was shortened) whose
// encoding is, preferring to cut at a line end near the limit.
func fit(text string, wrap func(string) any) []byte {
	out := encode(wrap(text))
	if utf16Len(out) < MaxOutputChars {
		return out
	}
	runes := []rune(strings.ToValidUTF8(text, "\uFFFD"))
	fits := func(n int) bool { return utf16Len(encode(wrap(string(runes[:n])+shortenedMarker))) < MaxOutputChars }
	lo, hi := 0, len(runes)
	for lo < hi {
		mid := (lo + hi + 1) / 2
		if fits(mid) {
			lo = mid
		} else {
			hi = mid - 1
		}
	}
	n := lo
	for i := lo - 1; i >= 0 && i >= lo-400; i-- {
		if runes[i] == '\n' {
			n = i
			break
		}
	}
	return encode(wrap(strings.TrimRight(string(runes[:n]), " \t\n") + shortenedMarker))
}

// encode is compact JSON with a trailing newline, without HTML escaping
// (hook output is read by an agent, not a browser).
func encode(v any) []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		panic("claude: encoding hook output: " + err.Error()) // structs of strings always encode
	}
	return b.Bytes()
}

// utf16Len is the length of b as a JavaScript string: one unit per rune,
// two for a rune outside the Basic Multilingual Plane.
func utf16Len(b []byte) int {
	n := 0
	for len(b) > 0 {
		r, size := utf8.DecodeRune(b)
		b = b[size:]
		n++
		if r >= 0x10000 {
			n++
		}
	}
	return n
}
