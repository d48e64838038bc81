// Package render turns checkpoints into the views people and agents read:
// the continuation prompt a new session restarts from (NewPrompt, Markdown),
// the terminal views of the CLI (Show, ListTable, StatusTable, StaleTable,
// LogText, ReportText, PruneText, and the one-line SummaryLine of a write)
// with their --json forms (NewShown, SummariesJSON, StatusJSON, LogJSON,
// ReportJSON), the stale table and the inbox (StaleTable and WriteInbox,
// of the verdicts ckpt.StaleFrom and ckpt.InboxFrom make) and sitebuilder's (seed 003)
// STATUS.md aggregate (StatusMarkdown). Seed 001's
// .ccc-progress.md is rendered by package protocols/ccc.
//
// Every function is a pure view: it reads the checkpoints it is given, never
// changes them, and depends on nothing but its arguments (the current time is
// a parameter), so the same input always renders the same bytes; it never
// reads a store (the rules that page one, such as the stale verdict, are
// the root package's). All output
// is valid UTF-8 whatever the input holds: invalid bytes become U+FFFD, and
// text taken from a checkpoint can neither break a line nor start a Markdown
// heading, code fence or HTML block of its own. Terminal (and
// TerminalWriter) is the one sanitizer of text bound for a terminal: every
// human view of the CLI passes through it last. The functions are safe for
// concurrent use; a Screen, which remembers the frame it drew, is not.
//
// The package imports only the standard library and the root package.
package render
