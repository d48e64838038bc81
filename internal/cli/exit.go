package cli

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"strings"

	ckpt "github.com/ckpt-dev/ckpt"
	"github.com/ckpt-dev/ckpt/internal/cmdutil"
	"github.com/ckpt-dev/ckpt/internal/lazyregexp"
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

// exitCodes maps the library's error codes (ckpt.ErrorCode) onto exit
// codes and the hint the CLI adds: the one place both are decided. The
// library's messages say what happened and never name a command or flag
// (issue 8); each surface adds its own hint (MCP's are in package mcp).
// A table, not a map: a map literal is built at every process's start.
var exitCodes = [...]exitCode{
	{ckpt.CodeConflict, ExitConflict, "read it again with ckpt show and retry with the new --if-rev"},
	{ckpt.CodeNoStore, ExitNoStore, "run ckpt init to create one here, or point to one with --store DIR or CKPT_STORE"},
	{ckpt.CodeCorrupt, ExitCorrupt, "run ckpt check to see the damage and ckpt repair to mend it"},
	{ckpt.CodeExists, ExitExists, "use another ID, or start it over with ckpt restart ID"},
	{ckpt.CodeNotFound, ExitNotFound, "list the checkpoints with ckpt ls --all, or create it with ckpt start ID"},
	{ckpt.CodeCycleLimit, ExitCycleLimit, "raise the limit with ckpt update ID --max-cycles N, or stop and ask for help"},
	{ckpt.CodeNotResumable, ExitNotResumable, "pass --force to go on anyway"},
	{ckpt.CodeInvalid, ExitUsage, "see ckpt help"},
}

type exitCode struct {
	of   ckpt.Code
	code int
	hint string
}

// exitFor is the row of exitCodes for c; ok is false when there is none.
func exitFor(c ckpt.Code) (e exitCode, ok bool) {
	for _, e := range exitCodes {
		if e.of == c {
			return e, true
		}
	}
	return exitCode{}, false
}

// ExitCode maps an error returned by a command onto the process exit code.
// It is the one place exit codes are decided.
func ExitCode(err error) int {
	if err == nil {
		return ExitOK
	}
	switch {
	case cmdutil.IsUsageError(err):
		return ExitUsage
	case errors.Is(err, errStaleFound):
		return ExitStale
	case errors.Is(err, errWarnFound):
		return ExitStaleWarn
	}
	if c, ok := exitFor(ckpt.ErrorCode(err)); ok {
		return c.code
	}
	return ExitFailure
}

// givesAdvice matches a message that already says what to do: it names a
// ckpt command or tells the user to act.
//
// Regular expressions are compiled on first use, not at start-up: every
// ckpt process links this package, and most never use them.
var givesAdvice = lazyregexp.New(`\bckpt (init|start|step|update|decision|block|unblock|error|accept|cycle|note|beat|show|ls|log|done|fail|wait|check|repair|help|resume|takeover|restart|restore|archive|prune|stale|monitor|status|progress|demo)\b|--help\b|\b(use|give|pass|say|run|set|choose|quote|create|raise|retry|restore|unset)\b`)

// hint is what the CLI adds to err to say what to do with its flags and
// commands; the library's messages say what happened, never which flag.
func hint(err error) string {
	var ce *ckpt.ConflictError
	if errors.As(err, &ce) {
		return fmt.Sprintf("read it again (ckpt show %s) and retry with --if-rev %d", ce.ID, ce.Have)
	}
	var re *ckpt.RefusedError
	if errors.As(err, &re) {
		switch {
		case !re.Forcible:
			return ""
		case re.Rule == ckpt.RuleArchived:
			return fmt.Sprintf("pass --force to %s the archive anyway", re.Op)
		case re.Rule == ckpt.RuleLive:
			return fmt.Sprintf("finish it first (ckpt done %s), or pass --force", re.ID)
		case re.Op == "takeover":
			return fmt.Sprintf("pass --force to hand it over anyway, or start it over with ckpt restart %s", re.ID)
		case re.Op == "resume":
			return fmt.Sprintf("pass --force to resume it anyway, or start it over with ckpt restart %s", re.ID)
		}
		return "pass --force to go on anyway"
	}
	msg := err.Error()
	if givesAdvice.Get().MatchString(msg) {
		return ""
	}
	if cmdutil.IsUsageError(err) {
		return "see ckpt help"
	}
	switch {
	case errors.Is(err, errStaleFound), errors.Is(err, errWarnFound):
		return "see ckpt stale --help"
	case errors.Is(err, fs.ErrPermission):
		return "this user may read the store but not write it: run ckpt as the user who owns it, or give a store you can write with --store DIR or CKPT_STORE"
	}
	code := ckpt.ErrorCode(err)
	e, _ := exitFor(code)
	return withSubject(e.hint, code, msg)
}

// withSubject puts the checkpoint a library error is about into its hint's
// "ID" placeholder. The library's messages name it first, after the
// sentinel ("checkpoint already exists: w (revision 1)"); a message that
// does not leaves the placeholder.
func withSubject(h string, code ckpt.Code, msg string) string {
	if !strings.Contains(h, " ID") {
		return h
	}
	sentinel := ckpt.SentinelOf(code)
	if sentinel == nil {
		return h
	}
	rest, ok := strings.CutPrefix(msg, sentinel.Error()+": ")
	if !ok {
		return h
	}
	id, _, _ := strings.Cut(rest, " ")
	id = strings.TrimRight(id, ":;,")
	if ckpt.ValidateID(id) != nil {
		return h
	}
	h = strings.ReplaceAll(h, " ID ", " "+id+" ")
	if strings.HasSuffix(h, " ID") {
		h = strings.TrimSuffix(h, " ID") + " " + id
	}
	return h
}

// errorLine is the one line printed for err: its message on one line, with
// a hint saying what to do when the message does not already say it.
func errorLine(err error) string {
	msg := oneLine(err.Error())
	h := hint(err)
	switch {
	case h == "":
		return msg
	case cmdutil.IsUsageError(err):
		return msg + " (" + h + ")"
	}
	return msg + ": " + h
}

// suggestion is cobra's "Did you mean this?" block under an unknown
// command: a blank line, the question, then one tab-indented verb a line.
var suggestion = lazyregexp.New(`\n+Did you mean this\?\n((?:\t[^\n]*\n?)+)`)

// oneLine puts a multi-line message on one line: cobra's suggestions become
// "did you mean show?", other lines are joined with "; ", blank ones dropped.
func oneLine(msg string) string {
	if strings.Contains(msg, "Did you mean this?") {
		msg = suggestion.Get().ReplaceAllStringFunc(msg, func(block string) string {
			verbs := strings.Fields(suggestion.Get().FindStringSubmatch(block)[1])
			return "; did you mean " + strings.Join(verbs, " or ") + "?"
		})
	}
	var lines []string
	for _, l := range strings.Split(msg, "\n") {
		if l = strings.Join(strings.Fields(l), " "); l != "" {
			lines = append(lines, l)
		}
	}
	return strings.Join(lines, "; ")
}

// printError writes err as `ckpt: <message>` on one line.
func printError(w io.Writer, err error) {
	fmt.Fprintf(w, "ckpt: %s\n", errorLine(err))
}
