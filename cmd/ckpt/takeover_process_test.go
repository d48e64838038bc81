package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"math/rand/v2"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// TestConcurrentTakeoversKilledHalfway runs real `ckpt takeover` and
// `ckpt restart` processes on one checkpoint at once, next to a writer, and
// SIGKILLs some of them at random moments. Afterwards every hand-over in the
// history names an archive of its own that exists and holds exactly the
// state it replaced (the revision before it), every acknowledged one (exit
// 0) is among them, and ckpt check finds no error: a process killed halfway
// left either no hand-over or a complete one.
func TestConcurrentTakeoversKilledHalfway(t *testing.T) {
	rounds := 12
	if testing.Short() {
		rounds = 4
	}
	bin := ckptBinary(t)
	store := initStore(t, bin)
	mustCkpt(t, bin, store, "start", "w", "--step", "plan", "--step", "build")

	var mu sync.Mutex
	acked := map[string]bool{} // archive names printed by exit-0 hand-overs
	kills := 0
	for round := range rounds {
		var wg sync.WaitGroup
		for p := range 4 {
			wg.Go(func() {
				args := []string{"takeover", "w", "--agent", "T" + string(rune('a'+p)), "--force"}
				if p == 3 {
					args = []string{"restart", "w", "--force"}
				}
				var out bytes.Buffer
				cmd := ckptCmd(bin, store, args...)
				cmd.Stdout = &out
				if err := cmd.Start(); err != nil {
					t.Error(err)
					return
				}
				killed := false
				if p%2 == 0 {
					time.Sleep(time.Duration(rand.IntN(60000)) * time.Microsecond) // start-up to done
					killed = cmd.Process.Signal(syscall.SIGKILL) == nil
				}
				err := cmd.Wait()
				mu.Lock()
				defer mu.Unlock()
				var exit *exec.ExitError
				switch {
				case err == nil:
					first, _, _ := strings.Cut(out.String(), "\n")
					name, ok := strings.CutPrefix(first, "archived the previous state as ")
					if !ok {
						t.Errorf("ckpt %s: first line %q", strings.Join(args, " "), first)
					}
					acked[name] = true
				case killed && errors.As(err, &exit) && exit.ProcessState.Sys().(syscall.WaitStatus).Signaled():
					kills++
				case errors.As(err, &exit) && exit.ExitCode() == 4:
					// Gave up after its bounded retries: not acknowledged.
				default:
					t.Errorf("ckpt %s: %v", strings.Join(args, " "), err)
				}
			})
		}
		wg.Go(func() {
			cmd := ckptCmd(bin, store, "note", "w", "round "+string(rune('A'+round%26)))
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Errorf("ckpt note: %v: %s", err, out)
			}
		})
		wg.Wait()
	}

	var events []struct {
		Seq  int64           `json:"seq"`
		Type string          `json:"type"`
		Data json.RawMessage `json:"data"`
	}
	for _, line := range strings.Split(strings.TrimSpace(mustCkpt(t, bin, store, "log", "w", "--json")), "\n") {
		var e struct {
			Seq  int64           `json:"seq"`
			Type string          `json:"type"`
			Data json.RawMessage `json:"data"`
		}
		if err := json.Unmarshal([]byte(line), &e); err != nil {
			t.Fatalf("log line %q: %v", line, err)
		}
		events = append(events, e)
	}
	named := map[string]bool{}
	for _, e := range events {
		if e.Type != "taken_over" && e.Type != "restarted" {
			continue
		}
		var ref struct {
			ArchivedAs string `json:"archived_as"`
		}
		if err := json.Unmarshal(e.Data, &ref); err != nil || ref.ArchivedAs == "" {
			t.Fatalf("%s event %d names no archive: %s", e.Type, e.Seq, e.Data)
		}
		if named[ref.ArchivedAs] {
			t.Errorf("two hand-overs name the archive %s", ref.ArchivedAs)
		}
		named[ref.ArchivedAs] = true
		want := showState(t, bin, store, "w", "--rev", strconv.FormatInt(e.Seq-1, 10))
		got := showState(t, bin, store, ref.ArchivedAs)
		if got.Archived.From != "w" || got.Agent != want.Agent || got.Session != want.Session || got.Notes != want.Notes || got.Progress != want.Progress {
			t.Errorf("archive %s of %s event %d is not revision %d:\n got %+v\nwant %+v", ref.ArchivedAs, e.Type, e.Seq, e.Seq-1, got, want)
		}
	}
	for name := range acked {
		if !named[name] {
			t.Errorf("acknowledged hand-over archived %s, which no event names", name)
		}
	}
	// Copies no event names: left by a kill between the copy and the event
	// (allowed, complete and archived), or by nothing else.
	var archives []struct {
		ID       string                `json:"id"`
		Archived struct{ From string } `json:"archived"`
	}
	if err := json.Unmarshal([]byte(mustCkpt(t, bin, store, "ls", "--all", "--json", "--prefix", "w_")), &archives); err != nil {
		t.Fatal(err)
	}
	orphans := 0
	for _, a := range archives {
		if a.Archived.From == "w" && !named[a.ID] {
			orphans++
		}
	}
	check := ckptCmd(bin, store, "check")
	if out, err := check.CombinedOutput(); err != nil {
		t.Errorf("ckpt check after the kills: %v\n%s", err, out)
	}
	t.Logf("%d rounds: %d hand-overs recorded, %d acknowledged, %d processes killed, %d archive copies named by no event", rounds, len(named), len(acked), kills, orphans)
	if len(acked) == 0 {
		t.Errorf("no hand-over was acknowledged")
	}
}

// shownState is what TestConcurrentTakeoversKilledHalfway compares between
// an archive and the revision it copies.
type shownState struct {
	Agent    struct{ ID string }       `json:"agent"`
	Session  struct{ Number int }      `json:"session"`
	Progress struct{ Done, Total int } `json:"progress"`
	Notes    string
	Archived struct{ From string } `json:"archived"`
}

func showState(t *testing.T, bin, store string, args ...string) shownState {
	t.Helper()
	var s struct {
		shownState
		Context struct {
			Notes string `json:"notes"`
		} `json:"context"`
	}
	out := mustCkpt(t, bin, store, append(append([]string{"show"}, args...), "--json")...)
	if err := json.Unmarshal([]byte(out), &s); err != nil {
		t.Fatalf("ckpt show %v: %v", args, err)
	}
	s.shownState.Notes = s.Context.Notes
	return s.shownState
}
