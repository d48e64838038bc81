package servercli

import (
	"context"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"

	"github.com/ckpt-dev/ckpt/internal/cmdutil"
	"github.com/ckpt-dev/ckpt/internal/fourstep"
	"github.com/ckpt-dev/ckpt/internal/tracker"
)

// The four-step checkpoint of ccc (seed 001) lives in package fourstep; this is
// its command's flag wiring.

// CheckpointOptions are the inputs of `ckpt checkpoint`.
type CheckpointOptions struct {
	fourstep.Options
	JSON bool // the report as JSON on stdout; the steps' lines on stderr
}

func newCheckpointCmd(f *cmdutil.Factory) *cobra.Command {
	o := &CheckpointOptions{}
	var timeout time.Duration
	cmd := &cobra.Command{
		Use:   "checkpoint ID",
		Short: "Run seed 001's four-step checkpoint: progress file, git snapshot, tracker comment, prompt",
		Long: `Capture checkpoint ID's session state before a context boundary, in four
steps that each fail forward (seed 001; docs/checkpoint.md):

  1 write .ccc-progress.md in --dir (both profiles)
  2 commit the in-scope files to git: the checkpoint's files and
    .ccc-state.json activeTaskFiles, never git add -A (manual only)
  3 create or update the one "Checkpoint Status" comment of the issue, its ID
    kept in .ccc-state.json checkpointCommentId (both profiles)
  4 print the continuation prompt in a box (manual only)

then "Checkpoint complete: N/M steps succeeded." and a "Failed: …" line per
failed step. Skipped steps (a clean tree, no tracker configured) count as
succeeded. The exit code is 0 whenever the steps ran, failures included.

Tracker: --github-repo owner/name --issue N with GITHUB_TOKEN (or GH_TOKEN),
GITHUB_API_URL for GitHub Enterprise; or --linear-issue CIA-123 (else
.ccc-state.json linearIssue) with LINEAR_API_KEY, LINEAR_API_URL to use
another endpoint. Without either the step is skipped.

--json prints the report as JSON on stdout (profile, steps with their
skipped or failed lines, succeeded, total, commit, comment_id, prompt) and
the steps' lines on stderr.

ckpt checkpoint is run by ckpt-server: it links the trackers' HTTP clients,
which ckpt, started for every hook call, does not. The hooks' final
checkpoint writes .ccc-progress.md itself and runs step 3 in ckpt-server
only when a tracker is configured.`,
		Example: `  ckpt checkpoint feature/CIA-123
  ckpt checkpoint feature/CIA-123 --profile auto --linear-issue CIA-123
  GITHUB_TOKEN=… ckpt checkpoint kai-7/secondary-a --github-repo acme/app --issue 42`,
		Args: cmdutil.ExactArgs(1, "one checkpoint ID"),
	}
	fl := cmd.Flags()
	fl.StringVar(&o.Profile, "profile", fourstep.ProfileManual, "manual (all four steps) or auto (steps 1 and 3, as the stop hook runs them)")
	fl.StringVar(&o.Dir, "dir", "", "the project `DIR` holding .ccc-progress.md and .ccc-state.json, inside the git work tree (default: the working directory)")
	fl.StringVar(&o.Tracker.GitHubRepo, "github-repo", "", "post the status comment on an issue of GitHub repository `OWNER/NAME`")
	fl.StringVar(&o.Tracker.GitHubIssue, "issue", "", "the GitHub issue `NUMBER` (with --github-repo)")
	fl.StringVar(&o.Tracker.LinearIssue, "linear-issue", "", "post the status comment on Linear issue `KEY` (e.g. CIA-123)")
	fl.DurationVar(&timeout, "tracker-timeout", tracker.DefaultTimeout, "give up on the issue tracker after `DURATION`")
	fl.BoolVar(&o.JSON, "json", false, "print the report as JSON (the steps' lines go to stderr)")
	// The hooks' final checkpoint, run by ckpt, wrote the progress file and
	// the code's state itself and leaves step 3 to ckpt-server with this
	// (package autockpt).
	fl.BoolVar(&o.TrackerOnly, "tracker-only", false, "run step 3 (the issue tracker) alone")
	fl.MarkHidden("tracker-only")
	cmd.RunE = f.RunE(func(ctx context.Context, args []string) error {
		env := fourstep.TrackerFromEnv(f.Env.Var)
		o.Tracker.GitHubToken, o.Tracker.GitHubURL = env.GitHubToken, env.GitHubURL
		o.Tracker.LinearKey, o.Tracker.LinearURL = env.LinearKey, env.LinearURL
		o.Tracker.Timeout = timeout
		o.ID, o.Out, o.ErrOut, o.Now = args[0], f.Env.Out, f.Env.ErrOut, f.Now
		if o.JSON {
			o.Out = f.Env.ErrOut
		}
		if o.Dir == "" {
			o.Dir = f.Env.WorkDir
		} else if !filepath.IsAbs(o.Dir) {
			o.Dir = filepath.Join(f.Env.WorkDir, o.Dir)
		}
		o.Dir = filepath.Clean(o.Dir)
		st, err := f.OpenStore()
		if err != nil {
			return err
		}
		defer st.Close()
		o.Store = st
		r, err := fourstep.Run(ctx, o.Options)
		if err != nil || !o.JSON {
			return err
		}
		return cmdutil.WriteJSON(f.Env.Out, r)
	})
	return cmd
}
