package pgstore

import (
	"context"
	"sync"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	ckpt "github.com/ckpt-dev/ckpt"
)

var _ ckpt.Leader = (*Store)(nil)

// leaseClass is the first key of every lease's session advisory lock
// ('ckpt'): the two-key form, whose key space PostgreSQL keeps apart from
// the one-key locks of appends and migrations.
const leaseClass = 0x636b7074

// leaseProbe is how often a held lease checks that its connection is
// alive: a lease held on a broken connection is already free for others.
// leaseIdle is how long the server keeps a lease's session that sends no
// probe (idle_session_timeout).
const (
	leaseProbe = 2 * time.Second
	leaseIdle  = "10s"
)

// Lead holds the lease called name as a session advisory lock on a
// connection of its own, for as long as that connection lives (see
// ckpt.Leader). It needs a session of its own, so it does not work
// through a pooler in transaction mode (PgBouncer's pool_mode=transaction).
func (s *Store) Lead(ctx context.Context, name string) (<-chan struct{}, func(), error) {
	conn, err := s.pool.Acquire(ctx)
	if err != nil {
		return nil, nil, classify(err)
	}
	if _, err := conn.Exec(ctx, "SELECT pg_advisory_lock($1, hashtext($2))", int32(leaseClass), name); err != nil {
		// A wait cut short may leave the lock request behind on the
		// server: this connection is not reused.
		conn.Conn().Close(context.WithoutCancel(ctx))
		conn.Release()
		if ctx.Err() != nil {
			return nil, nil, ctx.Err()
		}
		return nil, nil, classify(err)
	}
	// A holder whose machine vanished leaves a session behind that
	// PostgreSQL would keep for the TCP keepalive time (hours): past
	// leaseIdle without a probe the server ends it, freeing the lease.
	// (Before PostgreSQL 14 the setting does not exist; the lease then
	// waits for the keepalive.)
	conn.Exec(ctx, "SELECT set_config('idle_session_timeout', $1, false)", leaseIdle)
	l := &lease{conn: conn, lost: make(chan struct{}), stop: make(chan struct{}), done: make(chan struct{})}
	go l.probe()
	return l.lost, l.release, nil
}

// lease is one held lease: its connection, and the goroutine that probes
// it (probe) until release.
type lease struct {
	conn *pgxpool.Conn
	lost chan struct{} // closed when the connection broke
	stop chan struct{} // closed by release
	done chan struct{} // closed when probe returned
	once sync.Once
}

func (l *lease) probe() {
	defer close(l.done)
	t := time.NewTicker(leaseProbe)
	defer t.Stop()
	for {
		select {
		case <-l.stop:
			return
		case <-t.C:
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		_, err := l.conn.Exec(ctx, "SELECT 1")
		cancel()
		if err != nil {
			close(l.lost)
			return
		}
	}
}

// release stops the probe and closes the lease's connection: ending the
// session frees its lock, and no pooled connection keeps the lease's
// idle_session_timeout.
func (l *lease) release() {
	l.once.Do(func() {
		close(l.stop)
		<-l.done
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		l.conn.Conn().Close(ctx)
		l.conn.Release()
	})
}
