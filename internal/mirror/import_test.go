package mirror

import (
	"context"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rogpeppe/go-internal/txtar"

	ckpt "github.com/ckpt-dev/ckpt"
	"github.com/ckpt-dev/ckpt/memstore"
)

// fixturesArchive holds the real seed files the CLI's scripts import.
const fixturesArchive = "../../cmd/ckpt/testdata/script/protocols_fixtures.txtar"

var importT0 = time.Date(2026, 1, 15, 14, 0, 0, 0, time.UTC)

// FuzzImportFile feeds arbitrary bytes to every format as ckpt import
// does, and stores what comes out: nothing may panic, a state the store
// accepts folds again to itself, and it exports in its format again.
func FuzzImportFile(f *testing.F) {
	a, err := txtar.ParseFile(fixturesArchive)
	if err != nil {
		f.Fatal(err)
	}
	for _, file := range a.Files {
		if strings.HasPrefix(file.Name, "fixtures/") {
			f.Add(file.Data)
		}
	}
	f.Add([]byte(`{"agent_id":"../../x","status":"PAUSED","blockers":"none"}`))
	f.Add([]byte("| Agent | Task | Progress | Last Update | Status |\n|-|-|-|-|-|\n| a/../b | T | 1e9% | — | ??? |\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, name := range Formats {
			format, _ := NewFormat(name)
			items, err := ImportFile(format, "/p/in.file", data)
			if err != nil {
				continue
			}
			st := memstore.New()
			for _, it := range items {
				if it.State == nil {
					t.Fatalf("%s: an import without a state", name)
				}
				if ckpt.ValidateID(it.ID) != nil {
					continue // ckpt import refuses it and says to give --id
				}
				e := ckpt.MustEvent(ckpt.EventImported, importT0, ckpt.Actor{}, ckpt.Snapshot{State: *it.State, Source: name + ":in"})
				res, err := st.Append(context.Background(), it.ID, e, ckpt.AppendOptions{})
				if err != nil {
					continue
				}
				hist, _ := st.History(context.Background(), it.ID, 1, 0)
				again, err := ckpt.Fold(it.ID, hist)
				if err != nil || again.Rev != res.State.Rev || again.Status != res.State.Status {
					t.Fatalf("%s: the stored import does not fold back: %v", name, err)
				}
				if _, err := format.Export(res.State); err != nil {
					t.Fatalf("%s: the stored import cannot be exported: %v", name, err)
				}
			}
		}
	})
}

func TestImportFileReadsStatusMarkdownRows(t *testing.T) {
	f, _ := NewFormat("sitebuilder")
	md := "## Active Checkpoints\n\n| Agent | Task | Progress | Last Update | Status |\n|---|---|---|---|---|\n| Migration (Riley) | T060 | 65% | 2 min ago | in_progress |\n| Migration (Riley) | T060 | 10% | — | blocked |\n"
	items, err := ImportFile(f, "/p/STATUS.md", []byte(md))
	if err != nil || len(items) != 2 || items[0].ID != "migration-t060" || items[1].ID != "migration-t060-2" {
		t.Fatalf("%v %+v", err, items)
	}
	if _, err := ImportFile(f, "/p/x", []byte("neither")); err == nil || !strings.Contains(err.Error(), "nor is it a STATUS.md aggregate") {
		t.Fatalf("a file of neither kind: %v", err)
	}
	st := memstore.New()
	if _, err := StoreImported(context.Background(), st, "../x", items[0].State, "sitebuilder:STATUS.md", importT0, ckpt.Actor{}); err == nil {
		t.Fatal("an invalid ID was stored")
	}
	res, err := StoreImported(context.Background(), st, items[0].ID, items[0].State, "sitebuilder:STATUS.md", importT0, ckpt.Actor{Agent: "me"})
	if err != nil || res.State.Rev != 1 || res.Event.Type != ckpt.EventImported || res.State.Progress.Percent != 65 {
		t.Fatalf("%v %+v", err, res)
	}
}

func TestImportPath(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	f, _ := NewFormat("sitebuilder")
	md := "## Active Checkpoints\n\n| Agent | Task | Progress | Last Update | Status |\n|---|---|---|---|---|\n| Riley | T060 | 65% | — | in_progress |\n| Sam | — | — | — | blocked |\n"
	path := filepath.Join(dir, "STATUS.md")
	if err := os.WriteFile(path, []byte(md), 0o644); err != nil {
		t.Fatal(err)
	}
	st := memstore.New()
	rs, err := ImportPath(ctx, st, f, path, ImportOptions{Source: "STATUS.md", At: importT0})
	if err != nil || len(rs) != 2 || rs[0].ID != "riley-t060" || !rs[0].Created || rs[0].Rev != 1 || rs[0].Path != "STATUS.md" || rs[1].ID != "sam" || rs[1].Err != nil {
		t.Fatalf("%v %+v", err, rs)
	}
	if got := rs[0].String(); !strings.HasPrefix(got, "imported STATUS.md as riley-t060  rev 1  created  (") {
		t.Errorf("the result's line: %q", got)
	}
	hist, _ := st.History(ctx, "sam", 1, 0)
	var snap ckpt.Snapshot
	if len(hist) != 1 || json.Unmarshal(hist[0].Data, &snap) != nil || snap.Source != "sitebuilder:STATUS.md" {
		t.Fatalf("the event's source: %+v", hist)
	}
	// Again: a new snapshot of each, not a new checkpoint.
	if rs, err = ImportPath(ctx, st, f, path, ImportOptions{At: importT0}); err != nil || rs[0].Created || rs[0].Rev != 2 || rs[0].Path != path {
		t.Fatalf("again: %v %+v", err, rs)
	}
	// An ID override that is not valid fails that checkpoint, not the file.
	if rs, err = ImportPath(ctx, st, f, path, ImportOptions{ID: "../x", At: importT0}); err != nil || rs[0].Err == nil || rs[0].Error == "" || rs[0].State != nil {
		t.Fatalf("a bad ID: %v %+v", err, rs)
	}
	if _, err := ImportPath(ctx, st, f, filepath.Join(dir, "nope"), ImportOptions{}); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("a missing file: %v", err)
	}
	os.WriteFile(path, []byte("neither"), 0o644)
	if _, err := ImportPath(ctx, st, f, path, ImportOptions{}); !errors.Is(err, ckpt.ErrInvalid) {
		t.Fatalf("a file not in the format: %v", err)
	}
}
