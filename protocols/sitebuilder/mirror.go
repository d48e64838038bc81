package sitebuilder

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	ckpt "github.com/ckpt-dev/ckpt"
	"github.com/ckpt-dev/ckpt/internal/atomicfile"
)

// FileName returns the name of c's checkpoint file: "<agent>-<task>.json"
// from its agent ID and task ID, else the last segment of its ID plus
// ".json". The error says what to set when the name could not be a plain
// file name.
func FileName(c *ckpt.Checkpoint) (string, error) {
	stem := c.ID[strings.LastIndexByte(c.ID, '/')+1:]
	if c.Agent.ID != "" && c.TaskID != "" {
		stem = c.Agent.ID + "-" + c.TaskID
	}
	if ckpt.ValidateID(stem) != nil || strings.Contains(stem, "/") || strings.HasPrefix(stem, ".") {
		return "", fmt.Errorf("%w: %q cannot name a checkpoint file: give the agent and task IDs only letters, digits, '.', '_' and '-'", ckpt.ErrInvalid, stem)
	}
	return stem + ".json", nil
}

// archiveName returns the name sitebuilder (seed 003) gives a completed task's archived
// checkpoint: "<agent>-<task>-complete.json".
func archiveName(agent, task string) string { return agent + "-" + task + "-complete.json" }

// Mirror writes c to <root>/progress/checkpoints/<agent>-<task>.json
// durably. A checkpoint archived as complete is written to
// <agent>-<task>-complete.json instead, and the live file is then removed,
// as sitebuilder (seed 003) moves a finished task's checkpoint to its archive.
func (*Format) Mirror(root string, c *ckpt.Checkpoint) error {
	name, err := FileName(c)
	if err != nil {
		return err
	}
	data, err := (&Format{}).Export(c)
	if err != nil {
		return err
	}
	dir := filepath.Join(root, Dir)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("mirroring %s: %w", c.ID, err)
	}
	live := filepath.Join(dir, name)
	target := live
	archived := c.Archived != nil && c.Archived.Reason == "complete"
	if archived {
		target = filepath.Join(dir, strings.TrimSuffix(name, ".json")+"-complete.json")
	}
	if old, err := os.ReadFile(target); err != nil || !bytes.Equal(old, data) {
		if err := atomicfile.WriteFile(target, data, 0o644); err != nil {
			return fmt.Errorf("mirroring %s: %w", c.ID, err)
		}
	}
	if archived {
		if err := os.Remove(live); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("mirroring %s: removing %s after archiving it: %w", c.ID, live, err)
		} else if err == nil {
			return atomicfile.SyncDir(dir)
		}
	}
	return nil
}
