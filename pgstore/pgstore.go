// Package pgstore is a ckpt.Store in PostgreSQL, through pgx and pgxpool:
// the fleet's shared store, for agents on many machines writing to one
// database. It keeps the same contract as the file store (dense chained
// histories, compare-and-swap, idempotency keys, clamped monotonic beats),
// with one transaction per append, and offers a change feed (ckpt.Watcher)
// and check/repair (ckpt.Checker, ckpt.Repairer).
//
// The schema is created and upgraded by embedded, numbered migrations that
// Open applies under an advisory lock (see Migrate); docs/design.md
// describes the tables and their invariants.
//
// Errors: a database that cannot be reached, restarts or drops the
// connection yields an error wrapping ckpt.ErrUnavailable (ckpt.Retryable):
// the call may be made again, and a keyed append made again is applied
// exactly once. An append whose commit's answer was lost may have been
// applied: only a key makes its retry safe.
package pgstore

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/ckpt-dev/ckpt"
)

// Store is a ckpt.Store in a PostgreSQL database. It is safe for
// concurrent use by many goroutines and by many processes on many hosts.
type Store struct {
	pool    *pgxpool.Pool
	storeID string // ckpt_meta.store_id: names the feed's cursors

	mu  sync.RWMutex
	now func() time.Time // nil: the database's clock

	cache stateCache   // the last state written per checkpoint (fastpath.go)
	dbNow dbClock      // the database's clock as last read
	fast  atomic.Int64 // appends the fast path made

	fastStatements atomic.Int64 // batches it wrote them in
	planModeSets   atomic.Int64 // one-row statements that set plan_cache_mode (batch.go)
	coldCalls      atomic.Int64 // Gets and one-row fast statements run (see execMode)

	batches batcher // fast appends waiting for a statement (batch.go)

	notices                notices      // wake-ups owed to readers (notify.go)
	notifyChecks, notifies atomic.Int64 // wake-up statements run, and NOTIFYs they sent

	kick         chan struct{} // wakes the notifier (see wake)
	closing      chan struct{} // closed by Close: the notifier stops waiting
	notifierDone chan struct{}
	closeOnce    sync.Once
	closed       atomic.Bool // Close was called: watchers give their connections back
}

// errClosed is what a Watch returns once its store is closed.
var errClosed = errors.New("pgstore: the store is closed")

var (
	_ ckpt.Store    = (*Store)(nil)
	_ ckpt.Watcher  = (*Store)(nil)
	_ ckpt.Checker  = (*Store)(nil)
	_ ckpt.Repairer = (*Store)(nil)
)

// IsURL reports whether s names a PostgreSQL database (a postgres:// or
// postgresql:// URL), as opposed to a store directory.
func IsURL(s string) bool {
	return strings.HasPrefix(s, "postgres://") || strings.HasPrefix(s, "postgresql://")
}

// Open connects to the database dsn names (a postgres:// URL or a
// "key=value" connection string; pool_max_conns and the other pgxpool
// settings may be given in it), brings its schema up to date (Migrate) and
// returns the store. A schema newer than this build knows is refused with
// a *SchemaError.
//
// Against an up-to-date database Open is one round trip after the
// connection's own start: one query reads the schema version and the
// store's identity (a short-lived process, ckpt update, pays for every
// round trip).
func Open(ctx context.Context, dsn string) (*Store, error) {
	pool, cfg, err := newPool(ctx, dsn)
	if err != nil {
		return nil, err
	}
	id, err := openQuery(ctx, pool, cfg)
	if err != nil {
		pool.Close()
		return nil, err
	}
	s := &Store{pool: pool, storeID: id, kick: make(chan struct{}, 1), closing: make(chan struct{}), notifierDone: make(chan struct{})}
	go s.notifier()
	return s, nil
}

// openQuery reads the schema version and the store's identity in one
// simple-protocol query (nothing to prepare), migrating first when the
// schema is missing or older, and returns the identity. Its failure to
// reach the database is a *connectError, as a ping's would be.
func openQuery(ctx context.Context, pool *pgxpool.Pool, cfg *pgxpool.Config) (string, error) {
	const q = `SELECT coalesce((SELECT max(version) FROM ckpt_schema), 0), (SELECT value FROM ckpt_meta WHERE key = 'store_id')`
	var (
		version int
		id      *string
	)
	err := pool.QueryRow(ctx, q, pgx.QueryExecModeSimpleProtocol).Scan(&version, &id)
	var pgErr *pgconn.PgError
	switch {
	case errors.As(err, &pgErr) && pgErr.Code == "42P01": // undefined_table: no schema yet
	case err != nil:
		var ce *pgconn.ConnectError
		if errors.As(err, &ce) || errors.Is(classify(err), ckpt.ErrUnavailable) {
			return "", &connectError{cfg: &cfg.ConnConfig.Config, err: classify(err)}
		}
		return "", fmt.Errorf("pgstore: reading the schema version: %w", classify(err))
	case version == SchemaVersion() && id != nil:
		return *id, nil
	}
	if _, err := migrate(ctx, pool); err != nil {
		return "", err
	}
	var sid string
	if err := pool.QueryRow(ctx, "SELECT value FROM ckpt_meta WHERE key = 'store_id'", pgx.QueryExecModeSimpleProtocol).Scan(&sid); err != nil {
		return "", fmt.Errorf("pgstore: reading the store's identity: %w", classify(err))
	}
	return sid, nil
}

// Migrate brings the schema of the database dsn names up to date and says
// what it did (`ckpt migrate`). Open does the same; Migrate exists so that
// an operator can upgrade a database before the agents' ckpt does.
func Migrate(ctx context.Context, dsn string) (MigrateResult, error) {
	pool, err := connect(ctx, dsn)
	if err != nil {
		return MigrateResult{}, err
	}
	defer pool.Close()
	return migrate(ctx, pool)
}

func connect(ctx context.Context, dsn string) (*pgxpool.Pool, error) {
	pool, cfg, err := newPool(ctx, dsn)
	if err != nil {
		return nil, err
	}
	if err := pool.Ping(ctx); err != nil {
		pool.Close()
		return nil, &connectError{cfg: &cfg.ConnConfig.Config, err: classify(err)}
	}
	return pool, nil
}

// newPool makes the pool dsn describes; it connects on first use.
func newPool(ctx context.Context, dsn string) (*pgxpool.Pool, *pgxpool.Config, error) {
	cfg, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		return nil, nil, fmt.Errorf("%w: PostgreSQL connection string: %v (give a URL like postgres://user@host/db)", ckpt.ErrInvalid, err)
	}
	// Times that come back as text (unprepared statements, List's simple
	// protocol) are read as ISO: a server or database set to another
	// DateStyle would make them unreadable. A startup parameter costs
	// nothing, and PgBouncer passes this one on.
	for k := range cfg.ConnConfig.RuntimeParams {
		if strings.EqualFold(k, "datestyle") {
			delete(cfg.ConnConfig.RuntimeParams, k)
		}
	}
	cfg.ConnConfig.RuntimeParams["datestyle"] = "ISO, MDY"
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, nil, fmt.Errorf("pgstore: %w", classify(err))
	}
	return pool, cfg, nil
}

// connectError is a database that could not be reached, said once in a
// person's words: pgx's own text names every address it tried, each with
// the whole chain of errors, so a refused connection reads twice.
type connectError struct {
	cfg *pgconn.Config
	err error // classified: ckpt.ErrUnavailable for a server not reached
}

func (e *connectError) Error() string {
	if msg, ok := e.multiHostError(); ok {
		return msg
	}
	where := e.cfg.Host
	if !strings.HasPrefix(where, "/") {
		where += ":" + strconv.Itoa(int(e.cfg.Port))
	}
	msg := "cannot connect to PostgreSQL at " + where + " as " + e.cfg.User + ", database " + e.cfg.Database + " (" + connectReason(e.err) + ")"
	if errors.Is(e.err, ckpt.ErrUnavailable) {
		return ckpt.ErrUnavailable.Error() + ": " + msg + ": is the server running there, and is the connection string right?"
	}
	return msg
}

func (e *connectError) Unwrap() error { return e.err }

// connectReason is why a connection failed, in a few words: the server's
// own message, or the innermost error of the first address tried.
func connectReason(err error) string {
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		return pgErr.Message
	}
	var op *net.OpError
	if errors.As(err, &op) && op.Err != nil {
		inner := op.Err
		for errors.Unwrap(inner) != nil {
			inner = errors.Unwrap(inner)
		}
		return inner.Error()
	}
	var ce *pgconn.ConnectError
	if errors.As(err, &ce) && errors.Unwrap(ce) != nil {
		return errors.Unwrap(ce).Error()
	}
	return err.Error()
}

// SetClock makes now the store's clock: the time events and beats get when
// they carry none, and the bound of clock skew (ckpt.MaxClockSkew). nil,
// the default, means the database server's clock, so that agents on hosts
// whose clocks disagree are judged by one clock.
func (s *Store) SetClock(now func() time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.now = now
}

// clock returns the store's now, given the database's.
func (s *Store) clock(db time.Time) time.Time {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.now != nil {
		return s.now().UTC()
	}
	return db.UTC()
}

// Close sends the last wake-up and closes the store's connections. A
// running Watch returns an error within a second (its poll) and gives its
// connection back; Close waits for that.
func (s *Store) Close() error {
	s.closeOnce.Do(func() {
		s.closed.Store(true)
		close(s.closing)
		close(s.kick)
		<-s.notifierDone
		s.pool.Close()
	})
	return nil
}

// begin checks what every method checks first: the context and the ID.
func begin(ctx context.Context, id string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	return ckpt.ValidateID(id)
}

// errRetry marks a transaction that failed only because of concurrency
// (a serialization failure, a deadlock, a create racing a create): the
// store runs it again.
var errRetry = errors.New("pgstore: transaction must be retried")

// classify maps a database error to the error the store returns: lost
// connections and a database shutting down or starting wrap
// ckpt.ErrUnavailable, concurrency failures wrap errRetry, the rest is
// returned as it is.
func classify(err error) error {
	if err == nil || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		switch {
		case pgErr.Code == "40001", pgErr.Code == "40P01":
			return fmt.Errorf("%w: %w", errRetry, err)
		case strings.HasPrefix(pgErr.Code, "08"), // connection exception
			pgErr.Code == "57P01", pgErr.Code == "57P02", pgErr.Code == "57P03", // shutdown, starting up
			pgErr.Code == "53300": // too many connections
			return unavailable(err)
		}
		return err
	}
	var ne net.Error
	var ce *pgconn.ConnectError
	if errors.As(err, &ne) || errors.As(err, &ce) || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, pgconn.ErrConnClosed) || pgconn.Timeout(err) || pgconn.SafeToRetry(err) ||
		strings.Contains(err.Error(), "conn closed") {
		return unavailable(err)
	}
	return err
}

func unavailable(err error) error {
	return fmt.Errorf("%w: PostgreSQL: %w (retry; a keyed write is applied once)", ckpt.ErrUnavailable, err)
}

// uniqueViolation reports whether err is PostgreSQL's unique_violation.
func uniqueViolation(err error) bool {
	var pgErr *pgconn.PgError
	return errors.As(err, &pgErr) && pgErr.Code == "23505"
}

// retryAttempts bounds how often a transaction that failed on concurrency
// alone runs again.
const retryAttempts = 10

// retry runs fn until it succeeds, fails with anything but errRetry, or
// has run retryAttempts times.
func retry[T any](ctx context.Context, fn func() (T, error)) (T, error) {
	var (
		v   T
		err error
	)
	for attempt := range retryAttempts {
		if attempt > 0 {
			t := time.NewTimer(time.Duration(attempt) * time.Millisecond)
			select {
			case <-ctx.Done():
				t.Stop()
				return v, ctx.Err()
			case <-t.C:
			}
		}
		v, err = fn()
		if !errors.Is(err, errRetry) {
			return v, err
		}
	}
	return v, fmt.Errorf("%w: gave up after %d attempts: %w", ckpt.ErrUnavailable, retryAttempts, err)
}

// coldCalls bounds the Gets and one-row fast statements of a Store that
// go unprepared (pgx's exec mode: parse, bind and execute in one round
// trip) before it prepares them (two round trips the first time on each
// connection, one after, with a plan PostgreSQL may keep): a short-lived
// process, ckpt update, reads once and appends once, and saves a round
// trip on each.
const coldCalls = 2

// execMode is the query mode of a Get or a one-row fast statement.
func (s *Store) execMode() pgx.QueryExecMode {
	if s.coldCalls.Add(1) <= coldCalls {
		return pgx.QueryExecModeExec
	}
	return pgx.QueryExecModeCacheStatement
}
