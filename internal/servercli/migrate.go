package servercli

import (
	"context"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/ckpt-dev/ckpt/internal/cmdutil"
	"github.com/ckpt-dev/ckpt/internal/pgcli"
	"github.com/ckpt-dev/ckpt/pgstore"
)

// MigrateOptions are the inputs of `ckpt migrate`.
type MigrateOptions struct {
	IO   cmdutil.IOStreams
	DSN  string // the PostgreSQL store, postgres://…
	JSON bool
}

// migrateJSON is the --json form of a migration's result.
type migrateJSON struct {
	From    int      `json:"from"`
	To      int      `json:"to"`
	Applied []string `json:"applied"`
}

func newMigrateCmd(f *cmdutil.Factory) *cobra.Command {
	o := &MigrateOptions{IO: f.Env.IOStreams}
	cmd := &cobra.Command{
		Use:   "migrate",
		Short: "Create or upgrade a PostgreSQL store's schema",
		Long: `Bring the schema of the PostgreSQL database named by --store or CKPT_STORE
(a postgres:// URL) up to the version this ckpt knows, applying the missing
migrations in one transaction under an advisory lock, so that many
processes starting together apply each exactly once. Every command that
opens the database does the same; migrate lets an operator do it first.

A database whose schema is newer than this ckpt knows is refused: upgrade
ckpt instead.`,
		Example: `  ckpt migrate --store postgres://ckpt@db.internal/ckpt
  CKPT_STORE=postgres://ckpt@db.internal/ckpt ckpt migrate --json`,
		Args: cmdutil.ExactArgs(0, "no arguments"),
	}
	cmd.RunE = f.RunE(func(ctx context.Context, args []string) error {
		o.DSN = f.Location()
		return runMigrate(ctx, o)
	})
	cmd.Flags().BoolVar(&o.JSON, "json", false, "print the result as JSON")
	return cmd
}

func runMigrate(ctx context.Context, o *MigrateOptions) error {
	if !pgstore.IsURL(o.DSN) {
		return cmdutil.Usagef("ckpt migrate works on a PostgreSQL store: pass --store postgres://USER@HOST/DB or set %s (a local .ckpt store needs no migration)", cmdutil.EnvStore)
	}
	ctx, cancel := context.WithTimeout(ctx, pgcli.ConnectTimeout)
	defer cancel()
	r, err := pgstore.Migrate(ctx, o.DSN)
	if err != nil {
		return err
	}
	if o.JSON {
		applied := r.Applied
		if applied == nil {
			applied = []string{}
		}
		return cmdutil.WriteJSON(o.IO.Out, migrateJSON{From: r.From, To: r.To, Applied: applied})
	}
	if len(r.Applied) == 0 {
		_, err = fmt.Fprintf(o.IO.Out, "schema is up to date (version %d)\n", r.To)
		return err
	}
	_, err = fmt.Fprintf(o.IO.Out, "schema migrated from version %d to %d (applied %s)\n", r.From, r.To, strings.Join(r.Applied, ", "))
	return err
}
