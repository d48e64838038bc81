package wire_test

import (
	"bytes"
	"encoding/json"
	"testing"
	"time"

	"github.com/ckpt-dev/ckpt"
	"github.com/ckpt-dev/ckpt/internal/wire"
)

// FuzzAppendSummaryJSON: Append writes exactly what json.Marshal writes
// for a summary, whatever it holds (ckpt ls --json writes one per
// checkpoint).
func FuzzAppendSummaryJSON(f *testing.F) {
	f.Add("kai-7/secondary-a", "Schedule fetcher spec", "Secondary-A", "spec", int64(4), 1, 3, 33.3, int64(1768487400), int64(123456789), 0, uint8(0xff))
	f.Add("a", "quote \" <b> & ü \u2028", "", "", int64(0), 0, 0, 1e-7, int64(-62135596800), int64(0), 3600, uint8(0))
	f.Add("x", "tab\there", "n\x00", "l", int64(-1), -5, 1<<40, 1e21, int64(253402300800), int64(1), -1800, uint8(0x0f))
	f.Fuzz(func(t *testing.T, id, title, agent, label string, rev int64, done, total int, pct float64, sec, nsec int64, offset int, flags uint8) {
		at := time.Unix(sec, nsec).In(time.FixedZone("z", offset))
		s := ckpt.Summary{ID: id, Rev: rev, Title: title, Agent: ckpt.Agent{Name: agent, ID: label}, Status: ckpt.Status(label),
			Progress: ckpt.Progress{Done: done, Total: total, Percent: pct}, StartedAt: at, UpdatedAt: at.Add(time.Hour)}
		if flags&1 != 0 {
			s.Labels = []string{label, title}
		}
		if flags&2 != 0 {
			s.Heartbeat = ckpt.Heartbeat{LastBeat: at, Interval: ckpt.Duration(nsec)}
		}
		if flags&4 != 0 {
			s.Archived = &ckpt.Archive{Reason: label, At: at, From: id}
			s.CompletedAt = &at
		}
		if flags&8 != 0 {
			s.Partial, s.ActiveBlockers, s.BlockingErrors, s.Parent, s.SessionID, s.TaskID, s.Stage, s.Phase, s.CurrentStep = true, done, total, id, label, title, agent, id, title
		}
		if flags&16 != 0 {
			s.Heartbeat.Presence = &ckpt.Presence{State: ckpt.PresenceBusy, Reason: title}
		}
		want, werr := json.Marshal(&s)
		got, gerr := wire.Append([]byte("prefix"), &s)
		if (werr == nil) != (gerr == nil) {
			t.Fatalf("json.Marshal error %v, wire.Append error %v", werr, gerr)
		}
		if werr == nil && !bytes.Equal(got, append([]byte("prefix"), want...)) {
			t.Fatalf("wire.Append wrote\n%s\njson.Marshal writes\n%s", got, want)
		}
	})
}

// BenchmarkAppendSummaryJSON compares Append with json.Marshal
// on one summary as ckpt ls --json writes it.
func BenchmarkAppendSummaryJSON(b *testing.B) {
	at := time.Date(2026, 1, 15, 14, 30, 0, 0, time.UTC)
	s := ckpt.Summary{ID: "agent-07/task-000123", Rev: 4, Labels: []string{"spec"}, Agent: ckpt.Agent{ID: "agent-07", Name: "Secondary-A"},
		Title: "Schedule fetcher spec", Status: ckpt.StatusInProgress, CurrentStep: "writing acceptance criteria",
		Progress: ckpt.Progress{Done: 1, Total: 3, Percent: 33.3}, Heartbeat: ckpt.Heartbeat{LastBeat: at}, StartedAt: at, UpdatedAt: at}
	var buf []byte
	b.Run("append", func(b *testing.B) {
		for b.Loop() {
			buf, _ = wire.Append(buf[:0], &s)
		}
	})
	b.Run("json-marshal", func(b *testing.B) {
		for b.Loop() {
			buf, _ = json.Marshal(&s)
		}
	})
}
