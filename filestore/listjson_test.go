package filestore

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ckpt-dev/ckpt"
	"github.com/ckpt-dev/ckpt/internal/wire"
)

// decodedRows is what `ckpt ls --json` printed before EachSummaryJSON:
// every page's summaries, each encoded; err is the listing's.
func decodedRows(s *Store, f ckpt.Filter) (string, error) {
	var out bytes.Buffer
	err := ckpt.EachPage(context.Background(), s, f, func(page []ckpt.Summary) error {
		for i := range page {
			b, err := wire.Append(nil, &page[i])
			if err != nil {
				return err
			}
			out.Write(append(b, '\n'))
		}
		return nil
	})
	return out.String(), err
}

// splicedRows is the same listing by EachSummaryJSON.
func splicedRows(s *Store, f ckpt.Filter) (string, error) {
	var out bytes.Buffer
	err := s.EachSummaryJSON(context.Background(), f, func(row []byte) error {
		out.Write(row)
		out.WriteByte('\n')
		return nil
	})
	return out.String(), err
}

// seedEveryKind adds to seedQuiet's checkpoints (beating, stale, never
// beating, waiting, blocked, done, archived, a process bound) ones whose
// summaries use every member and every escape the encoder writes, one
// waiting for a person, one whose session ended, and returns the ID of
// one whose history is damaged (its line rewritten at the same size, its
// state file and backups removed).
func seedEveryKind(t testing.TB, s *Store, now time.Time) string {
	t.Helper()
	ctx := context.Background()
	seedQuiet(t, s, now)
	titles := []string{`quotes " and \ back`, "<b>&amp;</b>", "tab\tnew\nline\r\x01\x1f\b\f", "line\u2028sep\u2029", "émoji 🚀 ünïcode \ufffd", "bad \xff utf-8"}
	for i, title := range titles {
		id := fmt.Sprintf("k/%02d", i)
		status, reason, parent, step := ckpt.StatusWaiting, "needs <review>", "k/00", "step \"two\""
		iv := ckpt.Duration(90*time.Second + time.Duration(i)*time.Millisecond)
		patch := ckpt.Patch{Title: &title, Status: &status, StatusReason: &reason, Parent: &parent, CurrentStep: &step,
			Agent: &ckpt.Agent{ID: "agent-" + title, Type: "claude-code", Name: "Name"}, AddLabels: []string{"a", title},
			Progress: &ckpt.ProgressSet{Done: i, Total: 7}, Interval: &iv}
		appendOK(t, s, id, ckpt.MustEvent(ckpt.EventCreated, now.Add(-time.Duration(i)*time.Minute), ckpt.Actor{}, ckpt.Created{Patch: patch}))
		appendOK(t, s, id, ckpt.MustEvent(ckpt.EventBlocker, now, ckpt.Actor{}, ckpt.BlockerChange{Text: "waits on " + title}))
		sigs := []ckpt.Signal{
			{At: now, State: ckpt.PresenceWaiting, Reason: "permission <Bash>", For: ckpt.WaitsPerson},
			{At: now, State: ckpt.PresenceEnded, Process: &ckpt.Process{Host: "h", PID: 7}, Session: "s-1"},
			{At: now.Add(-5 * time.Hour), State: ckpt.PresenceWorking},
		}
		if i < len(sigs) {
			if err := s.Beat(ctx, id, sigs[i]); err != nil {
				t.Fatal(err)
			}
		}
	}
	done := ckpt.StatusDone
	appendOK(t, s, "k/done", ckpt.MustEvent(ckpt.EventCreated, now, ckpt.Actor{}, ckpt.Created{Patch: ckpt.Patch{Status: &done}}))
	appendOK(t, s, "k/archived", ckpt.MustEvent(ckpt.EventCreated, now, ckpt.Actor{}, ckpt.Created{}))
	appendOK(t, s, "k/archived", ckpt.MustEvent(ckpt.EventArchived, now, ckpt.Actor{}, ckpt.Archive{Reason: "crashed", At: now, From: "k/done"}))
	for _, e := range []ckpt.Event{ckpt.MustEvent(ckpt.EventCreated, now, ckpt.Actor{}, nil), noteEvent("second line")} {
		appendOK(t, s, "k/damaged", e)
	}
	return "k/damaged"
}

// damage rewrites id's history at the same size (its first event claims
// seq 7) and removes its state file and backups, so no read can get past
// the damaged line.
func damage(t testing.TB, s *Store, id string) {
	t.Helper()
	f := s.files(id)
	hist, err := os.ReadFile(f.history())
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(f.history(), bytes.Replace(hist, []byte(`"seq":1`), []byte(`"seq":7`), 1), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.RemoveAll(f.state()); err != nil {
		t.Fatal(err)
	}
	if err := os.RemoveAll(f.backups()); err != nil {
		t.Fatal(err)
	}
}

// TestSummaryJSONIsTheDecodedListing: `ckpt ls --json`'s rows copied from
// the index are byte for byte the rows decoded and encoded, under every
// filter, for checkpoints of every kind, whether their entry is in the
// index or in the journal after it, or the store has no index yet; and
// the damaged checkpoint is named the same way.
func TestSummaryJSONIsTheDecodedListing(t *testing.T) {
	s := newStore(t, Options{})
	now := time.Now().UTC()
	damagedID := seedEveryKind(t, s, now)
	waiting, done := ckpt.StatusWaiting, ckpt.StatusDone
	filters := []ckpt.Filter{
		{}, {IncludeArchived: true}, {Status: []ckpt.Status{waiting, done}, IncludeArchived: true}, {Prefix: "k/"},
		{Agent: "Name"}, {Label: "a"}, {Parent: "k/00"}, {SeenBefore: now.Add(-time.Hour)}, {UpdatedSince: now.Add(-90 * time.Second)},
	}
	compare := func(stage string) {
		t.Helper()
		for i, f := range filters {
			want, werr := decodedRows(s, f)
			got, gerr := splicedRows(s, f)
			if got != want {
				t.Errorf("%s, filter %+v: the rows differ\nspliced:\n%s\ndecoded:\n%s", stage, f, got, want)
			}
			if fmt.Sprint(gerr) != fmt.Sprint(werr) {
				t.Errorf("%s, filter %+v: error %v, the decoded listing's %v", stage, f, gerr, werr)
			}
			if i < 2 && strings.Count(want, "\n") < 60 {
				t.Fatalf("%s, filter %+v: only %d rows listed", stage, f, strings.Count(want, "\n"))
			}
		}
	}
	compare("no index")
	compactNow(t, s)
	compare("all in the index")
	// A journal tail after the index: new revisions and a new checkpoint.
	appendOK(t, s, "k/01", noteEvent("after the index"))
	appendOK(t, s, "q/05", noteEvent("after the index"))
	appendOK(t, s, "k/tail", createEvent())
	compare("index and tail")
	damage(t, s, damagedID)
	s = reopen(t, s)
	compare("a damaged history")
}

// TestEverySummaryTheIndexHoldsIsCopied: the summaries ckpt writes to the
// index (escapes, every member, every interval) are all in the form
// canonSummary accepts, so that `ckpt ls --json` copies them rather than
// decoding them.
func TestEverySummaryTheIndexHoldsIsCopied(t *testing.T) {
	s := newStore(t, Options{})
	seedEveryKind(t, s, time.Now().UTC())
	compactNow(t, s)
	v, err := s.journal().loadView()
	if err != nil {
		t.Fatal(err)
	}
	defer v.close()
	n := 0
	v.each("", nil, func(e ientry) bool {
		n++
		if _, ok := canonSummary(e.summary); !ok {
			t.Errorf("the index's summary of %s is not taken as the encoder's: %s", e.id, e.summary)
		}
		var row []byte
		if ok, _ := spliceRow(&row, e, time.Now(), ckpt.Presence{State: ckpt.PresenceBusy}, &ckpt.Filter{}); !ok {
			t.Errorf("the index's summary of %s is not copied: %s", e.id, e.summary)
		}
		return true
	}, func(id string) { t.Errorf("index line of %s damaged", id) })
	if n < 60 {
		t.Fatalf("the index holds %d entries", n)
	}
}

// FuzzSpliceSummary: any bytes in an index line's summary either are
// copied to exactly the row that decoding them and encoding the summary
// gives (with the same filter verdict), or are left to that decode.
func FuzzSpliceSummary(f *testing.F) {
	s := newStore(f, Options{})
	now := time.Now().UTC()
	seedEveryKind(f, s, now)
	compactNow(f, s)
	v, err := s.journal().loadView()
	if err != nil {
		f.Fatal(err)
	}
	v.each("", nil, func(e ientry) bool {
		f.Add(e.id, bytes.Clone(e.summary), e.interval, int64(1_700_000_000_123_456_789), "busy")
		return true
	}, func(string) {})
	v.close()
	f.Add("a", []byte(`{"id":"a","rev":1,"agent":{},"status":"x","progress":{"done":0,"total":0,"percent":0.0000001},"heartbeat":{},"started_at":"0001-01-01T00:00:00Z","updated_at":"2024-02-29T23:59:59.1Z"}`), int64(0), int64(0), "")
	f.Fuzz(func(t *testing.T, id string, summary []byte, interval, beatNs int64, state string) {
		e := ientry{id: id, summary: summary, interval: interval, status: ckpt.StatusInProgress}
		var at time.Time
		if beatNs != 0 {
			at = time.Unix(0, beatNs).UTC()
		}
		p := ckpt.Presence{State: ckpt.PresenceState(state)}
		for _, flt := range []ckpt.Filter{{}, {IncludeArchived: true, Status: []ckpt.Status{ckpt.StatusInProgress}}} {
			var row []byte
			ok, match := spliceRow(&row, e, at, p, &flt)
			if !ok {
				continue
			}
			var sum ckpt.Summary
			if err := e.summaryInto(&sum); err != nil {
				t.Fatalf("copied a summary that does not decode (%v): %s", err, summary)
			}
			sum.Heartbeat.LastBeat, sum.Heartbeat.Presence = at, nil
			if !p.IsZero() {
				sum.Heartbeat.Presence = &p
			}
			if want := flt.MatchSummary(&sum) && strings.HasPrefix(sum.ID, flt.Prefix); match != want {
				t.Fatalf("filter %+v: copy's verdict %v, the decoded summary's %v: %s", flt, match, want, summary)
			}
			if !match {
				continue
			}
			want, err := wire.Append(nil, &sum)
			if err != nil {
				t.Fatalf("copied a summary that does not encode (%v): %s", err, summary)
			}
			if !bytes.Equal(row, want) {
				t.Fatalf("copied\n%s\nthe decoded summary encodes as\n%s", row, want)
			}
		}
	})
}

// TestEachSummaryJSONStopsOnItsCallersError: an error from fn (a closed
// pipe) ends the listing and is returned.
func TestEachSummaryJSONStopsOnItsCallersError(t *testing.T) {
	s := newStore(t, Options{})
	seedQuiet(t, s, time.Now())
	compactNow(t, s)
	stop := errors.New("stop")
	n := 0
	err := s.EachSummaryJSON(context.Background(), ckpt.Filter{}, func([]byte) error {
		n++
		return stop
	})
	if !errors.Is(err, stop) || n != 1 {
		t.Fatalf("after fn's error: %v, %d calls; want stop after 1", err, n)
	}
}

// TestCanonMembersAreTheSummarys: canonSummary's members are the JSON
// members of ckpt.Summary and the types it holds, in their order, omitted
// when encoding/json omits them; a new field fails here until it is added.
func TestCanonMembersAreTheSummarys(t *testing.T) {
	for _, c := range []struct {
		typ     reflect.Type
		members []canonMember
	}{
		{reflect.TypeFor[ckpt.Summary](), canonSummaryMembers},
		{reflect.TypeFor[ckpt.Agent](), canonAgent},
		{reflect.TypeFor[ckpt.Progress](), canonProgress},
		{reflect.TypeFor[ckpt.Archive](), canonArchive},
	} {
		var want []string
		for f := range c.typ.Fields() {
			name, opts, _ := strings.Cut(f.Tag.Get("json"), ",")
			want = append(want, fmt.Sprintf("%q: omitted %v", name, opts != ""))
		}
		var got []string
		for _, m := range c.members {
			got = append(got, fmt.Sprintf("%s omitted %v", m.key, !m.req))
		}
		if !slices.Equal(got, want) {
			t.Errorf("%s: canon members\n%v\nthe type's\n%v", c.typ, got, want)
		}
	}
}

// FuzzResolvedRaw: a journal line resolved with its summary's bytes kept
// (a listing that copies summaries) has the fields a listing filters on
// that the decoded line has, and its bytes decode to the decoded summary.
func FuzzResolvedRaw(f *testing.F) {
	s := newStore(f, Options{})
	seedEveryKind(f, s, time.Now().UTC())
	r, err := s.journal().openReader(0, "")
	if err != nil {
		f.Fatal(err)
	}
	r.readAllLines(func(line []byte, _ int64) error {
		f.Add(bytes.Clone(line))
		return nil
	})
	r.close()
	f.Fuzz(func(t *testing.T, line []byte) {
		e, ok := lazyEntry(line)
		if !ok {
			return
		}
		raw, dec := e.resolvedRaw(), e.resolved()
		if raw.summary == nil {
			if !reflect.DeepEqual(raw, dec) {
				t.Fatalf("not kept raw, yet resolved otherwise: %+v, %+v", raw, dec)
			}
			return
		}
		if dec.decoded == nil || raw.rev != dec.rev || raw.size != dec.size || raw.status != dec.status ||
			raw.archived != dec.archived || raw.updated != dec.updated || raw.interval != dec.interval || raw.deleted || dec.deleted {
			t.Fatalf("kept raw as %+v, decoded as %+v", raw, dec)
		}
		var sum ckpt.Summary
		if err := raw.summaryInto(&sum); err != nil || !reflect.DeepEqual(&sum, dec.decoded) {
			t.Fatalf("the kept bytes decode to %+v (%v), the line to %+v", sum, err, dec.decoded)
		}
		// Copied with the spans resolvedRaw found, the row is the one
		// copied after a check of its own.
		checked := raw
		checked.hbStart, checked.hbEnd = 0, 0
		at, p := time.Unix(1_700_000_000, 5).UTC(), ckpt.Presence{State: ckpt.PresenceWaiting}
		for _, flt := range []ckpt.Filter{{}, {IncludeArchived: true, Status: []ckpt.Status{ckpt.StatusWaiting}}} {
			var a, b []byte
			okA, matchA := spliceRow(&a, raw, at, p, &flt)
			okB, matchB := spliceRow(&b, checked, at, p, &flt)
			if okA != okB || matchA != matchB || !bytes.Equal(a, b) {
				t.Fatalf("filter %+v: with resolvedRaw's spans %v %v %s, checked again %v %v %s", flt, okA, matchA, a, okB, matchB, b)
			}
		}
	})
}
