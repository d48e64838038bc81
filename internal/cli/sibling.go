package cli

import (
	"context"
	"io"
	"time"

	ckpt "github.com/ckpt-dev/ckpt"
	"github.com/ckpt-dev/ckpt/internal/cmdutil"
	"github.com/ckpt-dev/ckpt/internal/mirror"
)

// What the commands only ckpt-server runs (package servercli: monitor,
// checkpoint) share with ckpt's own commands.

// UntilInterrupted returns ctx made to end when the user interrupts the
// process (Env.Interrupt), for commands that run until Ctrl-C.
func UntilInterrupted(f *cmdutil.Factory, ctx context.Context) (context.Context, context.CancelFunc) {
	if f.Env.Interrupt == nil {
		return context.WithCancel(ctx)
	}
	return f.Env.Interrupt(ctx)
}

// untilInterrupted is UntilInterrupted.
func untilInterrupted(f *cmdutil.Factory, ctx context.Context) (context.Context, context.CancelFunc) {
	return UntilInterrupted(f, ctx)
}

// MirrorList is the mirror list of st for f's command: $CKPT_MIRRORS, else
// the one beside a store directory (mirror.Locate).
func MirrorList(f *cmdutil.Factory, st ckpt.Store) mirror.List { return mirrorList(f, st) }

// MirrorLibOptions are the mirror library's options with its warnings printed
// on warn.
func MirrorLibOptions(warn io.Writer, now func() time.Time) mirror.Options {
	return mirrorOptions(warn, now)
}

// MainOn is Main against the store st rather than the one the command line
// names, as ckpt's own tests run commands: for the tests of the commands
// ckpt-server adds.
func MainOn(env *cmdutil.Env, p Program, st ckpt.Store) int {
	f := newFactory(env, p)
	f.Store = st
	return run(f, p)
}
