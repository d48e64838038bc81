package main

import (
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
)

// TestConcurrentProcesses runs 16 processes updating one checkpoint and 16
// updating their own, all at once, many updates each: every update lands
// exactly once, revisions are exact and dense, and the store checks clean.
func TestConcurrentProcesses(t *testing.T) {
	const workers, updates = 16, 12
	bin := ckptBinary(t)
	store := newProcessStore(t, bin)
	must := func(args ...string) string {
		t.Helper()
		out, err := ckptRun(t, bin, append([]string{"--store", store}, args...)...)
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	must("start", "shared")
	for w := 0; w < workers; w++ {
		must("start", fmt.Sprintf("own/w%02d", w))
	}
	var wg sync.WaitGroup
	errs := make(chan error, 2*workers*updates)
	for w := 0; w < workers; w++ {
		for _, id := range []string{"shared", fmt.Sprintf("own/w%02d", w)} {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := 0; i < updates; i++ {
					_, err := ckptRun(t, bin, "--store", store, "--agent", fmt.Sprintf("w%02d", w),
						"update", id, "--file-modified", fmt.Sprintf("w%02d/%02d", w, i), "--last-processed", fmt.Sprint(i))
					if err != nil {
						errs <- err
					}
				}
			}()
		}
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}

	var shared struct {
		Rev   int64 `json:"rev"`
		Files struct {
			Modified []string `json:"modified"`
		} `json:"files"`
	}
	if err := json.Unmarshal([]byte(must("show", "shared", "--json")), &shared); err != nil {
		t.Fatal(err)
	}
	if want := int64(1 + workers*updates); shared.Rev != want || len(shared.Files.Modified) != workers*updates {
		t.Errorf("shared: rev %d with %d files, want rev %d with %d", shared.Rev, len(shared.Files.Modified), want, workers*updates)
	}
	var list []struct {
		ID  string `json:"id"`
		Rev int64  `json:"rev"`
	}
	if err := json.Unmarshal([]byte(must("ls", "--json", "--prefix", "own/")), &list); err != nil {
		t.Fatal(err)
	}
	if len(list) != workers {
		t.Fatalf("ls --prefix own/ lists %d checkpoints, want %d", len(list), workers)
	}
	for _, c := range list {
		if c.Rev != 1+updates {
			t.Errorf("%s: rev %d, want %d", c.ID, c.Rev, 1+updates)
		}
	}
	for i, line := range strings.Split(strings.TrimSpace(must("log", "shared", "--json")), "\n") {
		var e struct {
			Seq int `json:"seq"`
		}
		if err := json.Unmarshal([]byte(line), &e); err != nil || e.Seq != i+1 {
			t.Fatalf("log line %d: seq %d (%v), want dense seqs", i+1, e.Seq, err)
		}
	}
	if out, err := ckptRun(t, bin, "--store", store, "check"); err != nil {
		t.Errorf("check after concurrent writes: %v\n%s", err, out)
	}
}
