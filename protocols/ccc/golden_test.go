package ccc

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"sort"
	"testing"
	"time"

	ckpt "github.com/ckpt-dev/ckpt"
	"github.com/google/go-cmp/cmp"
)

var update = flag.Bool("update", false, "rewrite testdata/golden from the current output")

// goldenResult is what an import of one input gave, as stored in
// testdata/golden/<input>.json.
type goldenResult struct {
	ID       string           `json:"id,omitempty"`
	Warnings []string         `json:"warnings,omitempty"`
	State    *ckpt.Checkpoint `json:"state,omitempty"`
	Error    string           `json:"error,omitempty"`
}

// inputFiles lists every real fixture (testdata/fixtures, copied from
// ../shared/fixtures/real) and every seed example (testdata/seed).
func inputFiles(t testing.TB) []string {
	t.Helper()
	var out []string
	for _, dir := range []string{"testdata/fixtures", "testdata/seed"} {
		entries, err := os.ReadDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range entries {
			if e.Name() != "SOURCES.txt" && e.Name() != "README.txt" {
				out = append(out, filepath.Join(dir, e.Name()))
			}
		}
	}
	sort.Strings(out)
	if len(out) == 0 {
		t.Fatal("no inputs in testdata")
	}
	return out
}

func readFile(t testing.TB, path string) []byte {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// checkGolden compares got, as indented JSON, with testdata/golden/name.
func checkGolden(t *testing.T, name string, got any) {
	t.Helper()
	b, err := json.MarshalIndent(got, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	b = append(b, '\n')
	path := filepath.Join("testdata", "golden", name)
	if *update {
		if err := os.WriteFile(path, b, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if !bytes.Equal(want, b) {
		t.Errorf("%s differs from the golden file (-want +got):\n%s", name, cmp.Diff(string(want), string(b)))
	}
}

// decoded returns data as a generic JSON value.
func decoded(t testing.TB, data []byte) any {
	t.Helper()
	var v any
	if err := json.Unmarshal(data, &v); err != nil {
		t.Fatalf("%v in:\n%s", err, data)
	}
	return v
}

// fold builds a checkpoint the way a store does: events applied by ckpt's
// fold, seqs numbered from 1.
func fold(t testing.TB, id string, events ...ckpt.Event) *ckpt.Checkpoint {
	t.Helper()
	var c *ckpt.Checkpoint
	for i, e := range events {
		e.Seq = int64(i + 1)
		var err error
		if c, err = ckpt.Apply(id, c, e); err != nil {
			t.Fatalf("event %d (%s): %v", i+1, e.Type, err)
		}
	}
	return c
}

// stored returns the state a store holds after importing c: the imported
// snapshot folded as the first event, at the state's own update time (or at
// when it has none).
func stored(t testing.TB, id string, c *ckpt.Checkpoint, at time.Time) *ckpt.Checkpoint {
	t.Helper()
	if !c.UpdatedAt.IsZero() {
		at = c.UpdatedAt
	}
	return fold(t, id, ckpt.MustEvent(ckpt.EventImported, at, ckpt.Actor{}, ckpt.Snapshot{State: *c}))
}

// then applies more events to c, as a store appends them.
func then(t testing.TB, c *ckpt.Checkpoint, events ...ckpt.Event) *ckpt.Checkpoint {
	t.Helper()
	for _, e := range events {
		e.Seq = c.Rev + 1
		var err error
		if c, err = ckpt.Apply(c.ID, c, e); err != nil {
			t.Fatalf("%s event: %v", e.Type, err)
		}
	}
	return c
}

func ev(t ckpt.EventType, at time.Time, data any) ckpt.Event {
	return ckpt.MustEvent(t, at, ckpt.Actor{Agent: "test"}, data)
}

func ptr[T any](v T) *T { return &v }
