package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// TestCrashTorture kills real `ckpt` writer processes with SIGKILL at random
// moments while other writers keep writing to the same store, hundreds of
// times. A writer counts an update as acknowledged only when the command
// exited 0. After every kill, `ckpt check` is clean or `ckpt repair` makes it
// clean; at the end (and every 50 kills) every acknowledged update is in the
// state (`ckpt show --json`) and in the history (`ckpt log --json`), whose
// revisions are dense.
//
// The run is counted in kills, never timed: 25 in the everyday suite
// (go test ./..., a few seconds), CKPT_TORTURE=N for the long suite (.ci/run
// runs 200 by default, about a minute on a 2-core machine). Problems check finds after
// a kill (a state file behind the history, a missing backup, a leftover
// temporary file) are logged with -v.
func TestCrashTorture(t *testing.T) {
	target := 25
	if v := os.Getenv("CKPT_TORTURE"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			t.Fatalf("CKPT_TORTURE=%q: give a number of kills, e.g. CKPT_TORTURE=2000", v)
		}
		target = n
	}
	bin := ckptBinary(t)
	// Frequent backups, so kills also land in backup writes and rotation.
	store := filepath.Join(t.TempDir(), ".ckpt")
	mustCkpt(t, bin, store, "init", "--backup-every", "2", "--backup-keep", "3")
	ids := []string{"torture/a", "torture/b", "torture/c", "torture/d"}
	for _, id := range ids {
		mustCkpt(t, bin, store, "start", id, "--step", "seed")
	}

	tr := &torture{t: t, bin: bin, store: store, ids: ids, acked: map[string][]ack{}, inflight: map[*exec.Cmd]time.Time{}}
	start := time.Now()
	kills, repairs, dirty, nextVerify := 0, 0, 0, 50
	for kills < target {
		kills += tr.round()
		clean, repaired := tr.checkOrRepair()
		if !clean {
			dirty++
		}
		if repaired {
			repairs++
		}
		if kills >= nextVerify {
			tr.verify()
			nextVerify += 50
		}
	}
	tr.verify()
	total := 0
	for _, a := range tr.acked {
		total += len(a)
	}
	t.Logf("%d kills in %s: %d acknowledged updates (%d of them mended damage on the way), %d unacknowledged; check found problems after %d kills, repair made it clean %d times",
		kills, time.Since(start).Round(time.Millisecond), total, tr.warned, tr.unacked, dirty, repairs)
	for i, w := range tr.found {
		if i == 20 {
			t.Logf("… and %d more problems", len(tr.found)-i)
			break
		}
		t.Logf("check found: %s", w)
	}
}

// ack is one acknowledged update: the command exited 0.
type ack struct {
	key  string
	kind string // "update" or "step"
}

type torture struct {
	t     *testing.T
	bin   string
	store string
	ids   []string

	mu       sync.Mutex
	acked    map[string][]ack // by checkpoint ID
	unacked  int
	killed   int                     // writer processes that died of SIGKILL
	warned   int                     // acknowledged writes that reported damage mended on the way
	found    []string                // what check found after kills, before repair
	inflight map[*exec.Cmd]time.Time // running writer processes and their start
	seq      int
}

// writers is how many writer processes run at once.
const writers = 4

// round runs writers until one of them has been killed (or about 200 ms
// passed without a kill landing), then lets the others finish their current
// command. It returns how many writers died of SIGKILL.
func (tr *torture) round() int {
	tr.mu.Lock()
	before := tr.killed
	tr.mu.Unlock()
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				tr.write(w)
			}
		}()
	}
	tr.killOne(200 * time.Millisecond)
	close(stop)
	wg.Wait()
	tr.mu.Lock()
	defer tr.mu.Unlock()
	return tr.killed - before
}

// write runs one writer command and records whether it was acknowledged.
func (tr *torture) write(w int) {
	tr.mu.Lock()
	tr.seq++
	key := fmt.Sprintf("w%d-%d", w, tr.seq)
	tr.mu.Unlock()
	id := tr.ids[rand.IntN(len(tr.ids))]
	kind := "update"
	args := []string{"--agent", fmt.Sprintf("w%d", w), "update", id, "--file-modified", "m/" + key, "--key", key}
	if rand.IntN(3) == 0 {
		kind = "step"
		args = []string{"--agent", fmt.Sprintf("w%d", w), "step", id, "s-" + key, "--add", "--done", "--key", key}
	}
	cmd := ckptCmd(tr.bin, tr.store, args...)
	var errOut bytes.Buffer
	cmd.Stderr = &errOut
	if err := cmd.Start(); err != nil {
		tr.t.Errorf("starting ckpt: %v", err)
		return
	}
	tr.mu.Lock()
	tr.inflight[cmd] = time.Now()
	tr.mu.Unlock()
	err := cmd.Wait()
	tr.mu.Lock()
	defer tr.mu.Unlock()
	delete(tr.inflight, cmd)
	if err == nil {
		tr.acked[id] = append(tr.acked[id], ack{key: key, kind: kind})
		if strings.Contains(errOut.String(), "ckpt: warning:") {
			tr.warned++
		}
		return
	}
	tr.unacked++
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signal() == syscall.SIGKILL {
			tr.killed++
			return
		}
	}
	// A writer that was not killed must not fail: the store stays usable
	// after any crash.
	tr.t.Errorf("ckpt %s failed without being killed: %v\n%s", strings.Join(args, " "), err, errOut.String())
}

// killOne waits for a random moment of a running writer's life and kills it
// with SIGKILL. It reports whether it sent the signal within the time limit
// (the process may have finished just before it).
func (tr *torture) killOne(limit time.Duration) bool {
	until := time.Now().Add(limit)
	for time.Now().Before(until) {
		tr.mu.Lock()
		var victim *exec.Cmd
		var started time.Time
		for cmd, at := range tr.inflight { // map order is random
			victim, started = cmd, at
			break
		}
		tr.mu.Unlock()
		if victim == nil {
			time.Sleep(200 * time.Microsecond)
			continue
		}
		// A moment in the first 8 ms of its life: start-up, lock, append,
		// fsync, state replace or backup.
		time.Sleep(time.Until(started.Add(time.Duration(rand.Int64N(int64(8 * time.Millisecond))))))
		if victim.Process.Signal(syscall.SIGKILL) == nil {
			return true
		}
	}
	return false
}

// checkOrRepair runs ckpt check; when it reports any problem (error or
// warning), ckpt repair, after which check must report none. It returns
// whether the first check was clean and whether repair ran.
func (tr *torture) checkOrRepair() (clean, repaired bool) {
	tr.t.Helper()
	first, code := tr.check()
	if code == 0 && first.Problems == 0 {
		return true, false
	}
	tr.mu.Lock()
	tr.found = append(tr.found, first.What...)
	tr.mu.Unlock()
	rout, rcode := tr.run("repair")
	if rcode != 0 {
		tr.t.Fatalf("ckpt repair exited %d after check found %v; repair said:\n%s", rcode, first.What, rout)
	}
	if after, code := tr.check(); code != 0 || after.Problems != 0 {
		tr.t.Fatalf("check is not clean after repair (exit %d): %v\nfirst check: %v\nrepair:\n%s", code, after.What, first.What, rout)
	}
	return false, true
}

// checkReport is what the torture test reads of ckpt check --json.
type checkReport struct {
	Problems int
	What     []string // "ID severity: what" per problem
}

// check runs ckpt check --json and returns its report and exit code.
func (tr *torture) check() (checkReport, int) {
	tr.t.Helper()
	cmd := ckptCmd(tr.bin, tr.store, "check", "--json")
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	code := 0
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		code = ee.ExitCode()
	case err != nil:
		tr.t.Fatalf("running ckpt check: %v", err)
	}
	var rep struct {
		Problems []struct {
			ID       string `json:"id"`
			Severity string `json:"severity"`
			What     string `json:"what"`
		} `json:"problems"`
	}
	if jerr := json.Unmarshal(out.Bytes(), &rep); jerr != nil {
		tr.t.Fatalf("ckpt check --json (exit %d) printed no report: %v\n%s%s", code, jerr, out.String(), errOut.String())
	}
	r := checkReport{Problems: len(rep.Problems)}
	for _, p := range rep.Problems {
		r.What = append(r.What, fmt.Sprintf("%s %s: %s", p.ID, p.Severity, p.What))
	}
	return r, code
}

// run runs ckpt with both streams captured and returns them and the exit code.
func (tr *torture) run(args ...string) (string, int) {
	cmd := ckptCmd(tr.bin, tr.store, args...)
	out, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	switch {
	case err == nil:
		return string(out), 0
	case errors.As(err, &ee):
		return string(out), ee.ExitCode()
	}
	tr.t.Fatalf("running ckpt %s: %v", strings.Join(args, " "), err)
	return "", -1
}

// verify checks that every acknowledged update is in the state and the
// history of its checkpoint, and that the history's revisions are dense.
func (tr *torture) verify() {
	tr.t.Helper()
	for _, id := range tr.ids {
		var state struct {
			Rev   int64 `json:"rev"`
			Steps []struct {
				ID     string `json:"id"`
				Status string `json:"status"`
			} `json:"steps"`
			Files struct {
				Modified []string `json:"modified"`
			} `json:"files"`
		}
		if err := json.Unmarshal([]byte(mustCkpt(tr.t, tr.bin, tr.store, "show", id, "--json")), &state); err != nil {
			tr.t.Fatalf("show %s --json: %v", id, err)
		}
		files := map[string]bool{}
		for _, f := range state.Files.Modified {
			files[f] = true
		}
		steps := map[string]string{}
		for _, s := range state.Steps {
			steps[s.ID] = s.Status
		}
		keys := map[string]bool{}
		lines := strings.Split(strings.TrimSpace(mustCkpt(tr.t, tr.bin, tr.store, "log", id, "--json")), "\n")
		for i, line := range lines {
			var e struct {
				Seq int64  `json:"seq"`
				Key string `json:"key"`
			}
			if err := json.Unmarshal([]byte(line), &e); err != nil || e.Seq != int64(i+1) {
				tr.t.Fatalf("%s: log line %d has seq %d (%v): revisions are not dense", id, i+1, e.Seq, err)
			}
			if e.Key != "" && keys[e.Key] {
				tr.t.Fatalf("%s: key %s is in the history twice", id, e.Key)
			}
			keys[e.Key] = true
		}
		if int64(len(lines)) != state.Rev {
			tr.t.Fatalf("%s: state at rev %d, history has %d events", id, state.Rev, len(lines))
		}
		tr.mu.Lock()
		acked := append([]ack(nil), tr.acked[id]...)
		tr.mu.Unlock()
		for _, a := range acked {
			inState := files["m/"+a.key]
			if a.kind == "step" {
				inState = steps["s-"+a.key] == "done"
			}
			if !keys[a.key] || !inState {
				tr.t.Fatalf("%s: acknowledged %s %s is lost (in history: %v, in state: %v)", id, a.kind, a.key, keys[a.key], inState)
			}
		}
	}
}
