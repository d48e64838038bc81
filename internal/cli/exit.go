package cli

import (
	"errors"
	"fmt"
	"io"
	"regexp"
	"strings"

	ckpt "github.com/ckpt-dev/ckpt"
)

// Exit codes. docs/cli.md documents this table; keep the two in step.
const (
	ExitOK           = 0
	ExitFailure      = 1  // anything not listed below
	ExitUsage        = 2  // bad flags or arguments, invalid input (ckpt.ErrInvalid)
	ExitNotFound     = 3  // no such checkpoint or revision (ckpt.ErrNotFound)
	ExitConflict     = 4  // --if-rev did not match (ckpt.ErrConflict)
	ExitExists       = 5  // the checkpoint or store already exists (ckpt.ErrExists)
	ExitNoStore      = 6  // no store found or at the given place (ckpt.ErrNoStore)
	ExitCorrupt      = 7  // store damaged, or check found errors (ckpt.ErrCorrupt)
	ExitCycleLimit   = 8  // a cycle past the maximum (ckpt.ErrCycleLimit)
	ExitNotResumable = 9  // not resumable: done, marked so, or archived (ckpt.ErrNotResumable); use --force
	ExitStale        = 10 // ckpt stale: at least one checkpoint is stale
	ExitStaleWarn    = 11 // ckpt stale: some past the warn threshold, none stale
)

// usageError marks an error in how the command was called: unknown command,
// bad flag, wrong number of arguments.
type usageError struct{ err error }

func (u usageError) Error() string { return u.err.Error() }
func (u usageError) Unwrap() error { return u.err }

// usagef returns a usage error (exit 2) with a formatted message.
func usagef(format string, args ...any) error {
	return usageError{fmt.Errorf(format, args...)}
}

// exitClasses maps error classes onto exit codes, first match wins, with the
// hint appended when the message does not already suggest a ckpt command.
var exitClasses = []struct {
	err  error
	code int
	hint string
}{
	{ckpt.ErrConflict, ExitConflict, "read it again with ckpt show and retry with the new --if-rev"},
	{ckpt.ErrNoStore, ExitNoStore, "run ckpt init to create one here, or point to one with --store DIR or CKPT_STORE"},
	{ckpt.ErrCorrupt, ExitCorrupt, "run ckpt check to see the damage and ckpt repair to mend it"},
	{ckpt.ErrExists, ExitExists, "use another ID"},
	{ckpt.ErrNotFound, ExitNotFound, "list the checkpoints with ckpt ls --all"},
	{ckpt.ErrCycleLimit, ExitCycleLimit, "raise the limit with ckpt update ID --max-cycles N"},
	{ckpt.ErrNotResumable, ExitNotResumable, "pass --force to go on anyway"},
	{errStaleFound, ExitStale, "see ckpt stale --help"},
	{errWarnFound, ExitStaleWarn, "see ckpt stale --help"},
	{ckpt.ErrInvalid, ExitUsage, "see ckpt help"},
}

// ExitCode maps an error returned by a command onto the process exit code.
// It is the one place exit codes are decided.
func ExitCode(err error) int {
	if err == nil {
		return ExitOK
	}
	var u usageError
	if errors.As(err, &u) {
		return ExitUsage
	}
	for _, c := range exitClasses {
		if errors.Is(err, c.err) {
			return c.code
		}
	}
	return ExitFailure
}

// givesAdvice matches a message that already says what to do: it names a
// ckpt command or tells the user to act.
var givesAdvice = regexp.MustCompile(`\bckpt (init|start|step|update|decision|block|unblock|error|accept|cycle|note|beat|show|ls|log|done|fail|wait|check|repair|help|resume|takeover|restart|restore|archive|prune|stale|monitor|status|progress|demo)\b|--help\b|\b(use|give|pass|say|run|set|choose|quote|create|raise|retry|restore|unset)\b`)

// errorLine is the one line printed for err: its message on one line, with
// a hint saying what to do when the message does not already say it.
func errorLine(err error) string {
	msg := strings.Join(strings.Fields(strings.ReplaceAll(err.Error(), "\n", "; ")), " ")
	if givesAdvice.MatchString(msg) {
		return msg
	}
	var u usageError
	if errors.As(err, &u) {
		return msg + " (see ckpt help)"
	}
	for _, c := range exitClasses {
		if errors.Is(err, c.err) {
			return msg + ": " + c.hint
		}
	}
	return msg
}

// printError writes err as `ckpt: <message>` on one line.
func printError(w io.Writer, err error) {
	fmt.Fprintf(w, "ckpt: %s\n", errorLine(err))
}

// printWarning writes one warning line.
func printWarning(w io.Writer, msg string) {
	fmt.Fprintf(w, "ckpt: warning: %s\n", strings.Join(strings.Fields(msg), " "))
}
