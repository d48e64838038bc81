package cli

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"regexp"
	"time"

	"github.com/spf13/cobra"

	ckpt "github.com/ckpt-dev/ckpt"
	"github.com/ckpt-dev/ckpt/filestore"
	"github.com/ckpt-dev/ckpt/internal/gitignore"
	"github.com/ckpt-dev/ckpt/remote"
)

// Store location: --store DIR, else $CKPT_STORE, else the nearest .ckpt/
// walking up from the working directory (filestore.Find). DIR is the .ckpt
// directory itself, or a directory holding one; a relative DIR is taken
// from the working directory.

// givenStoreDir returns the store directory named by --store or CKPT_STORE,
// made absolute, or "" when neither is set. A server URL (https://…) is
// returned as it is (see openRemote).
func (f *factory) givenStoreDir() string {
	dir := f.storeFlag
	if dir == "" {
		dir = f.env.getenv(EnvStore)
	}
	if dir != "" && !filepath.IsAbs(dir) && !remote.IsURL(dir) && !isPGURL(dir) {
		dir = filepath.Join(f.env.WorkDir, dir)
	}
	return dir
}

// urlScheme matches a value that is written as a URL (SCHEME://…), which
// is never meant as a relative directory.
var urlScheme = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9+.-]*://`)

// checkStoreURL refuses a --store or CKPT_STORE written as a URL of a kind
// ckpt does not speak (ftp://, htps://…), which would otherwise be taken
// for a relative directory named "ftp:".
func (f *factory) checkStoreURL() error {
	v := f.storeFlag
	if v == "" {
		v = f.env.getenv(EnvStore)
	}
	if urlScheme.MatchString(v) && !remote.IsURL(v) && !isPGURL(v) {
		return fmt.Errorf("%w: the store %q is a URL ckpt does not speak: give a directory, a postgres:// URL or a server's https:// URL (--store, CKPT_STORE)", ckpt.ErrInvalid, v)
	}
	return nil
}

// openStore opens the store commands use, with the seed-format mirrors of
// its mirror list (see mirrorList): every kind of store mirrors.
func (f *factory) openStore() (ckpt.Store, error) {
	st, err := f.openRawStore()
	if err != nil {
		return nil, err
	}
	return f.withMirrors(st), nil
}

// openRawStore opens the store without its mirrors.
func (f *factory) openRawStore() (ckpt.Store, error) {
	if f.store != nil {
		if c, ok := f.store.(clockSetter); ok {
			c.SetClock(f.now)
		}
		return f.store, nil
	}
	switch u := f.givenStoreDir(); {
	case remote.IsURL(u):
		return f.openRemote(u)
	case isPGURL(u):
		return f.openPGStore(u)
	}
	return f.openFileStore()
}

// clockSetter is a store whose clock can be pinned (CKPT_NOW): a local
// store's clock is the command's.
type clockSetter interface{ SetClock(now func() time.Time) }

// openFileStore opens the local .ckpt store, found as described above.
func (f *factory) openFileStore() (*filestore.Store, error) {
	if err := f.checkStoreURL(); err != nil {
		return nil, err
	}
	dir := f.givenStoreDir()
	if remote.IsURL(dir) {
		return nil, fmt.Errorf("%w: the store is the server %s; this command works on a local store directory: run it where the server's store is (or pass --store DIR)", ckpt.ErrInvalid, dir)
	}
	if isPGURL(dir) {
		return nil, fmt.Errorf("%w: the store is a PostgreSQL database; this command works on a local store directory (pass --store DIR)", ckpt.ErrInvalid)
	}
	if dir == "" {
		found, err := filestore.Find(f.env.WorkDir)
		if err != nil {
			return nil, err
		}
		dir = found
	}
	st, err := filestore.Open(dir)
	if errors.Is(err, ckpt.ErrNoStore) {
		// --store names a project directory, the one holding .ckpt/,
		// rather than the store itself: use its store.
		if inner, ierr := filestore.Open(filepath.Join(dir, filestore.StoreDirName)); ierr == nil {
			st, err = inner, nil
		}
	}
	if err != nil {
		return nil, err
	}
	st.SetClock(f.now)
	return st, nil
}

// InitOptions are the inputs of `ckpt init`.
type InitOptions struct {
	IO          IOStreams
	Dir         string // the .ckpt directory to create, absolute
	BackupEvery int
	BackupKeep  int
	// GitIgnore adds the store to the .gitignore of the git repository it
	// is in (also for a store that exists already); without it init only
	// says when the store is in a repository that does not ignore it.
	GitIgnore bool
}

func newInitCmd(f *factory) *cobra.Command {
	o := &InitOptions{IO: f.env.IOStreams}
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
		Args: exactArgs(0, "no arguments"),
	}
	cmd.RunE = f.runE(func(ctx context.Context, args []string) error {
		if err := f.checkStoreURL(); err != nil {
			return err
		}
		o.Dir = f.givenStoreDir()
		if isPGURL(o.Dir) {
			return usagef("a PostgreSQL store needs no init: ckpt migrate creates its schema (and every command does on first use)")
		}
		if remote.IsURL(o.Dir) {
			return usagef("a server store needs no init here: the server's machine has the store (ckpt init there, or ckpt serve --pg); this machine uses it with CKPT_STORE and CKPT_TOKEN as it is")
		}
		if o.Dir == "" {
			o.Dir = filepath.Join(f.env.WorkDir, filestore.StoreDirName)
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
