package remote_test

import (
	"context"
	"testing"
	"time"

	"github.com/ckpt-dev/ckpt"
	"github.com/ckpt-dev/ckpt/remote"
)

// An append under remote.WithoutState asks for no state and gets none;
// the event stored is the same, and its seq is the new revision. Without
// it the state comes as before, and a key retried minimal replays.
func TestAppendWithoutState(t *testing.T) {
	t.Parallel()
	s := serve(t, newFileStore(t))
	c, err := remote.New(s.http.URL, remote.Options{Token: s.admin})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	full, err := c.Append(ctx, "a", ckpt.MustEvent(ckpt.EventCreated, time.Time{}, ckpt.Actor{Agent: "kai"}, ckpt.Created{}), ckpt.AppendOptions{})
	if err != nil || full.State == nil || full.State.Rev != 1 {
		t.Fatalf("a full append: %+v, %v", full, err)
	}
	e := ckpt.MustEvent(ckpt.EventNote, time.Time{}, ckpt.Actor{Agent: "kai"}, ckpt.Note{Text: "n"})
	e.Key = "k-minimal"
	res, err := c.Append(remote.WithoutState(ctx), "a", e, ckpt.AppendOptions{IfRev: 1})
	if err != nil || res.State != nil || res.Event.Seq != 2 || res.Event.Sum == "" || res.Replayed {
		t.Fatalf("a minimal append: %+v, %v; want no state, seq 2, a sum", res, err)
	}
	again, err := c.Append(remote.WithoutState(ctx), "a", e, ckpt.AppendOptions{})
	if err != nil || !again.Replayed || again.Event.Sum != res.Event.Sum || again.State != nil {
		t.Fatalf("the key again: %+v, %v; want a replay of seq 2", again, err)
	}
	got, err := c.Get(ctx, "a", 0)
	if err != nil || got.Rev != 2 {
		t.Fatalf("after: %+v, %v", got, err)
	}
}
