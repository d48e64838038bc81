package cli

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	ckpt "github.com/ckpt-dev/ckpt"
	"github.com/ckpt-dev/ckpt/filestore"
)

// The hooks run inside an agent's session, so a store that hangs must not
// hang the agent: every write a hook makes runs under the hook's deadline
// (boundedStore), and so do the slow parts (bounded). The filestore itself
// stops waiting for a checkpoint's lock when the context ends.

// boundedStore is the store of one hook call: Append runs under ctx, and a
// store that gives up because ctx ended (a checkpoint lock another process
// holds: a stuck ckpt, a person running flock(1)) is reported as such.
type boundedStore struct {
	ckpt.Store
}

// Unwrap returns the store under the bound, so that capabilities such as
// ckpt.VerifyChain find it.
func (s *boundedStore) Unwrap() ckpt.Store { return s.Store }

// Append implements ckpt.Store: it fails with an error saying the
// checkpoint is locked, having written nothing, when the store is still
// waiting for the lock when ctx ends.
func (s *boundedStore) Append(ctx context.Context, id string, e ckpt.Event, opts ckpt.AppendOptions) (ckpt.AppendResult, error) {
	var res ckpt.AppendResult
	err := bounded(ctx, func() error {
		var err error
		res, err = s.Store.Append(ctx, id, e, opts)
		if err != nil && ctx.Err() != nil && errors.Is(err, ctx.Err()) {
			return fmt.Errorf("%s: the checkpoint is locked by another process; the hook gave up waiting and recorded nothing", id)
		}
		return err
	})
	return res, err
}

// boundedGrace is how long bounded waits, after ctx ended, for fn to return
// the store's own account of why it stopped.
const boundedGrace = 50 * time.Millisecond

// bounded runs fn and returns its error, or an error saying it timed out
// once ctx ends first. fn keeps running in the background then; the hook's
// process ends soon after, and a write cut short by that is one the store
// never acknowledged (a torn last line, cut away by the next reader).
func bounded(ctx context.Context, fn func() error) error {
	done := make(chan error, 1)
	go func() {
		defer func() {
			if p := recover(); p != nil {
				done <- fmt.Errorf("internal error: %v", p)
			}
		}()
		done <- fn()
	}()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		// A store that honours ctx answers at once: prefer its word.
		select {
		case err := <-done:
			return err
		case <-time.After(boundedGrace):
		}
		return fmt.Errorf("gave up after the hook's time limit: %w", ctx.Err())
	}
}

// lockedBuffer collects the warnings a store prints while a hook runs; a
// write that a hook stopped waiting for may still print while the hook
// reads them.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// hookStoreDir is the filestore directory a hook uses: --store or
// CKPT_STORE, else the nearest .ckpt walking up from start.
func (f *factory) hookStoreDir(start string) (string, error) {
	if dir := f.givenStoreDir(); dir != "" {
		return dir, nil
	}
	return filestore.Find(start)
}

// findRepoRoot returns the nearest directory at or above start that holds
// a .git entry (a directory, or a file for a worktree or submodule), or ""
// when there is none. It reads the file system only: no git process, which
// would cost a hook several milliseconds.
func findRepoRoot(start string) string {
	if start == "" {
		return ""
	}
	dir := filepath.Clean(start)
	for {
		if _, err := os.Lstat(filepath.Join(dir, ".git")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return ""
		}
		dir = parent
	}
}
