package cli

import (
	"context"
	"fmt"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	ckpt "github.com/ckpt-dev/ckpt"
	"github.com/ckpt-dev/ckpt/internal/cmdutil"
	"github.com/ckpt-dev/ckpt/internal/request"
)

// The commands that record one item in one event: decision, block,
// unblock, error, accept, cycle, note, done, fail and wait. Each is a row
// of recordVerbs: its help, its own flags, and the request (package
// request) its arguments and flags make; the rules are the request's.

// recordFlags holds the values of a record verb's own flags.
type recordFlags struct {
	reason, id, typ, title, note, until string
	blocking, clear, unmet              bool
}

// recordVerb is one record command.
type recordVerb struct {
	use, short, long, example string
	args                      cobra.PositionalArgs
	// flags registers the verb's own flags (--if-rev, --key and --json
	// are every write's).
	flags func(fl *pflag.FlagSet, v *recordFlags)
	// request is what the command line asks to record; args[0] is the ID.
	request func(args []string, v *recordFlags) request.Request
}

// arg returns args[i], "" when it was not given.
func arg(args []string, i int) string {
	if i < len(args) {
		return args[i]
	}
	return ""
}

// recordVerbs are the rows. (A function: the table is built only when a
// record verb is, not by every process at start-up.)
func recordVerbs() map[string]recordVerb {
	return map[string]recordVerb{
		"decision": {
			use: "decision ID TEXT", short: "Record a decision and why it was made",
			example: `  ckpt decision kai-7/secondary-a "Use the v2 API" --reason "v1 is rate limited"`,
			args:    cmdutil.ExactArgs(2, "a checkpoint ID and the decision's text"),
			flags: func(fl *pflag.FlagSet, v *recordFlags) {
				fl.StringVar(&v.reason, "reason", "", "why the decision was made (`WHY`)")
			},
			request: func(args []string, v *recordFlags) request.Request {
				return request.Decision{Text: args[1], Reason: v.reason}
			},
		},
		"block": {
			use: "block ID TEXT", short: "Record a blocker (the checkpoint becomes blocked)",
			long: `Record what blocks checkpoint ID. The checkpoint's status becomes blocked
until every blocker is cleared with ckpt unblock (and no blocking error is
active). Blockers get the IDs b1, b2, … unless --id names one.

--unblocked-by writes the condition that clears it into its text in seed
001's form, "TEXT (unblocked by: CONDITION)", as every view and
.ccc-progress.md's Blockers section show it.`,
			example: `  ckpt block kai-7/secondary-a "Waiting for DISCOVERY.md"
  ckpt block kai-7/secondary-a "API key missing" --id api-key --unblocked-by "ops issues the key"`,
			args: cmdutil.ExactArgs(2, "a checkpoint ID and the blocker's text"),
			flags: func(fl *pflag.FlagSet, v *recordFlags) {
				fl.StringVar(&v.id, "id", "", "the blocker's `ID` (default b1, b2, …)")
				fl.StringVar(&v.until, "unblocked-by", "", "the `CONDITION` that clears the blocker")
			},
			request: func(args []string, v *recordFlags) request.Request {
				text := args[1]
				if c := strings.TrimSpace(v.until); c != "" {
					text += " (unblocked by: " + c + ")"
				}
				return request.Block{ID: v.id, Text: text}
			},
		},
		"unblock": {
			use: "unblock ID [BLOCKER-ID]", short: "Clear one blocker, or all of them",
			long: `Clear blocker BLOCKER-ID of checkpoint ID, or every active blocker when none
is named. A blocked checkpoint returns to in_progress once nothing blocks it.`,
			example: `  ckpt unblock kai-7/secondary-a b1
  ckpt unblock kai-7/secondary-a`,
			args:    cmdutil.RangeArgs(1, 2, "a checkpoint ID and optionally a blocker ID"),
			request: func(args []string, v *recordFlags) request.Request { return request.Unblock{ID: arg(args, 1)} },
		},
		"error": {
			use: "error ID [MESSAGE]", short: "Record an error met, or clear the active ones",
			long: `Record an error checkpoint ID met, with its type. A --blocking error makes
the checkpoint blocked until cleared. --clear (without MESSAGE) clears every
active error.`,
			example: `  ckpt error kai-7/secondary-a "fetch timed out" --type network
  ckpt error kai-7/secondary-a "disk full" --type io --blocking
  ckpt error kai-7/secondary-a --clear`,
			args: cmdutil.RangeArgs(1, 2, "a checkpoint ID and the error message (none with --clear)"),
			flags: func(fl *pflag.FlagSet, v *recordFlags) {
				fl.StringVar(&v.typ, "type", "", "the error's `TYPE`, e.g. network, test, io")
				fl.BoolVar(&v.blocking, "blocking", false, "the error stops the work (status becomes blocked)")
				fl.BoolVar(&v.clear, "clear", false, "clear every active error (with --type, those of that type) instead of recording one")
			},
			request: func(args []string, v *recordFlags) request.Request {
				return request.Error{Message: arg(args, 1), Type: v.typ, Blocking: v.blocking, Clear: v.clear}
			},
		},
		"accept": {
			use: "accept ID CRITERION", short: "Mark an acceptance criterion met (or unmet), adding it if new",
			example: `  ckpt accept kai-7/secondary-a tests --title "All tests pass"
  ckpt accept kai-7/secondary-a tests --unmet`,
			args: cmdutil.ExactArgs(2, "a checkpoint ID and a criterion ID"),
			flags: func(fl *pflag.FlagSet, v *recordFlags) {
				fl.StringVar(&v.title, "title", "", "the criterion's `TITLE`")
				fl.BoolVar(&v.unmet, "unmet", false, "mark the criterion not met")
			},
			request: func(args []string, v *recordFlags) request.Request {
				return request.Accept{ID: args[1], Title: v.title, Unmet: v.unmet}
			},
		},
		"cycle": {
			use: "cycle ID", short: "Count one more fix/retry cycle (exit 8 past --max-cycles)",
			long: `Count one more fix or retry cycle of checkpoint ID. When the checkpoint has a
maximum (start/update --max-cycles) and it is reached, nothing is recorded
and ckpt exits with code 8: stop looping and ask for help, or raise the limit.`,
			example: `  ckpt cycle loop/T060 --note "fix attempt 2: flaky test pinned"`,
			args:    cmdutil.ExactArgs(1, "one checkpoint ID"),
			flags: func(fl *pflag.FlagSet, v *recordFlags) {
				fl.StringVar(&v.note, "note", "", "what this cycle is for (`TEXT`)")
			},
			request: func(args []string, v *recordFlags) request.Request { return request.Cycle{Note: v.note} },
		},
		"note": {
			use: "note ID TEXT", short: "Append a line to the checkpoint's context notes",
			example: `  ckpt note kai-7/secondary-a "spec.md section 5 half written"`,
			args:    cmdutil.ExactArgs(2, "a checkpoint ID and the note's text"),
			request: func(args []string, v *recordFlags) request.Request { return request.Note{Text: args[1]} },
		},
		"tell": {
			use: "tell ID MESSAGE", short: "Tell the agent working on a checkpoint something (delivered at its next hook)",
			long: `Send MESSAGE to the agent working on checkpoint ID. It is recorded in the
history (who, when) and delivered once into the agent's context at its next
hook: a Claude Code session about to stop goes on with it, a new prompt or
session start gets it as context (Codex and Gemini CLI alike). Until then
ckpt show lists it as pending; a resumed or taken-over session gets it.
The agent reads it as a message from you (your --agent, CKPT_AGENT or
user:LOGIN; a server records the token's agent), never as instructions
from its system. At most 4096 bytes; at most 20 wait undelivered.`,
			example: `  ckpt tell kai-7/secondary-a "The schema change is approved: go ahead"
  CKPT_AGENT=lead ckpt tell team/build-42 "Skip the flaky e2e suite for now"`,
			args:    cmdutil.ExactArgs(2, "a checkpoint ID and the message"),
			request: func(args []string, v *recordFlags) request.Request { return request.Tell{Text: args[1]} },
		},
		"done": statusVerb(ckpt.StatusDone, "done", "Mark the work done", false, `  ckpt done kai-7/secondary-a`),
		"fail": statusVerb(ckpt.StatusFailed, "fail", "Mark the work failed, with the reason", true, `  ckpt fail kai-7/secondary-a --reason "upstream API removed"`),
		"wait": statusVerb(ckpt.StatusWaiting, "wait", "Mark the work waiting, with what it waits for", true, `  ckpt wait kai-7/secondary-a --reason "review by Primary"`),
	}
}

// statusVerb is the row of done, fail or wait: a status event, with a
// reason that fail and wait require.
func statusVerb(status ckpt.Status, name, short string, needReason bool, example string) recordVerb {
	use, reasonUsage := name+" ID", "why (`WHY`, optional)"
	if needReason {
		use, reasonUsage = name+" ID --reason WHY", "why (`WHY`, required)"
	}
	return recordVerb{
		use: use, short: short, example: example,
		long: fmt.Sprintf("Set the status of checkpoint ID to %s in one status event.", status),
		args: cmdutil.ExactArgs(1, "one checkpoint ID"),
		flags: func(fl *pflag.FlagSet, v *recordFlags) {
			fl.StringVar(&v.reason, "reason", "", reasonUsage)
		},
		request: func(args []string, v *recordFlags) request.Request {
			return request.Status{Status: status, Reason: v.reason, NeedReason: needReason}
		},
	}
}

// recordCmd returns the constructor of the record command name.
func recordCmd(name string) func(*cmdutil.Factory) *cobra.Command {
	return func(f *cmdutil.Factory) *cobra.Command {
		rv := recordVerbs()[name]
		o := newWriter(f)
		var v recordFlags
		cmd := &cobra.Command{Use: rv.use, Short: rv.short, Long: rv.long, Example: rv.example, Args: rv.args}
		cmd.RunE = runWrite(f, &o, func(ctx context.Context, args []string) error {
			return o.appendEvent(ctx, args[0], rv.request(args, &v))
		})
		if rv.flags != nil {
			rv.flags(cmd.Flags(), &v)
		}
		addWriteFlags(cmd, &o)
		return cmd
	}
}
