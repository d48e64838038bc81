package cli

import (
	"context"
	"errors"
	"fmt"

	ckpt "github.com/ckpt-dev/ckpt"
	"github.com/ckpt-dev/ckpt/internal/cmdutil"
	"github.com/spf13/cobra"
)

// RestoreOptions are the inputs of `ckpt restore`.
type RestoreOptions struct {
	common
	ID    string
	Rev   int64
	Actor ckpt.Actor
	Key   string
	Force bool // restore even an archive
	JSON  bool
}

func newRestoreCmd(f *cmdutil.Factory) *cobra.Command {
	o := &RestoreOptions{common: newCommon(f)}
	cmd := &cobra.Command{
		Use:   "restore ID --rev N",
		Short: "Bring a checkpoint back to the state it had at revision N",
		Long: `Bring checkpoint ID back to the state it had right after revision N by
appending a restored event: the history keeps every event, including those
after N, and a later restore can move forward again. ckpt log ID lists the
revisions; ckpt show ID --rev N shows one before restoring it.`,
		Example: `  ckpt log kai-7/secondary-a
  ckpt restore kai-7/secondary-a --rev 12`,
		Args: cmdutil.ExactArgs(1, "one checkpoint ID"),
	}
	cmd.RunE = f.RunE(func(ctx context.Context, args []string) error {
		o.ID = args[0]
		o.Actor = f.EventActor()
		return runRestore(ctx, o)
	})
	fl := cmd.Flags()
	fl.Int64Var(&o.Rev, "rev", 0, "the revision `N` to go back to (required; see ckpt log ID)")
	fl.StringVar(&o.Key, "key", "", "idempotency `KEY`: a restore with a key already applied appends nothing")
	fl.BoolVar(&o.Force, "force", false, "restore even an archived checkpoint")
	fl.BoolVar(&o.JSON, "json", false, "print the restored checkpoint as JSON")
	return cmd
}

func runRestore(ctx context.Context, o *RestoreOptions) error {
	if err := ckpt.ValidateID(o.ID); err != nil {
		return err
	}
	if o.Rev < 1 {
		return fmt.Errorf("%w: --rev %d: give the revision to go back to, 1 or more (ckpt log %s lists them)", ckpt.ErrInvalid, o.Rev, o.ID)
	}
	return o.withStore(func(st ckpt.Store) error {
		c, err := ckpt.RestoreCheckpoint(ctx, st, o.ID, o.Rev, ckpt.Lifecycle{At: o.Now(), Actor: o.Actor, Key: o.Key, Force: o.Force})
		var refused *ckpt.RefusedError
		if err != nil && !errors.As(err, &refused) && (errors.Is(err, ckpt.ErrNotFound) || errors.Is(err, ckpt.ErrInvalid)) {
			return fmt.Errorf("%w: pick a revision from ckpt log %s", err, o.ID)
		}
		if err != nil {
			return err
		}
		if o.JSON {
			return cmdutil.WriteJSON(o.IO.Out, c)
		}
		_, err = fmt.Fprintf(o.IO.Out, "%s  rev %d  restored to revision %d  (%s, %s)\n", c.ID, c.Rev, o.Rev, c.Progress.Count(), c.Status)
		return err
	})
}
