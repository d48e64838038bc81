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

func (s damagedStore) List(ctx context.Context, opts ckpt.ListOptions) (ckpt.Page, error) {
	p, err := s.Store.List(ctx, opts)
	if err != nil {
		return p, err
	}
	n := len(p.Items)
	p.Items = slices.DeleteFunc(p.Items, func(c ckpt.Summary) bool { return c.ID == s.bad })
	if len(p.Items) == n {
		return p, nil
	}
	return p, &ckpt.DamagedError{IDs: []string{s.bad}, Err: ckpt.ErrCorrupt}
}
