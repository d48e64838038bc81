package mirror

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"sync"
	"time"

	ckpt "github.com/ckpt-dev/ckpt"
)

// KeepOptions tune Keep.
type KeepOptions struct {
	// Poll is how often the mirror list's file is read for changes (and a
	// store without a change feed listed, see Follow); 0 is two seconds.
	Poll time.Duration
	// Every is how often the seeds' escalations are written (Escalate); 0
	// is a minute.
	Every time.Duration
	// Now is the escalations' clock; nil is time.Now.
	Now func() time.Time
	// Loaded, when set, is told the entries each time the list is read
	// anew (at start and after each change), after the new mirrors'
	// files and escalations were written.
	Loaded func(entries []Entry)
}

// Keep keeps the mirrors of list over st current for a process that runs
// as long as ctx (ckpt serve): it writes every selected checkpoint's files
// and then follows the store's changes (Follow), so writes made through the
// process or by anyone else appear in the files; and it writes the seeds'
// escalations (Escalate) at once and every o.Every. The list is read at
// start and again whenever its file's content changes (looked at every
// o.Poll): a mirror added, changed or removed while Keep runs takes effect
// within a poll, a new one's files and escalations written at once. A list
// that cannot be read is warned about once per content and the mirrors
// read before it stay in effect. A store failure while following is warned
// about and the follow starts over after a poll. Keep returns when ctx
// ends, with no file left half-written.
func Keep(ctx context.Context, st ckpt.Store, list List, opts Options, o KeepOptions) {
	if o.Poll <= 0 {
		o.Poll = 2 * time.Second
	}
	if o.Every <= 0 {
		o.Every = time.Minute
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	k := keeper{st: st, list: list, opts: opts, o: o}
	defer k.stopFollow()
	k.reload(ctx)
	poll, every := time.NewTicker(o.Poll), time.NewTicker(o.Every)
	defer poll.Stop()
	defer every.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-poll.C:
			k.reload(ctx)
		case <-every.C:
			k.cur.Escalate(ctx, o.Now())
		}
	}
}

// keeper is Keep's state: the list's content last read and the mirrors
// made from it, with the follow that writes them.
type keeper struct {
	st   ckpt.Store
	list List
	opts Options
	o    KeepOptions

	seen   []byte // the list's content last read; nil before the first read
	missed bool   // the list file did not exist at the last read
	// readErr is the last failure to read the list, warned about once.
	readErr string
	cur     *Store
	cancel  context.CancelFunc
	wg      sync.WaitGroup
}

// reload reads the list and, when its content changed since the last read
// (or on the first), replaces the mirrors and their follow.
func (k *keeper) reload(ctx context.Context) {
	data, err := os.ReadFile(k.list.File)
	missing := errors.Is(err, fs.ErrNotExist)
	if err != nil && !missing {
		if k.cur == nil {
			k.cur = New(k.st, k.list, nil, k.opts)
		}
		if msg := "mirror list not read: " + err.Error(); msg != k.readErr {
			k.readErr = msg
			warn(k.opts, msg+"; the mirrors read before it are kept")
		}
		return
	}
	k.readErr = ""
	if k.cur != nil && missing == k.missed && bytes.Equal(data, k.seen) {
		return
	}
	k.seen, k.missed = append([]byte{}, data...), missing
	cfg, err := k.list.Read()
	if err != nil {
		if k.cur == nil {
			k.cur = New(k.st, k.list, nil, k.opts)
		}
		warn(k.opts, fmt.Sprintf("%v; the mirrors read before it are kept", err))
		return
	}
	k.stopFollow()
	k.cur = New(k.st, k.list, cfg.Mirrors, k.opts)
	if len(cfg.Mirrors) > 0 {
		k.startFollow(ctx, k.cur)
	}
	k.cur.Escalate(ctx, k.o.Now())
	if k.o.Loaded != nil {
		k.o.Loaded(cfg.Mirrors)
	}
}

// startFollow follows the store's changes with m until stopFollow, starting
// over after a poll when the store fails.
func (k *keeper) startFollow(ctx context.Context, m *Store) {
	fctx, cancel := context.WithCancel(ctx)
	k.cancel = cancel
	synced := make(chan struct{})
	k.wg.Add(1)
	go func() {
		defer k.wg.Done()
		first := true
		for {
			err := m.Follow(fctx, FollowOptions{Poll: k.o.Poll, Synced: func() {
				if first {
					first = false
					close(synced)
				}
			}})
			if fctx.Err() != nil {
				return
			}
			warn(k.opts, fmt.Sprintf("following the store for the mirrors: %v; trying again", err))
			select {
			case <-fctx.Done():
				return
			case <-time.After(k.o.Poll):
			}
		}
	}()
	// The new mirrors' files are written before the escalations and
	// Loaded, unless the store fails first.
	select {
	case <-synced:
	case <-fctx.Done():
	case <-time.After(k.o.Poll):
	}
}

func (k *keeper) stopFollow() {
	if k.cancel != nil {
		k.cancel()
		k.cancel = nil
	}
	k.wg.Wait()
}
