package claude

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	"github.com/ckpt-dev/ckpt/internal/atomicfile"
)

// hookState is what the hooks remember between calls for one checkpoint,
// outside its history: counting prompts and consecutive Stop blocks is
// bookkeeping, not work, and must not grow the history. Losing it only
// shifts when the next backup happens or lets a task loop block once more.
type hookState struct {
	Prompts    int `json:"prompts"`
	StopBlocks int `json:"stop_blocks"`
	// Spawns are subagents asked for (the Task tool's PreToolUse) and not
	// started yet (SubagentStart), oldest first, at most maxSpawns.
	Spawns []spawn `json:"spawns,omitempty"`
}

// spawn is one subagent asked for: its type and what it was told to do.
type spawn struct {
	Type  string `json:"type"`
	Brief string `json:"brief"`
}

// statePath is the file holding id's hook state in dir. A '/' in the ID
// becomes '~', which IDs cannot contain, so names never collide.
func statePath(dir, id string) string {
	return filepath.Join(dir, fileName(id)+".json")
}

// loadState reads id's hook state; a missing or unreadable file is the zero
// state.
func loadState(dir, id string) hookState {
	var st hookState
	if data, err := os.ReadFile(statePath(dir, id)); err == nil {
		if json.Unmarshal(data, &st) != nil {
			st = hookState{}
		}
	}
	return st
}

// saveState replaces id's hook state. It is a cache: written atomically,
// not synced.
func saveState(dir, id string, st hookState) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("hook state: %w", err)
	}
	data, _ := json.Marshal(st)
	if err := atomicfile.ReplaceFile(statePath(dir, id), data, 0o644); err != nil {
		return fmt.Errorf("hook state: %w", err)
	}
	return nil
}
