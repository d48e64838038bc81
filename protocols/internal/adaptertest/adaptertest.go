// Package adaptertest is the test machinery the seed adapters
// (protocols/superpowers, ccc, agentcheckpoints and sitebuilder) share: their
// test inputs and golden files, a store's fold of their imports, and the
// properties every adapter's Import and Export promise.
//
// It is imported only by those packages' tests. Paths are relative to the
// working directory, which `go test` sets to the package under test: its
// inputs are testdata/fixtures (real files) and testdata/seed (the seed
// documents' examples), its golden files testdata/golden. Importing the
// package registers the -update flag, which makes CheckGolden rewrite the
// golden files instead of comparing with them.
//
// Every helper that takes a testing.TB (or *testing.T, *testing.F) fails it
// on error, so a caller never handles one; none keeps state between calls.
package adaptertest

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	ckpt "github.com/ckpt-dev/ckpt"
	"github.com/ckpt-dev/ckpt/protocols"
	"github.com/google/go-cmp/cmp"
)

var update = flag.Bool("update", false, "rewrite testdata/golden from the current output")

// Inputs lists every real fixture (testdata/fixtures, copied from
// ../shared/fixtures/real) and every seed example (testdata/seed), sorted;
// SOURCES.txt and README.txt, which say where the files come from, are not
// inputs. It fails tb when a folder cannot be read or both are empty.
func Inputs(tb testing.TB) []string {
	tb.Helper()
	var out []string
	for _, dir := range []string{"testdata/fixtures", "testdata/seed"} {
		entries, err := os.ReadDir(dir)
		if err != nil {
			tb.Fatal(err)
		}
		for _, e := range entries {
			if e.Name() != "SOURCES.txt" && e.Name() != "README.txt" {
				out = append(out, filepath.Join(dir, e.Name()))
			}
		}
	}
	sort.Strings(out)
	if len(out) == 0 {
		tb.Fatal("no inputs in testdata")
	}
	return out
}

// AddInputs adds every input whose name ends in ext (every input when ext
// is "") to f's seed corpus, in the order of Inputs.
func AddInputs(f *testing.F, ext string) {
	f.Helper()
	for _, path := range Inputs(f) {
		if strings.HasSuffix(path, ext) {
			f.Add(ReadFile(f, path))
		}
	}
}

// EachInput runs test in a subtest named after each input whose name ends
// in ext (every input when ext is ""), in the order of Inputs, with the
// input's path and content.
func EachInput(t *testing.T, ext string, test func(t *testing.T, path string, data []byte)) {
	for _, path := range Inputs(t) {
		if strings.HasSuffix(path, ext) {
			t.Run(filepath.Base(path), func(t *testing.T) { test(t, path, ReadFile(t, path)) })
		}
	}
}

// ReadFile returns the content of the file at path.
func ReadFile(tb testing.TB, path string) []byte {
	tb.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		tb.Fatal(err)
	}
	return data
}

// CheckGolden compares got, as indented JSON with a final newline, with
// testdata/golden/name, and reports the difference as an error of t. With
// -update it writes the file instead.
func CheckGolden(t *testing.T, name string, got any) {
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

// goldenResult is what an import of one input gave, as stored in
// testdata/golden/<input>.json.
type goldenResult struct {
	ID       string           `json:"id,omitempty"`
	Warnings []string         `json:"warnings,omitempty"`
	State    *ckpt.Checkpoint `json:"state,omitempty"`
	Error    string           `json:"error,omitempty"`
}

// ImportGolden imports every input with f, in a subtest named after the
// input, and checks the suggested ID, warnings and state, or the error, with
// testdata/golden/<input>.json.
func ImportGolden(t *testing.T, f protocols.Format) {
	EachInput(t, "", func(t *testing.T, path string, data []byte) {
		im, err := f.Import(path, data)
		res := goldenResult{ID: im.ID, Warnings: im.Warnings, State: im.State}
		if err != nil {
			res = goldenResult{Error: err.Error()}
		}
		CheckGolden(t, filepath.Base(path)+".json", res)
	})
}

// ImportFile imports the file at path with f and returns the state and the
// warnings. It fails t when the import fails or suggests an invalid ID.
func ImportFile(t *testing.T, f protocols.Format, path string) (*ckpt.Checkpoint, []string) {
	t.Helper()
	im, err := f.Import(path, ReadFile(t, path))
	if err != nil {
		t.Fatal(err)
	}
	if err := ckpt.ValidateID(im.ID); err != nil {
		t.Fatalf("suggested ID: %v", err)
	}
	return im.State, im.Warnings
}

// Export returns f's export of c.
func Export(tb testing.TB, f protocols.Format, c *ckpt.Checkpoint) []byte {
	tb.Helper()
	out, err := f.Export(c)
	if err != nil {
		tb.Fatal(err)
	}
	return out
}

// ExportImport returns f's export of c and the import of that export, read
// as the file at path.
func ExportImport(t *testing.T, f protocols.Format, c *ckpt.Checkpoint, path string) ([]byte, protocols.Imported) {
	t.Helper()
	out := Export(t, f, c)
	im, err := f.Import(path, out)
	if err != nil {
		t.Fatal(err)
	}
	return out, im
}

// SameJSON reports, as an error of t, how got differs from the input want
// as JSON values; what names got in the message ("export", "export of the
// stored state"). It fails t when either is not JSON.
func SameJSON(t *testing.T, what string, want, got []byte) {
	t.Helper()
	if diff := cmp.Diff(Decoded(t, want), Decoded(t, got)); diff != "" {
		t.Errorf("%s differs from the input (-input +export):\n%s", what, diff)
	}
}

// HasWarning reports whether one of warnings contains part.
func HasWarning(warnings []string, part string) bool {
	return slices.ContainsFunc(warnings, func(w string) bool { return strings.Contains(w, part) })
}

// Decoded returns data as a generic JSON value.
func Decoded(tb testing.TB, data []byte) any {
	tb.Helper()
	var v any
	if err := json.Unmarshal(data, &v); err != nil {
		tb.Fatalf("%v in:\n%s", err, data)
	}
	return v
}

// Fold builds a checkpoint the way a store does: events applied by ckpt's
// fold, seqs numbered from 1.
func Fold(tb testing.TB, id string, events ...ckpt.Event) *ckpt.Checkpoint {
	tb.Helper()
	var c *ckpt.Checkpoint
	for i, e := range events {
		e.Seq = int64(i + 1)
		var err error
		if c, err = ckpt.Apply(id, c, e); err != nil {
			tb.Fatalf("event %d (%s): %v", i+1, e.Type, err)
		}
	}
	return c
}

// Stored returns the state a store holds after importing c: the imported
// snapshot folded as the first event, at the state's own update time (or at
// at when it has none).
func Stored(tb testing.TB, id string, c *ckpt.Checkpoint, at time.Time) *ckpt.Checkpoint {
	tb.Helper()
	if !c.UpdatedAt.IsZero() {
		at = c.UpdatedAt
	}
	return Fold(tb, id, ckpt.MustEvent(ckpt.EventImported, at, ckpt.Actor{}, ckpt.Snapshot{State: *c}))
}

// Then applies more events to c, as a store appends them.
func Then(tb testing.TB, c *ckpt.Checkpoint, events ...ckpt.Event) *ckpt.Checkpoint {
	tb.Helper()
	for _, e := range events {
		e.Seq = c.Rev + 1
		var err error
		if c, err = ckpt.Apply(c.ID, c, e); err != nil {
			tb.Fatalf("%s event: %v", e.Type, err)
		}
	}
	return c
}

// Event is an event of type t at at, by the agent "test", carrying data; it
// panics when data does not encode (as ckpt.MustEvent does).
func Event(t ckpt.EventType, at time.Time, data any) ckpt.Event {
	return ckpt.MustEvent(t, at, ckpt.Actor{Agent: "test"}, data)
}

// Ptr returns a pointer to a copy of v, for the optional fields of a patch.
func Ptr[T any](v T) *T { return &v }
