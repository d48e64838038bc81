package pgstore

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/ckpt-dev/ckpt"
	"github.com/ckpt-dev/ckpt/internal/wire"
)

func notFound(id string) error {
	return fmt.Errorf("%w: %s (see ckpt ls for the checkpoints there are)", ckpt.ErrNotFound, id)
}

// Get implements ckpt.Store. The latest state is one row; an older
// revision is folded from the history. The latest state read is also
// remembered for the fast path (fastpath.go), unless this Store remembers
// as new a state already: ckpt.Update's append after its Get (every
// `ckpt update`, a process with a fresh Store) is then one statement
// instead of the locking path's two round trips. The remembered state was
// committed before Get's snapshot, as the fast path requires.
func (s *Store) Get(ctx context.Context, id string, rev int64) (*ckpt.Checkpoint, error) {
	if err := begin(ctx, id); err != nil {
		return nil, err
	}
	if rev < 0 {
		return nil, fmt.Errorf("%w: revision %d is negative: give 0 for the latest or a revision from ckpt log %s", ckpt.ErrInvalid, rev, id)
	}
	var (
		have     int64
		lastSum  string
		state    []byte
		beat     *time.Time
		presence []byte
		dbNow    time.Time
	)
	err := s.pool.QueryRow(ctx, "SELECT rev, last_sum, state, beat, presence, clock_timestamp() FROM ckpt_checkpoints WHERE id = $1::text", s.execMode(), id).
		Scan(&have, &lastSum, &state, &beat, &presence, &dbNow)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, notFound(id)
	}
	if err != nil {
		return nil, classify(err)
	}
	var c *ckpt.Checkpoint
	switch {
	case rev == 0 || rev == have:
		if c, err = decodeState(id, state); err != nil {
			return nil, err
		}
		s.dbNow.set(dbNow)
		s.cache.offer(id, known{rev: have, lastSum: lastSum, state: c}, c.Clone)
	case rev > have:
		return nil, fmt.Errorf("%w: %s has %d revisions, not %d", ckpt.ErrNotFound, id, have, rev)
	default:
		if c, err = s.fold(ctx, id, rev); err != nil {
			return nil, err
		}
	}
	if err := fillLiveness(c, beat, presence); err != nil {
		return nil, err
	}
	return c, nil
}

// fold replays id's history up to revision rev.
func (s *Store) fold(ctx context.Context, id string, rev int64) (*ckpt.Checkpoint, error) {
	lines, err := readLines(ctx, s.pool, id, 1, rev)
	if err != nil {
		return nil, classify(err)
	}
	events, err := decodeLines(id, lines, 1)
	if err != nil {
		return nil, err
	}
	if int64(len(events)) != rev {
		return nil, fmt.Errorf("%w: %s has %d revisions, not %d", ckpt.ErrNotFound, id, len(events), rev)
	}
	c, err := ckpt.Fold(id, events)
	if err != nil {
		return nil, fmt.Errorf("pgstore: folding %s to revision %d: %w", id, rev, err)
	}
	return c, nil
}

// History implements ckpt.Store.
func (s *Store) History(ctx context.Context, id string, from int64, limit int) ([]ckpt.Event, error) {
	if err := begin(ctx, id); err != nil {
		return nil, err
	}
	from = max(from, 1)
	var out []ckpt.Event
	err := s.withConn(ctx, func(conn *pgxpool.Conn) error {
		// One snapshot for the existence check and the lines.
		tx, err := conn.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly})
		if err != nil {
			return err
		}
		defer tx.Rollback(ctx)
		var exists bool
		if err := tx.QueryRow(ctx, "SELECT EXISTS (SELECT 1 FROM ckpt_checkpoints WHERE id = $1)", id).Scan(&exists); err != nil {
			return err
		}
		if !exists {
			return notFound(id)
		}
		to := int64(0)
		if limit > 0 {
			to = from + int64(limit) - 1
		}
		lines, err := readLines(ctx, tx, id, from, to)
		if err != nil {
			return err
		}
		out, err = decodeLines(id, lines, from)
		return err
	})
	if err != nil {
		return nil, err
	}
	if out == nil {
		out = []ckpt.Event{}
	}
	return out, nil
}

// List implements ckpt.Store: the filter and the paging run in SQL over
// the state rows' summary columns (keyset pagination on the ID), and each
// row is checked again with Filter.MatchSummary, the filter's one
// definition, for what SQL's microsecond times cannot decide exactly.
func (s *Store) List(ctx context.Context, opts ckpt.ListOptions) (ckpt.Page, error) {
	if err := ctx.Err(); err != nil {
		return ckpt.Page{}, err
	}
	if opts.Limit < 0 {
		return ckpt.Page{}, fmt.Errorf("%w: page size %d is negative", ckpt.ErrInvalid, opts.Limit)
	}
	all, err := s.listRows(ctx, opts)
	if err != nil {
		return ckpt.Page{}, classify(err)
	}
	page := ckpt.Page{Items: []ckpt.Summary{}}
	if opts.Limit > 0 && len(all) > opts.Limit {
		all = all[:opts.Limit]
		page.Next = all[len(all)-1].id
	}
	var damaged *ckpt.DamagedError
	for _, l := range all {
		var sum ckpt.Summary
		err := wire.Unmarshal(l.summary, &sum)
		if err == nil {
			sum.Heartbeat.LastBeat = time.Time{}
			if l.beat != nil {
				sum.Heartbeat.LastBeat = l.beat.UTC()
			}
			sum.Heartbeat.Presence, err = decodePresence(l.presence)
		}
		if err != nil {
			if damaged == nil {
				damaged = &ckpt.DamagedError{Err: fmt.Errorf("%w: the summary of %s does not decode: %v", ckpt.ErrCorrupt, l.id, err)}
			}
			damaged.IDs = append(damaged.IDs, l.id)
			continue
		}
		if opts.MatchSummary(&sum) {
			page.Items = append(page.Items, sum)
		}
	}
	if damaged != nil {
		return page, damaged
	}
	return page, nil
}

// listed is a row of List's query.
type listed struct {
	id       string
	summary  []byte
	beat     *time.Time
	presence []byte
}

// listRows runs List's query, by the simple protocol: planned with its
// values whatever the connection's plan_cache_mode (see genericPlans), so
// that its filters can use their partial indexes. (Its times come back as
// text, in the ISO DateStyle newPool asks for.)
func (s *Store) listRows(ctx context.Context, opts ckpt.ListOptions) ([]listed, error) {
	sql, args := listQuery(opts)
	rows, err := s.pool.Query(ctx, sql, append([]any{pgx.QueryExecModeSimpleProtocol}, args...)...)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (listed, error) {
		var l listed
		err := r.Scan(&l.id, &l.summary, &l.beat, &l.presence)
		return l, err
	})
}

// listQuery builds List's query: every filter field is a condition an
// index can serve, the page is the next Limit+1 IDs after the cursor (one
// more, to know whether there is a next page). A parent or agent
// condition also states its partial index's predicate (not empty), which
// the value given implies, for a server that plans it generically anyway.
func listQuery(opts ckpt.ListOptions) (string, []any) {
	var (
		where []string
		args  []any
	)
	arg := func(v any) string {
		args = append(args, v)
		return fmt.Sprintf("$%d", len(args))
	}
	if opts.After != "" {
		where = append(where, "id > "+arg(opts.After))
	}
	if p := opts.Prefix; p != "" {
		// IDs are ASCII below 0x7f: [p, p+0x7f) bounds an index range scan.
		where = append(where, "id >= "+arg(p), "id < "+arg(p+"\x7f"), "starts_with(id, "+arg(p)+")")
	}
	if !opts.IncludeArchived {
		where = append(where, "NOT archived")
	}
	if len(opts.Status) > 0 {
		st := make([]string, len(opts.Status))
		for i, v := range opts.Status {
			st[i] = string(v)
		}
		where = append(where, "status = ANY("+arg(st)+")")
	}
	if a := opts.Agent; a != "" {
		n := arg(a)
		where = append(where, "((agent_id = "+n+" AND agent_id <> '') OR (agent_name = "+n+" AND agent_name <> ''))")
	}
	if opts.Parent != "" {
		where = append(where, "parent = "+arg(opts.Parent)+" AND parent <> ''")
	}
	if opts.Label != "" {
		where = append(where, "labels @> ARRAY["+arg(opts.Label)+"]::text[]")
	}
	if !opts.UpdatedSince.IsZero() {
		where = append(where, "updated_at >= "+arg(opts.UpdatedSince))
	}
	if !opts.SeenBefore.IsZero() {
		// <=, not <: the times are truncated to microseconds here; the
		// exact comparison is MatchSummary's.
		where = append(where, "GREATEST(updated_at, beat) <= "+arg(opts.SeenBefore))
	}
	sql := "SELECT id, summary, beat, presence FROM ckpt_checkpoints"
	if len(where) > 0 {
		sql += " WHERE " + strings.Join(where, " AND ")
	}
	sql += " ORDER BY id"
	if opts.Limit > 0 {
		sql += " LIMIT " + arg(opts.Limit+1)
	}
	return sql, args
}
