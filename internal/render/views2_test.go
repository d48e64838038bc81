package render

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	ckpt "github.com/ckpt-dev/ckpt"
)

func TestScreenRedrawsOnATerminalAndAppendsElsewhere(t *testing.T) {
	var b bytes.Buffer
	s := NewScreen(&b, false)
	s.Draw("one\n")
	s.Draw("two\n")
	if b.String() != "one\n\ntwo\n\n" {
		t.Errorf("frames off a terminal: %q", b.String())
	}
	b.Reset()
	s = NewScreen(&b, true)
	s.Draw("head\na\n")
	b.Reset()
	s.Draw("head\nb\n")
	if want := "\x1b[2;1Hb\x1b[K\x1b[3;1H"; b.String() != want {
		t.Errorf("second frame on a terminal: %q, want only the changed line %q", b.String(), want)
	}
}

func TestLogTextNamesEachEventByItsResult(t *testing.T) {
	at := ts("2026-01-15T16:00:00Z")
	events := []ckpt.Event{
		ckpt.MustEvent(ckpt.EventCreated, at, ckpt.Actor{Agent: "A", Session: "s1"}, ckpt.Created{Steps: []ckpt.Step{{ID: "x"}}}),
		ckpt.MustEvent(ckpt.EventStep, at, ckpt.Actor{}, ckpt.StepChange{ID: "x", Status: ckpt.StepDone}),
	}
	for i := range events {
		events[i].Seq = int64(i + 1)
	}
	events[1].Key = "k\x1b"
	var b bytes.Buffer
	if err := LogText(&b, "a", nil, events); err != nil {
		t.Fatal(err)
	}
	want := "   1  2026-01-15T16:00:00Z  created     A@s1            started\n" +
		"   2  2026-01-15T16:00:00Z  step        -               step x done  [key k\\x1b]\n"
	if b.String() != want {
		t.Errorf("log:\n%s\nwant:\n%s", b.String(), want)
	}
	// From revision 2 on, the state before it names the step.
	before, err := ckpt.Fold("a", events[:1])
	if err != nil {
		t.Fatal(err)
	}
	b.Reset()
	LogText(&b, "a", before, events[1:])
	if !strings.HasSuffix(b.String(), "step x done  [key k\\x1b]\n") {
		t.Errorf("log from 2: %q", b.String())
	}
	b.Reset()
	if err := LogJSON(&b, events); err != nil {
		t.Fatal(err)
	}
	var e LogEntry
	line := strings.SplitN(b.String(), "\n", 2)[0]
	if err := json.Unmarshal([]byte(line), &e); err != nil || e.Seq != 1 || e.Type != ckpt.EventCreated || e.Actor.Agent != "A" {
		t.Errorf("log --json line %q: %v %+v", line, err, e)
	}
}

func TestReportTextAndJSON(t *testing.T) {
	rep := &ckpt.Report{Checked: 3, Problems: []ckpt.Problem{
		{ID: "a", Severity: ckpt.SeverityError, What: "history line 3 damaged", Repair: "ckpt repair a"},
		{ID: "", Severity: ckpt.SeverityWarning, What: "stray file x.tmp", Fixed: true},
		{ID: "bad\x1bname", Severity: ckpt.SeverityWarning, What: "not a valid ID"},
	}}
	var b bytes.Buffer
	if err := ReportText(&b, rep, true); err != nil {
		t.Fatal(err)
	}
	want := "a  error  history line 3 damaged  (repair: ckpt repair a)\n" +
		"-  warning  fixed: stray file x.tmp\n" +
		"bad\\x1bname  warning  not a valid ID\n" +
		"repaired 3 checkpoint(s): 3 problem(s), 1 error(s) left, 1 fixed\n"
	if b.String() != want {
		t.Errorf("repair report:\n%s\nwant:\n%s", b.String(), want)
	}
	b.Reset()
	ReportText(&b, &ckpt.Report{Checked: 2}, false)
	if b.String() != "checked 2 checkpoint(s): 0 problem(s), 0 error(s) left\n" {
		t.Errorf("clean check: %q", b.String())
	}
	b.Reset()
	if err := ReportJSON(&b, &ckpt.Report{Checked: 1}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), `"problems": []`) {
		t.Errorf("an empty report's problems are not []: %s", b.String())
	}
}

func TestPartialProblemNamesTheUnmetCriteria(t *testing.T) {
	at := ts("2026-01-15T16:00:00Z")
	c := fold(t, "w", ev{at, ckpt.EventCreated, ckpt.Created{Acceptance: []ckpt.Criterion{{ID: "c1"}, {ID: "c2"}}}},
		ev{at, ckpt.EventAccept, ckpt.AcceptChange{ID: "c1", Met: true}},
		ev{at, ckpt.EventStatus, ckpt.StatusChange{Status: ckpt.StatusDone}})
	p, ok := PartialProblem(c)
	if !ok || p.Severity != ckpt.SeverityWarning || !strings.Contains(p.What, "1 acceptance criteria unmet (c2)") {
		t.Errorf("partial: %v %+v", ok, p)
	}
	if _, ok := PartialProblem(fold(t, "x", ev{at, ckpt.EventCreated, ckpt.Created{}})); ok {
		t.Error("a checkpoint in progress is reported partial")
	}
}

func TestPruneText(t *testing.T) {
	now := ts("2026-02-10T12:00:00Z")
	plan := []ckpt.Pruned{{ID: "old", Reason: "complete", ArchivedAt: now.Add(-40 * 24 * time.Hour), Revisions: 3}}
	var b bytes.Buffer
	PruneText(&b, plan, true, 30*24*time.Hour)
	want := "would remove old  (archived complete at 2026-01-01T12:00:00Z, 3 revisions)\n" +
		"would remove 1 archived checkpoint (dry run: nothing deleted; run again without --dry-run to delete)\n"
	if b.String() != want {
		t.Errorf("dry run:\n%s\nwant:\n%s", b.String(), want)
	}
	b.Reset()
	PruneText(&b, nil, false, 30*24*time.Hour)
	if b.String() != "nothing to prune: no checkpoint was archived more than 30d ago\n" {
		t.Errorf("nothing: %q", b.String())
	}
}

func TestStatusJSONRows(t *testing.T) {
	now := ts("2026-01-15T16:00:00Z")
	list := []ckpt.Summary{{ID: "a", Status: ckpt.StatusInProgress, Agent: ckpt.Agent{Name: "Ann"}, UpdatedAt: now.Add(-25 * time.Minute),
		Heartbeat: ckpt.Heartbeat{Interval: ckpt.Duration(5 * time.Minute)}, Partial: false}}
	var b bytes.Buffer
	if err := StatusJSON(&b, list, now, ckpt.Thresholds{}, nil); err != nil {
		t.Fatal(err)
	}
	var rows []StatusRow
	if err := json.Unmarshal(b.Bytes(), &rows); err != nil || len(rows) != 1 {
		t.Fatalf("%v %s", err, b.String())
	}
	if r := rows[0]; r.Agent != "Ann" || r.Liveness != ckpt.Stale || r.SilentSeconds != 25*60 || r.Presence.State != ckpt.PresenceStale {
		t.Errorf("row %+v", r)
	}
	b.Reset()
	StatusJSON(&b, nil, now, ckpt.Thresholds{}, nil)
	if b.String() != "[]\n" {
		t.Errorf("no rows: %q", b.String())
	}
}
