package pgstore

import (
	"context"
	"encoding/json"
	"errors"
	"sort"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
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
	key     string // the key to look up and index: "" for none, and for a made one (ckpt.KeyNew)
	line    []byte
	row     stateRow
	checkAt bool // check the event's time against the server's clock

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

// submit queues r and waits for its batch's outcome; written says the
// batch is done with r. When ctx ends first the append may still be
// written (like an append whose COMMIT's answer is lost): the caller
// forgets what it remembers and reports ctx's error.
func (s *Store) submit(ctx context.Context, r *fastRow) (res fastResult, written bool) {
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
		return res, true
	case <-ctx.Done():
		return fastResult{err: ctx.Err()}, false
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

// writeBatch runs the batch's statement (fastsql.go) and tells each row its
// outcome. The statement is its own transaction: its rows are read, and
// then the connection's ReadyForQuery says it committed; only then is
// any append acknowledged.
func (s *Store) writeBatch(rows []*fastRow) {
	sort.Slice(rows, func(i, j int) bool { return rows[i].id < rows[j].id })
	var mode pgx.QueryExecMode
	if len(rows) == 1 {
		mode = s.execMode()
	}
	ctx, cancel := context.WithTimeout(context.Background(), batchTimeout)
	defer cancel()
	results := make(map[string]fastResult, len(rows))
	answered := false
	err := s.withConn(ctx, func(conn *pgxpool.Conn) error {
		generic := conn.Conn().PgConn().CustomData()
		setMode := len(rows) == 1 && generic[genericPlansSet] == nil
		if setMode {
			// Prepared too (a shared Store sets the mode again after each
			// batch of several), unless this is a cold call.
			s.planModeSets.Add(1)
		}
		// A batch of several sets the mode back (customPlans); if it fails
		// the mode stays as it was, and the flag errs on the side of
		// setting it again.
		delete(generic, genericPlansSet)
		if err := s.runBatch(ctx, conn.Conn(), mode, setMode, rows, results); err != nil {
			return err
		}
		if len(rows) == 1 {
			generic[genericPlansSet] = true // committed: so did its set_config, or an earlier one's
		}
		// Committed: answer the appends, then tell readers on this
		// connection (notify.go) before giving it back.
		for _, r := range rows {
			r.done <- results[r.id]
		}
		answered = true
		if len(results) > 0 {
			s.committedOn(ctx, conn)
		}
		return nil
	})
	if answered {
		return
	}
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

// runBatch runs a batch's statement on conn and puts each matched row's
// result in results, having read up to ReadyForQuery: the commit's
// outcome. A prepared one-row statement goes by execOne.
func (s *Store) runBatch(ctx context.Context, conn *pgx.Conn, mode pgx.QueryExecMode, setMode bool, rows []*fastRow, results map[string]fastResult) error {
	if len(rows) == 1 && mode == pgx.QueryExecModeCacheStatement {
		res, err := execOne(ctx, conn, oneStatement(rows[0].key != "", setMode), rows[0])
		if err == nil && res.matched {
			results[rows[0].id] = res
		}
		if !errors.Is(err, errNotDirect) {
			return err
		}
	}
	sql, args := batchArgs(rows, mode == pgx.QueryExecModeCacheStatement, setMode)
	if len(rows) == 1 {
		args = append([]any{mode}, args...)
	}
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
}

// genericPlansSet, in a connection's pgconn CustomData, says that a
// one-row fast statement committed on it since its last batch of several:
// its plan_cache_mode forces generic plans (fastsql.go's genericPlans),
// and its one-row statements need not set it again.
const genericPlansSet = "ckpt.genericPlans"

// batchTimeout bounds one batch statement; it serves many callers, so it
// runs on no caller's context.
const batchTimeout = time.Minute

// labelsJSON encodes labels for batchSQL as a JSON array (arrays of
// arrays do not pass through unnest); a []string always encodes.
func labelsJSON(labels []string) string {
	b, _ := json.Marshal(labels)
	return string(b)
}
