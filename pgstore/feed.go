package pgstore

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/ckpt-dev/ckpt"
	"github.com/ckpt-dev/ckpt/internal/backoff"
)

// The change feed is the table ckpt_changes, one row per append or delete,
// written by the same transaction. Rows are ordered by (xid, pos): the
// writing transaction's ID, then an identity column. A plain serial order
// would let a reader skip a row: a transaction that drew a lower number may
// commit after the reader has passed a higher one. Instead Watch reads only
// rows whose xid is below the oldest transaction still in flight
// (pg_snapshot_xmin of the current snapshot): every transaction below that
// horizon has ended, so no row can ever appear behind the reader. Writers
// of one checkpoint are ordered by its row lock, which is each writing
// transaction's first write and so assigns the xids in the same order as
// the revisions. NOTIFY only wakes readers up; they poll as well.
// docs/design.md has the whole argument.

// notifyChannel is the LISTEN/NOTIFY channel of the feed's wake-ups.
const notifyChannel = "ckpt_changes"

// feedBatch is how many changes one query reads.
const feedBatch = 500

// feedPoll is how long a reader waits for a wake-up before it looks again:
// a horizon held back by a transaction that sends no NOTIFY (another
// program's) moves on without one.
const feedPoll = time.Second

// cursor is a position in the feed: after the change (xid, pos). snap,
// when set, is a pg_snapshot (xmin:xmax:xip,…) whose visible transactions
// are behind the cursor too: Head's snapshot, kept until the reader is past
// its xmax.
type cursor struct {
	xid, pos uint64
	snap     string
	snapXmax uint64
}

// format returns the cursor as the store's opaque string.
func (s *Store) format(c cursor) string {
	out := fmt.Sprintf("%s.%d.%d", s.storeID, c.xid, c.pos)
	if c.snap != "" && c.xid < c.snapXmax {
		out += "." + c.snap
	}
	return out
}

// parseCursor reads a cursor this store made.
func parseCursor(storeID, from string) (cursor, error) {
	bad := func(why string) (cursor, error) {
		return cursor{}, fmt.Errorf("%w: change cursor %q was not made by this store (%s); start again from \"\" or now", ckpt.ErrInvalid, from, why)
	}
	parts := strings.Split(from, ".")
	if len(parts) != 3 && len(parts) != 4 {
		return bad("malformed")
	}
	if parts[0] != storeID {
		return bad("another store's")
	}
	var c cursor
	var err error
	if c.xid, err = strconv.ParseUint(parts[1], 10, 64); err != nil {
		return bad("bad transaction ID")
	}
	if c.pos, err = strconv.ParseUint(parts[2], 10, 64); err != nil {
		return bad("bad position")
	}
	if len(parts) == 4 {
		xmin, xmax, err := parseSnapshot(parts[3])
		if err != nil || c.xid < xmin || c.xid >= xmax {
			return bad("bad snapshot")
		}
		c.snap, c.snapXmax = parts[3], xmax
	}
	return c, nil
}

// parseSnapshot checks the text form of a pg_snapshot, xmin:xmax:xip,…
// with xmin <= each xip < xmax, and returns its bounds.
func parseSnapshot(s string) (xmin, xmax uint64, err error) {
	f := strings.Split(s, ":")
	if len(f) != 3 {
		return 0, 0, errors.New("not xmin:xmax:xip")
	}
	if xmin, err = strconv.ParseUint(f[0], 10, 64); err != nil {
		return 0, 0, err
	}
	if xmax, err = strconv.ParseUint(f[1], 10, 64); err != nil {
		return 0, 0, err
	}
	if xmin > xmax {
		return 0, 0, errors.New("xmin above xmax")
	}
	if f[2] == "" {
		return xmin, xmax, nil
	}
	for _, x := range strings.Split(f[2], ",") {
		v, err := strconv.ParseUint(x, 10, 64)
		if err != nil || v < xmin || v >= xmax {
			return 0, 0, errors.New("bad in-flight list")
		}
	}
	return xmin, xmax, nil
}

// Head implements ckpt.Watcher. The cursor is the current snapshot: the
// changes it sees are behind it, those of transactions in flight or not
// yet begun are ahead. It stays valid across a failover to a synchronous
// standby (see headSnapshot).
func (s *Store) Head(ctx context.Context) (string, error) {
	snap, err := s.headSnapshot(ctx)
	if err != nil {
		return "", err
	}
	c, err := headCursor(snap)
	if err != nil {
		return "", err
	}
	return s.format(c), nil
}

func headCursor(snap string) (cursor, error) {
	xmin, xmax, err := parseSnapshot(snap)
	if err != nil {
		return cursor{}, fmt.Errorf("pgstore: the database's snapshot %q: %v", snap, err)
	}
	return cursor{xid: xmin, snap: snap, snapXmax: xmax}, nil
}

// Watch implements ckpt.Watcher. It holds one connection, LISTENing for
// wake-ups; when the connection is lost (a database restart) it connects
// again and goes on from the last change delivered, until ctx ends.
func (s *Store) Watch(ctx context.Context, from string, fn func(ckpt.Change) error) error {
	var (
		c   cursor
		err error
	)
	switch from {
	case "":
	case ckpt.CursorNow:
		var head string
		if head, err = s.Head(ctx); err == nil {
			c, err = parseCursor(s.storeID, head)
		}
	default:
		if c, err = parseCursor(s.storeID, from); err == nil {
			err = s.checkMade(ctx, c)
		}
	}
	if err != nil {
		return err
	}
	retry := backoff.Loop{}
	for {
		if s.closed.Load() {
			return errClosed
		}
		var progressed bool
		err := s.watchConn(ctx, &c, &progressed, fn)
		if !errors.Is(err, ckpt.ErrUnavailable) || ctx.Err() != nil {
			if ctx.Err() != nil && (err == nil || errors.Is(err, ckpt.ErrUnavailable) || errors.Is(err, ctx.Err())) {
				return ctx.Err()
			}
			return err
		}
		if err := retry.Wait(ctx, progressed); err != nil {
			return err
		}
	}
}

// checkMade refuses a cursor past the transactions the database has
// started: this store's database never made it.
func (s *Store) checkMade(ctx context.Context, c cursor) error {
	var xmax string
	if err := s.pool.QueryRow(ctx, "SELECT pg_snapshot_xmax(pg_current_snapshot())::text").Scan(&xmax); err != nil {
		return classify(err)
	}
	if n, err := strconv.ParseUint(xmax, 10, 64); err != nil || c.xid > n {
		return fmt.Errorf("%w: change cursor names transaction %d, which this database has not started", ckpt.ErrInvalid, c.xid)
	}
	return nil
}

// watchConn delivers changes over one connection until an error.
func (s *Store) watchConn(ctx context.Context, c *cursor, progressed *bool, fn func(ckpt.Change) error) error {
	conn, err := s.pool.Acquire(ctx)
	if err != nil {
		return classify(err)
	}
	defer func() {
		// A listening connection goes back to the pool only clean.
		uctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		if _, err := conn.Exec(uctx, "UNLISTEN *; "+listenUnlockSQL); err != nil {
			conn.Conn().Close(uctx)
		}
		cancel()
		conn.Release()
	}()
	if _, err := conn.Exec(ctx, "LISTEN "+notifyChannel+"; "+listenLockSQL); err != nil {
		return classify(err)
	}
	for {
		if s.closed.Load() {
			return errClosed
		}
		changes, err := s.readFeedWithin(ctx, conn, *c)
		if err != nil {
			return err
		}
		for _, ch := range changes {
			if err := fn(ch.Change); err != nil {
				return err
			}
			*c = ch.at
			*progressed = true
		}
		if len(changes) == feedBatch {
			continue
		}
		wctx, cancel := context.WithTimeout(ctx, feedPoll)
		err = conn.Conn().PgConn().WaitForNotification(wctx)
		cancel()
		if err != nil && ctx.Err() != nil {
			return ctx.Err()
		}
		if err != nil && !errors.Is(err, context.DeadlineExceeded) {
			return classify(err)
		}
	}
}

// feedChange is a change with the cursor just after it.
type feedChange struct {
	ckpt.Change
	at cursor
}

// readFeed reads the next changes after c that are below the horizon.
func (s *Store) readFeed(ctx context.Context, conn *pgxpool.Conn, c cursor) ([]feedChange, error) {
	var snap *string
	if c.snap != "" && c.xid < c.snapXmax {
		snap = &c.snap
	}
	rows, err := conn.Query(ctx, `SELECT xid::text AS xid_text, pos, kind, id, rev, type, at FROM ckpt_changes
		WHERE (xid, pos) > ($1::text::xid8, $2::bigint)
		  AND xid < pg_snapshot_xmin(pg_current_snapshot())
		  AND ($3::text IS NULL OR NOT pg_visible_in_snapshot(xid, $3::text::pg_snapshot))
		ORDER BY ckpt_changes.xid, pos LIMIT $4`, strconv.FormatUint(c.xid, 10), int64(c.pos), snap, feedBatch)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (feedChange, error) {
		var (
			xid  string
			pos  int64
			kind string
			typ  string
			ch   feedChange
		)
		if err := r.Scan(&xid, &pos, &kind, &ch.ID, &ch.Rev, &typ, &ch.At); err != nil {
			return ch, err
		}
		x, err := strconv.ParseUint(xid, 10, 64)
		if err != nil {
			return ch, fmt.Errorf("pgstore: change with transaction ID %q: %v", xid, err)
		}
		ch.Kind, ch.Type, ch.At = ckpt.ChangeKind(kind), ckpt.EventType(typ), ch.At.UTC()
		ch.at = cursor{xid: x, pos: uint64(pos), snap: c.snap, snapXmax: c.snapXmax}
		if x >= c.snapXmax {
			ch.at.snap, ch.at.snapXmax = "", 0
		}
		ch.Cursor = s.format(ch.at)
		return ch, nil
	})
}
