package cli

import (
	"fmt"
	"io"
	"path/filepath"
	"strconv"
	"time"

	ckpt "github.com/ckpt-dev/ckpt"
	"github.com/ckpt-dev/ckpt/internal/cmdutil"
	"github.com/ckpt-dev/ckpt/internal/httpapi"
	"github.com/ckpt-dev/ckpt/internal/render"
	"github.com/ckpt-dev/ckpt/internal/spool"
)

// Spooled wraps st, a client of the server store at u, in this machine's
// spool of that server: every call first delivers the writes spooled
// earlier, in order; with CKPT_SPOOL=1 (the hooks set it) a write the
// server cannot take is spooled instead of failing, and the command exits
// 0 with a warning (see run). It is st itself when there is no spool
// directory. ckpt wraps its keeper's client in it (useKeeper), ckpt-server
// its HTTP client (servercli), so the spool is the command's either way.
func Spooled(f *cmdutil.Factory, u string, st ckpt.Store) ckpt.Store {
	dir := spoolDir(f.Env, u)
	if dir == "" {
		return st
	}
	spooling, _ := strconv.ParseBool(f.Env.Var(EnvSpool))
	return spool.New(st, dir, spooling, func(w string) { cmdutil.PrintWarning(f.Env.ErrOut, w) })
}

// EnvSpool, when true, makes a write that cannot reach the server wait in
// this machine's spool instead of failing.
const EnvSpool = "CKPT_SPOOL"

// withSpooling returns getenv with CKPT_SPOOL set: what hooks use, so that
// a hook against an absent server spools its write and exits 0.
func withSpooling(getenv func(string) string) func(string) string {
	return func(k string) string {
		if k == EnvSpool {
			return "1"
		}
		if getenv == nil {
			return ""
		}
		return getenv(k)
	}
}

// spoolDir is this machine's spool of server u (spool.DirOf).
func spoolDir(env *cmdutil.Env, u string) string {
	return spool.DirOf(env.Var("XDG_STATE_HOME"), env.Var("HOME"), u)
}

// spoolWaiting reports what this machine's spool for the server store in
// use holds, and where it is ("" for a local store).
func spoolWaiting(f *cmdutil.Factory) (spool.Waiting, string) {
	u := f.Location()
	if !httpapi.IsURL(u) {
		return spool.Waiting{}, ""
	}
	dir := spoolDir(f.Env, u)
	if dir == "" {
		return spool.Waiting{}, ""
	}
	w, _ := spool.Look(dir)
	return w, dir
}

// noteSpool says on w when writes wait in this machine's spool for the
// server store in use, and when some were refused for good: what ckpt
// status adds below its view (on stderr, so --json and --md stay clean).
func noteSpool(f *cmdutil.Factory, w io.Writer) {
	sp, dir := spoolWaiting(f)
	if sp.Writes > 0 {
		fmt.Fprintf(w, "note: %d write(s) to %s wait in the spool %s (the oldest spooled %s): the server could not be reached; the next ckpt call that reaches it delivers them in order\n",
			sp.Writes, f.Location(), dir, render.Ago(sp.Oldest, time.Now()))
	}
	if sp.Failed > 0 {
		fmt.Fprintf(w, "note: the server refused %d spooled write(s) for good: they are kept in %s with the reason of each (.reason)\n",
			sp.Failed, filepath.Join(dir, "failed"))
	}
}
