package ccc

import (
	"testing"
	"time"

	ckpt "github.com/ckpt-dev/ckpt"
)

// FuzzImport: any input either fails cleanly or gives a state a store
// accepts, whose export (a progress file with a readable continuation
// prompt) imports again to the same export.
func FuzzImport(f *testing.F) {
	for _, path := range inputFiles(f) {
		f.Add(readFile(f, path))
	}
	f.Add([]byte(`{"linearIssue":"CIA-1","taskIndex":9,"totalTasks":3,"awaitingGate":"x"}`))
	f.Add([]byte("**Issue:** A-1\n## Current Task\n- x — failed: y\n  - nested\n## Blockers\n- None\n## Continuation Prompt\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		im, err := New().Import(ProgressFile, data)
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
		if _, err := ContinuationPrompt(out); err != nil {
			t.Fatalf("the export has no readable prompt: %v\n%s", err, out)
		}
		again, err := New().Import(ProgressFile, out)
		if err != nil {
			t.Fatalf("re-import of the export: %v\n%s", err, out)
		}
		out2, err := New().Export(again.State)
		if err != nil {
			t.Fatal(err)
		}
		if string(out) != string(out2) {
			t.Fatalf("export is not stable:\n%s\n---\n%s", out, out2)
		}
	})
}
