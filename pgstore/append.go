package pgstore

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/ckpt-dev/ckpt"
	"github.com/ckpt-dev/ckpt/internal/wire"
)

// withConn runs fn on a pooled connection. fn drives its own transaction
// with pipelined batches (BEGIN in the first, COMMIT in the last, so a
// write costs two round trips); whatever fn leaves open is rolled back, and
// a connection that cannot roll back is closed rather than pooled.
func (s *Store) withConn(ctx context.Context, fn func(conn *pgxpool.Conn) error) error {
	conn, err := s.pool.Acquire(ctx)
	if err != nil {
		return classify(err)
	}
	defer conn.Release()
	err = fn(conn)
	if conn.Conn().PgConn().TxStatus() != 'I' {
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		if _, rerr := conn.Exec(rctx, "ROLLBACK"); rerr != nil {
			conn.Conn().Close(rctx) // the pool drops a closed connection
		}
		cancel()
	}
	return classify(err)
}

// current is a checkpoint's row as Append reads it under its lock.
type current struct {
	rev      int64
	lastSum  string
	state    []byte // JSON of fold(events); nil when the checkpoint does not exist
	beat     *time.Time
	presence []byte
	dbNow    time.Time
	keySeq   int64 // the latest event with the append's key, 0 for none
}

// Append implements ckpt.Store: one transaction that locks the checkpoint's
// row, looks the key up, checks IfRev, applies the event in Go (ckpt.Apply)
// and stores the event's history line, the new state row and a change, and
// returns only after COMMIT. When this Store wrote the checkpoint last, it
// first tries the one-statement fast path (fastpath.go), which writes
// nothing unless that is still so.
func (s *Store) Append(ctx context.Context, id string, e ckpt.Event, opts ckpt.AppendOptions) (ckpt.AppendResult, error) {
	if err := begin(ctx, id); err != nil {
		return ckpt.AppendResult{}, err
	}
	if opts.IfRev < 0 {
		return ckpt.AppendResult{}, fmt.Errorf("%w: if-rev %d is negative: give the revision you read, or 0 for none", ckpt.ErrInvalid, opts.IfRev)
	}
	if k, ok := s.fastEntry(id, e, opts); ok {
		res, err := s.fastAppend(ctx, id, k, e, opts)
		if err == nil {
			return res, nil
		}
		s.cache.forget(id, errors.Is(err, errContended))
		if !errors.Is(err, errStale) && !errors.Is(err, errContended) {
			return res, err
		}
	}
	res, err := retry(ctx, func() (res ckpt.AppendResult, err error) {
		err = s.withConn(ctx, func(conn *pgxpool.Conn) error {
			res, err = s.appendOnce(ctx, conn, id, e, opts)
			return err
		})
		return res, err
	})
	if err == nil && !res.Replayed {
		// Only now, with the connection back in the pool: the notifier
		// takes that one instead of opening a second (a process that
		// appends once, as ckpt update does, would start a second
		// database backend for its NOTIFY).
		s.wake()
	}
	return res, err
}

// fastEntry takes id's cache entry for the fast path (stateCache.take),
// except for an append that resends a made key (ckpt.KeyResent): only the
// locking path looks for such a key in the history (findMadeKey).
func (s *Store) fastEntry(id string, e ckpt.Event, opts ckpt.AppendOptions) (known, bool) {
	if e.Key != "" && opts.KeyOrigin == ckpt.KeyResent {
		return known{}, false
	}
	return s.cache.take(id)
}

func (s *Store) appendOnce(ctx context.Context, conn *pgxpool.Conn, id string, e ckpt.Event, opts ckpt.AppendOptions) (ckpt.AppendResult, error) {
	key := indexedKey(e.Key, opts)
	cur, err := lockCheckpoint(ctx, conn, id, key)
	if err != nil {
		return ckpt.AppendResult{}, err
	}
	if opts.KeyOrigin == ckpt.KeyResent && e.Key != "" && cur.state != nil && !cur.keyInWindow() {
		if cur.keySeq, err = findMadeKey(ctx, conn, id, e.Key, cur.rev); err != nil {
			return ckpt.AppendResult{}, err
		}
	}
	s.dbNow.set(cur.dbNow)
	var before *ckpt.Checkpoint
	if cur.state != nil {
		if before, err = decodeState(id, cur.state); err != nil {
			return ckpt.AppendResult{}, err
		}
	}
	if cur.keyInWindow() {
		return s.replay(ctx, conn, id, before, cur)
	}
	if err := checkRev(id, cur, opts.IfRev); err != nil {
		return ckpt.AppendResult{}, err
	}
	stored, line, err := seal(opts.Attribute(before, e), cur, s.clock(cur.dbNow))
	if err != nil {
		return ckpt.AppendResult{}, err
	}
	next, err := ckpt.Apply(id, before, stored)
	if err != nil {
		return ckpt.AppendResult{}, err
	}
	if err := writeAppend(ctx, conn, id, next, stored, key, line, cur.state == nil); err != nil {
		if uniqueViolation(err) && cur.state == nil {
			// Another transaction created the checkpoint meanwhile: run
			// again, to replay its key or refuse with ErrExists.
			return ckpt.AppendResult{}, fmt.Errorf("%w: %w", errRetry, err)
		}
		return ckpt.AppendResult{}, err
	}
	s.cache.put(id, known{rev: stored.Seq, lastSum: stored.Sum, state: next.Clone()})
	if err := fillLiveness(next, cur.beat, cur.presence); err != nil {
		return ckpt.AppendResult{}, err
	}
	return ckpt.AppendResult{State: next, Event: stored}, nil
}

// indexedKey is the key of e an append looks up and indexes in ckpt_keys:
// none for a key made for this call (ckpt.KeyNew), which no event can
// carry yet. Its event's line holds it, where a resend (ckpt.KeyResent)
// finds it (findMadeKey).
func indexedKey(key string, opts ckpt.AppendOptions) string {
	if opts.KeyOrigin == ckpt.KeyNew {
		return ""
	}
	return key
}

// keyInWindow reports whether the append's key names one of the last
// ckpt.KeyWindow events: the append is then a replay of that event.
func (cur current) keyInWindow() bool {
	return cur.keySeq > 0 && cur.keySeq > cur.rev-int64(ckpt.KeyWindow)
}

// findMadeKey returns the latest of checkpoint id's last ckpt.KeyWindow
// events (rev is its last) whose key is key, 0 for none. It is how a
// resent key (ckpt.KeyResent) is found when its first send, made with
// ckpt.KeyNew, was applied: that key is in its event's line and not in
// ckpt_keys. Lines are filtered by the key's bytes where the key is
// plain text (every key ckpt makes is: ckpt.NewKey), so only candidate
// lines cross the wire; each candidate is decoded and its key compared.
func findMadeKey(ctx context.Context, conn *pgxpool.Conn, id, key string, rev int64) (int64, error) {
	sql := "SELECT seq, line FROM ckpt_events WHERE id = $1 AND seq > $2 AND ($3 = '' OR position(convert_to($3, 'UTF8') IN line) > 0) ORDER BY seq DESC"
	filter := ""
	if plainKey(key) {
		filter = key
	}
	rows, err := conn.Query(ctx, sql, id, rev-int64(ckpt.KeyWindow), filter)
	if err != nil {
		return 0, err
	}
	defer rows.Close()
	var (
		seq  int64
		line []byte
	)
	for rows.Next() {
		if err := rows.Scan(&seq, &line); err != nil {
			return 0, err
		}
		e, err := ckpt.DecodeLine(line)
		if err != nil {
			return 0, fmt.Errorf("%s event %d: %w (run ckpt check %s)", id, seq, err, id)
		}
		if e.Key == key {
			return seq, nil
		}
	}
	return 0, rows.Err()
}

// plainKey reports whether key's bytes appear as they are in a history
// line: letters, digits and a few punctuation marks that JSON never
// escapes.
func plainKey(key string) bool {
	for i := 0; i < len(key); i++ {
		c := key[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-' || c == '_' || c == '.' || c == ':') {
			return false
		}
	}
	return key != ""
}

// appendLockSQL takes the append locks of the checkpoints $1 names, in the
// order given (callers sort them): transaction-scoped advisory locks, one
// per checkpoint (a 64-bit hash of its ID). Writers of one checkpoint queue
// here, before their transactions have an ID: waiting for a row lock may
// give a transaction its ID before the wait, so that a writer that waited
// longer could hold a smaller ID than the one it waited for and its change
// would sort before that one's in the feed. Taking an advisory lock gives
// no ID, so under these locks the writers of one checkpoint get their IDs
// in the order of its revisions (see the change feed in docs/design.md).
const appendLockSQL = `SELECT count(pg_advisory_xact_lock(hashtextextended(id, 7357))) FROM unnest($1::text[]) AS id`

// lockCheckpoint starts the transaction, takes checkpoint id's append lock
// (appendLockSQL), locks its row (FOR UPDATE: a beat or a deletion in
// progress) and reads it, then looks up key. The key query is a statement of its own so that its snapshot,
// taken after the lock is granted, sees the key of the writer it waited for.
func lockCheckpoint(ctx context.Context, conn *pgxpool.Conn, id, key string) (current, error) {
	b := &pgx.Batch{}
	b.Queue("BEGIN")
	b.Queue(appendLockSQL, []string{id})
	b.Queue(`SELECT clock_timestamp(), c.rev, c.last_sum, c.state, c.beat, c.presence
		FROM (SELECT 1) AS one LEFT JOIN LATERAL
		(SELECT rev, last_sum, state, beat, presence FROM ckpt_checkpoints WHERE id = $1 FOR UPDATE) AS c ON true`, id)
	if key != "" {
		b.Queue("SELECT coalesce((SELECT seq FROM ckpt_keys WHERE id = $1 AND key = $2), 0)", id, key)
	}
	br := conn.SendBatch(ctx, b)
	var (
		cur     current
		rev     *int64
		lastSum *string
	)
	_, err := br.Exec()
	if err == nil {
		_, err = br.Exec()
	}
	if err == nil {
		err = br.QueryRow().Scan(&cur.dbNow, &rev, &lastSum, &cur.state, &cur.beat, &cur.presence)
	}
	if err == nil && key != "" {
		err = br.QueryRow().Scan(&cur.keySeq)
	}
	if cerr := br.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return current{}, err
	}
	if rev != nil {
		cur.rev, cur.lastSum = *rev, *lastSum
	}
	return cur, nil
}

// replay returns the result of the event with the append's key: the event
// and the state right after it, folded from the history unless it is the
// latest. Nothing is written.
func (s *Store) replay(ctx context.Context, conn *pgxpool.Conn, id string, latest *ckpt.Checkpoint, cur current) (ckpt.AppendResult, error) {
	lines, err := readLines(ctx, conn, id, 1, cur.keySeq)
	if err != nil {
		return ckpt.AppendResult{}, err
	}
	events, err := decodeLines(id, lines, 1)
	if err != nil {
		return ckpt.AppendResult{}, err
	}
	if int64(len(events)) != cur.keySeq {
		return ckpt.AppendResult{}, fmt.Errorf("%w: %s: key names event %d, the history holds %d events (run ckpt check)", ckpt.ErrCorrupt, id, cur.keySeq, len(events))
	}
	st := latest
	if cur.keySeq != cur.rev {
		if st, err = ckpt.Fold(id, events); err != nil {
			return ckpt.AppendResult{}, fmt.Errorf("pgstore: replaying %s to event %d: %w", id, cur.keySeq, err)
		}
	}
	if err := fillLiveness(st, cur.beat, cur.presence); err != nil {
		return ckpt.AppendResult{}, err
	}
	return ckpt.AppendResult{State: st, Event: events[len(events)-1], Replayed: true}, nil
}

// checkRev is the compare-and-swap of AppendOptions.IfRev.
func checkRev(id string, cur current, ifRev int64) error {
	switch {
	case ifRev == 0:
		return nil
	case cur.state == nil:
		return fmt.Errorf("%w: %s does not exist, though revision %d was expected", ckpt.ErrNotFound, id, ifRev)
	case cur.rev != ifRev:
		return &ckpt.ConflictError{ID: id, Want: ifRev, Have: cur.rev}
	}
	return nil
}

// seal numbers e after the current last event and returns it as its
// history line decodes, with the line (no newline): exactly what History
// returns and a .ckpt/ history holds.
func seal(e ckpt.Event, cur current, now time.Time) (ckpt.Event, []byte, error) {
	e.Seq, e.Prev, e.Sum = cur.rev+1, cur.lastSum, ""
	if e.At.IsZero() {
		e.At = now
	}
	e.At = ckpt.ClampTime(e.At, now, ckpt.MaxClockSkew).UTC()
	line, _, err := ckpt.EncodeLine(e)
	if err != nil {
		return ckpt.Event{}, nil, fmt.Errorf("%w: %v", ckpt.ErrInvalid, err)
	}
	stored, err := ckpt.DecodeLine(line)
	if err != nil {
		return ckpt.Event{}, nil, fmt.Errorf("%w: %v", ckpt.ErrInvalid, err)
	}
	return stored, line[:len(line)-1], nil
}

// writeAppend stores the new state row, the change, the event and its key
// in ckpt_keys (key: "" for none, see indexedKey), and commits, all in one
// pipelined batch. The checkpoint's row is written
// first: for a new checkpoint that first write is what gives the
// transaction its ID (see the change feed in docs/design.md).
func writeAppend(ctx context.Context, conn *pgxpool.Conn, id string, next *ckpt.Checkpoint, e ckpt.Event, key string, line []byte, create bool) error {
	row, err := encodeRow(next)
	if err != nil {
		return err
	}
	b := &pgx.Batch{}
	if create {
		b.Queue(`INSERT INTO ckpt_checkpoints (id, rev, last_sum, state, summary, status, agent_id, agent_name, parent, labels, archived, updated_at)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)`,
			id, e.Seq, e.Sum, row.state, row.summary, row.status, row.agentID, row.agentName, row.parent, row.labels, row.archived, row.updatedAt)
	} else {
		b.Queue(`UPDATE ckpt_checkpoints SET rev = $2, last_sum = $3, state = $4, summary = $5, status = $6, agent_id = $7,
			agent_name = $8, parent = $9, labels = $10, archived = $11, updated_at = $12 WHERE id = $1`,
			id, e.Seq, e.Sum, row.state, row.summary, row.status, row.agentID, row.agentName, row.parent, row.labels, row.archived, row.updatedAt)
	}
	b.Queue("INSERT INTO ckpt_changes (kind, id, rev, type, at) VALUES ($1, $2, $3, $4, $5)",
		string(ckpt.ChangeEvent), id, e.Seq, string(e.Type), e.At)
	b.Queue("INSERT INTO ckpt_events (id, seq, line) VALUES ($1, $2, $3)", id, e.Seq, line)
	if key != "" {
		b.Queue(`INSERT INTO ckpt_keys (id, key, seq) VALUES ($1, $2, $3)
			ON CONFLICT (id, key) DO UPDATE SET seq = excluded.seq`, id, key, e.Seq)
	}
	b.Queue("COMMIT")
	return conn.SendBatch(ctx, b).Close()
}

// stateRow is a state encoded for ckpt_checkpoints.
type stateRow struct {
	state, summary     []byte
	status             string
	agentID, agentName string
	parent             string
	labels             []string
	archived           bool
	updatedAt          time.Time
}

// encodeRow encodes c for its state row. Liveness (the last beat and the
// presence) is not state: it lives in its own columns.
func encodeRow(c *ckpt.Checkpoint) (stateRow, error) {
	row, _, err := appendRow(nil, c)
	return row, err
}

// appendRow is encodeRow into buf: the row's state and summary are
// appended to buf[:0] and slice the buffer it returns (to give back to
// rowBuffers once the row is written). c's liveness is cleared while it
// is encoded and then restored, so c must be the caller's alone.
func appendRow(buf []byte, c *ckpt.Checkpoint) (stateRow, []byte, error) {
	hb := c.Heartbeat
	c.Heartbeat.LastBeat, c.Heartbeat.Presence = time.Time{}, nil
	buf, err := wire.Append(buf[:0], c)
	sum := c.Summary()
	c.Heartbeat = hb
	if err != nil {
		return stateRow{}, buf, fmt.Errorf("pgstore: encoding the state of %s: %w", c.ID, err)
	}
	n := len(buf)
	if buf, err = wire.Append(buf, &sum); err != nil {
		return stateRow{}, buf, fmt.Errorf("pgstore: encoding the summary of %s: %w", c.ID, err)
	}
	labels := c.Labels
	if labels == nil {
		labels = []string{}
	}
	return stateRow{
		state: buf[:n:n], summary: buf[n:], status: string(c.Status), agentID: c.Agent.ID, agentName: c.Agent.Name,
		parent: c.Parent, labels: labels, archived: c.Archived != nil, updatedAt: c.UpdatedAt,
	}, buf, nil
}

// rowBuffers holds the buffers fast appends encode their state rows into
// (*[]byte): a state is rewritten whole by every append, and growing a
// fresh buffer to its size each time was a tenth of an append's
// allocation.
var rowBuffers = sync.Pool{New: func() any { return new([]byte) }}

// decodeState decodes a state row's state.
func decodeState(id string, b []byte) (*ckpt.Checkpoint, error) {
	var c ckpt.Checkpoint
	if err := wire.Unmarshal(b, &c); err != nil {
		return nil, fmt.Errorf("%w: the state row of %s does not decode: %v (run ckpt repair %s)", ckpt.ErrCorrupt, id, err, id)
	}
	return &c, nil
}

// fillLiveness sets c's heartbeat from the liveness columns.
func fillLiveness(c *ckpt.Checkpoint, beat *time.Time, presence []byte) error {
	c.Heartbeat.LastBeat = time.Time{}
	if beat != nil {
		c.Heartbeat.LastBeat = beat.UTC()
	}
	p, err := decodePresence(presence)
	c.Heartbeat.Presence = p
	return err
}

func decodePresence(b []byte) (*ckpt.Presence, error) {
	if b == nil {
		return nil, nil
	}
	var p ckpt.Presence
	if err := wire.Unmarshal(b, &p); err != nil {
		return nil, fmt.Errorf("%w: a presence record does not decode: %v", ckpt.ErrCorrupt, err)
	}
	if p.IsZero() {
		return nil, nil
	}
	p.Since, p.At, p.Bound = p.Since.UTC(), p.At.UTC(), p.Bound.UTC()
	return &p, nil
}

// readLines returns the history lines of id with from <= seq <= to (to 0:
// no bound), in order.
func readLines(ctx context.Context, q querier, id string, from, to int64) ([][]byte, error) {
	sql := "SELECT line FROM ckpt_events WHERE id = $1 AND seq >= $2 AND ($3 = 0 OR seq <= $3) ORDER BY seq"
	rows, err := q.Query(ctx, sql, id, from, to)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, pgx.RowTo[[]byte])
}

// decodeLines decodes history lines that must be the events from seq on,
// checking each line's checksum and the chain between them.
func decodeLines(id string, lines [][]byte, from int64) ([]ckpt.Event, error) {
	out := make([]ckpt.Event, 0, len(lines))
	for i, l := range lines {
		e, err := ckpt.DecodeLine(l)
		if err != nil {
			return nil, fmt.Errorf("%s event %d: %w (run ckpt check %s)", id, from+int64(i), err, id)
		}
		if e.Seq != from+int64(i) || i > 0 && e.Prev != out[i-1].Sum {
			return nil, fmt.Errorf("%w: %s event %d does not follow event %d (run ckpt check %s)", ckpt.ErrCorrupt, id, e.Seq, from+int64(i)-1, id)
		}
		out = append(out, e)
	}
	return out, nil
}

// querier is what reads need: a pool, a connection or a transaction.
type querier interface {
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}
