package memstore

import (
	"context"
	"fmt"
	"slices"
	"strconv"

	"github.com/ckpt-dev/ckpt"
)

// publish adds c to the feed and wakes watchers. The caller holds s.mu.
func (s *Store) publish(c ckpt.Change) {
	c.Cursor = strconv.Itoa(len(s.feed) + 1)
	s.feed = append(s.feed, c)
	close(s.wake)
	s.wake = make(chan struct{})
}

// Head implements ckpt.Watcher.
func (s *Store) Head(ctx context.Context) (string, error) {
	if err := ctx.Err(); err != nil {
		return "", err
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	return strconv.Itoa(len(s.feed)), nil
}

// Watch implements ckpt.Watcher. Cursors are positions in the feed, which
// the store keeps whole for its lifetime.
func (s *Store) Watch(ctx context.Context, from string, fn func(ckpt.Change) error) error {
	pos, err := s.position(from)
	if err != nil {
		return err
	}
	for {
		s.mu.RLock()
		pending := slices.Clone(s.feed[pos:])
		wake := s.wake
		s.mu.RUnlock()
		for _, c := range pending {
			if err := fn(c); err != nil {
				return err
			}
			pos++
		}
		if len(pending) > 0 {
			continue
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-wake:
		}
	}
}

// position turns a cursor into an index into s.feed.
func (s *Store) position(from string) (int, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	switch from {
	case "":
		return 0, nil
	case ckpt.CursorNow:
		return len(s.feed), nil
	}
	n, err := strconv.Atoi(from)
	if err != nil || n < 0 || n > len(s.feed) {
		return 0, fmt.Errorf("%w: change cursor %q was not made by this store", ckpt.ErrInvalid, from)
	}
	return n, nil
}
