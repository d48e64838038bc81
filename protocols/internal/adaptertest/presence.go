package adaptertest

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	ckpt "github.com/ckpt-dev/ckpt"
	"github.com/ckpt-dev/ckpt/protocols"
)

// PresenceExported checks a JSON format that carries ckpt's presence: the
// file written for a checkpoint whose agent waits for a person says so
// (state, since, why) at the JSON path at (keys), a checkpoint written to
// after its last beat says working, finished work says nothing, and
// importing the file keeps nothing of it (it is liveness, not state).
func PresenceExported(t *testing.T, f protocols.Format, at ...string) {
	t.Helper()
	t0 := time.Date(2026, 1, 15, 14, 30, 0, 0, time.UTC)
	waitingSince := t0.Add(5 * time.Minute)
	c := &ckpt.Checkpoint{
		ID: "kai-7/secondary-a", Status: ckpt.StatusInProgress, Title: "Spec", TaskID: "T1",
		Agent: ckpt.Agent{ID: "Secondary-A"}, StartedAt: t0, UpdatedAt: t0,
		Resume: ckpt.Resume{Resumable: true},
		Heartbeat: ckpt.Heartbeat{LastBeat: waitingSince, Interval: ckpt.Duration(15 * time.Minute), Presence: &ckpt.Presence{
			State: ckpt.PresenceWaiting, Since: waitingSince, Reason: "permission_prompt: Claude needs your permission to use Bash",
			Process: &ckpt.Process{Host: "h", PID: 42},
		}},
	}
	presence := func(c *ckpt.Checkpoint) map[string]any {
		t.Helper()
		data, err := f.Export(c)
		if err != nil {
			t.Fatal(err)
		}
		var doc any
		if err := json.Unmarshal(data, &doc); err != nil {
			t.Fatalf("%s export is not JSON: %v\n%s", f.Name(), err, data)
		}
		for _, k := range append(append([]string(nil), at...), "presence") {
			obj, _ := doc.(map[string]any)
			doc = obj[k]
		}
		p, _ := doc.(map[string]any)
		return p
	}
	p := presence(c)
	if p["state"] != "waiting" || p["since"] != "2026-01-15T14:35:00Z" || p["why"] != "permission_prompt: Claude needs your permission to use Bash" {
		t.Errorf("%s: presence of a waiting agent at %v: %v", f.Name(), at, p)
	}
	data, _ := f.Export(c)
	if strings.Contains(string(data), `"pid"`) {
		t.Errorf("%s: the file carries the agent's process:\n%s", f.Name(), data)
	}
	imp, err := f.Import("checkpoint.json", data)
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range imp.Warnings {
		if strings.Contains(w, "presence") {
			t.Errorf("%s: importing its own file warns about presence: %s", f.Name(), w)
		}
	}
	if raw, _ := json.Marshal(imp.State.Meta); strings.Contains(string(raw), "presence") {
		t.Errorf("%s: importing its own file keeps presence in meta: %s", f.Name(), raw)
	}

	updated := *c
	updated.UpdatedAt = waitingSince.Add(time.Minute) // an update after the beat voids it
	if p := presence(&updated); p["state"] != "working" || p["why"] != nil {
		t.Errorf("%s: presence after a later update: %v, want working", f.Name(), p)
	}
	done := *c
	done.Status = ckpt.StatusDone
	if p := presence(&done); p != nil {
		t.Errorf("%s: finished work has presence %v", f.Name(), p)
	}
}
