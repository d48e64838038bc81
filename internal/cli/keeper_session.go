package cli

import (
	"errors"
	"maps"
	"strings"

	ckpt "github.com/ckpt-dev/ckpt"
	"github.com/ckpt-dev/ckpt/internal/cmdutil"
	"github.com/ckpt-dev/ckpt/internal/keeper"
)

// KeepSession makes the store f opens, when a keeper may serve it (a
// PostgreSQL store, or a server store with a token, the keeper not turned
// off: keptLocation), a session of this user's keeper of that store
// (keeper.Session), the one the record commands of the store and token
// use: for a command that lives for hours (ckpt mcp), which so shares the
// keeper's connections and batches with every agent of the machine. When
// no keeper answers, one is started (startKeeper) and calls are made
// directly until it does. A server store's session sits behind the
// command's spool, as the record commands' client does (Spooled).
// openServer opens the plain client of a server store (the direct path:
// servercli's, which links HTTP). It reports whether it did.
func KeepSession(f *cmdutil.Factory, openServer cmdutil.Opener) bool {
	loc, server, ok := keptLocation(f)
	if !ok || !keeper.Supported {
		return false
	}
	scheme := cmdutil.Scheme(loc)
	direct := f.Stores[scheme]
	if server {
		direct = openServer
	}
	if direct == nil {
		return false // a binary that opens no such store hands it over
	}
	open := func(f *cmdutil.Factory, loc string) (ckpt.Store, error) {
		o := keeper.SessionOptions{
			Paths:  keeper.PathsFor(loc, f.Env.Var),
			Start:  func() { startKeeper(f, loc) },
			Direct: func() (ckpt.Store, error) { return direct(f, loc) },
		}
		if server {
			// The spool keys every write (spool.NewKey, k-…) before the
			// session sees it (as HandOff tells them apart).
			o.Attempts, o.MadeKey = spoolAttempts, func(k string) bool { return strings.HasPrefix(k, "k-") }
		}
		var st ckpt.Store
		s, err := keeper.NewSession(o)
		switch {
		case errors.Is(err, keeper.ErrUnsafeDir):
			cmdutil.PrintWarning(f.Env.ErrOut, "not using the keeper: "+err.Error())
			if st, err = direct(f, loc); err != nil {
				return nil, err
			}
		case err != nil:
			return nil, err
		default:
			st = s
		}
		if server {
			return Spooled(f, loc, st), nil
		}
		return st, nil
	}
	f.Stores = maps.Clone(f.Stores)
	f.Stores[scheme] = open
	return true
}
