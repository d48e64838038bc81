package claude

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/ckpt-dev/ckpt"
	"github.com/ckpt-dev/ckpt/filestore"
	"github.com/ckpt-dev/ckpt/internal/process"
)

// TestPresenceSoak runs 100 simulated agents, each a real process driven
// through the real hooks into a real local store, with random kills (kill
// -9 mid-turn), pauses and clean ends (Claude's Stop and SessionEnd, or
// Codex's Stop and exit), while an observer judges every checkpoint's
// presence (ckpt.PresenceOf with the process probe) over and over. It
// wants zero false "dead" (a live process, or a session that ended
// cleanly) and every death seen at the first look after it; it reports the
// detection latency against the beat interval.
//
// CKPT_SOAK sets the duration (e.g. 10m; default 2s) and
// CKPT_SOAK_INTERVAL the beat interval (default 200ms); with CKPT_SOAK set,
// every death must also be seen within 2x the beat interval of wall time.
func TestPresenceSoak(t *testing.T) {
	if _, err := exec.LookPath("sleep"); err != nil || process.Of(os.Getpid()) == nil {
		t.Skip("needs sleep and /proc for real agent processes")
	}
	budget, iv := 2*time.Second, 200*time.Millisecond
	if v := os.Getenv("CKPT_SOAK"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil {
			t.Fatalf("CKPT_SOAK=%q: %v", v, err)
		}
		budget = d
	}
	if v := os.Getenv("CKPT_SOAK_INTERVAL"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil {
			t.Fatalf("CKPT_SOAK_INTERVAL=%q: %v", v, err)
		}
		iv = d
	}
	st, err := filestore.Init(filepath.Join(t.TempDir(), ".ckpt"), filestore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	s := &soak{t: t, store: st, iv: iv, agents: map[string]*soakAgent{}, deadline: time.Now().Add(budget)}
	var wg sync.WaitGroup
	for i := range 100 {
		wg.Add(1)
		go func() { defer wg.Done(); s.run(i) }()
	}
	stop := make(chan struct{})
	observed := make(chan struct{})
	go func() { defer close(observed); s.observe(stop) }()
	wg.Wait()
	close(stop)
	<-observed
	s.look(time.Now()) // a last look, after every agent has stopped
	s.report(os.Getenv("CKPT_SOAK") != "")
}

// soak is the run's shared state.
type soak struct {
	t        *testing.T
	store    ckpt.Store
	iv       time.Duration
	deadline time.Time

	mu     sync.Mutex
	agents map[string]*soakAgent
	stats  soakStats
}

type soakStats struct {
	agents, kills, ends, pauses, events, looks, judged int
	falseDead, missed                                  []string
	latencies                                          []time.Duration
}

// soakAgent is what the observer knows of an agent.
type soakAgent struct {
	proc     *ckpt.Process
	killedAt time.Time // when its process was killed and reaped mid-turn
	killing  bool      // its kill has begun
	ended    bool      // it ended cleanly
	exitedAt time.Time // when its process exited after a clean end
	seenDead bool
	settled  bool // nothing left to judge
}

// run keeps agent slot i busy until the deadline: one agent after another.
func (s *soak) run(i int) {
	for gen := 0; time.Now().Before(s.deadline); gen++ {
		s.agent("soak/a"+strconv.Itoa(i)+"-"+strconv.Itoa(gen), rand.N(2) == 0)
	}
}

// agent runs one agent: a real process, its hooks, then a kill or an end.
func (s *soak) agent(id string, codex bool) {
	t := s.t
	cmd := exec.Command("sleep", "3600")
	if err := cmd.Start(); err != nil {
		t.Error(err)
		return
	}
	proc := process.Of(cmd.Process.Pid)
	if proc == nil {
		t.Errorf("no process for %d", cmd.Process.Pid)
		cmd.Process.Kill() // no sleep 3600 left behind
		cmd.Wait()
		return
	}
	a := &soakAgent{proc: proc}
	client := Claude
	if codex {
		client = Codex
	}
	h := &Handler{Store: s.store, Client: client, Getenv: envOf(map[string]string{EnvID: id}), Process: func() *ckpt.Process { return proc }}
	sid := "s-" + id
	hook := func(ev Event, in Input) {
		in.SessionID = sid
		res := h.Handle(context.Background(), ev, in)
		for _, w := range res.Warnings {
			s.t.Logf("%s %s: %s", id, ev, w)
		}
		s.mu.Lock()
		s.stats.events++
		s.mu.Unlock()
	}
	hook(EventUserPromptSubmit, Input{Prompt: "go"}) // creates the checkpoint
	s.mu.Lock()
	s.agents[id], s.stats.agents = a, s.stats.agents+1
	s.mu.Unlock()
	exit := func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait() // reaped: gone from /proc
	}
	for time.Now().Before(s.deadline) {
		time.Sleep(s.iv*4/5 + rand.N(s.iv*2/5))
		switch r := rand.N(100); {
		case r < 3: // kill -9 mid-turn
			s.mu.Lock()
			a.killing = true
			s.mu.Unlock()
			exit()
			s.mu.Lock()
			a.killedAt, s.stats.kills = time.Now(), s.stats.kills+1
			s.mu.Unlock()
			return
		case r < 6: // a clean end
			hook(EventStop, Input{LastAssistantMessage: "done"})
			if !codex {
				hook(EventSessionEnd, Input{Reason: "exit"})
			}
			s.mu.Lock()
			a.ended, s.stats.ends = true, s.stats.ends+1
			s.mu.Unlock()
			exit()
			s.mu.Lock()
			a.exitedAt = time.Now()
			s.mu.Unlock()
			return
		case r < 11: // a pause: the process lives, nothing is said
			s.mu.Lock()
			s.stats.pauses++
			s.mu.Unlock()
			time.Sleep(rand.N(3 * s.iv))
		case r < 40:
			hook(EventPreToolUse, Input{ToolName: "Bash", ToolInput: []byte(`{"command":"make"}`)})
		case r < 75:
			hook(EventPostToolUse, Input{ToolName: "Bash"})
		case r < 85:
			hook(EventNotification, Input{NotificationType: "permission_prompt", Message: "Claude needs your permission to use Bash"})
		default:
			hook(EventUserPromptSubmit, Input{Prompt: "go on"})
		}
	}
	hook(EventStop, Input{LastAssistantMessage: "time is up"})
	hook(EventSessionEnd, Input{Reason: "exit"})
	s.mu.Lock()
	a.ended = true
	s.mu.Unlock()
	exit()
	s.mu.Lock()
	a.exitedAt = time.Now()
	s.mu.Unlock()
}

// observe looks at every checkpoint every half interval until stop.
func (s *soak) observe(stop <-chan struct{}) {
	tick := time.NewTicker(s.iv / 2)
	defer tick.Stop()
	for {
		select {
		case <-stop:
			return
		case <-tick.C:
			s.look(time.Now())
		}
	}
}

// look judges, as a view does at start, every agent not settled yet (a
// death seen, or a clean end seen after its process exited): a dead one
// must be a killed agent's, and a killed agent (reaped before start) must
// be dead. Settled agents are no longer read, so that a look costs the
// live fleet, not every agent the run ever had.
func (s *soak) look(start time.Time) {
	ctx := context.Background()
	th := ckpt.Thresholds{Warn: 2 * s.iv, Stale: 4 * s.iv}
	s.mu.Lock()
	s.stats.looks++
	var ids []string
	for id, a := range s.agents {
		if !a.settled {
			ids = append(ids, id)
		}
	}
	s.mu.Unlock()
	for _, id := range ids {
		c, err := s.store.Get(ctx, id, 0)
		if err != nil {
			s.t.Error(err)
			return
		}
		sum := c.Summary()
		s.mu.Lock()
		a := s.agents[id]
		killed, ended, exited := a.killedAt, a.ended, a.exitedAt // as of before the judgement
		s.mu.Unlock()
		now := time.Now()
		v := ckpt.RejudgeDead(ctx, s.store, id, ckpt.PresenceOf(&sum, now, th, process.Alive), now, th, process.Alive)
		s.mu.Lock()
		s.stats.judged++
		switch {
		case v.State == ckpt.PresenceDead && killed.IsZero() && a.killing:
			// killed while judged: no verdict either way
		case v.State == ckpt.PresenceDead && (killed.IsZero() || ended):
			s.stats.falseDead = append(s.stats.falseDead, fmt.Sprintf("%s: %s (ended %v, killed %v, record %+v, beat %v, updated %v, now %v)",
				id, v.Why, ended, killed, sum.Heartbeat.Presence, sum.Heartbeat.LastBeat, sum.UpdatedAt, now))
		case v.State == ckpt.PresenceDead:
			a.seenDead, a.settled = true, true
			s.stats.latencies = append(s.stats.latencies, now.Sub(killed))
		case !killed.IsZero() && killed.Before(start):
			s.stats.missed = append(s.stats.missed, id+" reads "+string(v.State)+": "+v.Why)
		case ended && !exited.IsZero() && exited.Before(start):
			a.settled = true // ended, its process gone, and not dead: done with it
		}
		s.mu.Unlock()
	}
}

// report logs the figures and fails on a false dead, a missed death, or
// (strict: a soak run) a death seen later than 2x the beat interval.
func (s *soak) report(strict bool) {
	t, st := s.t, s.stats
	sort.Slice(st.latencies, func(i, j int) bool { return st.latencies[i] < st.latencies[j] })
	var maxLat, p50 time.Duration
	if n := len(st.latencies); n > 0 {
		maxLat, p50 = st.latencies[n-1], st.latencies[n/2]
	}
	unseen := 0
	for _, a := range s.agents {
		if !a.killedAt.IsZero() && !a.seenDead {
			unseen++
		}
	}
	t.Logf("soak: %d agents, %d hook events, %d kills, %d clean ends, %d pauses; %d looks judged %d states; false dead %d, missed deaths %d, unseen %d; death seen after p50 %v, max %v (beat interval %v, 2x = %v)",
		st.agents, st.events, st.kills, st.ends, st.pauses, st.looks, st.judged, len(st.falseDead), len(st.missed), unseen,
		p50.Round(time.Millisecond), maxLat.Round(time.Millisecond), s.iv, 2*s.iv)
	for _, f := range st.falseDead {
		t.Errorf("false dead: %s", f)
	}
	for _, m := range st.missed {
		t.Errorf("a killed agent not seen dead at the next look: %s", m)
	}
	if unseen > 0 {
		t.Errorf("%d killed agents never seen dead", unseen)
	}
	if strict && maxLat > 2*s.iv {
		t.Errorf("a death was seen %v after it, more than 2x the beat interval (%v)", maxLat, 2*s.iv)
	}
}
