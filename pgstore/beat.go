package pgstore

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/ckpt-dev/ckpt"
	"github.com/ckpt-dev/ckpt/internal/wire"
)

// Beat implements ckpt.Store. A beat is liveness, not history: it commits
// without waiting for the WAL flush (synchronous_commit off, so a crash
// may lose the last beats, never anything else) and never moves the beat
// back (ckpt.NextBeat of the beat it read), except off a time further
// ahead of the database's clock than the skew bound, which a later beat
// replaces.
//
// It reads the row without a lock and then writes it only if it is still
// as read (a compare-and-swap, tried again when another beat came
// between), in one round trip: no transaction stays open while the
// client computes the next presence. An open transaction holds back the
// change feed (it delivers only below the oldest transaction in flight),
// so a beat that held its row lock across a round trip delayed every
// reader of the feed by the beating client's own latency.
func (s *Store) Beat(ctx context.Context, id string, sig ckpt.Signal) error {
	if err := begin(ctx, id); err != nil {
		return err
	}
	_, err := retry(ctx, func() (struct{}, error) {
		return struct{}{}, s.withConn(ctx, func(conn *pgxpool.Conn) error {
			for {
				done, err := s.beatOnce(ctx, conn, id, sig)
				if done || err != nil {
					return err
				}
				if err := ctx.Err(); err != nil {
					return err
				}
			}
		})
	})
	return err
}

// beatOnce reads id's beat and presence and writes the next ones if the
// row is still as read; done is false when another beat came between.
func (s *Store) beatOnce(ctx context.Context, conn *pgxpool.Conn, id string, sig ckpt.Signal) (done bool, err error) {
	var (
		dbNow    time.Time
		last     *time.Time
		presence *string
	)
	err = conn.QueryRow(ctx, "SELECT clock_timestamp(), beat, presence::text FROM ckpt_checkpoints WHERE id = $1", id).Scan(&dbNow, &last, &presence)
	if errors.Is(err, pgx.ErrNoRows) {
		return false, notFound(id)
	}
	if err != nil {
		return false, err
	}
	var lastBeat time.Time
	if last != nil {
		lastBeat = last.UTC()
	}
	var was ckpt.Presence
	if presence != nil {
		p, err := decodePresence([]byte(*presence))
		if err != nil {
			return false, err
		}
		if p != nil {
			was = *p
		}
	}
	beat := ckpt.NextBeat(lastBeat, sig.At, s.clock(dbNow))
	next := was.ApplySignal(sig, beat)
	var pj []byte
	if !next.IsZero() {
		if pj, err = wire.Marshal(next); err != nil {
			return false, fmt.Errorf("pgstore: encoding presence: %w", err)
		}
	}
	b := &pgx.Batch{}
	b.Queue("BEGIN")
	b.Queue("SET LOCAL synchronous_commit = off")
	b.Queue(`UPDATE ckpt_checkpoints SET beat = $2, presence = $3
		WHERE id = $1 AND beat IS NOT DISTINCT FROM $4 AND presence::text IS NOT DISTINCT FROM $5::text`,
		id, beat, pj, last, presence)
	b.Queue("COMMIT")
	br := conn.SendBatch(ctx, b)
	_, err = br.Exec()
	if err == nil {
		_, err = br.Exec()
	}
	var tag pgconn.CommandTag
	if err == nil {
		tag, err = br.Exec()
	}
	if cerr := br.Close(); err == nil {
		err = cerr
	}
	return err == nil && tag.RowsAffected() == 1, err
}

// Delete implements ckpt.Store: the state row, the history and the keys of
// an archived checkpoint go in one transaction, which records a deleted
// change in the feed.
func (s *Store) Delete(ctx context.Context, id string) error {
	if err := begin(ctx, id); err != nil {
		return err
	}
	_, err := retry(ctx, func() (struct{}, error) {
		return struct{}{}, s.withConn(ctx, func(conn *pgxpool.Conn) error { return s.deleteOnce(ctx, conn, id) })
	})
	if err == nil {
		s.wake() // with the connection back in the pool, for the notifier to take
	}
	return err
}

func (s *Store) deleteOnce(ctx context.Context, conn *pgxpool.Conn, id string) error {
	b := &pgx.Batch{}
	b.Queue("BEGIN")
	b.Queue(appendLockSQL, []string{id}) // its change comes after every append's
	b.Queue("SELECT clock_timestamp(), archived FROM ckpt_checkpoints WHERE id = $1 FOR UPDATE", id)
	br := conn.SendBatch(ctx, b)
	var (
		dbNow    time.Time
		archived bool
	)
	_, err := br.Exec()
	if err == nil {
		_, err = br.Exec()
	}
	if err == nil {
		err = br.QueryRow().Scan(&dbNow, &archived)
	}
	if cerr := br.Close(); err == nil {
		err = cerr
	}
	if errors.Is(err, pgx.ErrNoRows) {
		return notFound(id)
	}
	if err != nil {
		return err
	}
	if !archived {
		return fmt.Errorf("%w: %s is not archived; only archived checkpoints can be deleted (ckpt archive %s first)", ckpt.ErrInvalid, id, id)
	}
	b = &pgx.Batch{}
	b.Queue("DELETE FROM ckpt_checkpoints WHERE id = $1", id)
	b.Queue("DELETE FROM ckpt_events WHERE id = $1", id)
	b.Queue("DELETE FROM ckpt_keys WHERE id = $1", id)
	b.Queue("INSERT INTO ckpt_changes (kind, id, rev, type, at) VALUES ($1, $2, 0, '', $3)", string(ckpt.ChangeDeleted), id, s.clock(dbNow))
	b.Queue("COMMIT")
	if err := conn.SendBatch(ctx, b).Close(); err != nil {
		return err
	}
	s.cache.forget(id, false)
	return nil
}
