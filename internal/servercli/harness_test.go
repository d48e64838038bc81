package servercli

import (
	"testing"

	ckpt "github.com/ckpt-dev/ckpt"
	"github.com/ckpt-dev/ckpt/internal/cli"
	"github.com/ckpt-dev/ckpt/internal/clitest"
	"github.com/ckpt-dev/ckpt/internal/cmdutil"
)

// newHarness runs whole ckpt-server command lines (cli.MainOn with
// program()) against one memstore, as internal/cli's tests run ckpt's.
func newHarness(t *testing.T) *clitest.Harness {
	t.Helper()
	return clitest.New(t, func(env *cmdutil.Env, st ckpt.Store) int {
		return cli.MainOn(env, program(), st)
	})
}
