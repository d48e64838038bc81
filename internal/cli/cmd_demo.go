package cli

import (
	"context"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	ckpt "github.com/ckpt-dev/ckpt"
	"github.com/ckpt-dev/ckpt/filestore"
	"github.com/ckpt-dev/ckpt/internal/cmdutil"
	"github.com/ckpt-dev/ckpt/internal/demo"
	"github.com/ckpt-dev/ckpt/internal/render"
)

// DemoOptions are the inputs of `ckpt demo`.
type DemoOptions struct {
	IO cmdutil.IOStreams
	// Start is the simulated clock's first reading.
	Start time.Time
	// TempDir is where the temporary store is made and removed; "" is the
	// system's temporary directory.
	TempDir string
}

func newDemoCmd(f *cmdutil.Factory) *cobra.Command {
	o := &DemoOptions{IO: f.Env.IOStreams}
	return &cobra.Command{
		Use:   "demo",
		Short: "Play a short session of three agents, a silent one and a takeover",
		Long: `Play, in a temporary store that is removed afterwards, a short session of three
agents working in parallel: steps and progress, a decision, a blocker, one
agent going silent, the stale warning and then the stale verdict, a takeover,
and the continuation prompt the new agent receives. A last stage shows
presence: an agent waiting for a person, one busy in a long tool and one whose
process is killed and seen dead at once. Each stage prints the commands the
agents run and what they see, the status table included.

Time is simulated: half an hour of work plays in about a second. Nothing
outside the temporary store is touched.`,
		Example: `  go run ./cmd/ckpt demo
  ckpt demo | less`,
		Args: cmdutil.ExactArgs(0, "no arguments"),
		RunE: f.RunE(func(ctx context.Context, args []string) error {
			o.Start = f.Now().Truncate(time.Minute)
			return runDemo(ctx, o)
		}),
	}
}

// runDemo plays package demo's script in a local store, each command line
// run by this package's own command tree.
func runDemo(ctx context.Context, o *DemoOptions) error {
	return demo.Play(ctx, demo.Options{
		Out: o.IO.Out, Start: o.Start, TempDir: o.TempDir,
		OpenStore: func(dir string, now func() time.Time) (ckpt.Store, error) {
			st, err := filestore.Init(filepath.Join(dir, filestore.StoreDirName), filestore.Options{})
			if err != nil {
				return nil, err
			}
			st.SetClock(now) // the demo plays hours in a second
			return st, nil
		},
		Run:       runDemoCommand,
		ExitStale: ExitStale, ExitStaleWarn: ExitStaleWarn,
		Filter: render.Terminal,
	})
}

// runDemoCommand runs one of the demo's command lines as `ckpt` would.
func runDemoCommand(ctx context.Context, c demo.Command) int {
	env := &cmdutil.Env{
		IOStreams: cmdutil.IOStreams{In: strings.NewReader(c.Stdin), Out: c.Out, ErrOut: c.Out},
		Getenv:    func(k string) string { return c.Env[k] },
		WorkDir:   c.Dir,
		Now:       func() time.Time { return c.Now },
		Args:      c.Args,
	}
	return runOn(env, c.Store)
}
