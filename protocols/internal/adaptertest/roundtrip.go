package adaptertest

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"

	ckpt "github.com/ckpt-dev/ckpt"
	"github.com/ckpt-dev/ckpt/protocols"
	"github.com/google/go-cmp/cmp"
)

// ImportRoundTrip is the promise every adapter's Import and Export keep for
// any input: the import either fails, or suggests a valid ID and gives a
// state a store accepts, whose export imports again to the same export.
type ImportRoundTrip struct {
	Format protocols.Format
	// Path is the file name every input is imported as.
	Path string
	// JSON says the format exports JSON. Then the export of an input that is
	// JSON must be that input (as JSON values: every field of the file is
	// kept), and a second export must equal the first as JSON values; else
	// the two exports must be equal byte for byte.
	JSON bool
	// CheckExport, when not nil, asserts what the format itself promises of
	// every export (such as a readable continuation prompt).
	CheckExport func(t *testing.T, out []byte)
}

// Fuzz seeds f's corpus with every input (Inputs) and then seeds, and
// fuzzes the round trip.
func (r ImportRoundTrip) Fuzz(f *testing.F, seeds ...string) {
	AddInputs(f, "")
	for _, s := range seeds {
		f.Add([]byte(s))
	}
	f.Fuzz(r.check)
}

func (r ImportRoundTrip) check(t *testing.T, data []byte) {
	im, err := r.Format.Import(r.Path, data)
	if err != nil {
		return
	}
	if err := ckpt.ValidateID(im.ID); err != nil {
		t.Fatalf("suggested ID: %v", err)
	}
	e := ckpt.MustEvent(ckpt.EventImported, time.Unix(1e9, 0), ckpt.Actor{}, ckpt.Snapshot{State: *im.State})
	e.Seq = 1
	if _, err := ckpt.Apply(im.ID, nil, e); err != nil {
		t.Fatalf("the store refuses the imported state: %v", err)
	}
	out, err := r.Format.Export(im.State)
	if err != nil {
		t.Fatalf("export: %v", err)
	}
	if r.JSON {
		var in, exported any
		if json.Unmarshal(data, &in) == nil {
			if err := json.Unmarshal(out, &exported); err != nil {
				t.Fatalf("export is not JSON: %v", err)
			}
			if !reflect.DeepEqual(in, exported) { // cmp.Diff is exponential on deep nesting: only for the message
				t.Fatalf("export differs from the input (-in +out):\n%s", cmp.Diff(in, exported))
			}
		}
	}
	if r.CheckExport != nil {
		r.CheckExport(t, out)
	}
	again, err := r.Format.Import(r.Path, out)
	if err != nil {
		t.Fatalf("re-import of the export: %v\n%s", err, out)
	}
	out2, err := r.Format.Export(again.State)
	if err != nil {
		t.Fatal(err)
	}
	if !r.JSON {
		if !bytes.Equal(out, out2) {
			t.Fatalf("export is not stable:\n%s\n---\n%s", out, out2)
		}
		return
	}
	var a, b any
	json.Unmarshal(out, &a)
	json.Unmarshal(out2, &b)
	if !reflect.DeepEqual(a, b) {
		t.Fatalf("export is not stable (-first +second):\n%s", cmp.Diff(a, b))
	}
}

// CheckReimport checks, for every input whose name ends in ext (every input
// when ext is "") that f imports, that import → export → import gives the
// same state, apart from Meta, which records the file as read.
func CheckReimport(t *testing.T, f protocols.Format, ext string) {
	t.Helper()
	for _, path := range Inputs(t) {
		if !strings.HasSuffix(path, ext) {
			continue
		}
		first, err := f.Import(path, ReadFile(t, path))
		if err != nil {
			continue
		}
		out, err := f.Export(first.State)
		if err != nil {
			t.Fatalf("%s: export: %v", path, err)
		}
		second, err := f.Import(path, out)
		if err != nil {
			t.Fatalf("%s: re-import: %v", path, err)
		}
		a, b := first.State.Clone(), second.State.Clone()
		a.Meta, b.Meta = nil, nil
		if diff := cmp.Diff(a, b); diff != "" {
			t.Errorf("%s: import → export → import changed the state (-first +second):\n%s", path, diff)
		}
	}
}

// BenchMirror measures f.Mirror of c into one folder, applying change(c, i)
// before the i-th call (from 1) so that every call has something to write.
func BenchMirror(b *testing.B, f protocols.Format, c *ckpt.Checkpoint, change func(c *ckpt.Checkpoint, i int)) {
	root := b.TempDir()
	i := 0
	for b.Loop() {
		i++
		change(c, i)
		if err := f.Mirror(root, c); err != nil {
			b.Fatal(err)
		}
	}
}
