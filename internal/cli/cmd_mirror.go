package cli

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	ckpt "github.com/ckpt-dev/ckpt"
	"github.com/ckpt-dev/ckpt/internal/cmdutil"
	"github.com/ckpt-dev/ckpt/internal/mirror"
	"github.com/ckpt-dev/ckpt/internal/render"
)

// MirrorOptions are the inputs of the `ckpt mirror` commands.
type MirrorOptions struct {
	IO  cmdutil.IOStreams
	Now func() time.Time
	// OpenStore opens the store, without mirrors, and says where its
	// mirror list is.
	OpenStore func() (ckpt.Store, mirror.List, error)
	WorkDir   string

	Format string
	Root   string // --root, relative to WorkDir or absolute; default WorkDir
	Prefix string
	ID     string
	IDs    []string // sync and check: only these checkpoints
	JSON   bool
	Poll   time.Duration // follow: how often to list a store without a feed
}

func newMirrorCmd(f *cmdutil.Factory) *cobra.Command {
	o := &MirrorOptions{IO: f.Env.IOStreams, WorkDir: f.Env.WorkDir}
	o.Now = func() time.Time { return f.Now() }
	o.OpenStore = func() (ckpt.Store, mirror.List, error) {
		st, err := f.OpenRawStore()
		if err != nil {
			return nil, mirror.List{}, err
		}
		return st, mirrorList(f, st), nil
	}
	cmd := &cobra.Command{
		Use:   "mirror",
		Short: "Keep seed-format files (metadata.json, agent_checkpoints/…) in step with checkpoints",
		Long: `A mirror rewrites a seed system's own file every time a checkpoint changes,
so the orchestrators, scripts and people that read those files keep working
while agents record their work with ckpt. Mirrors are listed in the store's
mirrors.json; every write (CLI verbs, hooks, MCP, heartbeats) writes the
mirrors of the checkpoint it changed after the change is durable. A mirror
that cannot be written prints "ckpt: warning: mirror …" and never fails the
write; ckpt mirror check finds mirrors that do not match, and ckpt mirror sync
rewrites them.

Formats: ` + strings.Join(mirror.Formats, ", ") + `. See docs/formats.md.

The list is the store's mirrors.json: relative roots are taken from the
project directory (the store's parent) and must stay inside it; a root
elsewhere is written as an absolute path.`,
	}
	cmd.AddCommand(newMirrorAddCmd(f, o), newMirrorLsCmd(f, o), newMirrorRmCmd(f, o), newMirrorSyncCmd(f, o), newMirrorCheckCmd(f, o), newMirrorFollowCmd(f, o))
	return cmd
}

func addMirrorSelectFlags(cmd *cobra.Command, o *MirrorOptions) {
	fl := cmd.Flags()
	fl.StringVar(&o.Root, "root", "", "the `DIR` the seed system's files live under (default: the working directory)")
	fl.StringVar(&o.Prefix, "prefix", "", "mirror only checkpoints whose ID starts with `P` (default: every checkpoint)")
	fl.StringVar(&o.ID, "id", "", "mirror only checkpoint `ID`")
	cmd.MarkFlagsMutuallyExclusive("prefix", "id")
}

func newMirrorAddCmd(f *cmdutil.Factory, o *MirrorOptions) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "add FORMAT",
		Short: "Mirror checkpoints in a seed format from now on",
		Long: `Add a mirror: from now on every change to a selected checkpoint also rewrites
its file in FORMAT under --root, atomically. The selected checkpoints that
exist already are written at once.

Where each format writes, under the root:
  superpowers        conductor/tracks/<track-id>/metadata.json (under .metadata.lock)
  ccc                .ccc-progress.md
  agent-checkpoints  agent_checkpoints/<agent>.json, backups/ (last 10), archives
  sitebuilder        progress/checkpoints/<agent>-<task>.json, progress/STATUS.md,
                     messages/outbox-<agent>.md
  plan               plans/<id>/plan.md and plans/<id>/.checkpoint/`,
		Example: `  ckpt mirror add superpowers --id configurable-models_20260706
  ckpt mirror add agent-checkpoints --prefix kai-7/ --root feature-updates/KAI-7
  ckpt mirror add sitebuilder --root docs/agentic-orchestration`,
		Args: cmdutil.ExactArgs(1, "one FORMAT"),
	}
	cmd.RunE = f.RunE(func(ctx context.Context, args []string) error {
		o.Format = args[0]
		return runMirrorAdd(ctx, o)
	})
	addMirrorSelectFlags(cmd, o)
	return cmd
}

func newMirrorLsCmd(f *cmdutil.Factory, o *MirrorOptions) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "ls",
		Short: "List the mirrors",
		Args:  cmdutil.ExactArgs(0, "no arguments"),
	}
	cmd.RunE = f.RunE(func(ctx context.Context, args []string) error { return runMirrorLs(o) })
	cmd.Flags().BoolVar(&o.JSON, "json", false, "print mirrors.json's entries as a JSON array")
	return cmd
}

func newMirrorRmCmd(f *cmdutil.Factory, o *MirrorOptions) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "rm FORMAT",
		Short: "Stop a mirror (its files are left as they are)",
		Long: `Remove the mirror of FORMAT with the given --root and selector (as ckpt
mirror ls shows them; the defaults are the working directory and every
checkpoint). Files already written are left alone. Exit 3 when no mirror
matches.`,
		Example: `  ckpt mirror rm superpowers --id configurable-models_20260706`,
		Args:    cmdutil.ExactArgs(1, "one FORMAT"),
	}
	cmd.RunE = f.RunE(func(ctx context.Context, args []string) error {
		o.Format = args[0]
		return runMirrorRm(o)
	})
	addMirrorSelectFlags(cmd, o)
	return cmd
}

func newMirrorSyncCmd(f *cmdutil.Factory, o *MirrorOptions) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "sync [ID...]",
		Short: "Rewrite the mirrors of every checkpoint (or those named) now",
		Long: `Write every mirror of the selected checkpoints now: the repair for what ckpt
mirror check reports. Exit 1 when a mirror could not be written.`,
		Args: cobra.ArbitraryArgs,
	}
	cmd.RunE = f.RunE(func(ctx context.Context, args []string) error {
		o.IDs = args
		return runMirrorSync(ctx, o)
	})
	return cmd
}

func newMirrorCheckCmd(f *cmdutil.Factory, o *MirrorOptions) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "check [ID...]",
		Short: "Report mirror files that do not match their checkpoint",
		Long: `Read every mirror file of the selected checkpoints, and report each one that
is missing, unreadable, or says something else than the checkpoint (status,
steps, progress, cycles, acceptance, title): docs/design.md's SHOULD 9. It
writes nothing. Each problem names its repair: ckpt mirror sync ID, or for a
plan that is its own source of truth, ckpt plan sync PATH. Exit 7 when any
mirror does not match.`,
		Args: cobra.ArbitraryArgs,
	}
	cmd.RunE = f.RunE(func(ctx context.Context, args []string) error {
		o.IDs = args
		return runMirrorCheck(ctx, o)
	})
	cmd.Flags().BoolVar(&o.JSON, "json", false, `print {"checked", "problems": [{"format","root","id","path","what","repair"}]}`)
	return cmd
}

func newMirrorFollowCmd(f *cmdutil.Factory, o *MirrorOptions) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "follow",
		Short: "Keep the mirror files current with changes made anywhere, until interrupted",
		Long: `Write the mirrors of every selected checkpoint, then keep writing those of
each checkpoint that changes, whoever changes it (another process, or another
machine sharing the store), until interrupted. With a store that has a change
feed every change is followed in order; otherwise the store is listed every
--poll. Run it where the seed system reads its files.`,
		Args: cmdutil.ExactArgs(0, "no arguments"),
	}
	cmd.RunE = f.RunE(func(ctx context.Context, args []string) error {
		ctx, cancel := untilInterrupted(f, ctx)
		defer cancel()
		return runMirrorFollow(ctx, o)
	})
	cmd.Flags().DurationVar(&o.Poll, "poll", time.Second, "how often to list a store that has no change feed")
	return cmd
}

// options are the library's options, warnings on stderr.
func (o *MirrorOptions) options() mirror.Options { return mirrorOptions(o.IO.ErrOut, o.Now) }

// entry is the mirror entry the options describe (mirror.List.EntryFor).
func (o *MirrorOptions) entry(l mirror.List) (mirror.Entry, error) {
	return l.EntryFor(mirror.Spec{Format: o.Format, Root: o.Root, WorkDir: o.WorkDir, ID: o.ID, Prefix: o.Prefix, RootName: "--root"})
}

func runMirrorAdd(ctx context.Context, o *MirrorOptions) error {
	if _, err := mirror.NewFormat(o.Format); err != nil {
		return err
	}
	st, l, err := o.OpenStore()
	if err != nil {
		return err
	}
	defer st.Close()
	e, err := o.entry(l)
	if err != nil {
		return err
	}
	if err := l.CheckRoot(e, "--root"); err != nil {
		return err
	}
	if err := l.Add(e); errors.Is(err, ckpt.ErrExists) {
		return fmt.Errorf("%w (ckpt mirror ls lists the mirrors)", err)
	} else if err != nil {
		return err
	}
	written, failed, err := mirror.New(st, l, []mirror.Entry{e}, o.options()).SyncAll(ctx, nil)
	if err != nil {
		return fmt.Errorf("the mirror was added, but writing the existing checkpoints failed: %w (ckpt mirror sync retries)", err)
	}
	fmt.Fprintf(o.IO.Out, "mirroring %s under %s for %s: wrote %s\n", e.Format, l.RootDir(e), e.Selector(), render.Plural(written, "checkpoint", "checkpoints"))
	if failed > 0 {
		return fmt.Errorf("the mirror was added, but %s could not be written (see the warnings above); fix the cause and run ckpt mirror sync", render.Plural(failed, "checkpoint", "checkpoints"))
	}
	return nil
}

func runMirrorLs(o *MirrorOptions) error {
	st, l, err := o.OpenStore()
	if err != nil {
		return err
	}
	st.Close()
	cfg, err := l.Read()
	if err != nil {
		return err
	}
	if o.JSON {
		list := cfg.Mirrors
		if list == nil {
			list = []mirror.Entry{}
		}
		return cmdutil.WriteJSON(o.IO.Out, list)
	}
	if len(cfg.Mirrors) == 0 {
		_, err := fmt.Fprintln(o.IO.ErrOut, "ckpt: no mirrors (add one with ckpt mirror add FORMAT)")
		return err
	}
	tw := tabwriter.NewWriter(o.IO.Out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "FORMAT\tROOT\tSELECTS")
	for _, m := range cfg.Mirrors {
		fmt.Fprintf(tw, "%s\t%s\t%s\n", m.Format, l.RootDir(m), m.Selector())
	}
	return tw.Flush()
}

func runMirrorRm(o *MirrorOptions) error {
	if _, err := mirror.NewFormat(o.Format); err != nil {
		return err
	}
	st, l, err := o.OpenStore()
	if err != nil {
		return err
	}
	st.Close()
	e, err := o.entry(l)
	if err != nil {
		return err
	}
	if err := l.Remove(e); errors.Is(err, ckpt.ErrNotFound) {
		return fmt.Errorf("%w: see the mirrors with ckpt mirror ls and give the same --root, --prefix or --id", err)
	} else if err != nil {
		return err
	}
	_, err = fmt.Fprintf(o.IO.Out, "stopped mirroring %s under %s for %s (its files are left as they are)\n", e.Format, l.RootDir(e), e.Selector())
	return err
}

// openMirrors opens the store with its mirror list.
func (o *MirrorOptions) openMirrors() (*mirror.Store, error) {
	st, l, err := o.OpenStore()
	if err != nil {
		return nil, err
	}
	m, err := mirror.Open(st, l, o.options())
	if err != nil {
		st.Close()
		return nil, err
	}
	return m, nil
}

func runMirrorSync(ctx context.Context, o *MirrorOptions) error {
	m, err := o.openMirrors()
	if err != nil {
		return err
	}
	defer m.Close()
	if len(m.Entries()) == 0 {
		return fmt.Errorf("%w: no mirrors to write: add one with ckpt mirror add FORMAT", ckpt.ErrNotFound)
	}
	written, failed, err := m.SyncAll(ctx, o.IDs)
	if err != nil {
		return err
	}
	fmt.Fprintf(o.IO.Out, "wrote the mirrors of %s\n", render.Plural(written, "checkpoint", "checkpoints"))
	if failed > 0 {
		return fmt.Errorf("the mirrors of %s could not be written (see the warnings above): fix the cause and run ckpt mirror sync again", render.Plural(failed, "checkpoint", "checkpoints"))
	}
	return nil
}

func runMirrorFollow(ctx context.Context, o *MirrorOptions) error {
	m, err := o.openMirrors()
	if err != nil {
		return err
	}
	defer m.Close()
	if len(m.Entries()) == 0 {
		return fmt.Errorf("%w: no mirrors to follow: add one with ckpt mirror add FORMAT", ckpt.ErrNotFound)
	}
	fmt.Fprintf(o.IO.ErrOut, "ckpt: following %s (interrupt to stop)\n", render.Plural(len(m.Entries()), "mirror", "mirrors"))
	return m.Follow(ctx, mirror.FollowOptions{Poll: o.Poll, Written: func(id string) {
		fmt.Fprintf(o.IO.Out, "wrote the mirrors of %s\n", id)
	}})
}

// mirrorMismatchError is check's finding: exit 7, as for check's errors.
type mirrorMismatchError struct{ n int }

func (e mirrorMismatchError) Error() string {
	return fmt.Sprintf("%s not match the state: run the repair each names", render.Plural(e.n, "mirror does", "mirrors do"))
}

func (e mirrorMismatchError) Unwrap() error { return ckpt.ErrCorrupt }

func runMirrorCheck(ctx context.Context, o *MirrorOptions) error {
	m, err := o.openMirrors()
	if err != nil {
		return err
	}
	defer m.Close()
	checked, problems, err := m.Check(ctx, o.IDs)
	if err != nil {
		return err
	}
	if o.JSON {
		if problems == nil {
			problems = []mirror.Problem{}
		}
		if err := cmdutil.WriteJSON(o.IO.Out, map[string]any{"checked": checked, "problems": problems}); err != nil {
			return err
		}
	} else {
		for _, p := range problems {
			fmt.Fprintln(o.IO.Out, p)
		}
		fmt.Fprintf(o.IO.Out, "%s checked, %s\n", render.Plural(checked, "mirror file", "mirror files"), render.Plural(len(problems), "problem", "problems"))
	}
	if len(problems) > 0 {
		return mirrorMismatchError{len(problems)}
	}
	return nil
}
