package remote

import (
	"context"

	"github.com/ckpt-dev/ckpt"
	"github.com/ckpt-dev/ckpt/internal/spool"
)

// The spool lives in internal/spool, which links no net/http, so that a
// binary without an HTTP client can spool too; these names keep remote's
// API as it was.

// Spool is a store that loses no write while its server is away. Before
// each call it delivers, in order, the writes spooled earlier (by this
// process or another one using the same directory); when spooling, an
// append the server cannot take (a retryable failure, after the client's
// own retries) is written durably to the spool directory instead, and
// Append returns a *SpooledError, which a caller reports as a warning:
// the write is not lost, only late. Reads while the server is away build
// on the last state the spool saw; a write the server refuses for good
// is moved to failed/. See internal/spool for the whole contract.
type Spool = spool.Spool

// SpooledError is returned by Spool.Append for a write kept in the spool.
type SpooledError = spool.SpooledError

// Waiting is what a spool directory holds: what ckpt status reports.
type Waiting = spool.Waiting

// NewSpool wraps st with the spool directory dir. spooling says whether
// appends that cannot reach the server are spooled (hooks, a write given
// --spool) or fail as usual; spooled writes are delivered either way.
// warn receives one line per spooled write that failed for good.
func NewSpool(st ckpt.Store, dir string, spooling bool, warn func(string)) *Spool {
	return spool.New(st, dir, spooling, warn)
}

// SpoolDir is this machine's spool of the server at serverURL:
// ckpt/spool/<16 hex digits of the URL's SHA-256, a trailing slash
// ignored> in the XDG state directory, stateHome ($XDG_STATE_HOME) when
// it is absolute, else home/.local/state. "" when neither names one.
func SpoolDir(stateHome, home, serverURL string) string {
	return spool.DirOf(stateHome, home, serverURL)
}

// Pending returns how many writes wait in the spool directory dir (0 when
// it does not exist).
func Pending(dir string) (int, error) { return spool.Pending(dir) }

// Look reports what the spool directory dir holds (nothing when it does
// not exist).
func Look(dir string) (Waiting, error) { return spool.Look(dir) }

// WithAttempts returns ctx with the number of attempts a call under it
// makes (Options.Attempts otherwise): the spool makes one when the server
// was unreachable a moment ago, so a hook does not spend its time limit
// retrying every call.
func WithAttempts(ctx context.Context, n int) context.Context {
	return spool.WithAttempts(ctx, n)
}
