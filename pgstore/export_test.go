package pgstore

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/ckpt-dev/ckpt"
)

// BulkLoad stores whole histories at once for benchmarks' set-up: each
// history is sealed and folded exactly as Append would (the same lines,
// the same state rows), then copied in with COPY instead of one
// transaction per event.
func BulkLoad(ctx context.Context, s *Store, histories map[string][]ckpt.Event) error {
	var events, states [][]any
	for id, h := range histories {
		var (
			cur   current
			state *ckpt.Checkpoint
		)
		for _, e := range h {
			stored, line, err := seal(e, cur, time.Now().UTC())
			if err != nil {
				return err
			}
			if state, err = ckpt.Apply(id, state, stored); err != nil {
				return fmt.Errorf("%s event %d: %w", id, stored.Seq, err)
			}
			cur.rev, cur.lastSum = stored.Seq, stored.Sum
			events = append(events, []any{id, stored.Seq, line})
		}
		row, err := encodeRow(state)
		if err != nil {
			return err
		}
		states = append(states, []any{id, cur.rev, cur.lastSum, string(row.state), string(row.summary), row.status,
			row.agentID, row.agentName, row.parent, row.labels, row.archived, row.updatedAt})
	}
	return s.withConn(ctx, func(conn *pgxpool.Conn) error {
		if _, err := conn.CopyFrom(ctx, pgx.Identifier{"ckpt_events"}, []string{"id", "seq", "line"}, pgx.CopyFromRows(events)); err != nil {
			return err
		}
		_, err := conn.CopyFrom(ctx, pgx.Identifier{"ckpt_checkpoints"},
			[]string{"id", "rev", "last_sum", "state", "summary", "status", "agent_id", "agent_name", "parent", "labels", "archived", "updated_at"},
			pgx.CopyFromRows(states))
		if err != nil {
			return err
		}
		_, err = conn.Exec(ctx, "ANALYZE ckpt_events; ANALYZE ckpt_checkpoints")
		return err
	})
}

// FastAppends is how many appends s made by its fast path.
func FastAppends(s *Store) int64 { return s.fast.Load() }

// FastStatements is how many batch statements s ran for its fast appends.
func FastStatements(s *Store) int64 { return s.fastStatements.Load() }

// FastPlans says how the connections of s (give it pool_max_conns=1) ran
// the one-row fast-path statement: generic plans (planned once) and
// custom ones (planned per call), from pg_prepared_statements.
func FastPlans(ctx context.Context, s *Store) (generic, custom int64, err error) {
	err = s.pool.QueryRow(ctx, "SELECT coalesce(sum(generic_plans), 0), coalesce(sum(custom_plans), 0) FROM pg_prepared_statements WHERE statement = ANY($1)",
		[]string{oneSQL, oneUnkeyedSQL}).Scan(&generic, &custom)
	return generic, custom, err
}

// PlanModeSets is how many one-row fast statements of s also set their
// connection's plan_cache_mode.
func PlanModeSets(s *Store) int64 { return s.planModeSets.Load() }

// ColdCalls is how many Gets and one-row fast statements a Store runs
// unprepared before it prepares them.
const ColdCalls = coldCalls

// Notifies is how many NOTIFYs s sent, and how many times its notifier
// looked for a listener.
func Notifies(s *Store) (sent, checks int64) { return s.notifies.Load(), s.notifyChecks.Load() }
