package cli

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/gofrs/flock"

	ckpt "github.com/ckpt-dev/ckpt"
	"github.com/ckpt-dev/ckpt/filestore"
)

// The hooks run inside an agent's session, so a store that hangs must not
// hang the agent: every write a hook makes waits for the checkpoint's lock
// only until the hook's deadline (boundedStore), and the slow parts run
// under the deadline (bounded).

// hookLockPoll is how often a hook looks whether a held checkpoint lock was
// released.
const hookLockPoll = 10 * time.Millisecond

// boundedStore is the store of one hook call. The filestore waits for a
// checkpoint's lock without watching the context (a live writer holds it
// for about a millisecond); a process that holds it longer (a stuck ckpt, a
// person running flock(1)) would hold the agent's session with it. So
// before each Append it waits for the lock to be free, only until ctx ends,
// and runs the Append itself under ctx too.
type boundedStore struct {
	ckpt.Store
	// dir is the filestore directory whose lock files are probed; "" for
	// a store without them.
	dir string
}

// lockPath is the lock file of checkpoint id in the filestore at dir, as
// docs/design.md lays the directory out.
func lockPath(dir, id string) string {
	return filepath.Join(dir, "checkpoints", strings.ReplaceAll(id, "/", "+"), "lock")
}

// Append implements ckpt.Store: it fails with an error saying the
// checkpoint is locked, having written nothing, when the lock is not free
// before ctx ends.
func (s *boundedStore) Append(ctx context.Context, id string, e ckpt.Event, opts ckpt.AppendOptions) (ckpt.AppendResult, error) {
	if s.dir != "" && ckpt.ValidateID(id) == nil {
		if err := waitUnlocked(ctx, lockPath(s.dir, id)); err != nil {
			return ckpt.AppendResult{}, fmt.Errorf("%s: %w", id, err)
		}
	}
	var res ckpt.AppendResult
	err := bounded(ctx, func() error {
		var err error
		res, err = s.Store.Append(ctx, id, e, opts)
		return err
	})
	return res, err
}

// waitUnlocked waits until nobody holds the lock file at path, or ctx ends.
// It takes the lock and releases it at once: the store's Append takes it
// again right after. A lock file that does not exist (a new checkpoint) is
// free.
func waitUnlocked(ctx context.Context, path string) error {
	if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	l := flock.New(path)
	ok, err := l.TryLockContext(ctx, hookLockPoll)
	if ok {
		return l.Unlock()
	}
	if ctx.Err() != nil {
		return fmt.Errorf("the checkpoint is locked by another process (%s); the hook gave up waiting and recorded nothing", path)
	}
	if errors.Is(err, fs.ErrNotExist) {
		return nil // deleted meanwhile: the store reports it
	}
	return fmt.Errorf("checking the lock %s: %w", path, err)
}

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
