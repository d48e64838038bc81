package filestore

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"
	"time"

	"github.com/ckpt-dev/ckpt"
	"github.com/ckpt-dev/ckpt/internal/atomicfile"
)

// Names of the files that keep what was removed from a history, and the
// damage mark.
const (
	// movedKeysName lists the idempotency keys of events repair moved out of
	// the history (JSON lines of movedKey), so that a retried keyed write
	// is not applied twice.
	movedKeysName = historyName + ".keys"
	// damagedMark, when present, says the checkpoint is known damaged: no
	// write appends to it until repair removes the mark. It holds the
	// reason, as text.
	damagedMark = "damaged"
)

// movedKey is one line of the moved keys file.
type movedKey struct {
	Key   string         `json:"key"`
	Seq   int64          `json:"seq"`
	Type  ckpt.EventType `json:"type,omitempty"`
	Saved string         `json:"saved"` // the file the event's line was saved in
}

func (f files) movedKeys() string { return f.dir + sep + movedKeysName }
func (f files) mark() string      { return f.dir + sep + damagedMark }

// saveAndCutTorn saves the torn tail of f's history, the bytes from end on,
// durably into history.jsonl.torn-<unix seconds>-<seq>, then cuts the
// history to end: every byte removed from a history is in a file first. now
// is the store's clock. It returns the saved file's name.
func saveAndCutTorn(f files, end, seq int64, now time.Time) (string, error) {
	size, err := fileSize(f.history())
	if err != nil {
		return "", fmt.Errorf("filestore: %s: cutting torn history tail: %w", f.id, err)
	}
	tail, err := readRange(f.history(), end, size)
	if err != nil {
		return "", fmt.Errorf("filestore: %s: saving torn history tail: %w", f.id, err)
	}
	saved := uniquePath(filepath.Join(f.dir, fmt.Sprintf("%s%d-%d", tornPrefix, now.Unix(), seq)))
	if err := atomicfile.WriteFile(saved, tail, 0o644); err != nil {
		return "", fmt.Errorf("filestore: %s: saving torn history tail before cutting it (nothing was cut): %w", f.id, err)
	}
	return filepath.Base(saved), cutTail(f, end)
}

// rememberMovedKeys appends to f's moved keys file the key of every event
// in rest (history bytes being moved into the file saved) that has one,
// durably. A line that fails its checksum still names its key: a key
// remembered once too often only makes a retry a no-op.
func rememberMovedKeys(f files, rest []byte, saved string) error {
	var out []byte
	for _, line := range bytes.SplitAfter(rest, []byte{'\n'}) {
		var e struct {
			Key  string         `json:"key"`
			Seq  int64          `json:"seq"`
			Type ckpt.EventType `json:"type"`
		}
		if json.Unmarshal(bytes.TrimSpace(line), &e) != nil || e.Key == "" {
			continue
		}
		b, err := json.Marshal(movedKey{Key: e.Key, Seq: e.Seq, Type: e.Type, Saved: saved})
		if err != nil {
			return err
		}
		out = append(append(out, b...), '\n')
	}
	if len(out) == 0 {
		return nil
	}
	if err := appendSync(f.movedKeys(), out); err != nil {
		return fmt.Errorf("filestore: %s: remembering the keys of the events moved aside: %w", f.id, err)
	}
	return nil
}

// findMovedKey looks for key among the keys of events repair moved out of
// f's history.
func findMovedKey(f files, key string) (movedKey, bool, error) {
	data, err := readNoFollow(f.movedKeys())
	if errors.Is(err, fs.ErrNotExist) {
		return movedKey{}, false, nil
	}
	if err != nil {
		return movedKey{}, false, err
	}
	m, ok := parseMovedKeys(data, key)
	return m, ok, nil
}

// parseMovedKeys finds key in the content of a moved keys file. Lines that
// are not a movedKey (torn by a crash, edited) are skipped.
func parseMovedKeys(data []byte, key string) (movedKey, bool) {
	k, _ := json.Marshal(key)
	if !bytes.Contains(data, k) {
		return movedKey{}, false
	}
	for _, line := range bytes.Split(data, []byte{'\n'}) {
		var m movedKey
		if json.Unmarshal(line, &m) == nil && m.Key == key {
			return m, true
		}
	}
	return movedKey{}, false
}

// replayMoved is Append's answer to a retried keyed write whose event
// repair moved aside: nothing is applied again; the state is the current
// one.
func replayMoved(f files, cur current, m movedKey) ckpt.AppendResult {
	st := cur.state.Clone()
	fillLiveness(st, f)
	return ckpt.AppendResult{State: st, Event: ckpt.Event{Seq: m.Seq, Type: m.Type, Key: m.Key}, Replayed: true,
		Warnings: []string{fmt.Sprintf("%s: the write with key %q was event %d, which a repair moved aside into %s; it is not applied again",
			f.id, m.Key, m.Seq, m.Saved)}}
}

// markedDamaged returns the reason f was marked damaged, if it was: one
// lstat when it was not, which is all the hot path pays.
func markedDamaged(f files) (string, bool) { return markedDamagedIn(-1, f) }

// markedDamagedIn is markedDamaged through dfd, f's directory as its held
// lock has it open (-1: by path).
func markedDamagedIn(dfd int, f files) (string, bool) {
	if !existsIn(dfd, f.mark()) {
		return "", false
	}
	b, _ := readNoFollowIn(dfd, f.mark())
	return strings.TrimSpace(string(b)), true
}

// markDamaged records that f is damaged, for why. Best effort: the mark
// only spares later writers from building on the damage.
func markDamaged(f files, why string) {
	if _, ok := markedDamaged(f); ok {
		return
	}
	if realDir(f.dir) != nil {
		return
	}
	atomicfile.WriteFile(f.mark(), []byte(why+"\n"), 0o644)
}

// refuseDamaged is Append's error for a checkpoint marked damaged.
func refuseDamaged(id, why string) error {
	return damaged(id, "it is marked damaged (%s) and takes no more writes until repaired; nothing was written", why)
}

// Verify implements ckpt.ChainVerifier: it reads checkpoint id's whole
// history under the checkpoint's shared lock (as check does: writers wait
// for the one read) and checks that every complete line checks
// itself and chains on from the one before, that ckpt.Apply accepts every
// event, and that state.json, when valid, records no more history than
// there is (acknowledged events were not cut off). These are the MUSTs
// ckpt check verifies of a history. A torn last line (no
// newline: a write in progress or interrupted) is not damage. On damage it
// marks the checkpoint damaged, so that no write appends to it until
// ckpt repair, and returns an error wrapping ckpt.ErrCorrupt that says
// where. Its cost is one read of the history and one fold.
func (s *Store) Verify(ctx context.Context, id string) error {
	if err := s.begin(ctx, id); err != nil {
		return err
	}
	f := s.files(id)
	// Shared, as check: a repair (which would remove the mark this may
	// write) or a writer is not halfway through meanwhile.
	release, gone, err := lockShared(f.dir)
	if gone {
		return notFound(id)
	}
	if err != nil {
		return err
	}
	defer release()
	// state.json first: a writer grows the history before it rewrites it.
	var env envelope
	var envOK bool
	if b, err := readNoFollow(f.state()); err == nil {
		if e, _, err := parseEnvelope(b, id); err == nil {
			env, envOK = e, true
		}
	}
	data, err := readNoFollow(f.history())
	if errors.Is(err, fs.ErrNotExist) && !envOK {
		return notFound(id)
	}
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("filestore: verifying %s: %w", id, err)
	}
	var st *ckpt.Checkpoint
	r := scanHistory(data, 0, ckpt.Chain{}, func(e ckpt.Event, _ int64) (err error) {
		st, err = ckpt.Apply(id, st, e)
		return err
	})
	var why string
	switch {
	case r.bad != nil:
		why = r.bad.String()
	case envOK && env.HistorySize > r.end:
		why = fmt.Sprintf("history.jsonl has %d good bytes but state.json records %d: acknowledged events were cut off or damaged", r.end, env.HistorySize)
	case st == nil:
		return notFound(id)
	default:
		return nil
	}
	markDamaged(f, why)
	return damaged(id, "%s", why)
}
