package filestore

import (
	"context"
	"encoding/json"
	"os"
	"testing"
	"time"

	"github.com/ckpt-dev/ckpt"
)

// TestBeatTimeLivesInTheContent: the last beat is the time the beat file
// holds, not its modification time, which `cp -r` resets to the copy's
// time (a stale agent would look alive); a record written before the time
// was kept reads by the file's time. Since holds while the state does.
func TestBeatTimeLivesInTheContent(t *testing.T) {
	ctx := context.Background()
	s := newStore(t, Options{})
	t0 := time.Now().UTC().Add(-3 * time.Hour).Truncate(time.Second)
	if _, err := s.Append(ctx, "job", ckpt.Event{Type: ckpt.EventCreated, At: t0, Data: json.RawMessage(`{"title":"t"}`)}, ckpt.AppendOptions{}); err != nil {
		t.Fatal(err)
	}
	proc := &ckpt.Process{Host: "h", PID: 42, Start: "7"}
	busy := ckpt.Signal{At: t0, State: ckpt.PresenceBusy, Reason: "Bash: make", Process: proc}
	if err := s.Beat(ctx, "job", busy); err != nil {
		t.Fatal(err)
	}
	plain := ckpt.Signal{At: t0.Add(10 * time.Second)}
	if err := s.Beat(ctx, "job", plain); err != nil {
		t.Fatal(err)
	}
	path := s.files("job").beat()
	now := time.Now()
	if err := os.Chtimes(path, now, now); err != nil { // what cp -r leaves
		t.Fatal(err)
	}
	lastBeat := func() time.Time {
		c, err := s.Get(ctx, "job", 0)
		if err != nil {
			t.Fatal(err)
		}
		// A short page reads the beat file, as Get does (a full listing
		// reads the liveness log: livelog_test.go).
		page, err := s.List(ctx, ckpt.ListOptions{Limit: ckpt.DefaultPageSize})
		if err != nil || len(page.Items) != 1 || !page.Items[0].Heartbeat.LastBeat.Equal(c.Heartbeat.LastBeat) {
			t.Fatalf("List and Get disagree on the last beat: %+v, %v; Get %v", page.Items, err, c.Heartbeat.LastBeat)
		}
		return c.Heartbeat.LastBeat
	}
	if got := lastBeat(); !got.Equal(plain.At) {
		t.Fatalf("after a copy the last beat is %v; want %v from the file's content", got, plain.At)
	}
	stale, err := s.List(ctx, ckpt.ListOptions{Filter: ckpt.Filter{SeenBefore: now.Add(-time.Hour)}})
	if err != nil || len(stale.Items) != 1 {
		t.Fatalf("a listing of the silent ones misses the copied agent: %+v, %v", stale.Items, err)
	}
	other := busy
	other.At, other.Reason = t0.Add(20*time.Second), "Bash: go test"
	if err := s.Beat(ctx, "job", other); err != nil {
		t.Fatal(err)
	}
	var rec beatRecord
	if err := json.Unmarshal(readBytes(t, path), &rec); err != nil {
		t.Fatal(err)
	}
	if rec.Reason != "Bash: go test" || !rec.Since.Equal(t0) || rec.State != ckpt.PresenceBusy || !rec.Seen.Equal(other.At) {
		t.Errorf("after a new reason the record is %+v; want reason %q, state busy since %v, seen %v", rec, "Bash: go test", t0, other.At)
	}
	// A record an older ckpt wrote (no time in it) reads by the file's time.
	old, _ := json.Marshal(rec.Presence)
	if err := os.WriteFile(path, old, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(path, t0, t0); err != nil {
		t.Fatal(err)
	}
	if got := lastBeat(); !got.Equal(t0) {
		t.Fatalf("a record without a time reads %v; want the file's time %v", got, t0)
	}
}

func readBytes(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
