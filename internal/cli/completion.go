package cli

import (
	"context"
	"strings"

	"github.com/spf13/cobra"

	ckpt "github.com/ckpt-dev/ckpt"
	"github.com/ckpt-dev/ckpt/internal/cmdutil"
)

// maxCompletions bounds how many checkpoint IDs a completion lists: a shell
// shows the first screen anyway, and a store of 100,000 must not stall Tab.
const maxCompletions = 500

// completeIDs lets the shell complete a checkpoint ID for each command
// whose first argument is one ("show ID", "step ID STEP", …). The
// completion scripts themselves are cobra's (`ckpt completion bash|zsh|
// fish|powershell`); they call `ckpt __complete`, which builds every verb.
func completeIDs(f *cmdutil.Factory, root *cobra.Command) {
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		for _, sub := range c.Commands() {
			walk(sub)
		}
		fields := strings.Fields(c.Use)
		if len(fields) > 1 && strings.TrimSuffix(fields[1], "...") == "ID" && c.ValidArgsFunction == nil {
			c.ValidArgsFunction = func(cmd *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
				if len(args) > 0 && !strings.HasSuffix(fields[1], "...") {
					return nil, cobra.ShellCompDirectiveNoFileComp
				}
				return listIDs(cmd.Context(), f, toComplete), cobra.ShellCompDirectiveNoFileComp
			}
		}
	}
	walk(root)
}

// listIDs is the IDs of the live checkpoints that start with prefix, at
// most maxCompletions; nothing when there is no store (completion never
// prints an error into the shell).
func listIDs(ctx context.Context, f *cmdutil.Factory, prefix string) []string {
	if ctx == nil {
		ctx = context.Background()
	}
	st, err := f.OpenRawStore()
	if err != nil {
		return nil
	}
	defer st.Close()
	var ids []string
	errEnough := context.Canceled
	_ = ckpt.EachPage(ctx, st, ckpt.Filter{Prefix: prefix}, func(page []ckpt.Summary) error {
		for _, s := range page {
			ids = append(ids, s.ID)
			if len(ids) == maxCompletions {
				return errEnough
			}
		}
		return nil
	})
	return ids
}
