package pgstore

import (
	"context"
	"encoding/json"
	"errors"
	"sort"
	"sync"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/ckpt-dev/ckpt"
)

// Fast appends are written in batches: the fast appends of one Store that
// wait while its statements are in flight go together in the next one,
// one transaction in one round trip for all of them (a group commit: one
// round trip, one commit and one WAL flush for many appends; each is still
// acknowledged only after that COMMIT). A lone append waits for nothing:
// with fewer than batchesInFlight statements running it goes at once, in a
// batch of one. Each append in a batch matches its own row or not; one
// that matches nothing takes the locking path alone. docs/design.md has
// the argument.

// batchesInFlight bounds the fast statements a Store runs at once;
// maxBatch bounds the appends in one. With 2, one Store shared by 64
// writers waited on its two commits' WAL flushes and reached 0.35-0.41 of
// the INSERT+COMMIT floor; 4 gave 0.61-0.63 and 8 0.41-0.46, interleaved
// in the same minutes (BenchmarkPeer, 64 writers): smaller batches cost
// more CPU per append, more flushes in flight wait less.
const (
	batchesInFlight = 4
	maxBatch        = 64
)

// fastRow is one fast append's part of a batch.
type fastRow struct {
	id      string
	rev     int64  // remembered revision
	lastSum string // remembered checksum
	event   ckpt.Event
	line    []byte
	row     stateRow
	labels  string // row.labels as a JSON array: arrays of arrays do not pass through unnest
	checkAt bool   // check the event's time against the server's clock

	done chan fastResult // buffered: the batch never waits for its reader
}

// fastResult is what the batch did for one row: matched, or not (nothing
// written for it), or the statement's error.
type fastResult struct {
	matched  bool
	dbNow    time.Time
	beat     *time.Time
	presence []byte
	err      error
}

// batcher gathers the fast appends waiting for a statement.
type batcher struct {
	mu      sync.Mutex
	pending []*fastRow
	running int
}

// submit queues r and waits for its batch's outcome. When ctx ends first
// the append may still be written (like an append whose COMMIT's answer is
// lost): the caller forgets what it remembers and reports ctx's error.
func (s *Store) submit(ctx context.Context, r *fastRow) fastResult {
	r.done = make(chan fastResult, 1)
	b := &s.batches
	b.mu.Lock()
	b.pending = append(b.pending, r)
	lead := b.running < batchesInFlight
	if lead {
		b.running++
	}
	b.mu.Unlock()
	if lead {
		// The caller writes the next batch itself, its own row in it
		// unless others came first: a lone append (every append of a
		// Store with one writer) is not handed to another goroutine and
		// back.
		s.runBatches(true)
	}
	select {
	case res := <-r.done:
		return res
	case <-ctx.Done():
		return fastResult{err: ctx.Err()}
	}
}

// runBatches writes pending batches until none is left; run by a caller
// of submit (caller), it writes one and leaves the rest to a goroutine.
func (s *Store) runBatches(caller bool) {
	b := &s.batches
	for i := 0; ; i++ {
		b.mu.Lock()
		n := min(len(b.pending), maxBatch)
		if n == 0 {
			b.running--
			b.mu.Unlock()
			return
		}
		if caller && i > 0 {
			b.mu.Unlock()
			go s.runBatches(false) // keeps the caller's place in running
			return
		}
		// One row per checkpoint in a batch: a second append to one
		// (possible when the locking path remembered it meanwhile) waits
		// for the next.
		var (
			batch []*fastRow
			rest  []*fastRow
			in    = make(map[string]bool, n)
		)
		for _, r := range b.pending {
			if len(batch) < maxBatch && !in[r.id] {
				in[r.id] = true
				batch = append(batch, r)
			} else {
				rest = append(rest, r)
			}
		}
		b.pending = rest
		b.mu.Unlock()
		s.writeBatch(batch)
		s.fastStatements.Add(1)
	}
}

// batchSQL writes a batch in ONE statement, which is its whole
// transaction (PostgreSQL's implicit transaction of a lone statement: no
// BEGIN, no COMMIT, one round trip). Its first step takes the append locks
// of all its checkpoints (lockCTE: advisory locks in ID order, the rows
// come sorted, so batches of several processes sharing checkpoints cannot
// deadlock); the UPDATE's WHERE waits for it as a one-time filter (an
// uncorrelated EXISTS: an InitPlan run before the first row is read), so
// every lock is held before the transaction's first write gives it its ID
// (see the change feed). Each row is updated only WHERE its revision and
// last checksum are still the remembered ones (the statement's snapshot
// may predate a writer that committed while it waited for a lock; READ
// COMMITTED then checks the WHERE again on the newest version of the row,
// which that writer changed, so the row does not match), its key is not
// among the last ckpt.KeyWindow events and, when check_at, its time is at
// most $19 seconds ahead of the server's clock; the event, change and key
// are inserted from the update's result.
const batchSQL = `WITH v AS (
	SELECT * FROM unnest($1::text[], $2::int8[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[],
		$8::text[], $9::text[], $10::text[], $11::text[], $12::bool[], $13::timestamptz[], $14::timestamptz[],
		$15::text[], $16::bytea[], $17::text[], $18::bool[])
		AS v(id, rev, last_sum, sum, state, summary, status, agent_id, agent_name, parent, labels, archived,
			updated_at, at, key, line, type, check_at)
), locked AS (
	SELECT count(pg_advisory_xact_lock(hashtextextended(id, 7357))) FROM unnest($1::text[]) AS id
), upd AS (
	UPDATE ckpt_checkpoints c SET rev = v.rev + 1, last_sum = v.sum, state = v.state::json, summary = v.summary::json,
		status = v.status, agent_id = v.agent_id, agent_name = v.agent_name, parent = v.parent,
		labels = ARRAY(SELECT json_array_elements_text(v.labels::json)), archived = v.archived, updated_at = v.updated_at
	FROM v
	WHERE EXISTS (SELECT FROM locked)
		AND c.id = v.id AND c.rev = v.rev AND c.last_sum = v.last_sum
		AND (NOT v.check_at OR v.at <= clock_timestamp() + make_interval(secs => $19::float8))
		AND (v.key = '' OR NOT EXISTS (SELECT 1 FROM ckpt_keys k WHERE k.id = v.id AND k.key = v.key AND k.seq > v.rev - $20::int8))
	RETURNING c.id, c.rev, c.beat, c.presence
), event AS (
	INSERT INTO ckpt_events (id, seq, line) SELECT v.id, upd.rev, v.line FROM upd JOIN v ON v.id = upd.id
), change AS (
	INSERT INTO ckpt_changes (kind, id, rev, type, at)
	SELECT $21, v.id, upd.rev, v.type, v.at FROM upd JOIN v ON v.id = upd.id ORDER BY v.id
), keyed AS (
	INSERT INTO ckpt_keys (id, key, seq) SELECT v.id, v.key, upd.rev FROM upd JOIN v ON v.id = upd.id WHERE v.key <> ''
	ON CONFLICT (id, key) DO UPDATE SET seq = excluded.seq
)
SELECT id, clock_timestamp(), beat, presence FROM upd`

// oneSQL is batchSQL for a batch of one append (the common case of a
// Store with one writer) with scalar parameters, numbered as batchSQL's.
// It is a statement of its own because PostgreSQL plans batchSQL anew on
// every call (a custom plan knows the arrays' lengths, so it always looks
// cheaper than the generic plan), and planning cost more than running it;
// oneSQL's generic plan is as cheap as a custom one, so after five calls
// a connection runs its prepared plan without planning.
const oneSQL = `WITH locked AS (
	SELECT pg_advisory_xact_lock(hashtextextended($1::text, 7357))
), upd AS (
	UPDATE ckpt_checkpoints c SET rev = $2::int8 + 1, last_sum = $4::text, state = $5::text::json, summary = $6::text::json,
		status = $7::text, agent_id = $8::text, agent_name = $9::text, parent = $10::text,
		labels = ARRAY(SELECT json_array_elements_text($11::text::json)), archived = $12::bool, updated_at = $13::timestamptz
	WHERE EXISTS (SELECT FROM locked)
		AND c.id = $1::text AND c.rev = $2::int8 AND c.last_sum = $3::text
		AND (NOT $18::bool OR $14::timestamptz <= clock_timestamp() + make_interval(secs => $19::float8))
		AND ($15::text = '' OR NOT EXISTS (SELECT 1 FROM ckpt_keys k WHERE k.id = $1::text AND k.key = $15::text AND k.seq > $2::int8 - $20::int8))
	RETURNING c.rev, c.beat, c.presence
), event AS (
	INSERT INTO ckpt_events (id, seq, line) SELECT $1::text, upd.rev, $16::bytea FROM upd
), change AS (
	INSERT INTO ckpt_changes (kind, id, rev, type, at) SELECT $21::text, $1::text, upd.rev, $17::text, $14::timestamptz FROM upd
), keyed AS (
	INSERT INTO ckpt_keys (id, key, seq) SELECT $1::text, $15::text, upd.rev FROM upd WHERE $15::text <> ''
	ON CONFLICT (id, key) DO UPDATE SET seq = excluded.seq
)
SELECT $1::text, clock_timestamp(), beat, presence FROM upd`

// writeBatch runs batchSQL (oneSQL for one row) and tells each row its
// outcome. The statement is its own transaction: its rows are read, and
// then the connection's ReadyForQuery says it committed; only then is
// any append acknowledged.
func (s *Store) writeBatch(rows []*fastRow) {
	sort.Slice(rows, func(i, j int) bool { return rows[i].id < rows[j].id })
	sql, args := batchArgs(rows)
	if sql == oneSQL {
		args = append([]any{s.execMode()}, args...)
	}
	ctx, cancel := context.WithTimeout(context.Background(), batchTimeout)
	defer cancel()
	results := make(map[string]fastResult, len(rows))
	err := s.withConn(ctx, func(conn *pgxpool.Conn) error {
		dbRows, err := conn.Query(ctx, sql, args...)
		if err != nil {
			return err
		}
		for dbRows.Next() {
			var (
				id  string
				res = fastResult{matched: true}
			)
			if err := dbRows.Scan(&id, &res.dbNow, &res.beat, &res.presence); err != nil {
				dbRows.Close()
				return err
			}
			results[id] = res
		}
		dbRows.Close() // reads up to ReadyForQuery: the commit's outcome
		return dbRows.Err()
	})
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
		err = unavailable(err) // cut short, maybe during COMMIT: maybe applied
	}
	if err != nil {
		if !errors.Is(err, ckpt.ErrUnavailable) {
			// Rolled back, nothing written: each row takes the locking
			// path, which reports what is wrong with it, if anything.
			err = errContended
		}
	}
	for _, r := range rows {
		res := results[r.id]
		if err != nil {
			res = fastResult{err: err}
		}
		r.done <- res
	}
}

// batchArgs returns the statement for rows (sorted by ID) and its
// arguments: oneSQL's scalars for one row, batchSQL's arrays for more.
func batchArgs(rows []*fastRow) (string, []any) {
	consts := []any{ckpt.MaxClockSkew.Seconds(), int64(ckpt.KeyWindow), string(ckpt.ChangeEvent)}
	if len(rows) == 1 {
		r := rows[0]
		return oneSQL, append([]any{r.id, r.rev, r.lastSum, r.event.Sum, string(r.row.state), string(r.row.summary),
			r.row.status, r.row.agentID, r.row.agentName, r.row.parent, r.labels, r.row.archived, r.row.updatedAt,
			r.event.At, r.event.Key, r.line, string(r.event.Type), r.checkAt}, consts...)
	}
	n := len(rows)
	var (
		ids, lastSums, sums, states, summaries, statuses   = make([]string, n), make([]string, n), make([]string, n), make([]string, n), make([]string, n), make([]string, n)
		agentIDs, agentNames, parents, labels, keys, types = make([]string, n), make([]string, n), make([]string, n), make([]string, n), make([]string, n), make([]string, n)
		revs                                               = make([]int64, n)
		archived, checks                                   = make([]bool, n), make([]bool, n)
		updatedAts, ats                                    = make([]time.Time, n), make([]time.Time, n)
		lines                                              = make([][]byte, n)
	)
	for i, r := range rows {
		ids[i], revs[i], lastSums[i], sums[i] = r.id, r.rev, r.lastSum, r.event.Sum
		states[i], summaries[i], statuses[i] = string(r.row.state), string(r.row.summary), r.row.status
		agentIDs[i], agentNames[i], parents[i], labels[i] = r.row.agentID, r.row.agentName, r.row.parent, r.labels
		archived[i], updatedAts[i], ats[i] = r.row.archived, r.row.updatedAt, r.event.At
		keys[i], lines[i], types[i], checks[i] = r.event.Key, r.line, string(r.event.Type), r.checkAt
	}
	return batchSQL, append([]any{ids, revs, lastSums, sums, states, summaries, statuses,
		agentIDs, agentNames, parents, labels, archived, updatedAts, ats, keys, lines, types, checks}, consts...)
}

// batchTimeout bounds one batch statement; it serves many callers, so it
// runs on no caller's context.
const batchTimeout = time.Minute

// labelsJSON encodes labels for batchSQL.
func labelsJSON(labels []string) (string, error) {
	b, err := json.Marshal(labels)
	return string(b), err
}
