package claude

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestOutputsExact(t *testing.T) {
	tests := []struct {
		name string
		got  []byte
		want string
	}{
		{"SessionStart", SessionStartOutput("Resume kai-7.\nNext: write <spec> & test"),
			`{"hookSpecificOutput":{"hookEventName":"SessionStart","additionalContext":"Resume kai-7.\nNext: write <spec> & test"}}` + "\n"},
		{"UserPromptSubmit", UserPromptSubmitOutput("ctx"),
			`{"hookSpecificOutput":{"hookEventName":"UserPromptSubmit","additionalContext":"ctx"}}` + "\n"},
		{"Gemini BeforeAgent", AdditionalContext("BeforeAgent", "ctx"),
			`{"hookSpecificOutput":{"hookEventName":"BeforeAgent","additionalContext":"ctx"}}` + "\n"},
		{"Stop block", BlockStop(`Next step: "spec"`),
			`{"decision":"block","reason":"Next step: \"spec\""}` + "\n"},
		{"empty context", SessionStartOutput(""), ""},
		{"blank reason", BlockStop(" \n"), ""},
	}
	for _, tt := range tests {
		if string(tt.got) != tt.want {
			t.Errorf("%s:\n got %q\nwant %q", tt.name, tt.got, tt.want)
		}
	}
}

func TestOutputsStayUnderTheLimit(t *testing.T) {
	texts := map[string]string{
		"ascii":             strings.Repeat("abcdefghij", 1500),
		"just over":         strings.Repeat("x", MaxOutputChars-20),
		"newlines":          strings.Repeat("line of text\n", 1200),
		"quotes":            strings.Repeat(`"\`, 6000),
		"accents":           strings.Repeat("é", 12000),
		"emoji":             strings.Repeat("🙂", 7000),
		"controls":          strings.Repeat("\x01", 3000),
		"invalid utf-8":     strings.Repeat("a\xff", 6000),
		"mixed near limit":  strings.Repeat("ab🙂\n", 2400),
		"exactly the limit": strings.Repeat("y", MaxOutputChars),
	}
	for name, text := range texts {
		for kind, out := range map[string][]byte{
			"context": SessionStartOutput(text),
			"block":   BlockStop(text),
		} {
			if n := utf16Len(out); n >= MaxOutputChars {
				t.Errorf("%s/%s: output is %d characters, want < %d", name, kind, n, MaxOutputChars)
			}
			if !utf8.Valid(out) || !json.Valid(out) {
				t.Errorf("%s/%s: output is not valid UTF-8 JSON", name, kind)
			}
			var v struct {
				Reason             string
				HookSpecificOutput struct{ AdditionalContext string }
			}
			if err := json.Unmarshal(out, &v); err != nil {
				t.Fatal(err)
			}
			got := v.Reason + v.HookSpecificOutput.AdditionalContext
			if !strings.HasSuffix(got, shortenedMarker) {
				t.Errorf("%s/%s: a shortened text does not say so", name, kind)
			}
			body := strings.TrimSuffix(got, shortenedMarker)
			if !strings.HasPrefix(strings.ToValidUTF8(text, "\uFFFD"), body) {
				t.Errorf("%s/%s: the kept text is not a prefix of the original", name, kind)
			}
			if n := utf16Len(out); n < MaxOutputChars-1000 {
				t.Errorf("%s/%s: output is only %d characters; shortening should use most of the room", name, kind, n)
			}
		}
	}
}

func TestOutputShortensAtALineEndNearTheLimit(t *testing.T) {
	text := strings.Repeat("0123456789012345678901234567890123456789\n", 400) // 16,400 chars
	out := SessionStartOutput(text)
	var v struct {
		HookSpecificOutput struct{ AdditionalContext string }
	}
	if err := json.Unmarshal(out, &v); err != nil {
		t.Fatal(err)
	}
	body := strings.TrimSuffix(v.HookSpecificOutput.AdditionalContext, shortenedMarker)
	if !strings.HasSuffix(body, "0123456789012345678901234567890123456789") {
		t.Errorf("shortened text ends mid-line: %q", body[len(body)-30:])
	}
}

func TestOutputUnderTheLimitIsNotShortened(t *testing.T) {
	text := strings.Repeat("z", 9000)
	out := BlockStop(text)
	if strings.Contains(string(out), "shortened") {
		t.Error("a reason that fits was shortened")
	}
}
