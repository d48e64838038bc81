package pgstore

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/ckpt-dev/ckpt"
	"github.com/ckpt-dev/ckpt/internal/wire"
)

// Check implements ckpt.Checker. Each checkpoint is read in one read-only
// snapshot (REPEATABLE READ), so writers are neither blocked nor mistaken
// for damage. It verifies that every history line checks itself and
// chains (an error: the history was changed outside ckpt), that the events
// fold, and that the state row, its summary columns and the key index
// equal what the history says (warnings: repair rebuilds them).
func (s *Store) Check(ctx context.Context, ids []string) (*ckpt.Report, error) {
	return s.checkEach(ctx, ids, func(conn *pgxpool.Conn, id string) ([]ckpt.Problem, error) {
		var found []ckpt.Problem
		err := pgx.BeginTxFunc(ctx, conn, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly}, func(tx pgx.Tx) error {
			var err error
			found, _, err = inspect(ctx, tx, id)
			return err
		})
		return found, err
	})
}

// Repair implements ckpt.Repairer. Under the checkpoint's row lock it
// rebuilds what the history determines: a state row (and its summary
// columns) that disagrees with fold(events) or is missing, and the key
// index. A damaged history it cannot mend: nothing in the database holds
// the lost bytes, so it reports the error and leaves every row as it is.
func (s *Store) Repair(ctx context.Context, ids []string) (*ckpt.Report, error) {
	return s.checkEach(ctx, ids, func(conn *pgxpool.Conn, id string) ([]ckpt.Problem, error) {
		s.cache.forget(id, false)
		var found []ckpt.Problem
		err := pgx.BeginFunc(ctx, conn, func(tx pgx.Tx) error {
			if _, err := tx.Exec(ctx, "SELECT 1 FROM ckpt_checkpoints WHERE id = $1 FOR UPDATE", id); err != nil {
				return err
			}
			var (
				folded *ckpt.Checkpoint
				err    error
			)
			found, folded, err = inspect(ctx, tx, id)
			if err != nil || folded == nil || !anyFixable(found) {
				return err
			}
			if err := rebuild(ctx, tx, id, folded); err != nil {
				return err
			}
			for i := range found {
				found[i].Fixed = found[i].Severity == ckpt.SeverityWarning
			}
			return nil
		})
		return found, err
	})
}

func anyFixable(ps []ckpt.Problem) bool {
	return slices.ContainsFunc(ps, func(p ckpt.Problem) bool { return p.Severity == ckpt.SeverityWarning })
}

// checkEach runs one checkpoint's check or repair for each of ids, or for
// every checkpoint (and every history without a state row) when none are
// given.
func (s *Store) checkEach(ctx context.Context, ids []string, one func(*pgxpool.Conn, string) ([]ckpt.Problem, error)) (*ckpt.Report, error) {
	for _, id := range ids {
		if err := ckpt.ValidateID(id); err != nil {
			return nil, err
		}
	}
	rep := &ckpt.Report{Problems: []ckpt.Problem{}}
	err := s.withConn(ctx, func(conn *pgxpool.Conn) error {
		if len(ids) == 0 {
			rows, err := conn.Query(ctx, "SELECT id FROM ckpt_checkpoints UNION SELECT DISTINCT id FROM ckpt_events ORDER BY 1")
			if err != nil {
				return err
			}
			if ids, err = pgx.CollectRows(rows, pgx.RowTo[string]); err != nil {
				return err
			}
		}
		for _, id := range ids {
			found, err := one(conn, id)
			if err != nil {
				return fmt.Errorf("checking %s: %w", id, err)
			}
			rep.Checked++
			rep.Problems = append(rep.Problems, found...)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return rep, nil
}

// inspect compares checkpoint id's rows with its history and returns what
// disagrees, with fold(history) when the history is sound.
func inspect(ctx context.Context, tx pgx.Tx, id string) ([]ckpt.Problem, *ckpt.Checkpoint, error) {
	var (
		found []ckpt.Problem
		fix   = "ckpt repair " + id
	)
	problem := func(sev ckpt.Severity, repair, format string, args ...any) {
		found = append(found, ckpt.Problem{ID: id, Severity: sev, What: fmt.Sprintf(format, args...), Repair: repair})
	}
	lines, err := readLines(ctx, tx, id, 1, 0)
	if err != nil {
		return nil, nil, err
	}
	var row struct {
		rev                int64
		lastSum            string
		state, summary     []byte
		status             string
		agentID, agentName string
		parent             string
		labels             []string
		archived           bool
		updatedAt          time.Time
	}
	err = tx.QueryRow(ctx, `SELECT rev, last_sum, state, summary, status, agent_id, agent_name, parent, labels, archived, updated_at
		FROM ckpt_checkpoints WHERE id = $1`, id).Scan(&row.rev, &row.lastSum, &row.state, &row.summary, &row.status,
		&row.agentID, &row.agentName, &row.parent, &row.labels, &row.archived, &row.updatedAt)
	missing := errors.Is(err, pgx.ErrNoRows)
	if err != nil && !missing {
		return nil, nil, err
	}
	if len(lines) == 0 {
		if missing {
			return nil, nil, nil // deleted meanwhile
		}
		problem(ckpt.SeverityError, "", "the state row claims revision %d but there is no history: restore the database from a backup", row.rev)
		return found, nil, nil
	}
	events, err := decodeLines(id, lines, 1)
	if err != nil {
		problem(ckpt.SeverityError, "", "history damaged (a line was changed outside ckpt): %v; restore the database from a backup", err)
		return found, nil, nil
	}
	folded, err := ckpt.Fold(id, events)
	if err != nil {
		problem(ckpt.SeverityError, "", "the history does not fold: %v; restore the database from a backup", err)
		return found, nil, nil
	}
	want, err := encodeRow(folded)
	if err != nil {
		return nil, nil, err
	}
	last := events[len(events)-1]
	switch {
	case missing:
		problem(ckpt.SeverityWarning, fix, "history of %d events has no state row", len(events))
	case row.rev != last.Seq || row.lastSum != last.Sum:
		problem(ckpt.SeverityWarning, fix, "state row is at revision %d, the history at %d", row.rev, last.Seq)
	case !sameJSON(row.state, want.state) && !boundedIsFold(row.state, want.state):
		problem(ckpt.SeverityWarning, fix, "state row differs from fold(history) at revision %d", last.Seq)
	case !sameJSON(row.summary, want.summary) || row.status != want.status || row.agentID != want.agentID ||
		row.agentName != want.agentName || row.parent != want.parent || !slices.Equal(row.labels, want.labels) ||
		row.archived != want.archived || !row.updatedAt.Equal(want.updatedAt.Truncate(time.Microsecond)):
		problem(ckpt.SeverityWarning, fix, "summary columns differ from the state at revision %d", last.Seq)
	}
	keys, err := storedKeys(ctx, tx, id)
	if err != nil {
		return nil, nil, err
	}
	if what := keyIndexProblem(keys, historyKeys(events)); what != "" {
		problem(ckpt.SeverityWarning, fix, "%s", what)
	}
	return found, folded, nil
}

// boundedIsFold reports whether a stored state that is not the fold's is
// a state written before ckpt bounded the notes (ckpt.BoundNotes) whose
// bounded form is the fold: the next append rewrites it bounded.
func boundedIsFold(stored, fold []byte) bool {
	var c ckpt.Checkpoint
	if wire.Unmarshal(stored, &c) != nil || len(c.Context.Notes) <= ckpt.MaxNotesBytes {
		return false
	}
	c.Context.Notes = ckpt.BoundNotes(c.Context.Notes)
	b, err := wire.Marshal(&c)
	return err == nil && sameJSON(b, fold)
}

// sameJSON compares a stored JSON value with a fresh encoding, after a
// decode and re-encode of the stored one (json columns keep the text).
func sameJSON(stored, fresh []byte) bool {
	return bytes.Equal(bytes.TrimSpace(stored), fresh)
}

func storedKeys(ctx context.Context, tx pgx.Tx, id string) (map[string]int64, error) {
	rows, err := tx.Query(ctx, "SELECT key, seq FROM ckpt_keys WHERE id = $1", id)
	if err != nil {
		return nil, err
	}
	out := map[string]int64{}
	var (
		k string
		q int64
	)
	_, err = pgx.ForEachRow(rows, []any{&k, &q}, func() error { out[k] = q; return nil })
	return out, err
}

// keyIndexProblem describes how the key index differs from the history's
// keys (history, each key's latest event), "" when it does not: an index
// row that names another event than the history's latest with its key, or
// a key of the history missing from the index. A made key (ckpt.MadeKey)
// may be missing: an append leaves out a key made for it (ckpt.KeyNew),
// which a resend finds in the history.
func keyIndexProblem(index, history map[string]int64) string {
	for _, k := range slices.Sorted(maps.Keys(index)) {
		if history[k] != index[k] {
			return fmt.Sprintf("the idempotency key index names event %d for key %q; the history's latest event with it is %d", index[k], k, history[k])
		}
	}
	for _, k := range slices.Sorted(maps.Keys(history)) {
		if _, ok := index[k]; !ok && !ckpt.MadeKey(k) {
			return fmt.Sprintf("the idempotency key index lacks key %q of event %d", k, history[k])
		}
	}
	return ""
}

// historyKeys maps each key in events to its latest event.
func historyKeys(events []ckpt.Event) map[string]int64 {
	out := map[string]int64{}
	for _, e := range events {
		if e.Key != "" {
			out[e.Key] = e.Seq
		}
	}
	return out
}

// rebuild writes checkpoint id's state row and key index from folded, the
// fold of its whole, sound history. The liveness columns are kept.
func rebuild(ctx context.Context, tx pgx.Tx, id string, folded *ckpt.Checkpoint) error {
	row, err := encodeRow(folded)
	if err != nil {
		return err
	}
	events, err := readAllEvents(ctx, tx, id)
	if err != nil {
		return err
	}
	lastSum := events[len(events)-1].Sum
	_, err = tx.Exec(ctx, `INSERT INTO ckpt_checkpoints (id, rev, last_sum, state, summary, status, agent_id, agent_name, parent, labels, archived, updated_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)
		ON CONFLICT (id) DO UPDATE SET rev = excluded.rev, last_sum = excluded.last_sum, state = excluded.state,
			summary = excluded.summary, status = excluded.status, agent_id = excluded.agent_id, agent_name = excluded.agent_name,
			parent = excluded.parent, labels = excluded.labels, archived = excluded.archived, updated_at = excluded.updated_at`,
		id, folded.Rev, lastSum, row.state, row.summary, row.status, row.agentID, row.agentName, row.parent, row.labels, row.archived, row.updatedAt)
	if err != nil {
		return err
	}
	if _, err := tx.Exec(ctx, "DELETE FROM ckpt_keys WHERE id = $1", id); err != nil {
		return err
	}
	for k, q := range historyKeys(events) {
		if _, err := tx.Exec(ctx, "INSERT INTO ckpt_keys (id, key, seq) VALUES ($1, $2, $3)", id, k, q); err != nil {
			return err
		}
	}
	return nil
}

func readAllEvents(ctx context.Context, tx pgx.Tx, id string) ([]ckpt.Event, error) {
	lines, err := readLines(ctx, tx, id, 1, 0)
	if err != nil {
		return nil, err
	}
	return decodeLines(id, lines, 1)
}
