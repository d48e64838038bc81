package servercli

import (
	"fmt"
	"strings"

	"github.com/ckpt-dev/ckpt"
	"github.com/ckpt-dev/ckpt/internal/cli"
	"github.com/ckpt-dev/ckpt/internal/cmdutil"
	"github.com/ckpt-dev/ckpt/remote"
)

// A server store's HTTP client is ckpt-server's: ckpt links no net/http
// nor crypto/tls, and hands every command over a server store that its
// keeper does not take to ckpt-server, which also runs that keeper.

// openRemote opens the server store at u with CKPT_TOKEN, behind this
// machine's spool of that server (cli.Spooled). A command that a keeper
// lost (keeper.EnvHandoffKey) appends under the key the keeper was sent
// (cli.HandOff).
func openRemote(f *cmdutil.Factory, u string) (ckpt.Store, error) {
	st, err := openKeptRemote(f, u)
	if err != nil {
		return nil, err
	}
	if strings.TrimSpace(f.Env.Var(cmdutil.EnvToken)) == "" {
		cmdutil.PrintWarning(f.Env.ErrOut, fmt.Sprintf("%s is a server store but %s is not set: the server will refuse every call (ask its admin for a token)", cmdutil.EnvStore, cmdutil.EnvToken))
	}
	return cli.HandOff(f, cli.Spooled(f, u, st)), nil
}

// openKeptRemote is the plain client of the server store at u with
// CKPT_TOKEN: no spool, no warning. It is what a keeper of the server
// holds (ckpt-server keeper run); the commands it serves keep their spool.
func openKeptRemote(f *cmdutil.Factory, u string) (ckpt.Store, error) {
	return remote.New(u, remote.Options{Token: strings.TrimSpace(f.Env.Var(cmdutil.EnvToken))})
}
