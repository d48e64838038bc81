package request

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	ckpt "github.com/ckpt-dev/ckpt"
	"github.com/ckpt-dev/ckpt/memstore"
)

var t0 = time.Date(2026, 1, 15, 14, 0, 0, 0, time.UTC)

func flags(f string) string { return "--" + strings.ReplaceAll(f, "_", "-") }

func ptr[T any](v T) *T { return &v }

// TestBuildRefusesWithTheSurfacesNames: every refusal wraps ErrInvalid and
// names the field the way the surface that asked does.
func TestBuildRefusesWithTheSurfacesNames(t *testing.T) {
	cases := []struct {
		r    Request
		want string
	}{
		{Start{Steps: []ckpt.Step{{ID: "a"}, {ID: "a"}}}, `--step "a" is given twice`},
		{Start{Interval: "15"}, `--interval "15" is not a positive duration`},
		{Start{MaxCycles: -1}, "--max-cycles -1: give 0"},
		{Start{Parent: "../x"}, "--parent: "},
		{Start{Status: "sleeping"}, `--status: invalid input: unknown status "sleeping"`},
		{Update{}, "nothing to update"},
		{Update{NextSteps: &[]string{" "}, AgentType: ptr("x")}, "--agent-type and --agent-name need --assign AGENT"},
		{Update{Progress: &ckpt.ProgressSet{Done: 4, Total: 3}}, "--progress 4/3"},
		{Update{MaxCycles: ptr(-2)}, "--max-cycles -2"},
		{Step{Step: " "}, "the step ID is empty"},
		{Step{Step: "a", Status: "halfway"}, `step status "halfway"`},
		{Decision{Text: " "}, "the decision's text is empty"},
		{Block{}, "the blocker's text is empty"},
		{Error{Clear: true, Message: "x"}, "--clear takes no message or --blocking"},
		{Error{}, "give it as --message, or pass --clear"},
		{Accept{}, "the criterion ID is empty"},
		{Note{}, "the note is empty"},
		{Status{Status: ckpt.StatusWaiting, NeedReason: true}, "say why with --reason"},
	}
	for _, tc := range cases {
		_, _, err := tc.r.Build(flags)
		if !errors.Is(err, ckpt.ErrInvalid) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%T%+v: %v, want ErrInvalid with %q", tc.r, tc.r, err, tc.want)
		}
	}
	if _, _, err := (Update{}).Build(nil); !errors.Is(err, ErrEmpty) {
		t.Errorf("an empty update: %v, want ErrEmpty", err)
	}
}

// TestBuildMakesTheEvents: what each request records, with the defaults
// every surface shares.
func TestBuildMakesTheEvents(t *testing.T) {
	typ, data, err := Start{Title: "T", Steps: []ckpt.Step{{ID: "a", Title: "A", Status: ckpt.StepDone}}, Labels: []string{"", "x"},
		Agent: ckpt.Agent{ID: "kai"}, Session: "s1", MaxCycles: 3}.Build(nil)
	cr, _ := data.(ckpt.Created)
	if err != nil || typ != ckpt.EventCreated || *cr.Title != "T" || cr.Steps[0].Status != ckpt.StepPending ||
		len(cr.AddLabels) != 1 || cr.Agent.ID != "kai" || cr.Session.ID != "s1" || *cr.MaxCycles != 3 {
		t.Errorf("start: %v %v %+v", typ, err, cr)
	}
	_, data, err = Update{NextSteps: &[]string{"", "go on"}, Assign: ptr("b"), AgentName: ptr("Bee"), Interval: ptr("5m")}.Build(nil)
	p, _ := data.(ckpt.Patch)
	if err != nil || len(*p.NextSteps) != 1 || *p.Agent != (ckpt.Agent{ID: "b", Name: "Bee"}) || p.Interval.D() != 5*time.Minute {
		t.Errorf("update: %v %+v", err, p)
	}
	_, data, _ = Update{NextSteps: &[]string{""}}.Build(nil)
	if p := data.(ckpt.Patch); p.NextSteps == nil || len(*p.NextSteps) != 0 {
		t.Errorf("--next-step \"\" must empty the list: %+v", p)
	}
	_, data, _ = Step{Step: "a", Status: ckpt.StepDone, Actor: "kai"}.Build(nil)
	if sc := data.(ckpt.StepChange); sc.By != "kai" || !sc.MustExist {
		t.Errorf("a status change is by the acting agent, and the step must exist: %+v", sc)
	}
	_, data, _ = Step{Step: "a", Title: "x", Actor: "kai", Add: true}.Build(nil)
	if sc := data.(ckpt.StepChange); sc.By != "" || sc.MustExist {
		t.Errorf("no status change records no one; Add lets the step be new: %+v", sc)
	}
}

func TestAppend(t *testing.T) {
	ctx := context.Background()
	st := memstore.New()
	w := Write{At: t0, Actor: ckpt.Actor{Agent: "kai"}, Key: "k1"}
	res, err := Append(ctx, st, "job", Start{Title: "T", Steps: []ckpt.Step{{ID: "a"}}}, w)
	if err != nil || res.State.Rev != 1 || res.Event.Key != "k1" {
		t.Fatalf("start: %v %+v", err, res)
	}
	if res, err = Append(ctx, st, "job", Start{Title: "T"}, w); err != nil || !res.Replayed {
		t.Fatalf("the same key again: %v, replayed %v", err, res.Replayed)
	}
	if _, err := Append(ctx, st, "job", Step{Step: "b", Status: ckpt.StepDone}, Write{At: t0}); err == nil {
		t.Fatal("a step the checkpoint does not have was recorded")
	}
	if _, err := Append(ctx, st, "job", Note{Text: "n"}, Write{At: t0, IfRev: -1, Names: flags}); !errors.Is(err, ckpt.ErrInvalid) || !strings.Contains(err.Error(), "--if-rev -1") {
		t.Fatalf("a negative if-rev: %v", err)
	}
	if _, err := Append(ctx, st, "../job", Note{Text: "n"}, Write{At: t0}); !errors.Is(err, ckpt.ErrInvalid) {
		t.Fatalf("a bad ID: %v", err)
	}
	if _, err := Append(ctx, st, "job", Note{Text: "n"}, Write{At: t0, IfRev: 5}); !errors.Is(err, ckpt.ErrConflict) {
		t.Fatalf("a stale if-rev: %v", err)
	}
	if c, _ := st.Get(ctx, "job", 0); c.Rev != 1 {
		t.Fatalf("refused requests wrote: rev %d", c.Rev)
	}
}

func FuzzParseStepStatus(f *testing.F) {
	for _, s := range []string{"done", " Start ", "", "halfway", "SKIP"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		st, err := ParseStepStatus("status", s)
		if err != nil {
			if !errors.Is(err, ckpt.ErrInvalid) {
				t.Fatalf("error does not wrap ErrInvalid: %v", err)
			}
			return
		}
		if st != "" && !st.Valid() {
			t.Fatalf("accepted %q as %q", s, st)
		}
	})
}

// TestResumeAgentRules: a different agent replaces the recorded one (and
// says whom it replaced); the same agent keeps its recorded type; a type
// without an agent is refused.
func TestResumeAgentRules(t *testing.T) {
	ctx := context.Background()
	st := memstore.New()
	if _, err := Append(ctx, st, "job", Start{Title: "T", Agent: ckpt.Agent{ID: "kai", Type: "primary"}}, Write{At: t0}); err != nil {
		t.Fatal(err)
	}
	l := ckpt.Lifecycle{At: t0.Add(time.Minute)}
	res, err := Resume{Agent: "kai"}.Run(ctx, st, "job", l, nil)
	if err != nil || res.Was != "" || res.State.Agent != (ckpt.Agent{ID: "kai", Type: "primary"}) || res.State.Session.Number != 2 {
		t.Fatalf("the same agent: %v %+v", err, res)
	}
	if _, err := (Resume{Agent: "kai", AgentType: "x"}).Run(ctx, st, "job", l, flags); !errors.Is(err, ckpt.ErrInvalid) || !strings.Contains(err.Error(), "is already kai's") {
		t.Fatalf("a new type for the same agent: %v", err)
	}
	if _, err := (Resume{AgentType: "x"}).Run(ctx, st, "job", l, flags); !errors.Is(err, ckpt.ErrInvalid) || !strings.Contains(err.Error(), "pass --agent NAME") {
		t.Fatalf("a type without an agent: %v", err)
	}
	res, err = Resume{Agent: "ann", AgentType: "secondary"}.Run(ctx, st, "job", l, nil)
	if err != nil || res.Was != "kai" || res.State.Agent != (ckpt.Agent{ID: "ann", Type: "secondary"}) || res.Damage != nil {
		t.Fatalf("another agent: %v %+v", err, res)
	}
	if _, err := (Resume{}).Run(ctx, st, "nope", l, nil); !errors.Is(err, ckpt.ErrNotFound) {
		t.Fatalf("a checkpoint that does not exist: %v", err)
	}
}

// TestAppendRefusesProgressOfWorkWithSteps: progress of a checkpoint with
// steps is derived from them; a figure given for it is refused, for every
// surface that appends through Append.
func TestAppendRefusesProgressOfWorkWithSteps(t *testing.T) {
	ctx := context.Background()
	st := memstore.New()
	Append(ctx, st, "steps", Start{Steps: []ckpt.Step{{ID: "a"}}}, Write{At: t0})
	Append(ctx, st, "batch", Start{Title: "rows"}, Write{At: t0})
	p := &ckpt.ProgressSet{Done: 3, Total: 10}
	if _, err := Append(ctx, st, "steps", Update{Progress: p}, Write{At: t0}); !errors.Is(err, ckpt.ErrInvalid) || !strings.Contains(err.Error(), "derived from them") {
		t.Fatalf("progress of work with steps: %v", err)
	}
	if res, err := Append(ctx, st, "batch", Update{Progress: p}, Write{At: t0}); err != nil || res.State.Progress.Done != 3 {
		t.Fatalf("progress of work without steps: %v", err)
	}
	if _, err := Append(ctx, st, "nope", Update{Progress: p}, Write{At: t0}); !errors.Is(err, ckpt.ErrNotFound) {
		t.Fatalf("a checkpoint that does not exist: %v", err)
	}
}
