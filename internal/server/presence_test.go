package server_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ckpt-dev/ckpt"
	"github.com/ckpt-dev/ckpt/internal/httpapi"
	"github.com/ckpt-dev/ckpt/internal/render"
	"github.com/ckpt-dev/ckpt/internal/server"
)

// TestStaleAndMetricsSpeakPresence: /v1/stale is the one stale report
// (dead and stale first, then warn; never busy or ended) and the metrics
// count checkpoints by presence, both through ckpt.PresenceOf.
func TestStaleAndMetricsSpeakPresence(t *testing.T) {
	ctx := context.Background()
	gone := &ckpt.Process{Host: "h", PID: 4242, Start: "1"}
	later := func() time.Time { return time.Now().Add(40 * time.Minute) } // warn 30m, stale 60m
	f := newFixture(t, server.Options{Now: later, Alive: func(p *ckpt.Process) (bool, bool) { return p.PID != gone.PID, true }})
	c := f.client(t, f.admin)
	live := ckpt.StatusInProgress
	for _, id := range []string{"busy", "dead", "ended", "quiet"} {
		e := ckpt.MustEvent(ckpt.EventCreated, time.Time{}, ckpt.Actor{}, ckpt.Created{Patch: ckpt.Patch{Status: &live}})
		if _, err := c.Append(ctx, id, e, ckpt.AppendOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	for id, sig := range map[string]ckpt.Signal{
		"busy":  {State: ckpt.PresenceBusy, Reason: "Bash: make e2e"},
		"dead":  {State: ckpt.PresenceWorking, Process: gone},
		"ended": {State: ckpt.PresenceEnded, Reason: "session ended"},
	} {
		if err := c.Beat(ctx, id, sig); err != nil {
			t.Fatal(err)
		}
	}
	get := func(path string) string {
		t.Helper()
		req, _ := http.NewRequest("GET", f.http.URL+path, nil)
		req.Header.Set("Authorization", "Bearer "+f.admin)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("GET %s: %d %s", path, resp.StatusCode, b)
		}
		return string(b)
	}
	var rep struct{ Items []httpapi.StaleEntry }
	if err := json.Unmarshal([]byte(get(httpapi.PathStale)), &rep); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range rep.Items {
		got = append(got, e.ID+":"+string(e.Presence)+":"+string(e.Liveness))
	}
	if want := "dead:dead:stale quiet:warn:warn"; strings.Join(got, " ") != want {
		t.Errorf("/v1/stale: %v, want %s", got, want)
	}
	if len(rep.Items) > 0 && !strings.Contains(rep.Items[0].Why, "4242") {
		t.Errorf("the dead entry's why is %q; want it to name the process", rep.Items[0].Why)
	}
	// Thresholds in the query are read as ckpt stale reads its flags.
	rep.Items = nil
	if err := json.Unmarshal([]byte(get(httpapi.PathStale+"?warn=1d&stale=2d")), &rep); err != nil {
		t.Fatal(err)
	}
	if len(rep.Items) != 1 || rep.Items[0].ID != "dead" {
		t.Errorf("/v1/stale?warn=1d&stale=2d: %+v, want the dead one alone", rep.Items)
	}
	// /v1/why explains each state by its rule, as `ckpt why --json` does.
	for id, want := range map[string]string{"dead": "dead:10:4242", "busy": "busy:11:", "ended": "ended:8:", "quiet": "warn:14:"} {
		var w render.Why
		if err := json.Unmarshal([]byte(get(httpapi.PathWhy+id)), &w); err != nil {
			t.Fatal(err)
		}
		pid := ""
		if w.Presence.Process != nil {
			pid = strconv.Itoa(w.Presence.Process.PID)
		}
		if got := string(w.Presence.State) + ":" + strconv.Itoa(w.Rule.N) + ":" + pid; got != want || w.Rule.Change == "" || w.ID != id {
			t.Errorf("/v1/why/%s: %s (%+v), want %s with what changes it", id, got, w, want)
		}
	}
	req, _ := http.NewRequest("GET", f.http.URL+httpapi.PathStale+"?warn=2h&stale=1h", nil)
	req.Header.Set("Authorization", "Bearer "+f.admin)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadRequest {
		t.Errorf("/v1/stale?warn=2h&stale=1h: %s, want 400", resp.Status)
	}
	metrics := get("/metrics")
	for _, want := range []string{
		`ckpt_checkpoints{liveness="live"} 2`,
		`ckpt_checkpoints{liveness="stale"} 1`,
		`ckpt_checkpoints{liveness="warn"} 1`,
		`ckpt_checkpoints_presence{presence="busy"} 1`,
		`ckpt_checkpoints_presence{presence="dead"} 1`,
		`ckpt_checkpoints_presence{presence="ended"} 1`,
		`ckpt_checkpoints_presence{presence="warn"} 1`,
		`ckpt_checkpoints_presence{presence="stale"} 0`,
	} {
		if !strings.Contains(metrics, want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
}
