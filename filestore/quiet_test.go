package filestore

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"reflect"
	"testing"
	"time"

	"github.com/ckpt-dev/ckpt"
)

// noQuiet is a store that never sees Filter.Quiet: every checkpoint is
// listed and judged.
type noQuiet struct{ ckpt.Store }

func (n noQuiet) List(ctx context.Context, opts ckpt.ListOptions) (ckpt.Page, error) {
	opts.Filter.Quiet = nil
	return n.Store.List(ctx, opts)
}

// seedQuiet makes checkpoints of every kind a stale report tells apart:
// beating now and long ago, never beating, a process bound, intervals of
// a minute and an hour, waiting, blocked, done and archived.
func seedQuiet(t testing.TB, s *Store, now time.Time) {
	t.Helper()
	ctx := context.Background()
	for i := range 60 {
		id := fmt.Sprintf("q/%02d", i)
		status := []ckpt.Status{ckpt.StatusInProgress, ckpt.StatusWaiting, ckpt.StatusBlocked, ckpt.StatusDone}[i%4]
		patch := ckpt.Patch{Status: &status}
		if i%5 == 1 {
			iv := ckpt.Duration(time.Minute)
			patch.Interval = &iv
		} else if i%5 == 2 {
			iv := ckpt.Duration(time.Hour)
			patch.Interval = &iv
		}
		updated := now.Add(-time.Duration(i%3) * 40 * time.Minute)
		appendOK(t, s, id, ckpt.MustEvent(ckpt.EventCreated, updated, ckpt.Actor{}, ckpt.Created{Patch: patch}))
		if i%11 == 3 {
			appendOK(t, s, id, ckpt.MustEvent(ckpt.EventArchived, updated, ckpt.Actor{}, ckpt.Archive{Reason: "complete", At: updated}))
		}
		var sig ckpt.Signal
		switch i % 6 {
		case 0, 1:
			sig = ckpt.Signal{At: now.Add(-time.Duration(i) * time.Second)}
		case 2:
			sig = ckpt.Signal{At: now.Add(-3 * time.Hour)}
		case 3:
			sig = ckpt.Signal{At: now.Add(-time.Second), State: ckpt.PresenceBusy, Process: &ckpt.Process{Host: "elsewhere", PID: 4}}
		default:
			continue // never beats
		}
		if err := s.Beat(ctx, id, sig); err != nil {
			t.Fatal(err)
		}
	}
}

// TestStaleLeavesOutWhatBeatRecently: with ckpt.Quiet a full listing
// leaves out the checkpoints seen within their warn threshold and counts
// them, and the stale report made so is the one made by judging every
// checkpoint, under default and given thresholds; paging with short
// pages counts each left-out checkpoint once.
func TestStaleLeavesOutWhatBeatRecently(t *testing.T) {
	s := newStore(t, Options{})
	now := time.Now()
	seedQuiet(t, s, now)
	ctx := context.Background()
	for _, th := range []ckpt.Thresholds{{}, {Warn: 30 * time.Second}, {Warn: 2 * time.Hour, Stale: 4 * time.Hour}} {
		got, err := ckpt.StaleFrom(ctx, s, ckpt.Filter{}, now, th, nil)
		if err != nil {
			t.Fatal(err)
		}
		want, err := ckpt.StaleFrom(ctx, noQuiet{s}, ckpt.Filter{}, now, th, nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range []*ckpt.StaleReport{&got, &want} {
			for i := range r.Entries {
				r.Entries[i].Summary = nil
			}
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("thresholds %+v: the report with omissions\n%+v\nwant the full judge's\n%+v", th, got, want)
		}
	}
	f := ckpt.Filter{Status: []ckpt.Status{ckpt.StatusInProgress, ckpt.StatusWaiting, ckpt.StatusBlocked}, Quiet: &ckpt.Quiet{At: now}}
	full, err := s.List(ctx, ckpt.ListOptions{Filter: f, Limit: ckpt.MaxPageSize})
	if err != nil {
		t.Fatal(err)
	}
	all, _ := ckpt.ListAll(ctx, s, ckpt.Filter{Status: f.Status})
	if full.Omitted == 0 || full.Omitted+len(full.Items) != len(all) {
		t.Fatalf("a full page: %d listed and %d omitted, want some omitted and %d in all", len(full.Items), full.Omitted, len(all))
	}
	// Pages of a few each, listed in bulk (so they omit), still count
	// every checkpoint once.
	defer func(n int) { bulkLiveness = n }(bulkLiveness)
	bulkLiveness = 1
	for _, limit := range []int{1, 2, 3, 7, ckpt.MaxPageSize} {
		n, omitted, opts := 0, 0, ckpt.ListOptions{Filter: f, Limit: limit}
		for {
			p, err := s.List(ctx, opts)
			if err != nil {
				t.Fatal(err)
			}
			n, omitted = n+len(p.Items), omitted+p.Omitted
			if p.Next == "" {
				break
			}
			opts.After = p.Next
		}
		if n+omitted != len(all) {
			t.Errorf("pages of %d: %d listed + %d omitted, want %d", limit, n, omitted, len(all))
		}
	}
	// A filter on what only the summary holds turns the hint off.
	f.Agent = "nobody"
	if p, _ := s.List(ctx, ckpt.ListOptions{Filter: f}); p.Omitted != 0 {
		t.Errorf("with an agent filter %d were omitted, want none", p.Omitted)
	}
}

// TestVersion1IndexIsReadAndRewritten: an index written before the
// interval field (version 1) lists the same checkpoints, is not a problem
// for check, and the next listing rewrites it at the current version,
// whose stale report then omits as usual.
func TestVersion1IndexIsReadAndRewritten(t *testing.T) {
	s := newStore(t, Options{})
	now := time.Now()
	seedQuiet(t, s, now)
	ctx := context.Background()
	want, err := ckpt.ListAll(ctx, s, ckpt.Filter{IncludeArchived: true})
	if err != nil {
		t.Fatal(err)
	}
	// Fold the journal into the index, then write that index as version 1.
	compactNow(t, s)
	sn, err := s.journal().readSnapshot()
	if err != nil || sn == nil {
		t.Fatal(sn, err)
	}
	var old []byte
	old = fmt.Appendf(old, `{"index":1,"pos":%d,"count":%d}`+"\n", sn.pos, sn.count)
	for p := 0; p < len(sn.data); {
		line, next := sn.lineAt(p)
		f := bytes.SplitN(line, []byte("\t"), 8)
		old = append(append(old, bytes.Join(append(f[:6:6], f[7]), []byte("\t"))...), '\n')
		p = next
	}
	sn.close()
	if err := os.WriteFile(s.journal().index(), old, 0o644); err != nil {
		t.Fatal(err)
	}
	s = reopen(t, s)
	if ps := checkProblems(t, s); len(ps) > 0 {
		t.Errorf("check of a version 1 index: %+v", ps)
	}
	got, err := ckpt.ListAll(ctx, s, ckpt.Filter{IncludeArchived: true})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("listed from a version 1 index:\n%+v\nwant\n%+v", got, want)
	}
	if sn, err := s.journal().readSnapshot(); err != nil || sn == nil || sn.version != indexVersion {
		t.Fatalf("after a listing the index is %+v (%v), want version %d", sn, err, indexVersion)
	} else {
		sn.close()
	}
	f := ckpt.Filter{Status: []ckpt.Status{ckpt.StatusInProgress, ckpt.StatusWaiting, ckpt.StatusBlocked}, Quiet: &ckpt.Quiet{At: now}}
	if p, err := s.List(ctx, ckpt.ListOptions{Filter: f}); err != nil || p.Omitted == 0 {
		t.Errorf("the rewritten index omits %d (%v), want some", p.Omitted, err)
	}
	if got2, _ := ckpt.ListAll(ctx, s, ckpt.Filter{IncludeArchived: true}); !reflect.DeepEqual(got2, want) {
		t.Errorf("listed from the rewritten index:\n%+v\nwant\n%+v", got2, want)
	}
}
