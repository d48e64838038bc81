package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	ckpt "github.com/ckpt-dev/ckpt"
	"github.com/ckpt-dev/ckpt/internal/request"
	"github.com/ckpt-dev/ckpt/memstore"
)

// Tests of the run functions, called directly with options structs.

func startForTest(t *testing.T, st ckpt.Store, id string, steps ...string) {
	t.Helper()
	var out, errOut bytes.Buffer
	o := &StartOptions{writeOptions: testWriter(st, &out, &errOut), ID: id, StepSpecs: steps}
	if err := runStart(context.Background(), o); err != nil {
		t.Fatalf("start %s: %v", id, err)
	}
}

func TestRunStartRecordsThePlan(t *testing.T) {
	st := memstore.New()
	var out, errOut bytes.Buffer
	o := &StartOptions{
		writeOptions: testWriter(st, &out, &errOut),
		ID:           "kai-7/secondary-a",
		Start: request.Start{Title: "Schedule fetcher spec", TaskID: "KAI-7", Stage: "S2.P1", Phase: "Research", Interval: "5m",
			Parent: "kai-7", Labels: []string{"wave-1"}, MaxCycles: 3, Agent: ckpt.Agent{Type: "secondary", Name: "Secondary A"}},
		StepSpecs:   []string{"research=Read the sources", "spec", "checklist"},
		AcceptSpecs: []string{"tests=All tests pass"},
		MetaPairs:   []string{"feature=feature_02"},
		MetaJSON:    []string{`coordination={"unread_messages":0}`},
	}
	if err := runStart(context.Background(), o); err != nil {
		t.Fatal(err)
	}
	if want := "kai-7/secondary-a  rev 1  started  (0/3, 0%, in_progress)\n"; out.String() != want {
		t.Errorf("output %q, want %q", out.String(), want)
	}
	c, err := st.Get(context.Background(), "kai-7/secondary-a", 0)
	if err != nil {
		t.Fatal(err)
	}
	if c.Title != "Schedule fetcher spec" || c.TaskID != "KAI-7" || c.Stage != "S2.P1" || c.Phase != "Research" || c.Parent != "kai-7" {
		t.Errorf("plan fields not recorded: %+v", c)
	}
	if len(c.Steps) != 3 || c.Steps[0].ID != "research" || c.Steps[0].Title != "Read the sources" || c.Steps[2].ID != "checklist" {
		t.Errorf("steps %+v", c.Steps)
	}
	if len(c.Acceptance) != 1 || c.Acceptance[0].Title != "All tests pass" || c.Acceptance[0].Met {
		t.Errorf("acceptance %+v", c.Acceptance)
	}
	if c.Heartbeat.Interval.D() != 5*time.Minute || c.Cycles.Max != 3 {
		t.Errorf("interval %v, max cycles %d", c.Heartbeat.Interval.D(), c.Cycles.Max)
	}
	if c.Agent != (ckpt.Agent{ID: "Secondary-A", Type: "secondary", Name: "Secondary A"}) || c.Session.ID != "s1" || c.Session.Number != 1 {
		t.Errorf("agent %+v session %+v", c.Agent, c.Session)
	}
	if string(c.Meta["feature"]) != `"feature_02"` || string(c.Meta["coordination"]) != `{"unread_messages":0}` {
		t.Errorf("meta %s", c.Meta)
	}
	ev, _ := st.History(context.Background(), "kai-7/secondary-a", 1, 0)
	if len(ev) != 1 || ev[0].Actor != (ckpt.Actor{Agent: "Secondary-A", Session: "s1"}) || !ev[0].At.Equal(t0) {
		t.Errorf("event %+v", ev)
	}
}

func TestRunStartRejectsBadInputBeforeWriting(t *testing.T) {
	cases := []struct {
		name string
		opt  func(*StartOptions)
		msg  string
	}{
		{"bad id", func(o *StartOptions) { o.ID = "../x" }, `".."`},
		{"empty id", func(o *StartOptions) { o.ID = "" }, "empty"},
		{"long id", func(o *StartOptions) { o.ID = strings.Repeat("a", ckpt.MaxIDLen+1) }, "limit"},
		{"bad status", func(o *StartOptions) { o.Status = "sleeping" }, "use one of pending"},
		{"bad interval", func(o *StartOptions) { o.Interval = "soon" }, "15m"},
		{"zero interval", func(o *StartOptions) { o.Interval = "0s" }, "positive"},
		{"bad parent", func(o *StartOptions) { o.Parent = "a//b" }, "--parent"},
		{"bad meta", func(o *StartOptions) { o.MetaPairs = []string{"novalue"} }, "KEY=VALUE"},
		{"bad meta json", func(o *StartOptions) { o.MetaJSON = []string{"k={oops"} }, "not valid JSON"},
		{"duplicate step", func(o *StartOptions) { o.StepSpecs = []string{"a", "a"} }, "twice"},
		{"empty step", func(o *StartOptions) { o.StepSpecs = []string{"=Title"} }, "non-empty ID"},
		{"negative cycles", func(o *StartOptions) { o.MaxCycles = -1 }, "--max-cycles"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			st := memstore.New()
			var out, errOut bytes.Buffer
			o := &StartOptions{writeOptions: testWriter(st, &out, &errOut), ID: "x"}
			tc.opt(o)
			err := runStart(context.Background(), o)
			if !errors.Is(err, ckpt.ErrInvalid) || ExitCode(err) != ExitUsage {
				t.Fatalf("error %v (exit %d), want invalid input (exit 2)", err, ExitCode(err))
			}
			if !strings.Contains(err.Error(), tc.msg) {
				t.Errorf("error %q does not say %q", err, tc.msg)
			}
			if list, _ := ckpt.ListAll(context.Background(), st, ckpt.Filter{IncludeArchived: true}); len(list) != 0 {
				t.Errorf("a refused start stored %d checkpoints", len(list))
			}
		})
	}
}

func TestRunStepMarksAndDefaultsBy(t *testing.T) {
	st := memstore.New()
	startForTest(t, st, "w", "research", "spec", "checklist")
	var out, errOut bytes.Buffer
	o := &StepOptions{writeOptions: testWriter(st, &out, &errOut), ID: "w", Change: request.Step{Step: "research", Status: ckpt.StepDone, Output: "research/NOTES.md"}}
	if err := runStep(context.Background(), o); err != nil {
		t.Fatal(err)
	}
	if want := "w  rev 2  step research done  (1/3, 33%, in_progress)\n"; out.String() != want {
		t.Errorf("output %q, want %q", out.String(), want)
	}
	c, _ := st.Get(context.Background(), "w", 0)
	s := c.Steps[0]
	if s.Status != ckpt.StepDone || s.By != "Secondary-A" || s.Output != "research/NOTES.md" || s.CompletedAt == nil {
		t.Errorf("step %+v", s)
	}
	// A new step ID is refused without --add (a typo must not add a
	// step), added with it; an empty one is refused.
	o2 := &StepOptions{writeOptions: testWriter(st, &out, &errOut), ID: "w", Change: request.Step{Step: "review", Title: "Peer review"}}
	if err := runStep(context.Background(), o2); ExitCode(err) != ExitUsage || !strings.Contains(err.Error(), "ckpt step w review --add") {
		t.Fatalf("a new step without --add: %v", err)
	}
	o2.Change.Add = true
	if err := runStep(context.Background(), o2); err != nil {
		t.Fatal(err)
	}
	if c, _ := st.Get(context.Background(), "w", 0); len(c.Steps) != 4 || c.Steps[3].Title != "Peer review" || c.Steps[3].Status != ckpt.StepPending {
		t.Errorf("added step %+v", c.Steps)
	}
	o3 := &StepOptions{writeOptions: testWriter(st, &out, &errOut), ID: "w", Change: request.Step{Step: " "}}
	if err := runStep(context.Background(), o3); ExitCode(err) != ExitUsage {
		t.Errorf("empty step: %v", err)
	}
}

func ptr[T any](v T) *T { return &v }

func TestRunUpdateSetsEveryPatchField(t *testing.T) {
	st := memstore.New()
	startForTest(t, st, "w")
	var out, errOut bytes.Buffer
	o := &UpdateOptions{
		writeOptions: testWriter(st, &out, &errOut),
		ID:           "w",
		Update: request.Update{
			Title:         ptr("T"),
			TaskID:        ptr("KAI-9"),
			Stage:         ptr("S2.P2"),
			Phase:         ptr("Spec"),
			CurrentStep:   ptr("Writing acceptance criteria"),
			Status:        ptr("PAUSED"),
			StatusReason:  ptr("review"),
			Parent:        ptr("epic"),
			FilesCreated:  []string{"a.md"},
			FilesModified: []string{"b.md", "b.md"},
			AddLabels:     []string{"x", "y"},
			RemoveLabels:  []string{"y"},
			LastProcessed: ptr("row-3"),
			NextToProcess: ptr("row-4"),
			Notes:         ptr("half way"),
			Resumable:     ptr(false),
			Instructions:  ptr("Continue at row 4"),
			NextSteps:     ptr([]string{"row 4", "", "row 5"}),
			Interval:      ptr("5m"),
			MaxCycles:     ptr(4),
			Assign:        ptr("Secondary-C"),
			AgentType:     ptr("secondary"),
			AgentName:     ptr("C"),
		},
		ProgressText:     ptr("3/10"),
		MetaPairs:        []string{"k=v", "gone="},
		MetaJSONPairs:    []string{"n=3"},
		ReviewScorePairs: []string{"code=85", "docs="},
	}
	if err := runUpdate(context.Background(), o); err != nil {
		t.Fatal(err)
	}
	c, _ := st.Get(context.Background(), "w", 0)
	checks := []struct {
		what string
		ok   bool
	}{
		{"title", c.Title == "T"},
		{"task", c.TaskID == "KAI-9"},
		{"stage/phase/current", c.Stage == "S2.P2" && c.Phase == "Spec" && c.CurrentStep == "Writing acceptance criteria"},
		{"status", c.Status == ckpt.StatusWaiting && c.StatusReason == "review"},
		{"progress", c.Progress.Done == 3 && c.Progress.Total == 10 && c.Progress.Percent == 30},
		{"parent", c.Parent == "epic"},
		{"files", len(c.Files.Created) == 1 && len(c.Files.Modified) == 1},
		{"labels", len(c.Labels) == 1 && c.Labels[0] == "x"},
		{"context", c.Context == ckpt.Context{LastProcessed: "row-3", NextToProcess: "row-4", Notes: "half way"}},
		{"resume", !c.Resume.Resumable && c.Resume.Instructions == "Continue at row 4" && len(c.Resume.NextSteps) == 2},
		{"interval", c.Heartbeat.Interval.D() == 5*time.Minute},
		{"cycles", c.Cycles.Max == 4},
		{"meta", string(c.Meta["k"]) == `"v"` && string(c.Meta["n"]) == "3" && c.Meta["gone"] == nil},
		{"review", c.ReviewScores["code"] != nil && *c.ReviewScores["code"] == 85 && c.ReviewScores["docs"] == nil},
		{"agent", c.Agent == ckpt.Agent{ID: "Secondary-C", Type: "secondary", Name: "C"}},
	}
	for _, ch := range checks {
		if !ch.ok {
			t.Errorf("%s not updated: %+v", ch.what, c)
		}
	}
	if ev, _ := st.History(context.Background(), "w", 1, 0); len(ev) != 2 {
		t.Errorf("update appended %d events, want 1", len(ev)-1)
	}
	if !strings.HasPrefix(out.String(), "w  rev 2  updated title, task_id, parent, stage,") {
		t.Errorf("output %q", out.String())
	}
}

func TestRunUpdateRefusesBadValues(t *testing.T) {
	cases := []struct {
		name string
		opt  func(*UpdateOptions)
		msg  string
	}{
		{"nothing", func(o *UpdateOptions) {}, "nothing to update"},
		{"bad status", func(o *UpdateOptions) { o.Status = ptr("sleeping") }, "use one of"},
		{"bad progress", func(o *UpdateOptions) { o.ProgressText = ptr("3 of 10") }, "DONE/TOTAL"},
		{"progress past total", func(o *UpdateOptions) { o.ProgressText = ptr("11/10") }, "DONE/TOTAL"},
		{"bad interval", func(o *UpdateOptions) { o.Interval = ptr("15") }, "15m"},
		{"bad meta", func(o *UpdateOptions) { o.MetaPairs = []string{"=v"} }, "non-empty key"},
		{"bad score", func(o *UpdateOptions) { o.ReviewScorePairs = []string{"code=high"} }, "NAME=SCORE"},
		{"agent type alone", func(o *UpdateOptions) { o.AgentType = ptr("x") }, "--assign"},
		{"negative cycles", func(o *UpdateOptions) { o.MaxCycles = ptr(-2) }, "--max-cycles"},
		{"bad parent", func(o *UpdateOptions) { o.Parent = ptr("/x") }, "--parent"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			st := memstore.New()
			startForTest(t, st, "w")
			var out, errOut bytes.Buffer
			o := &UpdateOptions{writeOptions: testWriter(st, &out, &errOut), ID: "w"}
			tc.opt(o)
			err := runUpdate(context.Background(), o)
			if ExitCode(err) != ExitUsage || !strings.Contains(err.Error(), tc.msg) {
				t.Fatalf("error %v (exit %d), want exit 2 saying %q", err, ExitCode(err), tc.msg)
			}
			if c, _ := st.Get(context.Background(), "w", 0); c.Rev != 1 {
				t.Errorf("a refused update wrote: rev %d", c.Rev)
			}
		})
	}
}

func TestRunRecordVerbs(t *testing.T) {
	st := memstore.New()
	startForTest(t, st, "w")
	ctx := context.Background()
	var out, errOut bytes.Buffer
	record := func(r request.Request) error {
		o := testWriter(st, &out, &errOut)
		return o.appendEvent(ctx, "w", r)
	}
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(record(request.Decision{Text: "Use the v2 API", Reason: "v1 is rate limited"}))
	must(record(request.Block{Text: "Waiting for DISCOVERY.md"}))
	if c, _ := st.Get(ctx, "w", 0); c.Status != ckpt.StatusBlocked || c.Blockers[0].ID != "b1" {
		t.Fatalf("after block: %s %+v", c.Status, c.Blockers)
	}
	must(record(request.Block{Text: "API key", ID: "key"}))
	must(record(request.Unblock{ID: "b1"}))
	if c, _ := st.Get(ctx, "w", 0); c.Status != ckpt.StatusBlocked {
		t.Fatalf("one blocker left, status %s", c.Status)
	}
	must(record(request.Unblock{}))
	if c, _ := st.Get(ctx, "w", 0); c.Status != ckpt.StatusInProgress || len(c.ActiveBlockers()) != 0 {
		t.Fatalf("after unblock all: %s %+v", c.Status, c.Blockers)
	}
	if err := record(request.Unblock{}); ExitCode(err) != ExitUsage {
		t.Errorf("unblock with nothing to clear: %v", err)
	}
	must(record(request.Error{Message: "disk full", Type: "io", Blocking: true}))
	if c, _ := st.Get(ctx, "w", 0); c.Status != ckpt.StatusBlocked || c.Errors[0].Type != "io" {
		t.Fatalf("after blocking error: %s %+v", c.Status, c.Errors)
	}
	if err := record(request.Error{Clear: true, Message: "x"}); ExitCode(err) != ExitUsage {
		t.Errorf("--clear with a message: %v", err)
	}
	if err := record(request.Error{}); ExitCode(err) != ExitUsage || !strings.Contains(err.Error(), "--clear") {
		t.Errorf("error without message: %v", err)
	}
	must(record(request.Error{Clear: true}))
	must(record(request.Accept{ID: "tests", Title: "All pass"}))
	must(record(request.Accept{ID: "docs", Unmet: true}))
	must(record(request.Note{Text: "first"}))
	must(record(request.Note{Text: "second"}))
	c, _ := st.Get(ctx, "w", 0)
	if c.Status != ckpt.StatusInProgress || len(c.ActiveErrors()) != 0 {
		t.Errorf("after clearing errors: %s", c.Status)
	}
	if len(c.Acceptance) != 2 || !c.Acceptance[0].Met || c.Acceptance[1].Met {
		t.Errorf("acceptance %+v", c.Acceptance)
	}
	if c.Context.Notes != "first\nsecond" || len(c.Decisions) != 1 || c.Decisions[0].Reason != "v1 is rate limited" {
		t.Errorf("notes %q decisions %+v", c.Context.Notes, c.Decisions)
	}
	for _, line := range []string{
		"w  rev 2  decision: Use the v2 API  (0/0, 0%, in_progress)",
		"w  rev 3  blocker b1: Waiting for DISCOVERY.md  (0/0, 0%, blocked)",
		"w  rev 5  blocker b1 cleared  (0/0, 0%, blocked)",
		"w  rev 6  blockers cleared  (0/0, 0%, in_progress)",
		"w  rev 7  blocking error [io]: disk full  (0/0, 0%, blocked)",
		"w  rev 9  criterion tests met",
		"w  rev 12  note added",
	} {
		if !strings.Contains(out.String(), line) {
			t.Errorf("output lacks %q:\n%s", line, out.String())
		}
	}
	for _, bad := range []error{
		record(request.Decision{Text: " "}),
		record(request.Block{}),
		record(request.Note{}),
		record(request.Accept{}),
	} {
		if ExitCode(bad) != ExitUsage {
			t.Errorf("empty text accepted: %v", bad)
		}
	}
}

func TestRunCycleStopsAtTheLimit(t *testing.T) {
	st := memstore.New()
	ctx := context.Background()
	var out, errOut bytes.Buffer
	if err := runStart(ctx, &StartOptions{writeOptions: testWriter(st, &out, &errOut), ID: "loop", Start: request.Start{MaxCycles: 2}}); err != nil {
		t.Fatal(err)
	}
	cycle := func(r request.Cycle) error {
		o := testWriter(st, &out, &errOut)
		return o.appendEvent(ctx, "loop", r)
	}
	for i := 0; i < 2; i++ {
		if err := cycle(request.Cycle{Note: "fix"}); err != nil {
			t.Fatal(err)
		}
	}
	err := cycle(request.Cycle{})
	if ExitCode(err) != ExitCycleLimit || !strings.Contains(errorLine(err), "--max-cycles") {
		t.Fatalf("third cycle: %v (exit %d)", err, ExitCode(err))
	}
	if c, _ := st.Get(ctx, "loop", 0); c.Cycles.Count != 2 || c.Rev != 3 {
		t.Errorf("cycles %+v rev %d", c.Cycles, c.Rev)
	}
	if !strings.Contains(out.String(), "loop  rev 3  cycle 2/2") {
		t.Errorf("output %q", out.String())
	}
}

func TestRunStatusVerbs(t *testing.T) {
	st := memstore.New()
	startForTest(t, st, "w", "a")
	ctx := context.Background()
	var out, errOut bytes.Buffer
	status := func(r request.Status) error {
		o := testWriter(st, &out, &errOut)
		return o.appendEvent(ctx, "w", r)
	}
	err := status(request.Status{Status: ckpt.StatusFailed, NeedReason: true})
	if ExitCode(err) != ExitUsage || !strings.Contains(err.Error(), "--reason") {
		t.Fatalf("fail without reason: %v", err)
	}
	if err := status(request.Status{Status: ckpt.StatusWaiting, Reason: "review", NeedReason: true}); err != nil {
		t.Fatal(err)
	}
	if err := status(request.Status{Status: ckpt.StatusDone}); err != nil {
		t.Fatal(err)
	}
	c, _ := st.Get(ctx, "w", 0)
	if c.Status != ckpt.StatusDone || c.CompletedAt == nil || c.Rev != 3 {
		t.Errorf("status %s completed %v rev %d", c.Status, c.CompletedAt, c.Rev)
	}
	if !strings.Contains(out.String(), "w  rev 2  waiting: review  (0/1, 0%, waiting)") || !strings.Contains(out.String(), "w  rev 3  done  (0/1, 0%, done)") {
		t.Errorf("output %q", out.String())
	}
}

func TestWriteOptionsKeyIfRevAndJSON(t *testing.T) {
	st := memstore.New()
	startForTest(t, st, "w")
	ctx := context.Background()
	var out, errOut bytes.Buffer
	note := func(text string, mod func(*writeOptions)) error {
		o := testWriter(st, &out, &errOut)
		mod(&o)
		return o.appendEvent(ctx, "w", request.Note{Text: text})
	}
	if err := note("once", func(w *writeOptions) { w.Key = "k1" }); err != nil {
		t.Fatal(err)
	}
	first := out.String()
	out.Reset()
	if err := note("twice", func(w *writeOptions) { w.Key = "k1" }); err != nil {
		t.Fatal(err)
	}
	if out.String() != first {
		t.Errorf("repeat printed %q, want the first result %q", out.String(), first)
	}
	if !strings.Contains(errOut.String(), `ckpt: warning: key "k1" was applied already as revision 2: nothing appended`) {
		t.Errorf("stderr %q", errOut.String())
	}
	if c, _ := st.Get(ctx, "w", 0); c.Rev != 2 || c.Context.Notes != "once" {
		t.Errorf("repeat appended: rev %d notes %q", c.Rev, c.Context.Notes)
	}
	err := note("late", func(w *writeOptions) { w.IfRev = 1 })
	var ce *ckpt.ConflictError
	if !errors.As(err, &ce) || ExitCode(err) != ExitConflict || ce.Have != 2 || !strings.Contains(errorLine(err), "--if-rev 2") {
		t.Fatalf("CAS on a stale rev: %v", err)
	}
	if err := note("bad", func(w *writeOptions) { w.IfRev = -1 }); ExitCode(err) != ExitUsage {
		t.Errorf("--if-rev -1: %v", err)
	}
	out.Reset()
	if err := note("json", func(w *writeOptions) { w.IfRev = 2; w.JSON = true }); err != nil {
		t.Fatal(err)
	}
	var c ckpt.Checkpoint
	if err := json.Unmarshal(out.Bytes(), &c); err != nil || c.Rev != 3 || c.Context.Notes != "once\njson" {
		t.Errorf("--json printed %s (%v)", out.String(), err)
	}
}

func TestRunBeatDoesNotGrowHistory(t *testing.T) {
	st := memstore.New()
	startForTest(t, st, "w")
	ctx := context.Background()
	var out, errOut bytes.Buffer
	later := t0.Add(7 * time.Minute)
	o := &BeatOptions{common: testWriter(st, &out, &errOut).common, ID: "w"}
	o.Now = func() time.Time { return later }
	if err := runBeat(ctx, o); err != nil {
		t.Fatal(err)
	}
	if out.String() != "w  beat at 2026-01-15T14:37:00Z\n" {
		t.Errorf("output %q", out.String())
	}
	c, _ := st.Get(ctx, "w", 0)
	if c.Rev != 1 || !c.Heartbeat.LastBeat.Equal(later) || !c.LastSeen().Equal(later) {
		t.Errorf("rev %d last beat %v", c.Rev, c.Heartbeat.LastBeat)
	}
	o.ID = "nope"
	if err := runBeat(ctx, o); ExitCode(err) != ExitNotFound {
		t.Errorf("beat of a missing checkpoint: %v", err)
	}
	o.ID = "../x"
	if err := runBeat(ctx, o); ExitCode(err) != ExitUsage {
		t.Errorf("beat of a bad ID: %v", err)
	}
}
