package bulk

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/ckpt-dev/ckpt"
	"github.com/ckpt-dev/ckpt/memstore"
	"github.com/ckpt-dev/ckpt/storetest"
)

func ptr[T any](v T) *T { return &v }

// fleet: team/a and team/b in progress, team/c done, team/d blocked,
// other/e in progress.
func fleet(t *testing.T) *memstore.Store {
	t.Helper()
	st := memstore.New()
	at := time.Now().Add(-time.Minute)
	add := func(id string, status ckpt.Status, more ...ckpt.Event) {
		c := ckpt.Created{Patch: ckpt.Patch{Title: ptr("task " + id), Status: &status, Agent: &ckpt.Agent{ID: "agent-" + id[len(id)-1:]}}}
		if _, err := st.Append(context.Background(), id, ckpt.MustEvent(ckpt.EventCreated, at, ckpt.Actor{Agent: "seed"}, c), ckpt.AppendOptions{}); err != nil {
			t.Fatal(err)
		}
		for _, e := range more {
			if _, err := st.Append(context.Background(), id, e, ckpt.AppendOptions{}); err != nil {
				t.Fatal(err)
			}
		}
	}
	add("team/a", ckpt.StatusInProgress)
	add("team/b", ckpt.StatusInProgress)
	add("team/c", ckpt.StatusDone)
	add("team/d", ckpt.StatusInProgress, ckpt.MustEvent(ckpt.EventBlocker, at, ckpt.Actor{Agent: "seed"}, ckpt.BlockerChange{ID: "b1", Text: "needs a key"}))
	add("other/e", ckpt.StatusInProgress)
	t.Cleanup(func() { storetest.Verify(t, st) })
	return st
}

func env(st ckpt.Store) Env {
	return Env{Store: st, Now: time.Now(), Actor: ckpt.Actor{Agent: "lead"}}
}

func outcomes(r Result) string {
	var b strings.Builder
	for _, it := range r.Items {
		b.WriteString(it.ID + "=" + it.Outcome + " ")
	}
	return strings.TrimSpace(b.String())
}

// TestPreviewThenRun: a dry run says what would happen to each checkpoint
// the filters pick and writes nothing; the run does it and reports each.
func TestPreviewThenRun(t *testing.T) {
	st := fleet(t)
	ctx := context.Background()
	req := Request{Action: Done, Select: Selector{Prefix: "team"}, DryRun: true}
	pre, err := Run(ctx, env(st), req)
	if err != nil {
		t.Fatal(err)
	}
	if got := outcomes(pre); got != "team/a=will team/b=will team/c=skipped team/d=will" || pre.Matched != 4 || pre.Counts[Will] != 3 {
		t.Fatalf("preview %s (matched %d, counts %v)", got, pre.Matched, pre.Counts)
	}
	if c, _ := st.Get(ctx, "team/a", 0); c.Status != ckpt.StatusInProgress {
		t.Fatalf("a dry run wrote: team/a is %s", c.Status)
	}
	req.DryRun = false
	got, err := Run(ctx, env(st), req)
	if err != nil {
		t.Fatal(err)
	}
	if o := outcomes(got); o != "team/a=done team/b=done team/c=skipped team/d=done" || got.Counts[Applied] != 3 {
		t.Fatalf("run %s (counts %v)", o, got.Counts)
	}
	for _, id := range []string{"team/a", "team/b", "team/d"} {
		c, _ := st.Get(ctx, id, 0)
		if c.Status != ckpt.StatusDone {
			t.Errorf("%s is %s after the run", id, c.Status)
		}
	}
	if c, _ := st.Get(ctx, "other/e", 0); c.Status != ckpt.StatusInProgress {
		t.Errorf("other/e, outside the prefix, is %s", c.Status)
	}
}

// TestRunActsOnlyOnThePreviewedIDs: a run given the IDs of a preview acts
// on those alone, and skips one the filters no longer pick.
func TestRunActsOnlyOnThePreviewedIDs(t *testing.T) {
	st := fleet(t)
	ctx := context.Background()
	// team/b is done between the preview and the run: no longer picked
	// by status=in_progress.
	if _, err := st.Append(ctx, "team/b", ckpt.MustEvent(ckpt.EventStatus, time.Now(), ckpt.Actor{Agent: "b"}, ckpt.StatusChange{Status: ckpt.StatusDone}), ckpt.AppendOptions{}); err != nil {
		t.Fatal(err)
	}
	got, err := Run(ctx, env(st), Request{Action: Tell, Text: "stop and commit", Select: Selector{Status: "in_progress"}, IDs: []string{"team/a", "team/b"}})
	if err != nil {
		t.Fatal(err)
	}
	if o := outcomes(got); o != "team/a=done team/b=skipped" {
		t.Fatalf("run %s", o)
	}
	a, _ := st.Get(ctx, "team/a", 0)
	e, _ := st.Get(ctx, "other/e", 0)
	if len(a.Messages) != 1 || a.Messages[0].Text != "stop and commit" || a.Messages[0].From != "lead" || len(e.Messages) != 0 {
		t.Errorf("messages: team/a %+v, other/e %+v", a.Messages, e.Messages)
	}
}

// TestScopeAndWhatDoesNotApply: what the caller may not change is
// forbidden, each action skips what it does not apply to, and a request
// without a filter, an unknown action or a tell without text is refused.
func TestScopeAndWhatDoesNotApply(t *testing.T) {
	st := fleet(t)
	ctx := context.Background()
	e := env(st)
	e.May = func(id string) bool { return ckpt.UnderPrefix(id, "team") }
	got, err := Run(ctx, e, Request{Action: Unblock, Select: Selector{Text: "task"}})
	if err != nil {
		t.Fatal(err)
	}
	if o := outcomes(got); o != "other/e=forbidden team/a=skipped team/b=skipped team/c=skipped team/d=done" {
		t.Errorf("unblock: %s", o)
	}
	if c, _ := st.Get(ctx, "team/d", 0); len(c.ActiveBlockers()) != 0 {
		t.Errorf("team/d still has blockers %+v", c.ActiveBlockers())
	}
	got, err = Run(ctx, env(st), Request{Action: Archive, Select: Selector{Prefix: "team"}})
	if err != nil {
		t.Fatal(err)
	}
	if o := outcomes(got); o != "team/a=skipped team/b=skipped team/c=done team/d=skipped" {
		t.Errorf("archive: %s", o)
	}
	got, err = Run(ctx, env(st), Request{Action: Done, Select: Selector{Presence: "blocked,working"}, DryRun: true})
	if err != nil {
		t.Fatal(err)
	}
	if o := outcomes(got); o != "other/e=will team/a=will team/b=will team/d=will" {
		t.Errorf("presence filter: %s", o)
	}
	for _, bad := range []Request{
		{Action: Done},
		{Action: "explode", Select: Selector{All: true}},
		{Action: Tell, Select: Selector{All: true}},
		{Action: Done, Select: Selector{Status: "sleeping"}},
	} {
		if _, err := Run(ctx, env(st), bad); !errors.Is(err, ckpt.ErrInvalid) {
			t.Errorf("%+v: error %v, want invalid", bad, err)
		}
	}
}
