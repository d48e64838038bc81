package cmdutil

import (
	"context"
	"os"
	"os/signal"
	"path/filepath"
	"runtime/debug"
	"syscall"
	"time"
)

// System returns the Env of the running process: its standard streams,
// environment, working directory, clock and arguments. It is the one place
// a command line reads the process's state; cmd/ckpt and cmd/ckpt-server
// pass its result to cli.Main.
func System() *Env {
	wd, err := os.Getwd()
	if err != nil {
		// A deleted working directory: discovery then fails with a clear
		// "no store" error unless --store or CKPT_STORE is given.
		wd = string(os.PathSeparator)
	}
	return &Env{
		IOStreams:        IOStreams{In: os.Stdin, Out: os.Stdout, ErrOut: os.Stderr},
		Getenv:           os.Getenv,
		WorkDir:          wd,
		Now:              time.Now,
		Args:             os.Args[1:],
		LookupExecutable: executable,
		Interrupt: func(ctx context.Context) (context.Context, context.CancelFunc) {
			// A command that runs until interrupted (monitor, status
			// --watch, mirror follow) lives long: the collector goes back
			// to Go's default pace, which cmd/ckpt relaxes for short runs.
			if os.Getenv("GOGC") == "" {
				debug.SetGCPercent(100)
			}
			return signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
		},
		LookupUser: accountName,
		Exec:       execProgram,
		Start:      startDetached,
		Output:     outputOf,
	}
}

// executable is the absolute path of the running binary with symbolic links
// resolved, so that it compares with other resolved paths (macOS's /var is
// /private/var), or "" when the system cannot tell. A ckpt reached through
// a link (e.g. Homebrew's bin/ckpt) is named by its target.
func executable() string {
	exe, err := os.Executable()
	if err != nil {
		return ""
	}
	if resolved, err := filepath.EvalSymlinks(exe); err == nil {
		return resolved
	}
	return exe
}
