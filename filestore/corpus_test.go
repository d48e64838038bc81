package filestore

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ckpt-dev/ckpt"
	"github.com/ckpt-dev/ckpt/storetest"
)

const corpusID = "kai-7/secondary-a"

// acked builds a store whose checkpoint has 12 acknowledged events (backups
// at revisions 5 and 10), each adding a note, and returns the note texts.
func acked(t *testing.T) (*Store, files, []string) {
	t.Helper()
	s := newStore(t, Options{BackupEvery: 5, BackupKeep: 10})
	ctx := context.Background()
	title := "corpus"
	if _, err := s.Append(ctx, corpusID, ckpt.MustEvent(ckpt.EventCreated, time.Now(), ckpt.Actor{}, ckpt.Created{Patch: ckpt.Patch{Title: &title}}), ckpt.AppendOptions{}); err != nil {
		t.Fatal(err)
	}
	var notes []string
	for i := 2; i <= 12; i++ {
		n := fmt.Sprintf("acknowledged note %d", i)
		if _, err := s.Append(ctx, corpusID, ckpt.MustEvent(ckpt.EventNote, time.Now(), ckpt.Actor{}, ckpt.Note{Text: n}), ckpt.AppendOptions{}); err != nil {
			t.Fatal(err)
		}
		notes = append(notes, n)
	}
	return s, s.files(corpusID), notes
}

// hashTree returns a digest of every file, directory and mode under dir.
func hashTree(t *testing.T, dir string) string {
	t.Helper()
	h := sha256.New()
	err := filepath.WalkDir(dir, func(p string, de fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		info, err := de.Info()
		if err != nil {
			return err
		}
		fmt.Fprintf(h, "%s %v %d\n", p, info.Mode(), info.Size())
		if de.Type().IsRegular() {
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			h.Write(b)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("%x", h.Sum(nil))
}

// checkReadOnly runs Check and fails if it changed any byte of the store.
func checkReadOnly(t *testing.T, s *Store) *ckpt.Report {
	t.Helper()
	before := hashTree(t, s.Dir())
	r, err := s.Check(context.Background(), nil)
	if err != nil {
		t.Fatalf("Check: %v", err)
	}
	if after := hashTree(t, s.Dir()); after != before {
		t.Fatal("Check changed the store")
	}
	return r
}

// historyLines returns the history's lines, newline included.
func historyLines(t *testing.T, f files) [][]byte {
	t.Helper()
	b, err := os.ReadFile(f.history())
	if err != nil {
		t.Fatal(err)
	}
	return bytes.SplitAfter(b, []byte{'\n'})[:bytes.Count(b, []byte{'\n'})]
}

func writeLines(t *testing.T, f files, lines [][]byte, tail []byte) {
	t.Helper()
	if err := os.WriteFile(f.history(), append(bytes.Join(lines, nil), tail...), 0o644); err != nil {
		t.Fatal(err)
	}
}

// allNotes fails unless the checkpoint's state holds every acknowledged note.
func allNotes(t *testing.T, s *Store, notes []string) *ckpt.Checkpoint {
	t.Helper()
	c, err := s.Get(context.Background(), corpusID, 0)
	if err != nil {
		t.Fatalf("Get: %v", err)
	}
	for _, n := range notes {
		if !strings.Contains(c.Context.Notes, n) {
			t.Errorf("the state lost %q", n)
		}
	}
	return c
}

// wantProblems fails unless r has exactly the given kinds of problems, as
// "severity:substring" of What.
func wantProblems(t *testing.T, r *ckpt.Report, want ...string) {
	t.Helper()
	if len(r.Problems) != len(want) {
		t.Fatalf("got %d problems %+v, want %v", len(r.Problems), r.Problems, want)
	}
	for i, w := range want {
		sev, sub, _ := strings.Cut(w, ":")
		p := r.Problems[i]
		if string(p.Severity) != sev || !strings.Contains(p.What, sub) || p.Repair == "" {
			t.Errorf("problem %d = %+v, want %s about %q with a repair", i, p, sev, sub)
		}
	}
}

// repairClean runs Repair, fails unless it fixed everything, and checks that
// a following Check is clean and the store verifies.
func repairClean(t *testing.T, s *Store) *ckpt.Report {
	t.Helper()
	r, err := s.Repair(context.Background(), nil)
	if err != nil {
		t.Fatalf("Repair: %v", err)
	}
	for _, p := range r.Problems {
		if !p.Fixed {
			t.Errorf("Repair did not fix: %+v", p)
		}
	}
	if r.Errors() != 0 || len(r.Problems) == 0 {
		t.Errorf("Repair report: %d problems, Errors() = %d; want the problems found, all fixed", len(r.Problems), r.Errors())
	}
	if after := checkReadOnly(t, s); len(after.Problems) > 0 {
		t.Errorf("Check after Repair still finds %+v", after.Problems)
	}
	storetest.Verify(t, s)
	return r
}

func wantCorrupt(t *testing.T, what string, err error) {
	t.Helper()
	// The library says what is damaged; the surfaces add what to do
	// (ckpt check and repair on the CLI): no command in the message.
	if !errors.Is(err, ckpt.ErrCorrupt) || !strings.Contains(err.Error(), "checkpoint "+corpusID+": ") || strings.Contains(err.Error(), "ckpt ") {
		t.Errorf("%s: error %v, want ErrCorrupt naming the checkpoint and no command", what, err)
	}
}

func TestCorpusTornLastLine(t *testing.T) {
	for _, tail := range []struct{ name, bytes string }{
		{"no newline", `{"seq":13,"at":"2025-01-01T00:00:00Z","type":"note","da`},
		// A complete last line that fails its checksum is damage, not a
		// tear: see TestCompleteLastLineFailingItsChecksumIsDamage.
	} {
		t.Run(tail.name, func(t *testing.T) {
			s, f, notes := acked(t)
			writeLines(t, f, historyLines(t, f), []byte(tail.bytes))
			if c := allNotes(t, s, notes); c.Rev != 12 {
				t.Errorf("Get with a torn tail: revision %d, want 12", c.Rev)
			}
			if h, err := s.History(context.Background(), corpusID, 0, 0); err != nil || len(h) != 12 {
				t.Errorf("History with a torn tail: %d events, %v; want the 12 acknowledged", len(h), err)
			}
			wantProblems(t, checkReadOnly(t, s), "warning:torn line")
			repairClean(t, s)
			if n := len(historyLines(t, f)); n != 12 {
				t.Errorf("history has %d lines after repair, want 12", n)
			}
		})
	}
}

func TestCorpusTornTailCutByNextWriter(t *testing.T) {
	s, f, notes := acked(t)
	writeLines(t, f, historyLines(t, f), []byte(`{"seq":13,"at":"2025`))
	res, err := s.Append(context.Background(), corpusID, ckpt.MustEvent(ckpt.EventNote, time.Now(), ckpt.Actor{}, ckpt.Note{Text: "after the tear"}), ckpt.AppendOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Event.Seq != 13 || len(res.Warnings) != 1 || !strings.Contains(res.Warnings[0], "torn") {
		t.Errorf("append after a torn tail: seq %d warnings %q; want seq 13 and one warning about the torn line", res.Event.Seq, res.Warnings)
	}
	allNotes(t, s, append(notes, "after the tear"))
	wantProblems(t, checkReadOnly(t, s))
	storetest.Verify(t, s)
}

func TestCorpusTruncatedHistory(t *testing.T) {
	for _, cut := range []struct {
		name string
		tail func(line []byte) []byte // what is left of line 10
	}{
		{"at a line boundary", func([]byte) []byte { return nil }},
		{"mid-line", func(l []byte) []byte { return l[:len(l)/2] }},
	} {
		t.Run(cut.name, func(t *testing.T) {
			s, f, notes := acked(t)
			lines := historyLines(t, f)
			writeLines(t, f, lines[:9], cut.tail(lines[9]))
			_, err := s.Get(context.Background(), corpusID, 0)
			wantCorrupt(t, "Get of a truncated history", err)
			_, err = s.Append(context.Background(), corpusID, ckpt.MustEvent(ckpt.EventNote, time.Now(), ckpt.Actor{}, ckpt.Note{Text: "x"}), ckpt.AppendOptions{})
			wantCorrupt(t, "Append to a truncated history", err)
			wantProblems(t, checkReadOnly(t, s), "error:cut off")
			r := repairClean(t, s)
			if !strings.Contains(r.Problems[0].What, "appended restored event 10 with the state of revision 12") {
				t.Errorf("repair says %q", r.Problems[0].What)
			}
			c := allNotes(t, s, notes)
			if c.Rev != 10 {
				t.Errorf("after repair the checkpoint is at revision %d, want 10 (9 kept + restored)", c.Rev)
			}
		})
	}
}

// damageMiddle applies edit to line 6 of the history and checks what Get,
// History, Check and Repair do.
// With sameSize the file keeps its length, so the latest state is still
// served from state.json; otherwise Get reports the damage.
// kept is how many events repair keeps: the lines before the first that
// fails.
func damageMiddle(t *testing.T, edit func(t *testing.T, lines [][]byte) [][]byte, sameSize bool, kept int, wantWhat string) {
	s, f, notes := acked(t)
	orig := historyLines(t, f)
	lines := edit(t, append([][]byte(nil), orig...))
	writeLines(t, f, lines, nil)
	ctx := context.Background()
	if sameSize {
		if c := allNotes(t, s, notes); c.Rev != 12 {
			t.Errorf("Get: revision %d, want 12", c.Rev)
		}
	} else {
		_, err := s.Get(ctx, corpusID, 0)
		wantCorrupt(t, "Get of a history whose length changed", err)
	}
	_, err := s.History(ctx, corpusID, 0, 0)
	wantCorrupt(t, "History of a damaged history", err)
	_, err = s.Get(ctx, corpusID, 8)
	wantCorrupt(t, "Get of a revision past the damage", err)
	if c, err := s.Get(ctx, corpusID, 3); sameSize && (err != nil || c.Rev != 3) {
		t.Errorf("Get of a revision before the damage: %v", err)
	}
	wantProblems(t, checkReadOnly(t, s), "error:"+wantWhat)
	r := repairClean(t, s)
	if !strings.Contains(r.Problems[0].What, fmt.Sprintf("kept events 1-%d", kept)) || !strings.Contains(r.Problems[0].What, "with the state of revision 12") {
		t.Errorf("repair says %q", r.Problems[0].What)
	}
	// The remainder is saved, byte for byte.
	saved, _ := filepath.Glob(filepath.Join(f.dir, damagedPrefix+"*"))
	if len(saved) != 1 {
		t.Fatalf("saved remainder files: %v, want one", saved)
	}
	got, _ := os.ReadFile(saved[0])
	if want := bytes.Join(lines[kept:], nil); !bytes.Equal(got, want) {
		t.Errorf("saved remainder differs from the history after the good prefix")
	}
	if c := allNotes(t, s, notes); c.Rev != int64(kept+1) {
		t.Errorf("after repair: revision %d, want %d (kept + restored)", c.Rev, kept+1)
	}
	if h, err := s.History(ctx, corpusID, 0, 0); err != nil || len(h) != kept+1 || h[kept].Type != ckpt.EventRestored {
		t.Errorf("history after repair: %d events, %v; want %d and a restored event", len(h), err, kept)
	}
}

func TestCorpusFlippedByte(t *testing.T) {
	damageMiddle(t, func(t *testing.T, lines [][]byte) [][]byte {
		l := bytes.Clone(lines[5])
		i := bytes.Index(l, []byte("acknowledged"))
		l[i] ^= 0x01
		lines[5] = l
		return lines
	}, true, 5, "checksum")
}

func TestCorpusEditedLine(t *testing.T) {
	damageMiddle(t, func(t *testing.T, lines [][]byte) [][]byte {
		lines[5] = bytes.Replace(lines[5], []byte("acknowledged note 6"), []byte("forged entry here!!"), 1)
		return lines
	}, true, 5, "checksum")
}

// TestCorpusEditedLineResummed edits a line and recomputes its checksum, as
// a forger would: the next line's chain link catches it. The forged line
// itself is valid and stays; the state restored is the acknowledged one.
func TestCorpusEditedLineResummed(t *testing.T) {
	damageMiddle(t, func(t *testing.T, lines [][]byte) [][]byte {
		e, err := ckpt.DecodeLine(lines[5])
		if err != nil {
			t.Fatal(err)
		}
		e.Data = []byte(`{"text":"forged"}`)
		if lines[5], _, err = ckpt.EncodeLine(e); err != nil {
			t.Fatal(err)
		}
		return lines
	}, false, 6, "does not chain")
}

func TestCorpusDeletedStateFile(t *testing.T) {
	s, f, notes := acked(t)
	if err := os.Remove(f.state()); err != nil {
		t.Fatal(err)
	}
	if c := allNotes(t, s, notes); c.Rev != 12 {
		t.Errorf("Get without state.json: revision %d, want 12", c.Rev)
	}
	wantProblems(t, checkReadOnly(t, s), "warning:state.json is missing")
	repairClean(t, s)
}

func TestCorpusGarbageStateFile(t *testing.T) {
	for name, garbage := range map[string][]byte{
		"empty":       {},
		"binary":      {0x00, 0xff, 0x10, '{'},
		"other json":  []byte(`{"id":"kai-7/secondary-a","rev":12}`),
		"flipped sum": nil, // filled below
	} {
		t.Run(name, func(t *testing.T) {
			s, f, notes := acked(t)
			if garbage == nil {
				b, _ := os.ReadFile(f.state())
				garbage = bytes.Replace(b, []byte("acknowledged note 9"), []byte("acknowledged note X"), 1)
			}
			if err := os.WriteFile(f.state(), garbage, 0o644); err != nil {
				t.Fatal(err)
			}
			if c := allNotes(t, s, notes); c.Rev != 12 {
				t.Errorf("Get with a garbage state.json: revision %d, want 12", c.Rev)
			}
			wantProblems(t, checkReadOnly(t, s), "warning:state.json is damaged")
			repairClean(t, s)
		})
	}
}

func TestCorpusStaleStateFile(t *testing.T) {
	s, f, notes := acked(t)
	old, _ := os.ReadFile(f.state())
	if _, err := s.Append(context.Background(), corpusID, ckpt.MustEvent(ckpt.EventNote, time.Now(), ckpt.Actor{}, ckpt.Note{Text: "13"}), ckpt.AppendOptions{}); err != nil {
		t.Fatal(err)
	}
	// As if the writer died between the history append and the state file.
	if err := os.WriteFile(f.state(), old, 0o644); err != nil {
		t.Fatal(err)
	}
	if c := allNotes(t, s, append(notes, "13")); c.Rev != 13 {
		t.Errorf("Get with a stale state.json: revision %d, want 13", c.Rev)
	}
	wantProblems(t, checkReadOnly(t, s), "warning:state.json is at revision 12")
	repairClean(t, s)
}

func TestCorpusCorruptBackups(t *testing.T) {
	s, f, notes := acked(t)
	b5 := filepath.Join(f.backups(), backupName(5))
	b, _ := os.ReadFile(b5)
	b[len(b)/2] ^= 0x20
	os.WriteFile(b5, b, 0o644)
	os.WriteFile(filepath.Join(f.backups(), backupName(10)), []byte("garbage"), 0o644)
	os.Remove(f.state()) // make reads fall through the backups
	if c := allNotes(t, s, notes); c.Rev != 12 {
		t.Errorf("Get with corrupt backups and no state.json: revision %d, want 12", c.Rev)
	}
	if c, err := s.Get(context.Background(), corpusID, 7); err != nil || c.Rev != 7 {
		t.Errorf("Get revision 7 past a corrupt backup: %v", err)
	}
	wantProblems(t, checkReadOnly(t, s), "warning:state.json is missing", "warning:state-000000000005.json is damaged", "warning:state-000000000010.json is damaged")
	repairClean(t, s)
}

func TestCorpusMissingBackupsDirectory(t *testing.T) {
	s, f, notes := acked(t)
	if err := os.RemoveAll(f.backups()); err != nil {
		t.Fatal(err)
	}
	allNotes(t, s, notes)
	wantProblems(t, checkReadOnly(t, s), "warning:backups directory is missing")
	repairClean(t, s)
	if revs, _ := listBackups(f); len(revs) != 2 {
		t.Errorf("after repair the backups are %v, want revisions 5 and 10", revs)
	}
}

func TestCorpusMissingHistory(t *testing.T) {
	s, f, notes := acked(t)
	if err := os.Remove(f.history()); err != nil {
		t.Fatal(err)
	}
	_, err := s.Get(context.Background(), corpusID, 0)
	wantCorrupt(t, "Get without history", err)
	wantProblems(t, checkReadOnly(t, s), "error:cut off")
	repairClean(t, s)
	if c := allNotes(t, s, notes); c.Rev != 1 {
		t.Errorf("after repair: revision %d, want 1 (an imported event)", c.Rev)
	}
}

func TestCorpusLeftoverTemporaryFile(t *testing.T) {
	s, f, _ := acked(t)
	if err := os.WriteFile(filepath.Join(f.dir, ".state.json.tmp123"), []byte("half"), 0o600); err != nil {
		t.Fatal(err)
	}
	wantProblems(t, checkReadOnly(t, s), "warning:leftover temporary file")
	repairClean(t, s)
}

func TestCheckStrayDirectoryName(t *testing.T) {
	s, _, _ := acked(t)
	if err := os.Mkdir(filepath.Join(s.Dir(), checkpointsDir, "bad name"), 0o755); err != nil {
		t.Fatal(err)
	}
	r := checkReadOnly(t, s)
	wantProblems(t, r, "error:not a checkpoint directory")
	if r.Errors() != 1 || r.Checked != 1 {
		t.Errorf("Errors() = %d, Checked = %d; want 1 and 1", r.Errors(), r.Checked)
	}
	if list, err := ckpt.ListAll(context.Background(), s, ckpt.Filter{}); err != nil || len(list) != 1 {
		t.Errorf("List with a stray directory: %d, %v; want the one checkpoint", len(list), err)
	}
}

func TestCheckCleanStoreAndIDs(t *testing.T) {
	s, _, _ := acked(t)
	r := checkReadOnly(t, s)
	if len(r.Problems) != 0 || r.Checked != 1 {
		t.Errorf("Check of a sound store: %+v", r)
	}
	if r, err := s.Check(context.Background(), []string{corpusID}); err != nil || r.Checked != 1 {
		t.Errorf("Check of one ID: %+v, %v", r, err)
	}
	if _, err := s.Check(context.Background(), []string{"../x"}); !errors.Is(err, ckpt.ErrInvalid) {
		t.Errorf("Check of a bad ID: %v, want ErrInvalid", err)
	}
	if _, err := s.Repair(context.Background(), []string{"nope"}); !errors.Is(err, ckpt.ErrNotFound) {
		t.Errorf("Repair of a missing ID: %v, want ErrNotFound", err)
	}
}

func TestRepairSoundStoreChangesNothing(t *testing.T) {
	s, _, _ := acked(t)
	// Repair creates lock files; take them out of the comparison by
	// creating them first.
	if _, err := s.Repair(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	before := hashTree(t, s.Dir())
	r, err := s.Repair(context.Background(), nil)
	if err != nil || len(r.Problems) != 0 || r.Checked != 1 {
		t.Errorf("Repair of a sound store: %+v, %v", r, err)
	}
	if hashTree(t, s.Dir()) != before {
		t.Error("Repair of a sound store changed it")
	}
}

// TestCorpusForeignBackup puts another history's backup (valid in itself:
// same ID, same revision, its own checksums) in place of one: reads must not
// use it, Check must say it does not match, Repair must rewrite it.
func TestCorpusForeignBackup(t *testing.T) {
	s, f, notes := acked(t)
	other := newStore(t, Options{BackupEvery: 5, BackupKeep: 10})
	if _, err := other.Append(context.Background(), corpusID, ckpt.MustEvent(ckpt.EventCreated, time.Now(), ckpt.Actor{}, ckpt.Created{}), ckpt.AppendOptions{}); err != nil {
		t.Fatal(err)
	}
	for i := 2; i <= 10; i++ {
		if _, err := other.Append(context.Background(), corpusID, ckpt.MustEvent(ckpt.EventNote, time.Now(), ckpt.Actor{}, ckpt.Note{Text: fmt.Sprint("foreign ", i)}), ckpt.AppendOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	foreign, err := os.ReadFile(filepath.Join(other.files(corpusID).backups(), backupName(10)))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(f.backups(), backupName(10)), foreign, 0o644); err != nil {
		t.Fatal(err)
	}
	os.Remove(f.state()) // make reads fall through to the backups
	allNotes(t, s, notes)
	ctx := context.Background()
	for _, rev := range []int64{10, 11} {
		c, err := s.Get(ctx, corpusID, rev)
		if err != nil {
			t.Fatalf("Get revision %d: %v", rev, err)
		}
		h, _ := s.History(ctx, corpusID, 0, 0)
		want, _ := ckpt.Fold(corpusID, h[:rev])
		if c.Context.Notes != want.Context.Notes {
			t.Errorf("Get revision %d used the foreign backup: notes %q, want %q", rev, c.Context.Notes, want.Context.Notes)
		}
	}
	wantProblems(t, checkReadOnly(t, s), "warning:state.json is missing", "warning:state-000000000010.json does not match the history")
	repairClean(t, s)
}
