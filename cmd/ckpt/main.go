// Command ckpt records and shows durable checkpoints of agent work. See
// docs/cli.md, or run `ckpt help`.
package main

import (
	"os"
	"runtime/debug"

	"github.com/ckpt-dev/ckpt/internal/cli"
	"github.com/ckpt-dev/ckpt/internal/cmdutil"
)

func main() {
	growStack()
	// A ckpt process lives milliseconds to a second. A listing of 100,000
	// checkpoints (ckpt stale) allocates about 300 MB of summaries a page
	// at a time while its live heap stays near 10 MB, so the default
	// GOGC=100 collects every few megabytes: 400 costs about 35 MB more at
	// the peak and saves about a fifth of the CPU. GOGC set by the user
	// still wins, and a command that runs until interrupted goes back to
	// 100 (cmdutil.System's Interrupt).
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(400)
	}
	// Every verb (serve, mcp, token, migrate, monitor and checkpoint as dispatchers to
	// ckpt-server), and the store ckpt opens itself: a directory; a
	// PostgreSQL or server store goes to its keeper or is handed over.
	program := cli.Program{Verbs: cli.Verbs(), Stores: cli.Stores()}
	os.Exit(cli.Main(cmdutil.System(), program))
}

// growStack grows the main goroutine's stack to 32 KB while it is three
// frames deep. Go starts a goroutine on 8 KB and doubles the stack, by
// copying it and adjusting every frame, each time a call needs more: a
// ckpt update did that four times, deep in cobra and the store, for about
// 6% of the process's instructions (callgrind). Here the copy has nothing
// to adjust, and the stack then stays (a short process rarely collects
// garbage, which is when the runtime shrinks stacks). The pad is 16 KB:
// a 64 KB one (a 128 KB stack) saved a few more instructions but cost
// more CPU than it saved, zeroing and faulting in its pages (docs/design.md,
// start-up round four).
//
//go:noinline
func growStack() {
	var pad [16 << 10]byte
	touch(pad[:])
}

// touch keeps pad, and with it growStack's frame, from being optimised away.
//
//go:noinline
func touch(b []byte) { b[0] = 1 }
