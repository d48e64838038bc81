package pgstore

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/ckpt-dev/ckpt"
)

// A store over a primary and its standbys is opened with a multi-host
// connection string and target_session_attrs=read-write
// (postgres://ckpt@db1,db2/ckpt?target_session_attrs=read-write): every
// new connection goes to whichever host takes writes now. After a
// failover the pool's connections to the old primary fail once each (the
// call returns ckpt.ErrUnavailable and is retried by its caller, a keyed
// append exactly once), and new ones reach the promoted standby. Watch
// reconnects the same way and resumes from its cursor, read from the
// ckpt_changes table, so the feed has no gap and no repeat across it.
// docs/deploy.md describes the deployment.

// headSnapshot returns the current snapshot, for Head, read by a statement
// that also writes (one row of ckpt_meta, unchanged) and so commits with a
// transaction ID and a WAL record of its own: on a primary with a
// synchronous standby the commit returns only once the standby has flushed
// every WAL record before it, so every transaction the snapshot counts as
// ended is known to the standby too. Without it a snapshot may count as
// ended a transaction that committed asynchronously (a beat, a wake-up) or
// rolled back, whose record the standby never got: the promoted standby
// would hand that transaction ID out again, and a reader at the cursor
// would skip the new transaction's changes, or be refused a cursor naming
// a transaction the database has not started. It costs one commit; while
// the standby confirms nothing (it is down: docs/deploy.md) it fails after
// headWait with ckpt.ErrUnavailable, as a write would.
func (s *Store) headSnapshot(ctx context.Context) (string, error) {
	var snap string
	wctx, cancel := context.WithTimeout(ctx, headWait)
	defer cancel()
	err := s.pool.QueryRow(wctx, `WITH touch AS (UPDATE ckpt_meta SET value = value WHERE key = 'store_id' RETURNING 1)
		SELECT pg_current_snapshot()::text FROM touch`).Scan(&snap)
	if err != nil && ctx.Err() == nil && wctx.Err() != nil {
		return "", unavailable(fmt.Errorf("the feed's head: the database did not commit within %v (is a synchronous standby down?): %w", headWait, err))
	}
	return snap, classify(err)
}

// headWait bounds headSnapshot's commit.
const headWait = 10 * time.Second

// feedReadWait bounds one read of the feed: a connection to a host that
// vanished without closing it (a lost machine, a partition) answers
// nothing, and the watch must give it up and connect to the primary there
// is now.
const feedReadWait = 30 * time.Second

// readFeedWithin is readFeed bounded by feedReadWait; a read that took too
// long is ckpt.ErrUnavailable, so Watch connects again.
func (s *Store) readFeedWithin(ctx context.Context, conn *pgxpool.Conn, c cursor) ([]feedChange, error) {
	rctx, cancel := context.WithTimeout(ctx, feedReadWait)
	defer cancel()
	changes, err := s.readFeed(rctx, conn, c)
	if err != nil && ctx.Err() == nil && rctx.Err() != nil {
		return nil, unavailable(fmt.Errorf("reading the change feed took over %v: %w", feedReadWait, err))
	}
	return changes, classify(err)
}

// hostNames lists the hosts a configuration tries, in order, as a person
// writes them (host:port, or the socket directory).
func hostNames(cfg *pgconn.Config) []string {
	name := func(host string, port uint16) string {
		if strings.HasPrefix(host, "/") {
			return host
		}
		return host + ":" + strconv.Itoa(int(port))
	}
	names := []string{name(cfg.Host, cfg.Port)}
	for _, fb := range cfg.Fallbacks {
		// sslmode=prefer lists each host twice, with and without TLS.
		if n := name(fb.Host, fb.Port); !slices.Contains(names, n) {
			names = append(names, n)
		}
	}
	return names
}

// multiHostError words a failure to connect to any of several hosts: which
// refused and why, and, when the ones that answered are standbys, that
// none takes writes until one is promoted.
func (e *connectError) multiHostError() (string, bool) {
	hosts := hostNames(e.cfg)
	if len(hosts) < 2 {
		return "", false
	}
	var ce *pgconn.ConnectError
	var errs []error
	if errors.As(e.err, &ce) {
		if j, ok := errors.Unwrap(ce).(interface{ Unwrap() []error }); ok {
			errs = j.Unwrap()
		}
	}
	readOnly := errors.Is(e.err, pgconn.ErrReadOnlyConnection)
	var each []string
	for i, err := range errs {
		why := connectReason(err)
		if errors.Is(err, pgconn.ErrReadOnlyConnection) {
			why = "read-only: a standby"
		}
		if len(errs) == len(hosts) {
			why = hosts[i] + ": " + why
		}
		each = append(each, why)
	}
	msg := "no PostgreSQL server at " + strings.Join(hosts, ", ") + " takes writes (as " + e.cfg.User + ", database " + e.cfg.Database + "; " + strings.Join(each, "; ") + ")"
	if readOnly {
		msg += ": if the primary is lost, promote the standby (pg_ctl promote, or SELECT pg_promote()); docs/deploy.md"
	} else {
		msg += ": are the servers running, and is the connection string right?"
	}
	if errors.Is(e.err, ckpt.ErrUnavailable) {
		msg = ckpt.ErrUnavailable.Error() + ": " + msg
	}
	return msg, true
}
