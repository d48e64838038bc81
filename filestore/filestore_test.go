package filestore

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ckpt-dev/ckpt"
	"github.com/ckpt-dev/ckpt/storetest"
)

// newStore initialises a store in a fresh temporary directory.
func newStore(t testing.TB, opts Options) *Store {
	t.Helper()
	s, err := Init(filepath.Join(t.TempDir(), StoreDirName), opts)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) ckpt.Store { return newStore(t, Options{}) })
}

// TestConformanceBackupEveryRevision runs the suite with a backup at every
// revision, so that reads of old revisions and key replays go through
// backups.
func TestConformanceBackupEveryRevision(t *testing.T) {
	storetest.Run(t, func(t *testing.T) ckpt.Store { return newStore(t, Options{BackupEvery: 1, BackupKeep: 3}) })
}

func TestInitOpen(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "work", StoreDirName)
	s, err := Init(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if s.Dir() != dir || s.cfg.BackupEvery != DefaultBackupEvery || s.cfg.BackupKeep != DefaultBackupKeep {
		t.Errorf("Init gave dir %s, backups every %d keep %d; want %s, %d, %d", s.Dir(), s.cfg.BackupEvery, s.cfg.BackupKeep, dir, DefaultBackupEvery, DefaultBackupKeep)
	}
	if _, err := Init(dir, Options{}); !errors.Is(err, ckpt.ErrExists) {
		t.Errorf("Init over a store: %v, want ErrExists", err)
	}
	custom, err := Init(filepath.Join(t.TempDir(), StoreDirName), Options{BackupEvery: 3, BackupKeep: 2})
	if err != nil {
		t.Fatal(err)
	}
	reopened, err := Open(custom.Dir())
	if err != nil || reopened.cfg.BackupEvery != 3 || reopened.cfg.BackupKeep != 2 {
		t.Errorf("Open did not keep the options: %+v, %v", reopened, err)
	}
	if _, err := Init(filepath.Join(t.TempDir(), StoreDirName), Options{BackupEvery: -1}); !errors.Is(err, ckpt.ErrInvalid) {
		t.Errorf("Init with a negative option: %v, want ErrInvalid", err)
	}
	busy := t.TempDir()
	os.WriteFile(filepath.Join(busy, "notes.txt"), []byte("x"), 0o644)
	if _, err := Init(busy, Options{}); !errors.Is(err, ckpt.ErrInvalid) {
		t.Errorf("Init in a non-empty directory: %v, want ErrInvalid", err)
	}
	if _, err := os.Stat(filepath.Join(busy, configName)); err == nil {
		t.Error("a refused Init wrote a config")
	}
}

func TestOpenNotAStore(t *testing.T) {
	dir := t.TempDir()
	_, err := Open(dir)
	if !errors.Is(err, ckpt.ErrNoStore) || !strings.Contains(err.Error(), "no ckpt store at "+dir+" (no config.json)") {
		t.Errorf("Open of a plain directory: %v, want ErrNoStore naming the directory", err)
	}
	os.WriteFile(filepath.Join(dir, configName), []byte("{garbage"), 0o644)
	if _, err := Open(dir); !errors.Is(err, ckpt.ErrNoStore) {
		t.Errorf("Open with a garbage config: %v, want ErrNoStore", err)
	}
	os.WriteFile(filepath.Join(dir, configName), []byte(`{"format":"ckpt-filestore","version":99}`), 0o644)
	if _, err := Open(dir); err == nil || !strings.Contains(err.Error(), "version 99") {
		t.Errorf("Open of a future format: %v, want an error naming the version", err)
	}
}

func TestFind(t *testing.T) {
	root := t.TempDir()
	store := filepath.Join(root, "project", StoreDirName)
	if _, err := Init(store, Options{}); err != nil {
		t.Fatal(err)
	}
	deep := filepath.Join(root, "project", "a", "b", "c")
	os.MkdirAll(deep, 0o755)
	// A .ckpt directory without a config on the way up is not a store.
	os.MkdirAll(filepath.Join(root, "project", "a", StoreDirName), 0o755)
	for _, start := range []string{deep, filepath.Join(root, "project")} {
		got, err := Find(start)
		if err != nil || got != store {
			t.Errorf("Find(%s) = %s, %v; want %s", start, got, err, store)
		}
	}
	t.Chdir(deep)
	if got, err := Find("."); err != nil || got != store {
		t.Errorf("Find(.) = %s, %v; want %s", got, err, store)
	}
	_, err := Find(root)
	if !errors.Is(err, ckpt.ErrNoStore) || !strings.Contains(err.Error(), "no ckpt store in "+root+" or any parent directory") {
		t.Errorf("Find outside any store: %v", err)
	}
}

// TestOnDiskLayout checks the files docs/design.md promises.
func TestOnDiskLayout(t *testing.T) {
	s := newStore(t, Options{BackupEvery: 2, BackupKeep: 3})
	ctx := context.Background()
	id := "kai-7/secondary-a"
	title := "layout"
	var sums []string
	for i := 0; i < 9; i++ {
		e := ckpt.MustEvent(ckpt.EventCreated, time.Now(), ckpt.Actor{}, ckpt.Created{Patch: ckpt.Patch{Title: &title}})
		if i > 0 {
			e = ckpt.MustEvent(ckpt.EventNote, time.Now(), ckpt.Actor{}, ckpt.Note{Text: fmt.Sprint(i)})
		}
		res, err := s.Append(ctx, id, e, ckpt.AppendOptions{})
		if err != nil {
			t.Fatal(err)
		}
		sums = append(sums, res.Event.Sum)
		// The event is in the history file when Append returns.
		lines := historyLines(t, s.files(id))
		if got, err := ckpt.DecodeLine(lines[len(lines)-1]); err != nil || got.Sum != res.Event.Sum {
			t.Fatalf("after Append %d the history's last line is %v, %v", i+1, got.Seq, err)
		}
	}
	dir := filepath.Join(s.Dir(), checkpointsDir, "kai-7+secondary-a")
	for _, name := range []string{historyName, stateName, lockName} {
		if _, err := os.Stat(filepath.Join(dir, name)); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
	if revs, _ := listBackups(s.files(id)); !slices.Equal(revs, []int64{4, 6, 8}) {
		t.Errorf("backups at %v, want the last 3 multiples of 2: [4 6 8]", revs)
	}
	b, _ := os.ReadFile(filepath.Join(dir, stateName))
	env, st, err := parseEnvelope(b, id)
	size, _ := os.Stat(filepath.Join(dir, historyName))
	if err != nil || env.Rev != 9 || env.Sum != sums[8] || env.HistorySize != size.Size() || st.Title != "layout" {
		t.Errorf("state.json envelope %+v, %v; want revision 9 with the last sum and the history's size", env, err)
	}
	if !json.Valid(b) || !bytes.HasPrefix(b, []byte(`{"format":"ckpt-state","version":1,"id":"kai-7/secondary-a","rev":9,`)) {
		t.Errorf("state.json does not start with its header: %.80s", b)
	}
	// Beat touches only the beat file.
	before := hashTree(t, filepath.Join(dir, historyName))
	when := time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)
	s.SetClock(func() time.Time { return when })
	if err := s.Beat(ctx, id, ckpt.Signal{At: when}); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(filepath.Join(dir, beatName)); err != nil || !fi.ModTime().Equal(when) {
		t.Errorf("beat file mtime: %v, want %v", err, when)
	}
	if hashTree(t, filepath.Join(dir, historyName)) != before {
		t.Error("Beat changed the history")
	}
}

func TestRefusedCreateLeavesNothing(t *testing.T) {
	s := newStore(t, Options{})
	bad := ckpt.MustEvent(ckpt.EventCreated, time.Now(), ckpt.Actor{}, ckpt.Created{Patch: ckpt.Patch{Status: ptrTo(ckpt.Status("sideways"))}})
	if _, err := s.Append(context.Background(), "nope", bad, ckpt.AppendOptions{}); !errors.Is(err, ckpt.ErrInvalid) {
		t.Fatalf("refused create: %v", err)
	}
	if des, _ := os.ReadDir(filepath.Join(s.Dir(), checkpointsDir)); len(des) != 0 {
		t.Errorf("a refused create left %v", des)
	}
	if _, err := s.Append(context.Background(), "nope", ckpt.MustEvent(ckpt.EventNote, time.Now(), ckpt.Actor{}, ckpt.Note{Text: "x"}), ckpt.AppendOptions{}); !errors.Is(err, ckpt.ErrNotFound) {
		t.Errorf("update of a missing checkpoint: %v", err)
	}
	if des, _ := os.ReadDir(filepath.Join(s.Dir(), checkpointsDir)); len(des) != 0 {
		t.Errorf("an update of a missing checkpoint left %v", des)
	}
}

func TestDeleteLeavesNoTrace(t *testing.T) {
	s := newStore(t, Options{})
	ctx := context.Background()
	s.Append(ctx, "gone", ckpt.MustEvent(ckpt.EventCreated, time.Now(), ckpt.Actor{}, ckpt.Created{}), ckpt.AppendOptions{})
	s.Append(ctx, "gone", ckpt.MustEvent(ckpt.EventArchived, time.Now(), ckpt.Actor{}, ckpt.Archive{Reason: "complete"}), ckpt.AppendOptions{})
	if err := s.Delete(ctx, "gone"); err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{checkpointsDir, tmpDir} {
		if des, _ := os.ReadDir(filepath.Join(s.Dir(), d)); len(des) != 0 {
			t.Errorf("%s holds %v after Delete", d, des)
		}
	}
}

func TestGetNegativeRevision(t *testing.T) {
	s := newStore(t, Options{})
	s.Append(context.Background(), "x", ckpt.MustEvent(ckpt.EventCreated, time.Now(), ckpt.Actor{}, ckpt.Created{}), ckpt.AppendOptions{})
	if _, err := s.Get(context.Background(), "x", -1); !errors.Is(err, ckpt.ErrInvalid) {
		t.Errorf("Get(-1): %v, want ErrInvalid", err)
	}
}

func ptrTo[T any](v T) *T { return &v }

// TestManyProcesses runs 16 writer processes, each updating its own
// checkpoint and one shared checkpoint 20 times: the revisions come out exact
// and every history verifies.
func TestManyProcesses(t *testing.T) {
	s := newStore(t, Options{})
	title := "shared"
	if _, err := s.Append(context.Background(), sharedID, ckpt.MustEvent(ckpt.EventCreated, time.Now(), ckpt.Actor{}, ckpt.Created{Patch: ckpt.Patch{Title: &title}}), ckpt.AppendOptions{}); err != nil {
		t.Fatal(err)
	}
	const procs, each = 16, 20
	var cmds []*exec.Cmd
	for i := range procs {
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), fmt.Sprintf("CKPT_TORTURE_WRITER=p%d", i), "CKPT_TORTURE_STORE="+s.Dir(), fmt.Sprintf("CKPT_WRITES=%d", 2*each))
		cmd.Stderr = os.Stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		cmds = append(cmds, cmd)
	}
	for _, cmd := range cmds {
		if err := cmd.Wait(); err != nil {
			t.Errorf("writer: %v", err)
		}
	}
	ctx := context.Background()
	if c, err := s.Get(ctx, sharedID, 0); err != nil || c.Rev != 1+procs*each {
		t.Errorf("shared checkpoint: %v, %v; want revision %d", c.Rev, err, 1+procs*each)
	}
	for i := range procs {
		if c, err := s.Get(ctx, fmt.Sprintf("torture/p%d", i), 0); err != nil || c.Rev != 1+each {
			t.Errorf("own checkpoint %d: %v; want revision %d", i, err, 1+each)
		}
	}
	if r, err := s.Check(ctx, nil); err != nil || len(r.Problems) > 0 {
		t.Errorf("Check: %v %+v", err, r)
	}
	storetest.Verify(t, s)
}

// TestTwoStoresOneDirectory has two Stores (as two processes would) take
// turns on one checkpoint: each one's memory of its own last write must give
// way to the other's writes.
func TestTwoStoresOneDirectory(t *testing.T) {
	a := newStore(t, Options{})
	b, err := Open(a.Dir())
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	note := func(s *Store, text string) ckpt.AppendResult {
		t.Helper()
		res, err := s.Append(ctx, "x", ckpt.MustEvent(ckpt.EventNote, time.Now(), ckpt.Actor{}, ckpt.Note{Text: text}), ckpt.AppendOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	if _, err := a.Append(ctx, "x", ckpt.MustEvent(ckpt.EventCreated, time.Now(), ckpt.Actor{}, ckpt.Created{}), ckpt.AppendOptions{}); err != nil {
		t.Fatal(err)
	}
	note(a, "a1")
	note(b, "b1")
	note(b, "b2")
	res := note(a, "a2")
	if res.State.Rev != 5 || res.State.Context.Notes != "a1\nb1\nb2\na2" {
		t.Errorf("after turns: revision %d notes %q; want 5 and all four notes in order", res.State.Rev, res.State.Context.Notes)
	}
	// A repair by the other Store, which rewrites the history's tail.
	f := b.files("x")
	lines := historyLines(t, f)
	writeLines(t, f, lines, []byte(`{"torn`))
	if _, err := b.Repair(ctx, []string{"x"}); err != nil {
		t.Fatal(err)
	}
	if res := note(a, "a3"); res.State.Rev != 6 || len(res.Warnings) != 0 {
		t.Errorf("after the other's repair: revision %d warnings %v; want 6 and none", res.State.Rev, res.Warnings)
	}
	// Another writer's history of the very same size and inode, as a
	// re-created checkpoint could leave: only the last line tells.
	note(a, "a4")
	lines = historyLines(t, f)
	e, err := ckpt.DecodeLine(lines[len(lines)-1])
	if err != nil {
		t.Fatal(err)
	}
	e.Data = []byte(`{"text":"z4"}`)
	if lines[len(lines)-1], e.Sum, err = ckpt.EncodeLine(e); err != nil {
		t.Fatal(err)
	}
	writeLines(t, f, lines, nil)
	cur, err := b.load(f)
	if err != nil {
		t.Fatal(err)
	}
	var events []ckpt.Event
	for _, l := range lines {
		ev, _ := ckpt.DecodeLine(l)
		events = append(events, ev)
	}
	st, err := ckpt.Fold("x", events)
	if err != nil {
		t.Fatal(err)
	}
	env, _ := encodeEnvelope(st, e.Sum, cur.size)
	os.WriteFile(f.state(), env, 0o644)
	if res := note(a, "a5"); !strings.HasSuffix(res.State.Context.Notes, "a3\nz4\na5") {
		t.Errorf("after the other's same-size rewrite: notes %q, want them to end a3, z4, a5", res.State.Context.Notes)
	}
	storetest.Verify(t, a)
}

// TestReadersDuringWrites reads a checkpoint while other goroutines update
// it: every read succeeds, revisions never go back, and each state read is
// consistent (one note per update, so the notes count its revision). Torn
// reads of state.json, which is overwritten in place, must be caught by its
// checksums and fall back, never served.
func TestReadersDuringWrites(t *testing.T) {
	s := newStore(t, Options{BackupEvery: 3, BackupKeep: 2})
	ctx := context.Background()
	if _, err := s.Append(ctx, "rw", ckpt.MustEvent(ckpt.EventCreated, time.Now(), ckpt.Actor{}, ckpt.Created{}), ckpt.AppendOptions{}); err != nil {
		t.Fatal(err)
	}
	const writers, each = 2, 150
	done := make(chan struct{})
	var wg, readers sync.WaitGroup
	for w := range writers {
		wg.Go(func() {
			for i := range each {
				// Notes of varying length make state.json grow and shrink.
				text := strings.Repeat("n", 1+(w*each+i)%37)
				if _, err := s.Append(ctx, "rw", ckpt.MustEvent(ckpt.EventNote, time.Now(), ckpt.Actor{}, ckpt.Note{Text: text}), ckpt.AppendOptions{}); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	reads := 0
	var mu sync.Mutex
	for range 2 {
		readers.Go(func() {
			last := int64(0)
			for {
				select {
				case <-done:
					return
				default:
				}
				c, err := s.Get(ctx, "rw", 0)
				if err != nil {
					t.Errorf("Get during writes: %v", err)
					return
				}
				notes := 0
				if c.Context.Notes != "" {
					notes = strings.Count(c.Context.Notes, "\n") + 1
				}
				if c.Rev < last || int64(notes) != c.Rev-1 {
					t.Errorf("read revision %d (after %d) with %d notes", c.Rev, last, notes)
					return
				}
				last = c.Rev
				mu.Lock()
				reads++
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	close(done)
	readers.Wait()
	if c, err := s.Get(ctx, "rw", 0); err != nil || c.Rev != 1+writers*each {
		t.Errorf("final revision %v, %v; want %d", c, err, 1+writers*each)
	}
	t.Logf("%d consistent reads during %d updates", reads, writers*each)
	storetest.Verify(t, s)
}
