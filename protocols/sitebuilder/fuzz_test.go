package sitebuilder

import (
	"encoding/json"
	"reflect"
	"testing"
	"time"

	ckpt "github.com/ckpt-dev/ckpt"
	"github.com/google/go-cmp/cmp"
)

// FuzzImport: any input either fails cleanly or gives a state a store
// accepts, whose export imports again to the same export; and the export of
// an imported JSON file reproduces every field of it.
func FuzzImport(f *testing.F) {
	for _, path := range inputFiles(f) {
		f.Add(readFile(f, path))
	}
	f.Add([]byte(`{"agent":"a","task_id":"t","subtasks":{"total":3,"completed":5,"items":[{"id":"x","status":"done"},{"id":"x"}]},"errors":["e"]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		im, err := New().Import("progress/checkpoints/a-t.json", data)
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
		out, err := New().Export(im.State)
		if err != nil {
			t.Fatalf("export: %v", err)
		}
		var in, exported any
		if json.Unmarshal(data, &in) == nil {
			if err := json.Unmarshal(out, &exported); err != nil {
				t.Fatalf("export is not JSON: %v", err)
			}
			if !reflect.DeepEqual(in, exported) { // cmp.Diff is exponential on deep nesting: only for the message
				t.Fatalf("export differs from the input (-in +out):\n%s", cmp.Diff(in, exported))
			}
		}
		again, err := New().Import("progress/checkpoints/a-t.json", out)
		if err != nil {
			t.Fatalf("re-import of the export: %v\n%s", err, out)
		}
		out2, err := New().Export(again.State)
		if err != nil {
			t.Fatal(err)
		}
		var a, b any
		json.Unmarshal(out, &a)
		json.Unmarshal(out2, &b)
		if !reflect.DeepEqual(a, b) {
			t.Fatalf("export is not stable (-first +second):\n%s", cmp.Diff(a, b))
		}
	})
}
