package cli

import (
	"github.com/ckpt-dev/ckpt/internal/cmdutil"
	"github.com/spf13/cobra"
)

func newRestartCmd(f *cmdutil.Factory) *cobra.Command {
	o := &HandOverOptions{common: newCommon(f), Restart: true, Reason: "aborted"}
	cmd := &cobra.Command{
		Use:   "restart ID",
		Short: "Start a checkpoint's work over; archive the old state as aborted",
		Long: `Start the work of checkpoint ID from scratch (seed 002's last resort). The old
state is first stored as a new, archived checkpoint named
ID_<reason>_<unix time> (ID_aborted_1768487400 by default); then a restarted
event puts every step back to pending and clears progress, decisions,
blockers, errors, files and context, in a new session; a seed 002 stage
S<n>.P<m> goes back to its first phase, S<n>.P1. The plan (steps,
acceptance criteria) and the history stay. It prints the archive's name and
the fresh continuation prompt (--json: as data).

Done work is refused with exit code 9 unless --force (restarting it throws
finished work away); an archive always is. Work marked not resumable may be
restarted: that is what restart is for.`,
		Example: `  ckpt restart kai-7/secondary-a
  ckpt restart kai-7/secondary-a --reason corrupted`,
		Args: cmdutil.ExactArgs(1, "one checkpoint ID"),
	}
	handOverCmd(f, cmd, o, "why, one `WORD` recorded in the archive name", "restart even done work",
		"idempotency `KEY`: a retried restart with this key resets and archives nothing more")
	return cmd
}
