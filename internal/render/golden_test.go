package render

import (
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/ with the current output")

// golden compares got with testdata/name, or rewrites the file with -update.
func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("reading golden file: %v (create it with go test ./render -run %s -update)", err, t.Name())
	}
	if diff := cmp.Diff(string(want), got); diff != "" {
		t.Errorf("%s differs from %s (-want +got); if the change is intended, rerun with -update:\n%s", t.Name(), path, diff)
	}
}
