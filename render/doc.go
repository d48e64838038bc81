// Package render turns checkpoints into the views people and agents read:
// the continuation prompt a new session restarts from (NewPrompt, Markdown),
// the terminal status table (StatusTable), seed 003's STATUS.md aggregate
// (StatusMarkdown) and seed 001's .ccc-progress.md (ProgressMarkdown,
// ContinuationLine).
//
// Every function is a pure view: it reads the checkpoints it is given, never
// changes them, and depends on nothing but its arguments (the current time is
// a parameter), so the same input always renders the same bytes. All output
// is valid UTF-8 whatever the input holds: invalid bytes become U+FFFD, and
// text taken from a checkpoint can neither break a line nor start a Markdown
// heading, code fence or HTML block of its own. Terminal (and
// TerminalWriter) is the one sanitizer of text bound for a terminal: every
// human view of the CLI passes through it last. The functions are safe for
// concurrent use.
//
// The package imports only the standard library and the root package.
package render
