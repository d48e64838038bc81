package ckpt

import "context"

// Leader is a store whose processes can agree that one of them at a time
// does a store-wide job that must not be done twice: two `ckpt serve`
// replicas over one database would otherwise post every webhook twice.
// A store without it is taken to have one such process (a local store is
// served from its own machine).
type Leader interface {
	// Lead blocks until this process holds the lease called name, or ctx
	// ends (ctx's error), or the store cannot be reached (that error; try
	// again later). While it is held no other process of the store holds
	// it. lost is closed if the lease is lost without release (the
	// connection that held it broke, say in a failover): the job must
	// stop, and may Lead again. release gives the lease up; calling it more
	// than once is harmless. Each call of Lead holds a lease of its own.
	Lead(ctx context.Context, name string) (lost <-chan struct{}, release func(), err error)
}
