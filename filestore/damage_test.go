package filestore

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ckpt-dev/ckpt"
)

// savedAside returns the concatenated content of the checkpoint's files
// whose names start with prefix (the damaged remainders, the torn tails).
func savedAside(t *testing.T, f files, prefix string) []byte {
	t.Helper()
	des, err := os.ReadDir(f.dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []byte
	for _, de := range des {
		if strings.HasPrefix(de.Name(), prefix) {
			b, err := os.ReadFile(filepath.Join(f.dir, de.Name()))
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, b...)
		}
	}
	return out
}

// TestCompleteLastLineFailingItsChecksumIsDamage: only an incomplete last
// line may be cut as torn. A complete line (it has its newline) that fails
// its checksum was written whole, so it may have been acknowledged: it is
// damage, reported as an error and saved aside by repair, whether or not a
// state file claims it.
func TestCompleteLastLineFailingItsChecksumIsDamage(t *testing.T) {
	for _, c := range []struct {
		name  string
		state func(t *testing.T, f files)
	}{
		{"state file current", func(*testing.T, files) {}},
		{"state file missing", func(t *testing.T, f files) { os.Remove(f.state()) }},
		{"state file torn", func(t *testing.T, f files) {
			b, _ := os.ReadFile(f.state())
			os.WriteFile(f.state(), b[:len(b)/2], 0o644)
		}},
		{"no state, no backups", func(t *testing.T, f files) {
			os.Remove(f.state())
			os.RemoveAll(f.backups())
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			s, f, notes := acked(t)
			lines := historyLines(t, f)
			last := bytes.Clone(lines[len(lines)-1])
			last[len(last)/2] ^= 0x01 // same length, newline kept
			lines[len(lines)-1] = last
			writeLines(t, f, lines, nil)
			c.state(t, f)
			ctx := context.Background()
			before := hashTree(t, f.history())
			_, err := reopen(t, s).Append(ctx, corpusID, ckpt.MustEvent(ckpt.EventNote, time.Now(), ckpt.Actor{}, ckpt.Note{Text: "on top"}), ckpt.AppendOptions{})
			if c.name != "state file current" {
				wantCorrupt(t, "Append over a damaged last line", err)
				if hashTree(t, f.history()) != before {
					t.Fatal("Append changed a history whose last complete line is damaged")
				}
			}
			r := checkReadOnly(t, reopen(t, s))
			if r.Errors() == 0 {
				t.Fatalf("check did not report the damaged last line as an error: %+v", r.Problems)
			}
			repairClean(t, reopen(t, s))
			if got := savedAside(t, f, damagedPrefix); !bytes.Contains(got, last) {
				t.Errorf("repair did not save the damaged line aside; saved %q", got)
			}
			if c.name != "state file current" {
				// Only the damaged line (now saved aside) holds the last note.
				notes = notes[:len(notes)-1]
			}
			allNotes(t, s, notes)
		})
	}
}

// TestTornTailIsSavedBeforeItIsCut: every byte removed from a history is
// in a file first, the torn tail of an interrupted write too, whether the
// next writer or repair cuts it.
func TestTornTailIsSavedBeforeItIsCut(t *testing.T) {
	torn := []byte(`{"seq":13,"at":"2025-01-01T00:00:00Z","type":"note","data":{"text":"half`)
	t.Run("next writer", func(t *testing.T) {
		s, f, _ := acked(t)
		writeLines(t, f, historyLines(t, f), torn)
		res, err := s.Append(context.Background(), corpusID, ckpt.MustEvent(ckpt.EventNote, time.Now(), ckpt.Actor{}, ckpt.Note{Text: "x"}), ckpt.AppendOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if got := savedAside(t, f, tornPrefix); !bytes.Equal(got, torn) {
			t.Errorf("the cut torn tail was saved as %q, want %q", got, torn)
		}
		if len(res.Warnings) != 1 || !strings.Contains(res.Warnings[0], tornPrefix) {
			t.Errorf("warnings %q do not name the file the torn tail was saved in", res.Warnings)
		}
	})
	t.Run("repair", func(t *testing.T) {
		s, f, _ := acked(t)
		writeLines(t, f, historyLines(t, f), torn)
		repairClean(t, s)
		if got := savedAside(t, f, tornPrefix); !bytes.Equal(got, torn) {
			t.Errorf("the cut torn tail was saved as %q, want %q", got, torn)
		}
	})
}

// TestKeysSurviveRepair: an event that repair moved aside with the damaged
// remainder is not applied again when its keyed write is retried.
func TestKeysSurviveRepair(t *testing.T) {
	s, f, _ := acked(t)
	ctx := context.Background()
	keyed := ckpt.MustEvent(ckpt.EventNote, time.Now(), ckpt.Actor{}, ckpt.Note{Text: "keyed note"})
	keyed.Key = "retry-me"
	if _, err := s.Append(ctx, corpusID, keyed, ckpt.AppendOptions{}); err != nil {
		t.Fatal(err)
	}
	// Damage event 11: repair keeps 1-10 and moves 11-13 (the keyed one)
	// aside.
	lines := historyLines(t, f)
	lines[10] = bytes.Replace(lines[10], []byte("note 11"), []byte("note XX"), 1)
	writeLines(t, f, lines, nil)
	if _, err := s.Repair(ctx, nil); err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(bytes.Join(historyLines(t, f), nil), []byte(`"key":"retry-me"`)) {
		t.Fatal("the test meant the keyed event to be moved aside")
	}
	before, err := s.Get(ctx, corpusID, 0)
	if err != nil {
		t.Fatal(err)
	}
	res, err := reopen(t, s).Append(ctx, corpusID, keyed, ckpt.AppendOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Replayed || res.State.Rev != before.Rev {
		t.Errorf("the retried keyed write after repair: replayed %v at revision %d, want a replay at %d", res.Replayed, res.State.Rev, before.Rev)
	}
	if n := strings.Count(res.State.Context.Notes, "keyed note"); n > 1 {
		t.Errorf("the keyed note was applied %d times", n)
	}
	if after, _ := s.Get(ctx, corpusID, 0); after.Rev != before.Rev {
		t.Errorf("the retry appended: revision %d, want %d", after.Rev, before.Rev)
	}
}

var _ = errors.Is

var _ ckpt.ChainVerifier = (*Store)(nil)

// TestVerifyFindsDamageAndStopsWrites: damage inside a history line that
// keeps its length is served around by reads (state.json is current), so
// only a whole-chain verification finds it; once found, no write appends
// to the checkpoint until repair.
func TestVerifyFindsDamageAndStopsWrites(t *testing.T) {
	s, f, notes := acked(t)
	ctx := context.Background()
	if verified, err := ckpt.VerifyChain(ctx, s, corpusID); !verified || err != nil {
		t.Fatalf("VerifyChain of a sound history: %v, %v", verified, err)
	}
	if err := s.Verify(ctx, "nobody"); !errors.Is(err, ckpt.ErrNotFound) {
		t.Errorf("Verify of a missing checkpoint: %v", err)
	}
	lines := historyLines(t, f)
	lines[5] = bytes.Replace(lines[5], []byte("note 6"), []byte("note X"), 1)
	writeLines(t, f, lines, nil)

	err := s.Verify(ctx, corpusID)
	wantCorrupt(t, "Verify of a damaged history", err)
	if err == nil || !strings.Contains(err.Error(), "event 6") {
		t.Errorf("Verify does not say where the damage is: %v", err)
	}
	before := hashTree(t, f.history())
	for _, w := range []*Store{s, reopen(t, s)} {
		_, err := w.Append(ctx, corpusID, ckpt.MustEvent(ckpt.EventNote, time.Now(), ckpt.Actor{}, ckpt.Note{Text: "on top"}), ckpt.AppendOptions{})
		wantCorrupt(t, "Append to a checkpoint found damaged", err)
	}
	if hashTree(t, f.history()) != before {
		t.Fatal("a write appended to a checkpoint known damaged")
	}
	if _, err := s.Get(ctx, corpusID, 0); err != nil {
		t.Errorf("Get of a checkpoint marked damaged: %v (reads go on)", err)
	}
	r := checkReadOnly(t, s)
	if r.Errors() == 0 {
		t.Errorf("check does not report the damage: %+v", r.Problems)
	}
	repairClean(t, s)
	if err := s.Verify(ctx, corpusID); err != nil {
		t.Errorf("Verify after repair: %v", err)
	}
	if _, err := s.Append(ctx, corpusID, ckpt.MustEvent(ckpt.EventNote, time.Now(), ckpt.Actor{}, ckpt.Note{Text: "after repair"}), ckpt.AppendOptions{}); err != nil {
		t.Errorf("Append after repair: %v", err)
	}
	allNotes(t, s, append(notes, "after repair"))
}

// TestStaleDamageMarkIsReportedAndCleared: a mark left on a history that
// verifies (mended by hand) is a warning that repair clears.
func TestStaleDamageMarkIsReportedAndCleared(t *testing.T) {
	s, f, _ := acked(t)
	markDamaged(f, "found by hand")
	wantProblems(t, checkReadOnly(t, s), "warning:marked damaged")
	repairClean(t, s)
	if _, err := os.Lstat(f.mark()); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("repair left the mark: %v", err)
	}
}
