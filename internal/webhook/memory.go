package webhook

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"

	ckpt "github.com/ckpt-dev/ckpt"
	"github.com/ckpt-dev/ckpt/internal/atomicfile"
)

// Memory keeps the state a Notifier last judged each checkpoint in, as it
// told it, so that a server that restarts compares what it finds with
// what it told rather than taking what it finds as its baseline: a
// transition that happened while it was down is told once, and one told
// before it stopped is not told again.
type Memory interface {
	// Load returns the remembered states; ok is false when nothing was
	// ever remembered (the first start), as opposed to nothing to remember.
	Load(ctx context.Context) (states map[string]ckpt.PresenceState, ok bool, err error)
	// Save records states durably (a state "" forgets its checkpoint),
	// and from then on Load's ok is true, even for none.
	Save(ctx context.Context, states map[string]ckpt.PresenceState) error
}

// MemoryFileName is the file a FileMemory keeps next to a local store's
// files (in its directory, as the tokens are).
const MemoryFileName = "webhooks.jsonl"

// FileMemory is a Memory in a file of JSON lines, {"id":…,"state":…},
// appended and fsynced by each Save; the last line of a checkpoint wins.
// Load rewrites the file without its superseded lines when they are most
// of it. A line torn by a crash (the last one) is ignored: its Save never
// returned, so its transitions were already told and may be told again.
//
// Save compacts too, so a server that runs for months keeps a file of
// about its checkpoints' size: when the file outgrows twice its size at
// the last compaction (and 64 KiB), Save rewrites it with one line per
// checkpoint, atomically, instead of appending.
type FileMemory struct {
	path string
	mu   sync.Mutex
	// compactAt is the size past which Save compacts; 0 is minCompact.
	compactAt int64
}

// minCompact is the smallest file Save compacts: below it, appending is
// cheaper than reading the file back.
const minCompact = 64 << 10

// NewFileMemory returns the Memory in the file at path (made at the first
// Save).
func NewFileMemory(path string) *FileMemory { return &FileMemory{path: path} }

// memoryLine is one line of a FileMemory.
type memoryLine struct {
	ID    string             `json:"id"`
	State ckpt.PresenceState `json:"state"`
}

// Load implements Memory.
func (m *FileMemory) Load(ctx context.Context) (map[string]ckpt.PresenceState, bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	b, err := os.ReadFile(m.path)
	if errors.Is(err, fs.ErrNotExist) {
		return map[string]ckpt.PresenceState{}, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("webhook memory: %w", err)
	}
	states, lines := ParseMemory(b)
	if lines > 2*len(states)+64 {
		if err := atomicfile.WriteFile(m.path, encodeMemory(states), 0o600); err != nil {
			return nil, false, fmt.Errorf("webhook memory: compacting %s: %w", m.path, err)
		}
	}
	return states, true, nil
}

// ParseMemory reads a FileMemory's bytes: the state of each checkpoint
// by its last line, and the number of lines read. Lines that are not a
// record (a torn last line, damage) are skipped.
func ParseMemory(b []byte) (map[string]ckpt.PresenceState, int) {
	states := map[string]ckpt.PresenceState{}
	n := 0
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var l memoryLine
		if json.Unmarshal(sc.Bytes(), &l) != nil || l.ID == "" {
			continue
		}
		n++
		if l.State == "" {
			delete(states, l.ID)
		} else {
			states[l.ID] = l.State
		}
	}
	return states, n
}

func encodeMemory(states map[string]ckpt.PresenceState) []byte {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	for id, st := range states {
		_ = enc.Encode(memoryLine{ID: id, State: st}) // strings always encode
	}
	return buf.Bytes()
}

// Save implements Memory: one append and one fsync for all of states.
func (m *FileMemory) Save(ctx context.Context, states map[string]ckpt.PresenceState) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	info, statErr := os.Stat(m.path)
	if statErr == nil && info.Size() > max(m.compactAt, minCompact) {
		return m.compact(states)
	}
	f, err := os.OpenFile(m.path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return fmt.Errorf("webhook memory: %w", err)
	}
	// A line torn by a crash would swallow the first new one: start on a
	// line of its own.
	_, err = f.Write(append([]byte{'\n'}, encodeMemory(states)...))
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil && errors.Is(statErr, fs.ErrNotExist) {
		err = atomicfile.SyncDir(filepath.Dir(m.path))
	}
	if err != nil {
		return fmt.Errorf("webhook memory: %s: %w", m.path, err)
	}
	return nil
}

// compact rewrites the file with its states and then states laid over
// them, one line per checkpoint, atomically and durably: a crash leaves
// the old file or the new one, never neither.
func (m *FileMemory) compact(states map[string]ckpt.PresenceState) error {
	b, err := os.ReadFile(m.path)
	if err != nil {
		return fmt.Errorf("webhook memory: %w", err)
	}
	all, _ := ParseMemory(b)
	for id, st := range states {
		if st == "" {
			delete(all, id)
		} else {
			all[id] = st
		}
	}
	data := encodeMemory(all)
	if err := atomicfile.WriteFile(m.path, data, 0o600); err != nil {
		return fmt.Errorf("webhook memory: compacting %s: %w", m.path, err)
	}
	m.compactAt = 2 * int64(len(data))
	return nil
}
