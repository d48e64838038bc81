package storetest

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/ckpt-dev/ckpt"
)

// testListQuiet: with Filter.Quiet a store may leave out checkpoints, but
// only ones Quiet.Omits judges on their summaries, each counted once in
// Page.Omitted whatever the page size; the rest are listed as without it.
func testListQuiet(t *testing.T, s ckpt.Store) {
	ctx := context.Background()
	live := ckpt.StatusInProgress
	for i := range 12 {
		id := fmt.Sprintf("q/%02d", i)
		patch := ckpt.Patch{Status: &live}
		if i%4 == 3 {
			iv := ckpt.Duration(time.Second)
			patch.Interval = &iv
		}
		create(t, s, id, ckpt.Created{Patch: patch})
		if i%3 != 0 {
			sig := ckpt.Signal{At: at(1000 + i)}
			if i%3 == 2 && i%2 == 0 {
				sig.Process = &ckpt.Process{Host: "elsewhere", PID: 9}
			}
			if err := s.Beat(ctx, id, sig); err != nil {
				t.Fatal(err)
			}
		}
	}
	f := ckpt.Filter{Prefix: "q/", Status: []ckpt.Status{live}}
	all, err := ckpt.ListAll(ctx, s, f)
	if err != nil {
		t.Fatal(err)
	}
	byID := map[string]ckpt.Summary{}
	for _, c := range all {
		byID[c.ID] = c
	}
	f.Quiet = &ckpt.Quiet{At: at(1010)}
	for _, limit := range []int{0, 1, 5, ckpt.MaxPageSize} {
		listed, omitted, opts := map[string]bool{}, 0, ckpt.ListOptions{Filter: f, Limit: limit}
		for {
			p, err := s.List(ctx, opts)
			if err != nil {
				t.Fatal(err)
			}
			for _, c := range p.Items {
				listed[c.ID] = true
			}
			omitted += p.Omitted
			if p.Next == "" {
				break
			}
			opts.After = p.Next
		}
		t.Logf("limit %d: %d listed, %d omitted", limit, len(listed), omitted)
		if len(listed)+omitted != len(all) {
			t.Errorf("limit %d: %d listed + %d omitted, want the %d listed without Quiet", limit, len(listed), omitted, len(all))
		}
		for id, c := range byID {
			if listed[id] {
				continue
			}
			process := c.Heartbeat.Presence != nil && c.Heartbeat.Presence.Process != nil
			if !f.Quiet.Omits(c.Status, c.Archived != nil, c.LastSeen(), c.Heartbeat.Interval.D(), process) {
				t.Errorf("limit %d: %s left out, but Quiet.Omits does not judge it so (%+v)", limit, id, c)
			}
		}
	}
}
