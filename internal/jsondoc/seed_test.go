package jsondoc

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	ckpt "github.com/ckpt-dev/ckpt"
)

func TestStatusFromWord(t *testing.T) {
	for _, tc := range []struct {
		word    string
		want    ckpt.Status
		guessed bool
	}{
		{"IN_PROGRESS", ckpt.StatusInProgress, false},
		{"PAUSED", ckpt.StatusWaiting, false},
		{"complete", ckpt.StatusDone, false},
		{"NOT_STARTED", ckpt.StatusPending, false},
		{"READY_FOR_SYNC", ckpt.StatusWaiting, true},
		{"WAITING_FOR_SYNC", ckpt.StatusWaiting, true},
		{"Refinement - COMPLETE", ckpt.StatusDone, true},
		{"build_failed", ckpt.StatusFailed, true},
		{"cancelled", ckpt.StatusAbandoned, false},
		{"USER_CANCELLED", ckpt.StatusAbandoned, true},
		{"backlog", ckpt.StatusPending, true},
		{"on track", ckpt.StatusInProgress, true},
	} {
		s, guessed := StatusFromWord(tc.word)
		if s != tc.want || guessed != tc.guessed {
			t.Errorf("StatusFromWord(%q) = %s %v, want %s %v", tc.word, s, guessed, tc.want, tc.guessed)
		}
	}
}

func TestStepIDs(t *testing.T) {
	ids := StepIDs{}
	for _, tc := range []struct{ text, want string }{
		{"S2.P1 complete", "s2-p1-complete"},
		{"  Read the *guide*!  ", "read-the-guide"},
		{"read the guide", "read-the-guide-2"},
		{"Read-the-guide", "read-the-guide-3"},
		{"…", "step"},
		{"", "step-2"},
		{strings.Repeat("abc ", 40), strings.Repeat("abc-", 15)[:59] + "-a"}, // the cut falls after a dash
		{strings.Repeat("x", 100), strings.Repeat("x", 60)},
	} {
		got := ids.Make(tc.text)
		if got != tc.want || ckpt.ValidateID(got) != nil {
			t.Errorf("Make(%q) = %q, want %q", tc.text, got, tc.want)
		}
	}
	if got := (StepIDs{}).Make("read the guide"); got != "read-the-guide" {
		t.Errorf("a new set starts afresh: %q", got)
	}
}

func TestMetaRoundTrip(t *testing.T) {
	c := &ckpt.Checkpoint{ID: "kai/a"}
	if m, src, err := ReadMeta(c, "fmt"); err != nil || src != nil || m.File != "" || m.Source != nil {
		t.Fatalf("no meta: %+v %v %v", m, src, err)
	}
	WriteMeta(c, "fmt", MetaSource{File: "a.json", Source: json.RawMessage(`{"b":1,"a":"<x>"}`)})
	m, src, err := ReadMeta(c, "fmt")
	if err != nil || m.File != "a.json" || src == nil || string(src.Raw()) != `{"b":1,"a":"<x>"}` {
		t.Fatalf("read back: %+v %v %v", m, src, err)
	}
	if string(c.Meta["fmt"]) != `{"file":"a.json","source":{"b":1,"a":"<x>"}}` {
		t.Errorf("stored as %s", c.Meta["fmt"])
	}
	WriteMeta(c, "fmt", MetaSource{File: "only.json"})
	if m, src, err := ReadMeta(c, "fmt"); err != nil || src != nil || m.File != "only.json" {
		t.Errorf("file without source: %+v %v %v", m, src, err)
	}
}

func TestReadMetaSaysHowToClearABadRecord(t *testing.T) {
	for _, raw := range []string{`"text"`, `{"file":1}`, `{"source":[1,2]}`} {
		c := &ckpt.Checkpoint{ID: "kai/a", Meta: map[string]json.RawMessage{"fmt": json.RawMessage(raw)}}
		_, _, err := ReadMeta(c, "fmt")
		if err == nil || !strings.Contains(err.Error(), "ckpt update kai/a --meta fmt=null") {
			t.Errorf("meta %s: %v", raw, err)
		}
	}
}

func TestImportedState(t *testing.T) {
	read := func(o *Object, n *Notes) (*ckpt.Checkpoint, error) {
		n.Add("a warning an export has no use for")
		title, ok := (Fields{Obj: o, Notes: n}).Text("title")
		if !ok {
			return nil, errors.New("no title")
		}
		return &ckpt.Checkpoint{Title: title}, nil
	}
	c := &ckpt.Checkpoint{ID: "kai/a"}
	if src, base, err := ImportedState(c, "fmt", read); src != nil || base != nil || err != nil {
		t.Errorf("not imported: %v %v %v", src, base, err)
	}
	WriteMeta(c, "fmt", MetaSource{File: "a.json"})
	if src, base, err := ImportedState(c, "fmt", read); src != nil || base != nil || err != nil {
		t.Errorf("a record without a source: %v %v %v", src, base, err)
	}
	WriteMeta(c, "fmt", MetaSource{File: "a.json", Source: json.RawMessage(`{"title":"T","x":1}`)})
	src, base, err := ImportedState(c, "fmt", read)
	if err != nil || string(src.Raw()) != `{"title":"T","x":1}` || base == nil || base.Title != "T" {
		t.Errorf("imported: %v %+v %v", src, base, err)
	}
	WriteMeta(c, "fmt", MetaSource{Source: json.RawMessage(`{"x":1}`)})
	_, _, err = ImportedState(c, "fmt", read)
	if err == nil || !strings.Contains(err.Error(), "cannot read back (no title)") || !strings.Contains(err.Error(), "ckpt update kai/a --meta fmt=null") {
		t.Errorf("a source the format cannot read: %v", err)
	}
	c.Meta["fmt"] = json.RawMessage(`"text"`)
	if _, _, err := ImportedState(c, "fmt", read); err == nil || !strings.Contains(err.Error(), "is not the fmt file record") {
		t.Errorf("a broken record: %v", err)
	}
}
