package cli

import (
	"context"
	"os"
	"os/signal"
	"syscall"
	"time"
)

// System returns the Env of the running process: its standard streams,
// environment, working directory, clock and arguments. It is the one place
// the package reads the process's state; cmd/ckpt passes its result to Main.
func System() *Env {
	wd, err := os.Getwd()
	if err != nil {
		// A deleted working directory: discovery then fails with a clear
		// "no store" error unless --store or CKPT_STORE is given.
		wd = string(os.PathSeparator)
	}
	return &Env{
		IOStreams: IOStreams{In: os.Stdin, Out: os.Stdout, ErrOut: os.Stderr},
		Getenv:    os.Getenv,
		WorkDir:   wd,
		Now:       time.Now,
		Args:      os.Args[1:],
		Interrupt: func(ctx context.Context) (context.Context, context.CancelFunc) {
			return signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
		},
	}
}
