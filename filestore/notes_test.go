package filestore

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/ckpt-dev/ckpt"
)

// TestCheckAcceptsAStateWrittenBeforeNotesWereBounded: state.json written
// by a ckpt that kept every note (its notes the whole join) is sound: check
// finds nothing, Get serves it, and the next append rewrites it bounded, as
// the fold of the history. A state whose bounded notes differ from the
// fold's is still reported.
func TestCheckAcceptsAStateWrittenBeforeNotesWereBounded(t *testing.T) {
	s := newStore(t, Options{BackupEvery: 1000})
	ctx := context.Background()
	const id = "kai-7/notes"
	title := "notes"
	if _, err := s.Append(ctx, id, ckpt.MustEvent(ckpt.EventCreated, time.Time{}, ckpt.Actor{Agent: "kai-7"}, ckpt.Created{Patch: ckpt.Patch{Title: &title}}), ckpt.AppendOptions{}); err != nil {
		t.Fatal(err)
	}
	var all []string
	for i := range 200 {
		text := fmt.Sprintf("note %03d: %s", i, strings.Repeat("what the agent saw. ", 4))
		all = append(all, text)
		if _, err := s.Append(ctx, id, ckpt.MustEvent(ckpt.EventNote, time.Time{}, ckpt.Actor{Agent: "kai-7"}, ckpt.Note{Text: text}), ckpt.AppendOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	bounded, err := s.Get(ctx, id, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(bounded.Context.Notes) > ckpt.MaxNotesBytes || !strings.HasSuffix(bounded.Context.Notes, all[199]) {
		t.Fatalf("the state keeps %d bytes of notes ending %q, want at most %d ending with the newest note",
			len(bounded.Context.Notes), bounded.Context.Notes[max(0, len(bounded.Context.Notes)-40):], ckpt.MaxNotesBytes)
	}
	f := s.files(id)
	writeState := func(notes string) {
		t.Helper()
		data, err := os.ReadFile(f.state())
		if err != nil {
			t.Fatal(err)
		}
		env, st, err := parseEnvelope(data, id)
		if err != nil {
			t.Fatal(err)
		}
		st.Context.Notes = notes
		b, err := encodeEnvelope(st, env.Sum, env.HistorySize)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(f.state(), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	problems := func() []ckpt.Problem {
		t.Helper()
		r, err := s.Check(ctx, []string{id})
		if err != nil {
			t.Fatal(err)
		}
		return r.Problems
	}

	legacy := strings.Join(all, "\n")
	writeState(legacy)
	if p := problems(); len(p) != 0 {
		t.Fatalf("check of a state with every note (%d bytes): %+v, want nothing", len(legacy), p)
	}
	got, err := s.Get(ctx, id, 0)
	if err != nil || got.Context.Notes != legacy {
		t.Fatalf("Get of the state with every note: %d bytes of notes, %v; want it as written", len(got.Context.Notes), err)
	}
	res, err := s.Append(ctx, id, ckpt.MustEvent(ckpt.EventNote, time.Time{}, ckpt.Actor{Agent: "kai-7"}, ckpt.Note{Text: "the newest"}), ckpt.AppendOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if want := ckpt.BoundNotes(legacy + "\nthe newest"); res.State.Context.Notes != want {
		t.Fatalf("the append after it keeps %d bytes of notes, want the %d of the bounded fold", len(res.State.Context.Notes), len(want))
	}
	if p := problems(); len(p) != 0 {
		t.Fatalf("check after the append: %+v, want nothing", p)
	}

	writeState(legacy[:len(legacy)-1] + "!") // the newest note changed
	if p := problems(); len(p) != 1 || !strings.Contains(p[0].What, "differs from the fold") {
		t.Fatalf("check of a state whose newest note differs from the history's: %+v, want state.json differs", p)
	}
}

// BenchmarkAppendToAnOldCheckpoint alternates blocks of appends to a young
// checkpoint (benchCheckpoint's few events: the floor) and to an old one
// (the same and 1,000 notes of about 120 bytes, what a long session's
// notes add up to), in one run: old/young and old/young-cpu are the ratios
// of their wall and CPU time per append. Before the notes were bounded
// (ckpt.MaxNotesBytes) the old checkpoint's state held all 96 KB of them
// and every append rewrote it: 2.5x the wall and 3.4-3.7x the CPU of an
// append to the young one (docs/design.md, "The state's notes are
// bounded").
//
//	go test -run '^$' -bench AppendToAnOldCheckpoint -benchtime 200x ./filestore
func BenchmarkAppendToAnOldCheckpoint(b *testing.B) {
	const block = 10
	s := newStore(b, Options{})
	benchCheckpoint(b, s, "kai-7/young")
	benchCheckpoint(b, s, "kai-7/old")
	ctx := context.Background()
	text := strings.Repeat("what the agent saw and what it will do next. ", 2)
	for i := range 1000 {
		e := ckpt.MustEvent(ckpt.EventNote, time.Time{}, ckpt.Actor{Agent: "kai-7"}, ckpt.Note{Text: fmt.Sprintf("%04d %s", i, text)})
		if _, err := s.Append(ctx, "kai-7/old", e, ckpt.AppendOptions{}); err != nil {
			b.Fatal(err)
		}
	}
	var wall, cpu [2]time.Duration
	i := 0
	for b.Loop() {
		for k, id := range []string{"kai-7/young", "kai-7/old"} {
			c0, t0 := cpuTime(b), time.Now()
			for j := range block {
				if _, err := s.Append(ctx, id, benchEvent(i*block+j), ckpt.AppendOptions{}); err != nil {
					b.Fatal(err)
				}
			}
			wall[k] += time.Since(t0)
			cpu[k] += cpuTime(b) - c0
		}
		i++
	}
	old, err := s.Get(ctx, "kai-7/old", 0)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(float64(wall[1])/float64(wall[0]), "old/young")
	b.ReportMetric(float64(cpu[1])/float64(cpu[0]), "old/young-cpu")
	b.ReportMetric(float64(len(old.Context.Notes)), "old-notes-bytes")
}
