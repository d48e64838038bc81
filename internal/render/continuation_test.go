package render

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestContinuation: takeover and restart print the archive's name above
// the prompt and add archived_as to its JSON; a resume has neither.
func TestContinuation(t *testing.T) {
	c := t060(t)
	resumed := NewContinuation(c, "")
	if resumed.Text() != resumed.Markdown() {
		t.Errorf("a resume's text is not the prompt alone:\n%s", resumed.Text())
	}
	taken := NewContinuation(c, "loop/T060_crashed_1768487400")
	if want := "archived the previous state as loop/T060_crashed_1768487400\n\n" + taken.Markdown(); taken.Text() != want {
		t.Errorf("takeover text:\n%s", taken.Text())
	}
	for _, k := range []struct {
		cont Continuation
		want string
	}{{resumed, ""}, {taken, "loop/T060_crashed_1768487400"}} {
		b, err := json.Marshal(k.cont)
		if err != nil {
			t.Fatal(err)
		}
		var m map[string]any
		if err := json.Unmarshal(b, &m); err != nil {
			t.Fatal(err)
		}
		got, has := m["archived_as"]
		if (k.want == "") == has || (has && got != k.want) || !strings.Contains(string(b), `"next_action"`) {
			t.Errorf("JSON %s: archived_as %v, want %q and the prompt's fields", b, got, k.want)
		}
	}
}
