package filestore

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/ckpt-dev/ckpt"
	"github.com/ckpt-dev/ckpt/storetest"
)

// The crash-torture test re-executes this test binary as writer processes:
// TestMain turns into a writer when CKPT_TORTURE_WRITER is set.
func TestMain(m *testing.M) {
	for env, child := range childModes {
		if os.Getenv(env) != "" {
			child()
			return
		}
	}
	if name := os.Getenv("CKPT_TORTURE_WRITER"); name != "" {
		if os.Getenv("CKPT_DIE_AFTER_HISTORY") != "" {
			afterHistorySync = func() { syscall.Kill(os.Getpid(), syscall.SIGKILL); select {} }
		}
		tortureWriter(os.Getenv("CKPT_TORTURE_STORE"), name)
		return
	}
	os.Exit(m.Run())
}

// childModes are the other roles this test binary plays when re-executed
// with an environment variable set (its key).
var childModes = map[string]func(){}

const sharedID = "torture/shared"

// tortureWriter appends to its own checkpoint and to a shared one, forever,
// printing "ack ID TEXT" after each update Append acknowledged.
func tortureWriter(dir, name string) {
	s, err := Open(dir)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	ctx := context.Background()
	own := "torture/" + name
	title := name
	if _, err := s.Append(ctx, own, ckpt.MustEvent(ckpt.EventCreated, time.Now(), ckpt.Actor{Agent: name}, ckpt.Created{Patch: ckpt.Patch{Title: &title}}), ckpt.AppendOptions{}); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	// CKPT_WRITES bounds the updates (TestManyProcesses); without it the
	// writer runs until killed.
	limit, err := strconv.Atoi(os.Getenv("CKPT_WRITES"))
	if err != nil {
		limit = -1
	}
	for i := 0; i != limit; i++ {
		id := own
		if i%2 == 1 {
			id = sharedID
		}
		text := fmt.Sprintf("%s-%d", name, i)
		e := ckpt.MustEvent(ckpt.EventUpdate, time.Now(), ckpt.Actor{Agent: name}, ckpt.Patch{CurrentStep: &text})
		if i%10 == 0 {
			e.Key = text
		}
		if _, err := s.Append(ctx, id, e, ckpt.AppendOptions{}); err != nil {
			fmt.Fprintf(os.Stderr, "append %s: %v\n", id, err)
			os.Exit(3)
		}
		// One write of a short line to a pipe is atomic: the test sees
		// whole lines only.
		os.Stdout.WriteString("ack " + id + " " + text + "\n")
		if i%7 == 0 {
			s.Beat(ctx, own, ckpt.Signal{At: time.Now()})
		}
	}
}

// writerProc is one running writer.
type writerProc struct {
	name string
	cmd  *exec.Cmd
	done chan struct{}
	mu   sync.Mutex
	acks map[string][]string // checkpoint ID → texts acknowledged
	err  strings.Builder
}

func startWriter(t *testing.T, dir, name string) *writerProc {
	t.Helper()
	w := &writerProc{name: name, done: make(chan struct{}), acks: map[string][]string{}}
	w.cmd = exec.Command(os.Args[0], "-test.run=^$")
	w.cmd.Env = append(os.Environ(), "CKPT_TORTURE_WRITER="+name, "CKPT_TORTURE_STORE="+dir)
	w.cmd.Stderr = &w.err
	stdout, err := w.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := w.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		defer close(w.done)
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			f := strings.Fields(sc.Text())
			if len(f) == 3 && f[0] == "ack" {
				w.mu.Lock()
				w.acks[f[1]] = append(w.acks[f[1]], f[2])
				w.mu.Unlock()
			}
		}
	}()
	return w
}

// kill SIGKILLs the writer and waits until all it printed is read.
func (w *writerProc) kill(t *testing.T) {
	t.Helper()
	w.cmd.Process.Signal(syscall.SIGKILL)
	<-w.done
	err := w.cmd.Wait()
	if ws, ok := w.cmd.ProcessState.Sys().(syscall.WaitStatus); !ok || !ws.Signaled() {
		t.Fatalf("writer %s ended by itself (%v): %s", w.name, err, w.err.String())
	}
}

// stepIndex remembers the current_step texts found in histories so far, so
// that each check reads only the events appended since the last one.
type stepIndex struct {
	seen map[string]map[string]bool // checkpoint ID → texts
	next map[string]int64           // checkpoint ID → first seq not read yet
}

func newStepIndex() *stepIndex {
	return &stepIndex{seen: map[string]map[string]bool{}, next: map[string]int64{}}
}

// has reports whether id's history holds an update with text, reading the
// history's new events first.
func (x *stepIndex) has(t *testing.T, s *Store, id, text string) bool {
	t.Helper()
	if x.seen[id][text] {
		return true
	}
	h, err := s.History(context.Background(), id, max(x.next[id], 1), 0)
	if err != nil {
		t.Fatalf("History(%s): %v", id, err)
	}
	if x.seen[id] == nil {
		x.seen[id] = map[string]bool{}
	}
	for _, e := range h {
		var p ckpt.Patch
		if e.Type == ckpt.EventUpdate && json.Unmarshal(e.Data, &p) == nil && p.CurrentStep != nil {
			x.seen[id][*p.CurrentStep] = true
		}
		x.next[id] = e.Seq + 1
	}
	return x.seen[id][text]
}

// assertAcked fails unless every update w acknowledged is in the history.
func assertAcked(t *testing.T, s *Store, x *stepIndex, w *writerProc) int {
	t.Helper()
	n := 0
	for id, texts := range w.acks {
		for _, text := range texts {
			if !x.has(t, s, id, text) {
				t.Errorf("acknowledged update %s of %s is not in its history", text, id)
			}
			n++
		}
	}
	return n
}

// assertListedAsRead fails unless a listing of id shows the revision a
// read of its files finds, or, when the read finds no checkpoint (its
// writer was killed in its create before the history held the event),
// does not list it.
func assertListedAsRead(t *testing.T, s *Store, id string) {
	t.Helper()
	ctx := context.Background()
	p, err := s.List(ctx, ckpt.ListOptions{Filter: ckpt.Filter{Prefix: id}})
	if err != nil {
		t.Errorf("listing %s after its writer was killed: %v", id, err)
		return
	}
	listed := int64(0)
	if len(p.Items) > 0 && p.Items[0].ID == id {
		listed = p.Items[0].Rev
	}
	c, err := s.Get(ctx, id, 0)
	switch {
	case errors.Is(err, ckpt.ErrNotFound):
		if listed != 0 {
			t.Errorf("%s listed at rev %d, but its files hold no checkpoint", id, listed)
		}
	case err != nil:
		t.Errorf("Get %s: %v", id, err)
	case listed != c.Rev:
		t.Errorf("%s listed at rev %d (0: not listed), its files hold rev %d", id, listed, c.Rev)
	}
}

// assertRepairClean repairs ids under their locks and fails unless nothing
// acknowledged was damaged (no error) and everything found was fixed.
// It counts what it repaired in seen, by the first words of What.
func assertRepairClean(t *testing.T, s *Store, ids []string, seen map[string]int) {
	t.Helper()
	r, err := s.Repair(context.Background(), ids)
	if err != nil {
		t.Fatalf("Repair(%v): %v", ids, err)
	}
	for _, p := range r.Problems {
		if p.Severity == ckpt.SeverityError || !p.Fixed {
			t.Errorf("after a crash Repair found %+v", p)
		}
		words := strings.Fields(p.What)
		seen[strings.Join(words[:min(3, len(words))], " ")]++
	}
}

// TestCrashTorture SIGKILLs writer processes at random moments while others
// keep writing; after each kill the killed writer's checkpoint checks clean
// or repairs clean, and every update any writer had acknowledged is there.
// It is counted in kills, never timed: 15 in the everyday suite,
// CKPT_TORTURE=N for the long suite (.ci/run).
func TestCrashTorture(t *testing.T) {
	s := newStore(t, Options{BackupEvery: 3, BackupKeep: 4})
	dir := s.Dir()
	title := "shared"
	if _, err := s.Append(context.Background(), sharedID, ckpt.MustEvent(ckpt.EventCreated, time.Now(), ckpt.Actor{}, ckpt.Created{Patch: ckpt.Patch{Title: &title}}), ckpt.AppendOptions{}); err != nil {
		t.Fatal(err)
	}
	kills := 15
	if n, err := strconv.Atoi(os.Getenv("CKPT_TORTURE")); err == nil && n > 0 {
		kills = n
	}
	const writers = 4
	next := 0
	spawn := func() *writerProc {
		next++
		return startWriter(t, dir, fmt.Sprintf("w%d", next))
	}
	var running []*writerProc
	for range writers {
		running = append(running, spawn())
	}
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 1))
	start := time.Now()
	killed, acked := 0, 0
	seen := map[string]int{}
	index := newStepIndex()
	for killed < kills && !t.Failed() {
		time.Sleep(time.Duration(rng.IntN(40)+2) * time.Millisecond)
		i := rng.IntN(len(running))
		w := running[i]
		w.kill(t)
		killed++
		running[i] = spawn()
		own := "torture/" + w.name
		if _, err := os.Stat(s.files(own).dir); err != nil {
			continue // killed before it created its checkpoint
		}
		// No one writes the killed writer's own checkpoint any more: a
		// listing (which settles the dead writer's marker, then trusts the
		// view of a checkpoint with a beat file) shows what its files hold.
		assertListedAsRead(t, s, own)
		// Others write the shared one while Check looks (under a shared lock).
		if r, err := s.Check(context.Background(), []string{own, sharedID}); err != nil || r.Errors() > 0 {
			t.Errorf("Check after kill %d: %v %+v", killed, err, r)
		}
		assertRepairClean(t, s, []string{own, sharedID}, seen)
		if r, err := s.Check(context.Background(), []string{own}); err != nil || len(r.Problems) > 0 {
			t.Errorf("Check(%s) after Repair: %v %+v", own, err, r)
		}
		acked += assertAcked(t, s, index, w)
	}
	for _, w := range running {
		w.kill(t)
	}
	assertRepairClean(t, s, nil, seen)
	if r, err := s.Check(context.Background(), nil); err != nil || len(r.Problems) > 0 {
		t.Errorf("final Check: %v %+v", err, r)
	}
	storetest.Verify(t, s)
	for _, w := range running {
		acked += assertAcked(t, s, index, w)
	}
	t.Logf("%d kills, %d acknowledged updates verified, in %v; repaired: %v", killed, acked, time.Since(start).Round(time.Millisecond), seen)
}
