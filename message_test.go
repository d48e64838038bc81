package ckpt_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/ckpt-dev/ckpt"
	"github.com/ckpt-dev/ckpt/internal/wire"
)

func told(minute int, from, text string) ckpt.Event {
	return ckpt.MustEvent(ckpt.EventTold, t0.Add(time.Duration(minute)*time.Minute), ckpt.Actor{Agent: from}, ckpt.Tell{Text: text})
}

// A told message waits in the state, named by its sender (the event's
// actor), until a delivery takes it out; telling does not make the agent
// look active.
func TestToldMessageWaitsUntilDeliveredOnce(t *testing.T) {
	h := history(
		ev(ckpt.EventCreated, 0, ckpt.Created{}),
		told(5, "lead", "use the v2 schema"),
		told(6, "", "and rebase first"),
	)
	c, err := ckpt.Fold("kai-7/a", h)
	if err != nil {
		t.Fatal(err)
	}
	if !c.UpdatedAt.Equal(t0) {
		t.Fatalf("telling moved UpdatedAt to %v: a silent agent would look alive", c.UpdatedAt)
	}
	want := []ckpt.Message{{ID: "m2", From: "lead", At: t0.Add(5 * time.Minute), Text: "use the v2 schema"},
		{ID: "m3", From: ckpt.UnknownSender, At: t0.Add(6 * time.Minute), Text: "and rebase first"}}
	if len(c.Messages) != 2 || c.Messages[0] != want[0] || c.Messages[1] != want[1] {
		t.Fatalf("pending messages = %+v, want %+v", c.Messages, want)
	}
	if s := c.Summary(); s.Messages != 2 {
		t.Fatalf("summary counts %d pending messages, want 2", s.Messages)
	}
	d := ckpt.MustEvent(ckpt.EventDelivered, t0.Add(7*time.Minute), ckpt.Actor{Agent: "claude-code"}, ckpt.Delivery{IDs: []string{"m2"}, Via: "claude-code Stop"})
	d.Seq = 4
	c, err = ckpt.Apply("kai-7/a", c, d)
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Messages) != 1 || c.Messages[0].ID != "m3" {
		t.Fatalf("after delivering m2, pending = %+v", c.Messages)
	}
	again := d
	again.Seq = 5
	if _, err := ckpt.Apply("kai-7/a", c.Clone(), again); !errors.Is(err, ckpt.ErrConflict) {
		t.Fatalf("delivering m2 twice: err = %v, want ErrConflict", err)
	}
}

func TestTellIsBounded(t *testing.T) {
	base := func() *ckpt.Checkpoint {
		c, err := ckpt.Fold("a", history(ev(ckpt.EventCreated, 0, ckpt.Created{})))
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	for name, text := range map[string]string{"empty": "  \n", "too long": strings.Repeat("x", ckpt.MaxMessageBytes+1)} {
		e := told(1, "lead", text)
		e.Seq = 2
		if _, err := ckpt.Apply("a", base(), e); !errors.Is(err, ckpt.ErrInvalid) {
			t.Errorf("%s message: err = %v, want ErrInvalid", name, err)
		}
	}
	c := base()
	for i := range ckpt.MaxPendingMessages + 1 {
		e := told(i, "lead", "ping")
		e.Seq = c.Rev + 1
		next, err := ckpt.Apply("a", c, e)
		if i == ckpt.MaxPendingMessages {
			if !errors.Is(err, ckpt.ErrInvalid) || !strings.Contains(err.Error(), "undelivered") {
				t.Fatalf("message %d past the pending limit: err = %v", i+1, err)
			}
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		c = next
	}
}

// A restore brings back neither delivered messages nor drops pending ones.
func TestSnapshotKeepsTheMailbox(t *testing.T) {
	h := history(
		ev(ckpt.EventCreated, 0, ckpt.Created{}),
		told(1, "lead", "first"),
	)
	c, err := ckpt.Fold("a", h)
	if err != nil {
		t.Fatal(err)
	}
	old := *c.Clone()
	h = append(h, ckpt.MustEvent(ckpt.EventDelivered, t0.Add(2*time.Minute), ckpt.Actor{}, ckpt.Delivery{IDs: []string{"m2"}}),
		told(3, "lead", "second"),
		ckpt.MustEvent(ckpt.EventRestored, t0.Add(4*time.Minute), ckpt.Actor{}, ckpt.Snapshot{State: old, Rev: 2}))
	c, err = ckpt.Fold("a", history(h...))
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Messages) != 1 || c.Messages[0].Text != "second" {
		t.Fatalf("after restoring revision 2, pending = %+v, want only the undelivered \"second\"", c.Messages)
	}
}

// FuzzTellDelivery: any told or delivered payload is either refused with
// one of the package's errors or leaves a mailbox with unique IDs, each
// message bounded, that survives the state codec unchanged; an ID once
// delivered is never pending again.
func FuzzTellDelivery(f *testing.F) {
	f.Add([]byte(`{"text":"hello"}`), []byte(`{"ids":["m2"]}`), []byte(`{"ids":["m2"],"via":"x"}`))
	f.Add([]byte(`{"text":"\u003c/message\u003e"}`), []byte(`{"ids":["m2","m2"]}`), []byte(`{"ids":[]}`))
	f.Add([]byte(`{"text":1}`), []byte(`{"ids":"m2"}`), []byte(`{"text":"x","ids":["m3"]}`))
	f.Fuzz(func(t *testing.T, a, b, c []byte) {
		cp, err := ckpt.Fold("x", history(ev(ckpt.EventCreated, 0, ckpt.Created{})))
		if err != nil {
			t.Fatal(err)
		}
		delivered := map[string]bool{}
		for i, data := range [][]byte{a, b, c, a, b} {
			typ := ckpt.EventTold
			if i%2 == 1 {
				typ = ckpt.EventDelivered
			}
			e := ckpt.Event{Seq: cp.Rev + 1, At: t0.Add(time.Duration(i) * time.Minute), Type: typ, Actor: ckpt.Actor{Agent: "lead"}, Data: data}
			before := cp.Clone()
			next, err := ckpt.Apply("x", cp, e)
			if err != nil {
				if !errors.Is(err, ckpt.ErrInvalid) && !errors.Is(err, ckpt.ErrConflict) {
					t.Fatalf("Apply error %v wraps neither ErrInvalid nor ErrConflict", err)
				}
				cp = before
				continue
			}
			cp = next
			if typ == ckpt.EventDelivered {
				var d ckpt.Delivery
				_ = json.Unmarshal(data, &d)
				for _, id := range d.IDs {
					delivered[id] = true
				}
			}
			seen := map[string]bool{}
			for _, m := range cp.Messages {
				if seen[m.ID] || delivered[m.ID] || len(m.Text) > ckpt.MaxMessageBytes || !utf8.ValidString(m.Text) || m.From == "" {
					t.Fatalf("bad mailbox %+v (delivered %v)", cp.Messages, delivered)
				}
				seen[m.ID] = true
			}
			if len(cp.Messages) > ckpt.MaxPendingMessages {
				t.Fatalf("%d pending messages", len(cp.Messages))
			}
			checkWire(t, cp)
		}
	})
}

// checkWire: the wire codec writes the state as json.Marshal does and
// reads it back as json.Unmarshal does.
func checkWire(t *testing.T, cp *ckpt.Checkpoint) {
	t.Helper()
	want, werr := json.Marshal(cp)
	got, gerr := wire.Marshal(cp)
	if werr != nil || gerr != nil || !bytes.Equal(got, want) {
		t.Fatalf("wire.Marshal wrote %s (%v), json.Marshal %s (%v)", got, gerr, want, werr)
	}
	var back, wantBack ckpt.Checkpoint
	if err := json.Unmarshal(want, &wantBack); err != nil {
		t.Fatal(err)
	}
	if err := wire.Unmarshal(want, &back); err != nil || !reflect.DeepEqual(back, wantBack) {
		t.Fatalf("wire.Unmarshal read %+v (%v), json.Unmarshal %+v", back, err, wantBack)
	}
}
