package storetest

import (
	"context"
	"slices"

	ckpt "github.com/ckpt-dev/ckpt"
)

// WithDamaged wraps s so that checkpoint id looks damaged to List: List
// returns every other checkpoint with a *ckpt.DamagedError naming id, as the
// Store contract says a backend does. Callers of List (views, monitors,
// servers) test against it that one damaged checkpoint does not blind them.
func WithDamaged(s ckpt.Store, id string) ckpt.Store {
	return damagedStore{Store: s, bad: id}
}

type damagedStore struct {
	ckpt.Store
	bad string
}

func (s damagedStore) List(ctx context.Context, f ckpt.Filter) ([]*ckpt.Checkpoint, error) {
	all, err := s.Store.List(ctx, f)
	if err != nil {
		return nil, err
	}
	return slices.DeleteFunc(all, func(c *ckpt.Checkpoint) bool { return c.ID == s.bad }),
		&ckpt.DamagedError{IDs: []string{s.bad}, Err: ckpt.ErrCorrupt}
}
