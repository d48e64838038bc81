package render

import (
	"bytes"
	"encoding/json"
	"regexp"
	"strings"
	"testing"
	"time"

	ckpt "github.com/ckpt-dev/ckpt"
	"github.com/ckpt-dev/ckpt/internal/testsupport"
)

func TestListTableMarksArchivesAndPresence(t *testing.T) {
	now := time.Date(2026, 1, 15, 16, 0, 0, 0, time.UTC)
	iv := ckpt.Heartbeat{Interval: ckpt.Duration(10 * time.Minute)}
	list := []ckpt.Summary{
		{ID: "live", Status: ckpt.StatusInProgress, Agent: ckpt.Agent{ID: "A"}, UpdatedAt: now.Add(-time.Minute), Heartbeat: iv,
			Progress: ckpt.Progress{Done: 1, Total: 3, Percent: 33.3}, CurrentStep: "reading"},
		{ID: "old", Status: ckpt.StatusDone, UpdatedAt: now.Add(-48 * time.Hour), Heartbeat: iv,
			Archived: &ckpt.Archive{Reason: "complete", At: now.Add(-24 * time.Hour)}},
		{ID: "quiet", Status: ckpt.StatusInProgress, UpdatedAt: now.Add(-3 * time.Hour), Heartbeat: iv},
	}
	var b bytes.Buffer
	if err := ListTable(&b, list, now, nil); err != nil {
		t.Fatal(err)
	}
	for _, re := range []string{
		`(?m)^ID +STATUS +PROGRESS +AGENT +CURRENT +LAST SEEN$`,
		`(?m)^live +in_progress +1/3 33% +A +reading +1m ago$`,
		`(?m)^old +done \(archived\) +0/0 0% +- +- +2d ago$`,
		`(?m)^quiet +in_progress +0/0 0% +- +- +3h ago \(stale\)$`,
	} {
		if !regexp.MustCompile(re).MatchString(b.String()) {
			t.Errorf("table does not match %s:\n%s", re, b.String())
		}
	}
}

func TestStatusTableMarksArchives(t *testing.T) {
	now := ts("2026-01-15T16:00:00Z")
	c := fold(t, "old", ev{now.Add(-time.Hour), ckpt.EventCreated, ckpt.Created{Patch: ckpt.Patch{Title: ptr("old work")}}},
		ev{now.Add(-time.Hour), ckpt.EventStatus, ckpt.StatusChange{Status: ckpt.StatusDone}})
	c.Archived = &ckpt.Archive{Reason: "complete", At: now}
	var b bytes.Buffer
	if err := StatusTable(&b, []*ckpt.Checkpoint{c}, now, ckpt.Thresholds{}, nil); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "done (archived)") {
		t.Errorf("an archive's row does not say so:\n%s", b.String())
	}
}

func TestSummariesJSONIsOneSummaryPerLine(t *testing.T) {
	var b bytes.Buffer
	if err := SummariesJSON(&b, nil); err != nil || b.String() != "[]\n" {
		t.Fatalf("empty listing = %q, %v; want []", b.String(), err)
	}
	b.Reset()
	list := []ckpt.Summary{{ID: "a", Status: ckpt.StatusPending}, {ID: "b", Status: ckpt.StatusDone}}
	if err := SummariesJSON(&b, list); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
	if len(lines) != 4 || lines[0] != "[" || lines[3] != "]" {
		t.Fatalf("not one summary per line:\n%s", b.String())
	}
	var back []ckpt.Summary
	if err := json.Unmarshal(b.Bytes(), &back); err != nil || len(back) != 2 || back[1].ID != "b" {
		t.Fatalf("does not read back: %v %+v", err, back)
	}
}

// TestSummariesJSONPageByPage: the array written page by page (ls --json
// over ckpt.EachPage) is byte for byte the one written at once, empty
// pages included.
func TestSummariesJSONPageByPage(t *testing.T) {
	list := []ckpt.Summary{{ID: "a", Status: ckpt.StatusPending}, {ID: "b", Status: ckpt.StatusDone}, {ID: "c", Status: ckpt.StatusBlocked}}
	var whole, paged bytes.Buffer
	if err := SummariesJSON(&whole, list); err != nil {
		t.Fatal(err)
	}
	js := NewSummariesJSON(&paged)
	for _, page := range [][]ckpt.Summary{nil, list[:1], nil, list[1:]} {
		if err := js.Add(page); err != nil {
			t.Fatal(err)
		}
	}
	if err := js.Close(); err != nil {
		t.Fatal(err)
	}
	if paged.String() != whole.String() {
		t.Errorf("page by page:\n%s\nat once:\n%s", paged.String(), whole.String())
	}
	paged.Reset()
	if err := NewSummariesJSON(&paged).Close(); err != nil || paged.String() != "[]\n" {
		t.Errorf("no pages = %q, %v; want []", paged.String(), err)
	}
}

func TestStaleTableRowsAndAllQuiet(t *testing.T) {
	now := ts("2026-01-15T16:00:00Z")
	var b bytes.Buffer
	if err := StaleTable(&b, ckpt.StaleReport{Live: 1}, now); err != nil {
		t.Fatal(err)
	}
	if want := "no agent is quiet: all 1 live checkpoint showed a sign of life within their warn threshold\n"; b.String() != want {
		t.Errorf("all quiet = %q, want %q", b.String(), want)
	}
	b.Reset()
	r := testsupport.JudgeAll([]ckpt.Summary{{ID: "x", Status: ckpt.StatusInProgress, Agent: ckpt.Agent{ID: "bot\x1b[31m"}, UpdatedAt: now.Add(-50 * time.Minute),
		Heartbeat: ckpt.Heartbeat{Interval: ckpt.Duration(10 * time.Minute)}}}, now, ckpt.Thresholds{}, nil)
	if err := StaleTable(&b, r, now); err != nil {
		t.Fatal(err)
	}
	if !regexp.MustCompile(`(?m)^x +bot\\x1b\[31m +in_progress +stale +50m +50 min ago +20m/40m$`).MatchString(b.String()) {
		t.Errorf("stale row (escaped agent, thresholds):\n%s", b.String())
	}
}

func TestSummaryLineNamesWhatTheEventDid(t *testing.T) {
	at := ts("2026-01-15T16:00:00Z")
	c := fold(t, "kai-7/a", ev{at, ckpt.EventCreated, ckpt.Created{Steps: []ckpt.Step{{ID: "research"}, {ID: "write"}, {ID: "ship"}}}},
		ev{at, ckpt.EventStep, ckpt.StepChange{ID: "research", Status: ckpt.StepDone}})
	e := ckpt.MustEvent(ckpt.EventStep, at, ckpt.Actor{}, ckpt.StepChange{ID: "research", Status: ckpt.StepDone})
	if got, want := SummaryLine(c, e), "kai-7/a  rev 2  step research done  (1/3, 33%, in_progress)"; got != want {
		t.Errorf("SummaryLine = %q, want %q", got, want)
	}
	for _, tc := range []struct {
		typ  ckpt.EventType
		data any
		want string
	}{
		{ckpt.EventUpdate, json.RawMessage(`{"title":"x","phase":"y"}`), "updated title, phase"},
		{ckpt.EventDecision, ckpt.DecisionData{Text: "use   pgx\nv5"}, "decision: use pgx v5"},
		{ckpt.EventBlocker, ckpt.BlockerChange{Clear: true, ID: "b1"}, "blocker b1 cleared"},
		{ckpt.EventError, ckpt.ErrorChange{Message: "boom", Blocking: true, Type: "test"}, "blocking error [test]: boom"},
		{ckpt.EventAccept, ckpt.AcceptChange{ID: "c1"}, "criterion c1 unmet"},
	} {
		if got := DescribeEvent(c, ckpt.MustEvent(tc.typ, at, ckpt.Actor{}, tc.data)); got != tc.want {
			t.Errorf("DescribeEvent(%s) = %q, want %q", tc.typ, got, tc.want)
		}
	}
}

func TestShowEscapesStoredTextAndOmitsPresenceOfOldRevisions(t *testing.T) {
	now := ts("2026-01-15T16:00:00Z")
	c := fold(t, "kai-7/a", ev{now.Add(-2 * time.Hour), ckpt.EventCreated, ckpt.Created{Patch: ckpt.Patch{Title: ptr("evil \x1b]0;title\x07"), Agent: &ckpt.Agent{ID: "A", Type: "secondary"}},
		Steps: []ckpt.Step{{ID: "s1"}}}})
	var b bytes.Buffer
	if err := Show(&b, c, now, nil); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{"kai-7/a  evil \\x1b]0;title\\x07\n", "agent        A (secondary)\n", "steps\n  [ ] s1\n", "presence     "} {
		if !strings.Contains(out, want) {
			t.Errorf("show lacks %q:\n%s", want, out)
		}
	}
	if strings.ContainsRune(out, 0x1b) {
		t.Errorf("show wrote a raw escape:\n%q", out)
	}
	if s := NewShown(c, true, now, ckpt.Thresholds{}, nil); s.Presence == nil || s.Presence.State != ckpt.PresenceStale {
		t.Errorf("latest revision's presence = %+v, want stale", s.Presence)
	}
	if s := NewShown(c, false, now, ckpt.Thresholds{}, nil); s.Presence != nil {
		t.Errorf("an old revision has a presence now: %+v", s.Presence)
	}
}

// TestShowGolden: `ckpt show` of the seed fixtures, every section the
// checkpoint holds, at a fixed time with no process checked.
func TestShowGolden(t *testing.T) {
	now := ts("2026-02-01T09:31:00Z")
	for _, tc := range []struct {
		name string
		c    func(testing.TB) *ckpt.Checkpoint
	}{
		{"cia42", cia42},
		{"t060", t060},
		{"t062_partial", t062},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var b bytes.Buffer
			if err := Show(&b, tc.c(t), now, nil); err != nil {
				t.Fatal(err)
			}
			golden(t, "show_"+tc.name+".txt", b.String())
		})
	}
}

func TestBeatLineSaysTheStateAndWhy(t *testing.T) {
	at := time.Date(2026, 1, 15, 14, 30, 0, 0, time.UTC)
	for _, c := range []struct {
		s    ckpt.Signal
		want string
	}{
		{ckpt.Signal{At: at}, "w  beat at 2026-01-15T14:30:00Z"},
		{ckpt.Signal{At: at, State: ckpt.PresenceBusy}, "w  beat at 2026-01-15T14:30:00Z  busy"},
		{ckpt.Signal{At: at, State: ckpt.PresenceWaiting, Reason: "approve the schema"}, "w  beat at 2026-01-15T14:30:00Z  waiting: approve the schema"},
	} {
		if got := BeatLine("w", c.s); got != c.want {
			t.Errorf("BeatLine(%+v) = %q, want %q", c.s, got, c.want)
		}
	}
}
