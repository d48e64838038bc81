package pgstore

import (
	"context"
	"embed"
	"fmt"
	"io/fs"
	"path"
	"sort"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

//go:embed migrations/*.sql
var migrationFiles embed.FS

// migration is one numbered schema change, migrations/NNNN_name.sql.
type migration struct {
	version int
	name    string
	sql     string
}

// migrations returns the embedded migrations in order. Their numbers run
// densely from 1: a gap is a build mistake and panics.
func migrations() []migration {
	entries, err := fs.ReadDir(migrationFiles, "migrations")
	if err != nil {
		panic(err)
	}
	var out []migration
	for _, e := range entries {
		num, name, ok := strings.Cut(strings.TrimSuffix(e.Name(), ".sql"), "_")
		v, err := strconv.Atoi(num)
		if !ok || err != nil {
			panic("pgstore: migration file " + e.Name() + " is not NNNN_name.sql")
		}
		b, err := migrationFiles.ReadFile(path.Join("migrations", e.Name()))
		if err != nil {
			panic(err)
		}
		out = append(out, migration{version: v, name: name, sql: string(b)})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].version < out[j].version })
	for i, m := range out {
		if m.version != i+1 {
			panic(fmt.Sprintf("pgstore: migration %d follows %d", m.version, i))
		}
	}
	return out
}

// SchemaVersion is the newest schema this build knows.
func SchemaVersion() int { return len(migrations()) }

// migrateLock is the advisory lock key migrations run under ('ckpt').
const migrateLock = 0x636b7074

// MigrateResult says what Migrate found and did.
type MigrateResult struct {
	From, To int      // schema versions before and after
	Applied  []string // the migrations applied, "NNNN_name"
}

// migrate brings the database's schema to SchemaVersion, applying the
// missing migrations in one transaction under an advisory lock, so that
// processes starting together apply each exactly once. A schema newer than
// this build knows is refused: this build would misread it.
func migrate(ctx context.Context, pool *pgxpool.Pool) (MigrateResult, error) {
	all := migrations()
	have, err := schemaVersion(ctx, pool)
	if err != nil {
		return MigrateResult{}, err
	}
	if have == len(all) {
		return MigrateResult{From: have, To: have}, nil
	}
	if have > len(all) {
		return MigrateResult{}, newerSchema(have, len(all))
	}
	res := MigrateResult{}
	err = pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, "SELECT pg_advisory_xact_lock($1)", int64(migrateLock)); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `CREATE TABLE IF NOT EXISTS ckpt_schema (
			version    integer PRIMARY KEY,
			name       text NOT NULL,
			applied_at timestamptz NOT NULL DEFAULT now())`); err != nil {
			return err
		}
		// Again under the lock: another process may have migrated meanwhile.
		if err := tx.QueryRow(ctx, "SELECT coalesce(max(version), 0) FROM ckpt_schema").Scan(&have); err != nil {
			return err
		}
		if have > len(all) {
			return newerSchema(have, len(all))
		}
		res.From = have
		for _, m := range all[have:] {
			if _, err := tx.Exec(ctx, m.sql); err != nil {
				return fmt.Errorf("pgstore: migration %04d_%s: %w", m.version, m.name, err)
			}
			if _, err := tx.Exec(ctx, "INSERT INTO ckpt_schema (version, name) VALUES ($1, $2)", m.version, m.name); err != nil {
				return err
			}
			res.Applied = append(res.Applied, fmt.Sprintf("%04d_%s", m.version, m.name))
		}
		res.To = len(all)
		return nil
	})
	if err != nil {
		return MigrateResult{}, classify(err)
	}
	return res, nil
}

// schemaVersion reads the database's schema version, 0 for none.
func schemaVersion(ctx context.Context, pool *pgxpool.Pool) (int, error) {
	var exists bool
	if err := pool.QueryRow(ctx, "SELECT to_regclass('ckpt_schema') IS NOT NULL").Scan(&exists); err != nil {
		return 0, classify(err)
	}
	if !exists {
		return 0, nil
	}
	var v int
	if err := pool.QueryRow(ctx, "SELECT coalesce(max(version), 0) FROM ckpt_schema").Scan(&v); err != nil {
		return 0, classify(err)
	}
	return v, nil
}

// SchemaError is the refusal of a database whose ckpt schema is newer than
// this build knows.
type SchemaError struct{ Have, Know int }

func (e *SchemaError) Error() string {
	return fmt.Sprintf("pgstore: the database's ckpt schema is version %d, newer than this ckpt knows (%d): upgrade ckpt to use this database", e.Have, e.Know)
}

func newerSchema(have, know int) error { return &SchemaError{Have: have, Know: know} }
