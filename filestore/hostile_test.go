package filestore

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ckpt-dev/ckpt"
)

// A `.ckpt/` can arrive inside a cloned repository, so every file in it is
// hostile. These tests plant symbolic links where the store keeps its files,
// pointing outside the store, and assert that nothing the store does (write,
// read, check, repair) changes a byte outside it, that check reports each
// link as an error, and that repair moves the link itself aside.

// outside makes a directory outside the store holding a few files and
// returns it with a function that fails the test if anything in it changed.
func outside(t *testing.T) (string, func()) {
	t.Helper()
	dir := t.TempDir()
	for _, name := range []string{stateName, historyName, lockName, beatName, "precious.txt"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte("not ckpt's: "+name+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Mkdir(filepath.Join(dir, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "sub", "deep.txt"), []byte("deep"), 0o644); err != nil {
		t.Fatal(err)
	}
	before := hashTree(t, dir)
	return dir, func() {
		t.Helper()
		if hashTree(t, dir) != before {
			t.Fatalf("something the store did changed %s, outside the store", dir)
		}
	}
}

// plant replaces path by a symbolic link to target.
func plant(t *testing.T, path, target string) {
	t.Helper()
	if err := os.RemoveAll(path); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, path); err != nil {
		t.Fatal(err)
	}
}

// wantLinkReported fails unless r has an error naming a symbolic link at
// name.
func wantLinkReported(t *testing.T, r *ckpt.Report, name string) {
	t.Helper()
	for _, p := range r.Problems {
		if p.Severity == ckpt.SeverityError && strings.Contains(p.What, name) && strings.Contains(p.What, "symbolic link") && p.Repair != "" {
			return
		}
	}
	t.Fatalf("check did not report the symbolic link %s as an error: %+v", name, r.Problems)
}

// wantQuarantined fails unless repair moved a link into quarantine/.
func wantQuarantined(t *testing.T, s *Store) {
	t.Helper()
	des, err := os.ReadDir(filepath.Join(s.Dir(), quarantineDir))
	if err != nil || len(des) == 0 {
		t.Fatalf("repair moved no link into %s: %v", quarantineDir, err)
	}
	for _, de := range des {
		if de.Type()&os.ModeSymlink == 0 {
			t.Errorf("%s in quarantine is not the link itself", de.Name())
		}
	}
}

func TestSymlinkedTmpIsNeverEmptiedByRepair(t *testing.T) {
	s, _, _ := acked(t)
	out, unchanged := outside(t)
	plant(t, filepath.Join(s.Dir(), tmpDir), out)

	wantLinkReported(t, checkReadOnly(t, s), tmpDir)
	unchanged()
	// A delete must not move a checkpoint out of the store through the link.
	ctx := context.Background()
	s.Append(ctx, "old", ckpt.MustEvent(ckpt.EventCreated, time.Now(), ckpt.Actor{}, ckpt.Created{}), ckpt.AppendOptions{})
	s.Append(ctx, "old", ckpt.MustEvent(ckpt.EventArchived, time.Now(), ckpt.Actor{}, ckpt.Archive{Reason: "done"}), ckpt.AppendOptions{})
	if err := s.Delete(ctx, "old"); err == nil || !strings.Contains(err.Error(), "symbolic link") {
		t.Errorf("Delete with tmp/ a symbolic link: %v, want a refusal naming the link", err)
	}
	unchanged()
	r, err := s.Repair(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	unchanged()
	wantQuarantined(t, s)
	if fi, err := os.Lstat(filepath.Join(s.Dir(), tmpDir)); err != nil || !fi.IsDir() {
		t.Errorf("after repair tmp/ is %v, %v; want a plain directory", fi, err)
	}
	if r.Errors() != 0 {
		t.Errorf("repair left errors: %+v", r.Problems)
	}
	if err := s.Delete(ctx, "old"); err != nil {
		t.Errorf("Delete after repair: %v", err)
	}
	unchanged()
}

// TestSymlinkedCheckpointFiles plants a link at each file and directory of
// a checkpoint in turn.
func TestSymlinkedCheckpointFiles(t *testing.T) {
	for _, c := range []struct {
		name   string // relative to the checkpoint directory
		target string // relative to the outside directory
	}{
		{stateName, stateName},
		{historyName, historyName},
		{lockName, lockName},
		{beatName, beatName},
		{backupsDir, "sub"},
		{filepath.Join(backupsDir, backupName(10)), "precious.txt"},
		{filepath.Join(backupsDir, backupName(15)), "precious.txt"},
		{".", "sub"}, // the checkpoint directory itself
	} {
		t.Run(strings.ReplaceAll(c.name, "/", "_"), func(t *testing.T) {
			s, f, notes := acked(t)
			s.Beat(context.Background(), corpusID, ckpt.Signal{})
			out, unchanged := outside(t)
			path := filepath.Join(f.dir, c.name)
			if c.name == "." {
				// Keep the real directory outside too, as a clone would.
				path = f.dir
			}
			plant(t, path, filepath.Join(out, c.target))
			ctx := context.Background()
			s2 := reopen(t, s)

			note := ckpt.MustEvent(ckpt.EventNote, time.Now(), ckpt.Actor{}, ckpt.Note{Text: "after the link"})
			for i := 0; i < 5; i++ { // enough to write a backup
				s2.Append(ctx, corpusID, note, ckpt.AppendOptions{})
			}
			unchanged()
			s2.Beat(ctx, corpusID, ckpt.Signal{State: ckpt.PresenceWorking})
			s2.Beat(ctx, corpusID, ckpt.Signal{})
			unchanged()
			s2.Get(ctx, corpusID, 0)
			s2.Get(ctx, corpusID, 3)
			s2.History(ctx, corpusID, 0, 0)
			unchanged()

			name := c.name
			if name == "." {
				name = filepath.Base(f.dir)
			}
			wantLinkReported(t, checkReadOnly(t, s2), name)
			if _, err := s2.Repair(ctx, nil); err != nil {
				t.Fatalf("Repair: %v", err)
			}
			unchanged()
			wantQuarantined(t, s2)
			if r := checkReadOnly(t, s2); r.Errors() != 0 {
				if c.name == "." || c.name == historyName {
					return // the checkpoint is gone or rebuilt from its state; no link is left
				}
				t.Errorf("check after repair: %+v", r.Problems)
			}
			if c.name != "." && c.name != historyName {
				allNotes(t, s2, notes)
			}
		})
	}
}

// TestSymlinkedStoreDirectories plants a link at each directory the store
// keeps for itself: checkpoints/, the change journal and its pending/.
func TestSymlinkedStoreDirectories(t *testing.T) {
	for _, name := range []string{checkpointsDir, journalDir, filepath.Join(journalDir, pendingDir)} {
		t.Run(strings.ReplaceAll(name, "/", "_"), func(t *testing.T) {
			s, _, _ := acked(t)
			out, unchanged := outside(t)
			plant(t, filepath.Join(s.Dir(), name), out)
			s2 := reopen(t, s)
			ctx := context.Background()
			if _, err := s2.Append(ctx, "new", ckpt.MustEvent(ckpt.EventCreated, time.Now(), ckpt.Actor{}, ckpt.Created{}), ckpt.AppendOptions{}); err == nil || !strings.Contains(err.Error(), "symbolic link") {
				t.Errorf("Append with %s a link: %v, want a refusal naming the link", name, err)
			}
			if _, err := s2.List(ctx, ckpt.ListOptions{}); err == nil || !strings.Contains(err.Error(), "symbolic link") {
				t.Errorf("List with %s a link: %v, want a refusal naming the link", name, err)
			}
			if _, err := s2.Head(ctx); err == nil || !strings.Contains(err.Error(), "symbolic link") {
				t.Errorf("Head with %s a link: %v, want a refusal naming the link", name, err)
			}
			unchanged()
			wantLinkReported(t, checkReadOnly(t, s2), name)
			if _, err := s2.Repair(ctx, nil); err != nil {
				t.Fatal(err)
			}
			unchanged()
			wantQuarantined(t, s2)
			if _, err := s2.Append(ctx, "new", ckpt.MustEvent(ckpt.EventCreated, time.Now(), ckpt.Actor{}, ckpt.Created{}), ckpt.AppendOptions{}); err != nil {
				t.Errorf("Append after repair: %v", err)
			}
			if _, err := s2.Head(ctx); err != nil {
				t.Errorf("Head after repair: %v", err)
			}
			unchanged()
		})
	}
}

func TestSymlinkedConfigIsRefused(t *testing.T) {
	s := newStore(t, Options{})
	b, err := os.ReadFile(filepath.Join(s.Dir(), configName))
	if err != nil {
		t.Fatal(err)
	}
	target := filepath.Join(t.TempDir(), configName)
	os.WriteFile(target, b, 0o644)
	plant(t, filepath.Join(s.Dir(), configName), target)
	if _, err := Open(s.Dir()); err == nil || !strings.Contains(err.Error(), "symbolic link") {
		t.Errorf("Open with config.json a link: %v, want a refusal naming the link", err)
	}
}

// TestLockFileSwappedWhileHeld: deleting or replacing a checkpoint's lock
// file while a writer holds it never lets a second writer in.
func TestLockFileSwappedWhileHeld(t *testing.T) {
	for _, swap := range []struct {
		name string
		do   func(path string) error
	}{
		{"deleted", os.Remove},
		{"replaced", func(path string) error {
			tmp := path + ".new"
			if err := os.WriteFile(tmp, nil, 0o644); err != nil {
				return err
			}
			return os.Rename(tmp, path)
		}},
	} {
		t.Run(swap.name, func(t *testing.T) {
			s, f, _ := acked(t)
			unlock, err := s.lockCheckpoint(context.Background(), f, false)
			if err != nil {
				t.Fatal(err)
			}
			if err := swap.do(f.lock()); err != nil {
				t.Fatal(err)
			}
			before := hashTree(t, f.history())
			done := make(chan error, 1)
			go func() {
				_, err := reopen(t, s).Append(context.Background(), corpusID, ckpt.MustEvent(ckpt.EventNote, time.Now(), ckpt.Actor{}, ckpt.Note{Text: "second writer"}), ckpt.AppendOptions{})
				done <- err
			}()
			select {
			case err := <-done:
				t.Fatalf("a second writer got in while the lock was held (%v)", err)
			case <-time.After(200 * time.Millisecond):
			}
			if hashTree(t, f.history()) != before {
				t.Fatal("the history changed while the lock was held")
			}
			unlock()
			if err := <-done; err != nil {
				t.Fatalf("the second writer after the release: %v", err)
			}
		})
	}
}

// TestMissingLockFile: a checkpoint whose lock file is gone is still found,
// written, checked and repaired.
func TestMissingLockFile(t *testing.T) {
	s, f, notes := acked(t)
	ctx := context.Background()
	for _, op := range []func() error{
		func() error { return os.Remove(f.lock()) },
		func() error {
			_, err := s.Append(ctx, corpusID, ckpt.MustEvent(ckpt.EventNote, time.Now(), ckpt.Actor{}, ckpt.Note{Text: "x"}), ckpt.AppendOptions{})
			return err
		},
		func() error { return os.Remove(f.lock()) },
		func() error { _, err := s.Check(ctx, []string{corpusID}); return err },
		func() error { _, err := s.Repair(ctx, []string{corpusID}); return err },
		func() error { return os.Remove(f.lock()) },
		func() error { return s.Beat(ctx, corpusID, ckpt.Signal{State: ckpt.PresenceWorking}) },
	} {
		if err := op(); errors.Is(err, ckpt.ErrNotFound) || err != nil {
			t.Fatalf("with the lock file missing: %v", err)
		}
	}
	allNotes(t, s, notes)
}

// TestCheckDuringPrune: check (and repair) running while archived
// checkpoints are deleted report no problem: a checkpoint deleted since the
// listing is skipped and a delete in progress is not "left over".
func TestCheckDuringPrune(t *testing.T) {
	t.Run("check", func(t *testing.T) {
		examineDuringPrune(t, func(s *Store) (*ckpt.Report, error) { return s.Check(context.Background(), nil) })
	})
	t.Run("repair", func(t *testing.T) {
		examineDuringPrune(t, func(s *Store) (*ckpt.Report, error) { return s.Repair(context.Background(), nil) })
	})
}

func examineDuringPrune(t *testing.T, examine func(*Store) (*ckpt.Report, error)) {
	s := newStore(t, Options{})
	ctx := context.Background()
	const n = 40
	for i := range n {
		id := fmt.Sprintf("old-%02d", i)
		s.Append(ctx, id, ckpt.MustEvent(ckpt.EventCreated, time.Now(), ckpt.Actor{}, ckpt.Created{}), ckpt.AppendOptions{})
		if _, err := s.Append(ctx, id, ckpt.MustEvent(ckpt.EventArchived, time.Now(), ckpt.Actor{}, ckpt.Archive{Reason: "done"}), ckpt.AppendOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	done := make(chan error, 1)
	go func() {
		for i := range n {
			if err := s.Delete(ctx, fmt.Sprintf("old-%02d", i)); err != nil {
				done <- err
				return
			}
		}
		done <- nil
	}()
	checker := reopen(t, s)
	for finished := false; !finished; {
		select {
		case err := <-done:
			if err != nil {
				t.Fatalf("Delete: %v", err)
			}
			finished = true
		default:
		}
		r, err := examine(checker)
		if err != nil {
			t.Fatalf("during prune: %v", err)
		}
		if len(r.Problems) > 0 {
			t.Fatalf("during prune: reported %+v", r.Problems)
		}
	}
}

// TestSymlinkedJournalFiles plants a link at the change journal's files.
func TestSymlinkedJournalFiles(t *testing.T) {
	for _, name := range []string{activeName, journalLockName} {
		t.Run(name, func(t *testing.T) {
			s, _, _ := acked(t)
			out, unchanged := outside(t)
			plant(t, filepath.Join(s.Dir(), journalDir, name), filepath.Join(out, "precious.txt"))
			s2 := reopen(t, s)
			ctx := context.Background()
			s2.Append(ctx, corpusID, ckpt.MustEvent(ckpt.EventNote, time.Now(), ckpt.Actor{}, ckpt.Note{Text: "x"}), ckpt.AppendOptions{})
			s2.Head(ctx)
			unchanged()
			wantLinkReported(t, checkReadOnly(t, s2), filepath.Join(journalDir, name))
			if _, err := s2.Repair(ctx, nil); err != nil {
				t.Fatal(err)
			}
			unchanged()
			wantQuarantined(t, s2)
			s3 := reopen(t, s2)
			if _, err := s3.Append(ctx, corpusID, ckpt.MustEvent(ckpt.EventNote, time.Now(), ckpt.Actor{}, ckpt.Note{Text: "after repair"}), ckpt.AppendOptions{}); err != nil {
				t.Errorf("Append after repair: %v", err)
			}
			if _, err := s3.Head(ctx); err != nil {
				t.Errorf("Head after repair: %v", err)
			}
			unchanged()
		})
	}
}
