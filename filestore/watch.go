package filestore

import (
	"context"
	"errors"
	"io/fs"
	"strconv"
	"time"

	"github.com/ckpt-dev/ckpt"
)

var _ ckpt.Watcher = (*Store)(nil)

// pollInterval is how often a Watch looks for changes other processes
// journaled: one read at the journal's end, nothing when it has not grown.
// Changes this Store makes wake its watchers at once.
const pollInterval = 25 * time.Millisecond

// Head implements ckpt.Watcher: the position just past the journal's last
// change. Pending changes of writers that died are journaled first (when
// the caller may write the store).
func (s *Store) Head(ctx context.Context) (string, error) {
	if err := ctx.Err(); err != nil {
		return "", err
	}
	if err := s.settle(); err != nil && !errors.Is(err, fs.ErrPermission) {
		return "", err
	}
	jl, err := s.journal().lockJournal(false)
	if err != nil {
		return "", err
	}
	defer jl.unlock()
	pos, err := s.journal().head()
	if err != nil {
		return "", err
	}
	return strconv.FormatInt(pos, 10), nil
}

// Watch implements ckpt.Watcher over the change journal. A cursor is a
// position in the journal; one before the oldest segment still kept
// (pruned, see docs/design.md) or that is no change boundary fails with
// ckpt.ErrInvalid. Watch notices other processes' changes by polling the
// journal's end every pollInterval, and resolves dead writers' pending
// markers on the way, so a change a killed writer made durable is
// delivered too.
func (s *Store) Watch(ctx context.Context, from string, fn func(ckpt.Change) error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := s.settle(); err != nil && !errors.Is(err, fs.ErrPermission) {
		return err
	}
	j := s.journal()
	var pos int64
	var err error
	switch from {
	case "":
		pos, err = j.first()
	case ckpt.CursorNow:
		var head string
		if head, err = s.Head(ctx); err == nil {
			pos, err = strconv.ParseInt(head, 10, 64)
		}
	default:
		if pos, err = strconv.ParseInt(from, 10, 64); err != nil || pos < 0 {
			return errCursor(from, "was not made by this store")
		}
	}
	if err != nil {
		return err
	}
	r, err := j.openReader(pos, from)
	if err != nil {
		return err
	}
	defer r.close()
	tick := time.NewTicker(pollInterval)
	defer tick.Stop()
	for polls := 0; ; polls++ {
		wake := s.watchWake()
		err := r.readAll(func(e jentry, end int64) error {
			return fn(ckpt.Change{Cursor: strconv.FormatInt(end, 10), Kind: e.Kind, ID: e.ID, Rev: e.Rev, Type: e.Type, At: e.At})
		})
		if err != nil {
			return err
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-wake:
		case <-tick.C:
			if polls%8 == 7 {
				if err := s.settle(); err != nil && !errors.Is(err, fs.ErrPermission) {
					return err
				}
			}
		}
	}
}

// watchWake returns a channel closed at this Store's next journal write.
func (s *Store) watchWake() <-chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.wake == nil {
		s.wake = make(chan struct{})
	}
	return s.wake
}

// wakeWatchers wakes this Store's watchers.
func (s *Store) wakeWatchers() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.wake != nil {
		close(s.wake)
		s.wake = nil
	}
}
