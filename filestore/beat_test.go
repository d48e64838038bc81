package filestore

import (
	"context"
	"encoding/json"
	"os"
	"testing"
	"time"

	"github.com/ckpt-dev/ckpt"
)

// TestBeatKeepsAnUnchangedPresenceRecord: a signal that changes nothing
// but the time (a hook reporting the same tool again) moves the beat file's
// time and leaves its record as it is; a signal that changes the record
// rewrites it, keeping since while the state holds.
func TestBeatKeepsAnUnchangedPresenceRecord(t *testing.T) {
	ctx := context.Background()
	s := newStore(t, Options{})
	if _, err := s.Append(ctx, "job", ckpt.Event{Type: ckpt.EventCreated, Data: json.RawMessage(`{"title":"t"}`)}, ckpt.AppendOptions{}); err != nil {
		t.Fatal(err)
	}
	proc := &ckpt.Process{Host: "h", PID: 42, Start: "7"}
	t0 := time.Now().UTC().Add(-time.Minute).Truncate(time.Second)
	busy := ckpt.Signal{At: t0, State: ckpt.PresenceBusy, Reason: "Bash: make", Process: proc}
	if err := s.Beat(ctx, "job", busy); err != nil {
		t.Fatal(err)
	}
	path := s.files("job").beat()
	// The same record as the store wrote it, laid out differently: a
	// rewrite would lay it out again.
	var rec ckpt.Presence
	if err := json.Unmarshal(readBytes(t, path), &rec); err != nil {
		t.Fatal(err)
	}
	pretty, _ := json.MarshalIndent(rec, "", "  ")
	if err := os.WriteFile(path, pretty, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(path, t0, t0); err != nil { // the beat's time, as it was
		t.Fatal(err)
	}
	again := busy
	again.At = t0.Add(10 * time.Second)
	if err := s.Beat(ctx, "job", again); err != nil {
		t.Fatal(err)
	}
	if got := string(readBytes(t, path)); got != string(pretty) {
		t.Errorf("an unchanged signal rewrote the record:\n%s\nwant it kept:\n%s", got, pretty)
	}
	c, err := s.Get(ctx, "job", 0)
	if err != nil {
		t.Fatal(err)
	}
	if !c.Heartbeat.LastBeat.Equal(again.At) {
		t.Errorf("last beat %v, want %v: the unchanged signal must still move the time", c.Heartbeat.LastBeat, again.At)
	}
	other := again
	other.At, other.Reason = t0.Add(20*time.Second), "Bash: go test"
	if err := s.Beat(ctx, "job", other); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(readBytes(t, path), &rec); err != nil {
		t.Fatal(err)
	}
	if rec.Reason != "Bash: go test" || !rec.Since.Equal(t0) || rec.State != ckpt.PresenceBusy {
		t.Errorf("after a new reason the record is %+v; want reason %q, state busy since %v", rec, "Bash: go test", t0)
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
