package cli

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"

	ckpt "github.com/ckpt-dev/ckpt"
	"github.com/ckpt-dev/ckpt/filestore"
	"github.com/ckpt-dev/ckpt/internal/cmdutil"
	"github.com/ckpt-dev/ckpt/internal/gitignore"
	"github.com/ckpt-dev/ckpt/internal/httpapi"
	"github.com/spf13/cobra"
)

// InitOptions are the inputs of `ckpt init`.
type InitOptions struct {
	IO          cmdutil.IOStreams
	Dir         string // the .ckpt directory to create, absolute
	BackupEvery int
	BackupKeep  int
	// GitIgnore adds the store to the .gitignore of the git repository it
	// is in (also for a store that exists already); without it init only
	// says when the store is in a repository that does not ignore it.
	GitIgnore bool
}

func newInitCmd(f *cmdutil.Factory) *cobra.Command {
	o := &InitOptions{IO: f.Env.IOStreams}
	cmd := &cobra.Command{
		Use:   "init",
		Short: "Create a .ckpt/ store here (or at --store)",
		Long: `Create an empty store: a .ckpt/ directory in the working directory, or the
directory given by --store or CKPT_STORE. Every ckpt command below this
directory then finds it, like git finds .git/.

Every --backup-every revisions a checkpoint's state is also saved as a
backup, and the newest --backup-keep backups are kept.

In a git repository, init says when the repository's .gitignore does not
ignore the store (a store holds agents' working notes, usually not meant for
commits); --gitignore adds the line for it (/.ckpt/), and init never changes
.gitignore otherwise.`,
		Example: `  ckpt init
  ckpt init --gitignore
  ckpt init --store /var/lib/agents/.ckpt --backup-every 10 --backup-keep 20`,
		Args: cmdutil.ExactArgs(0, "no arguments"),
	}
	cmd.RunE = f.RunE(func(ctx context.Context, args []string) error {
		if err := f.CheckLocation(); err != nil {
			return err
		}
		o.Dir = f.Location()
		if isPGURL(o.Dir) {
			return cmdutil.Usagef("a PostgreSQL store needs no init: ckpt migrate creates its schema (and every command does on first use)")
		}
		if httpapi.IsURL(o.Dir) {
			return cmdutil.Usagef("a server store needs no init here: the server's machine has the store (ckpt init there, or ckpt serve --pg); this machine uses it with CKPT_STORE and CKPT_TOKEN as it is")
		}
		if o.Dir == "" {
			o.Dir = filepath.Join(f.Env.WorkDir, filestore.StoreDirName)
		}
		return runInit(o)
	})
	cmd.Flags().IntVar(&o.BackupEvery, "backup-every", 0, fmt.Sprintf("write a state backup every `K` revisions (default %d)", filestore.DefaultBackupEvery))
	cmd.Flags().BoolVar(&o.GitIgnore, "gitignore", false, "add the store to the .gitignore of the git repository it is in")
	cmd.Flags().IntVar(&o.BackupKeep, "backup-keep", 0, fmt.Sprintf("keep the newest `N` backups of each checkpoint (default %d)", filestore.DefaultBackupKeep))
	return cmd
}

func runInit(o *InitOptions) error {
	if o.BackupEvery < 0 || o.BackupKeep < 0 {
		return fmt.Errorf("%w: --backup-every %d, --backup-keep %d: give positive numbers (or leave them out for %d and %d)",
			ckpt.ErrInvalid, o.BackupEvery, o.BackupKeep, filestore.DefaultBackupEvery, filestore.DefaultBackupKeep)
	}
	st, err := filestore.Init(o.Dir, filestore.Options{BackupEvery: o.BackupEvery, BackupKeep: o.BackupKeep})
	if errors.Is(err, ckpt.ErrExists) {
		if o.GitIgnore {
			return initGitIgnore(o) // the store is there; only .gitignore is asked for
		}
		return storeExistsError{o.Dir}
	}
	if err != nil {
		return err
	}
	if err := st.Close(); err != nil {
		return err
	}
	if _, err = fmt.Fprintf(o.IO.Out, "initialised an empty ckpt store in %s\n", o.Dir); err != nil {
		return err
	}
	return initGitIgnore(o)
}

// initGitIgnore adds the store to its git repository's .gitignore when
// asked (--gitignore), and otherwise says when the repository does not
// ignore it; outside a repository, or when it is ignored, it says nothing
// (unless asked).
func initGitIgnore(o *InitOptions) error {
	r, err := gitignore.Ensure(o.Dir, o.GitIgnore)
	switch {
	case err != nil:
		return err
	case r.State == gitignore.NoRepo && r.Root == "" && o.GitIgnore:
		return fmt.Errorf("%w: --gitignore: %s is not inside a git repository", ckpt.ErrInvalid, o.Dir)
	case r.State == gitignore.AlreadyIgnored && o.GitIgnore:
		_, err = fmt.Fprintf(o.IO.Out, "%s already ignores %s\n", r.File, r.Line)
	case r.State == gitignore.Added:
		_, err = fmt.Fprintf(o.IO.Out, "added %s to %s\n", r.Line, r.File)
	case r.State == gitignore.NotIgnored:
		_, err = fmt.Fprintf(o.IO.Out, "note: the store is inside the git repository %s, whose .gitignore does not ignore it: run ckpt init --gitignore to add %s (or commit it on purpose)\n", r.Root, r.Line)
	}
	return err
}

// storeExistsError is init's refusal to initialise a store twice (exit 5).
type storeExistsError struct{ dir string }

func (e storeExistsError) Error() string {
	return fmt.Sprintf("a ckpt store already exists at %s: nothing to do (ckpt ls lists its checkpoints; ckpt init --store DIR creates another)", e.dir)
}

func (e storeExistsError) Unwrap() error { return ckpt.ErrExists }
