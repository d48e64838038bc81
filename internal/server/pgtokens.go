package server

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/ckpt-dev/ckpt"
)

// PGTokens is a TokenStore in a PostgreSQL database, the one a server's
// store is in (table ckpt_tokens): every replica over the database sees a
// token created through any of them at its next request, and one revoked
// through any of them as soon as the revocation's notification reaches it
// (milliseconds; through this PGTokens, at once), with no shared file.
// Only the SHA-256 of a secret is kept, as in FileTokens.
//
// Lookup keeps the tokens it found (see pgTokenCache), so a request does
// not cost a query: a Revoke notifies every PGTokens over the database
// (NOTIFY ckpt_tokens), each of which listens on a connection of its own
// and forgets the token. While that connection is down, or not proved
// alive by a probe in the last PGTokenTrust (a partition), nothing is
// kept, and every Lookup asks the database, as it would without the cache.
type PGTokens struct {
	pool  *pgxpool.Pool
	cache pgTokenCache
	stop  context.CancelFunc
	done  chan struct{}
	// listening starts the listener at the first Lookup: a ckpt token
	// command, which only adds, lists or revokes, never opens it.
	listening sync.Once
	lctx      context.Context
}

const pgTokensTable = `CREATE TABLE IF NOT EXISTS ckpt_tokens (
	id          text PRIMARY KEY,
	hash        text NOT NULL,
	scope       text NOT NULL,
	prefix      text NOT NULL DEFAULT '',
	agent       text NOT NULL DEFAULT '',
	note        text NOT NULL DEFAULT '',
	read_prefix boolean NOT NULL DEFAULT false,
	created_at  timestamptz NOT NULL,
	expires_at  timestamptz
)`

// OpenPGTokens connects to the database dsn names (a multi-host DSN with
// target_session_attrs=read-write follows a failover) with a small pool of
// its own, and creates the token table if it is not there.
func OpenPGTokens(ctx context.Context, dsn string) (*PGTokens, error) {
	cfg, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		return nil, fmt.Errorf("%w: PostgreSQL connection string: %v", ckpt.ErrInvalid, err)
	}
	cfg.MaxConns = 4
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, pgTokenError(err)
	}
	if _, err := pool.Exec(ctx, pgTokensTable); err != nil {
		// Two replicas creating the table at once: one wins, the other
		// sees a duplicate in the catalog, and the table is there.
		var pe *pgconn.PgError
		if !errors.As(err, &pe) || pe.Code != "23505" && pe.Code != "42P07" {
			pool.Close()
			return nil, pgTokenError(err)
		}
	}
	lctx, stop := context.WithCancel(context.Background())
	return &PGTokens{pool: pool, stop: stop, done: make(chan struct{}), lctx: lctx}, nil
}

// Close stops listening and releases the connections.
func (p *PGTokens) Close() {
	p.stop()
	p.listening.Do(func() { close(p.done) }) // never started: nothing to wait for
	<-p.done
	p.pool.Close()
}

// Where says where the tokens are, for messages.
func (p *PGTokens) Where() string { return "the database's ckpt_tokens table" }

// pgTokenError wraps a database failure as unavailable (the server does
// not repeat it to clients: see publicError).
func pgTokenError(err error) error {
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	return fmt.Errorf("%w: token store: %v", ckpt.ErrUnavailable, err)
}

// Add implements TokenStore.
func (p *PGTokens) Add(ctx context.Context, t Token) error {
	var exp *time.Time
	if !t.ExpiresAt.IsZero() {
		exp = &t.ExpiresAt
	}
	tag, err := p.pool.Exec(ctx, `INSERT INTO ckpt_tokens (id, hash, scope, prefix, agent, note, read_prefix, created_at, expires_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) ON CONFLICT (id) DO NOTHING`,
		t.ID, t.Hash, string(t.Scope), t.Prefix, t.Agent, t.Note, t.ReadPrefix, t.CreatedAt, exp)
	if err != nil {
		return pgTokenError(err)
	}
	if tag.RowsAffected() == 0 {
		return fmt.Errorf("%w: token %s", ckpt.ErrExists, t.ID)
	}
	return nil
}

const pgTokenColumns = `id, hash, scope, prefix, agent, note, read_prefix, created_at, expires_at`

func scanToken(row pgx.Row) (Token, error) {
	var t Token
	var scope string
	var exp *time.Time
	if err := row.Scan(&t.ID, &t.Hash, &scope, &t.Prefix, &t.Agent, &t.Note, &t.ReadPrefix, &t.CreatedAt, &exp); err != nil {
		return Token{}, err
	}
	t.Scope, t.CreatedAt = Scope(scope), t.CreatedAt.UTC()
	if exp != nil {
		t.ExpiresAt = exp.UTC()
	}
	return t, nil
}

// Lookup implements TokenStore: from what it keeps when it can (see
// PGTokens), else from the database.
func (p *PGTokens) Lookup(ctx context.Context, id string) (Token, error) {
	p.listening.Do(func() { go p.listen(p.lctx) })
	if t, ok := p.cache.get(id); ok {
		return t, nil
	}
	gen := p.cache.generation()
	t, err := scanToken(p.pool.QueryRow(ctx, `SELECT `+pgTokenColumns+` FROM ckpt_tokens WHERE id = $1`, id))
	if errors.Is(err, pgx.ErrNoRows) {
		return Token{}, fmt.Errorf("%w: token %s", ckpt.ErrNotFound, id)
	}
	if err != nil {
		return Token{}, pgTokenError(err)
	}
	p.cache.put(t, gen)
	return t, nil
}

// List implements TokenStore.
func (p *PGTokens) List(ctx context.Context) ([]Token, error) {
	rows, err := p.pool.Query(ctx, `SELECT `+pgTokenColumns+` FROM ckpt_tokens ORDER BY created_at, id`)
	if err != nil {
		return nil, pgTokenError(err)
	}
	defer rows.Close()
	var out []Token
	for rows.Next() {
		t, err := scanToken(rows)
		if err != nil {
			return nil, pgTokenError(err)
		}
		out = append(out, t)
	}
	if err := rows.Err(); err != nil {
		return nil, pgTokenError(err)
	}
	return out, nil
}

// Revoke implements TokenStore. The deletion and its notification to
// every PGTokens over the database commit together.
func (p *PGTokens) Revoke(ctx context.Context, id string) error {
	var n int64
	err := pgx.BeginFunc(ctx, p.pool, func(tx pgx.Tx) error {
		tag, err := tx.Exec(ctx, `DELETE FROM ckpt_tokens WHERE id = $1`, id)
		if n = tag.RowsAffected(); err != nil || n == 0 {
			return err
		}
		_, err = tx.Exec(ctx, `SELECT pg_notify('`+pgTokensChannel+`', $1)`, id)
		return err
	})
	p.cache.forget(id)
	if err != nil {
		return pgTokenError(err)
	}
	if n == 0 {
		return fmt.Errorf("%w: token %s (ckpt token ls lists them)", ckpt.ErrNotFound, id)
	}
	return nil
}
