// Package keeper is the per-user local keeper of PostgreSQL and server
// stores: a background process that holds one store open (its pool of
// database connections, or its keep-alive TLS connections to ckpt serve,
// warm) and serves ckpt commands over a Unix socket, so that a short
// `ckpt update` over PostgreSQL starts no database backend and links no
// driver, and one over https:// makes no TCP or TLS handshake. A command
// over a postgres:// store, or a server store with a token, first dials
// the keeper of that store (Dial); when none answers, it writes directly
// as before and starts one in the background (`ckpt keeper run`, Serve),
// which exits after an idle period.
//
// The socket lives in a private per-user directory (Dir): its owner must
// be the user and its mode 0700, and each side checks the other's user
// (SO_PEERCRED on Linux). Requests and answers are frames of the domain
// types in internal/wire's JSON (frame.go); errors travel as ckpt serve's
// do (httpapi.Error), so a command prints and exits through the keeper
// exactly as it does writing directly. The keeper side takes any
// ckpt.Store: this package does not link the PostgreSQL driver.
package keeper

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	ckpt "github.com/ckpt-dev/ckpt"
)

// Environment variables.
const (
	// EnvKeeper set to off (or 0, no, false) makes every command write
	// directly and start no keeper.
	EnvKeeper = "CKPT_KEEPER"
	// EnvIdle is how long a keeper waits without a request before it
	// exits (a Go duration, e.g. 30s); DefaultIdle when unset.
	EnvIdle = "CKPT_KEEPER_IDLE"
	// EnvHandoffKey carries, from a client whose keeper went away before
	// answering, the idempotency key its request was sent with to the
	// direct write that retries it (set by ckpt only).
	EnvHandoffKey = "CKPT_KEEPER_KEY"
)

// DefaultIdle is how long a keeper stays without a request.
const DefaultIdle = 5 * time.Minute

// Enabled reports whether commands may use a keeper under getenv's
// environment: not when CKPT_KEEPER turns it off, nor when CKPT_NOW pins
// the clock (a keeper's store keeps the clock it started with), nor in the
// direct retry of a hand-off.
func Enabled(getenv func(string) string) bool {
	switch strings.ToLower(getenv(EnvKeeper)) {
	case "off", "0", "no", "false":
		return false
	}
	return getenv("CKPT_NOW") == "" && getenv(EnvHandoffKey) == ""
}

// Idle is the keeper's idle period under getenv's environment.
func Idle(getenv func(string) string) (time.Duration, error) {
	v := getenv(EnvIdle)
	if v == "" {
		return DefaultIdle, nil
	}
	d, err := time.ParseDuration(v)
	if err != nil || d <= 0 {
		return 0, fmt.Errorf("%w: %s=%q is not a positive duration: use a form such as 30s or 5m, or unset it", ckpt.ErrInvalid, EnvIdle, v)
	}
	return d, nil
}

// Dir is the directory of this user's keepers: $XDG_RUNTIME_DIR/ckpt,
// else /tmp/ckpt-<uid> (not $TMPDIR: every process of the user must find
// the same socket, and a socket's path is limited to about 100 bytes).
func Dir(getenv func(string) string) string {
	if d := getenv("XDG_RUNTIME_DIR"); d != "" && filepath.IsAbs(d) {
		return filepath.Join(d, "ckpt")
	}
	return filepath.Join("/tmp", "ckpt-"+strconv.Itoa(os.Getuid()))
}

// pgEnv are the libpq variables that change what a postgres:// URL
// connects to or as: a keeper serves one URL under one set of them.
var pgEnv = []string{"PGHOST", "PGHOSTADDR", "PGPORT", "PGDATABASE", "PGUSER", "PGPASSWORD", "PGPASSFILE",
	"PGSERVICE", "PGSERVICEFILE", "PGSSLMODE", "PGSSLCERT", "PGSSLKEY", "PGSSLROOTCERT", "PGAPPNAME",
	"PGCONNECT_TIMEOUT", "PGTARGETSESSIONATTRS"}

// EnvToken is the bearer token of a server store (cmdutil.EnvToken): a
// keeper of a server acts with one token's scope, so the token is part of
// its name (hashed: never in a path).
const EnvToken = "CKPT_TOKEN"

// serverEnv are the variables that change what a server store's client
// sends and to whom: its token, the proxies and the trusted certificates
// Go's HTTP client reads.
var serverEnv = []string{EnvToken, "HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy", "NO_PROXY", "no_proxy",
	"SSL_CERT_FILE", "SSL_CERT_DIR"}

// IsServerURL reports whether loc names a ckpt serve server (http:// or
// https://, as remote.IsURL) rather than a PostgreSQL database.
func IsServerURL(loc string) bool {
	return strings.HasPrefix(loc, "https://") || strings.HasPrefix(loc, "http://")
}

// Protocol is the version of the keeper's protocol (frame.go). It is part
// of every keeper's name, so that a command never reaches a keeper that
// reads its requests otherwise: after an upgrade, the first command starts
// a keeper of the new version beside the old one, which exits once it
// sees its program replaced or stays idle. Version 2 added the key's
// origin to an append's flags.
const Protocol = 2

// Name is the keeper's file name stem for the store at loc under getenv's
// environment and the Protocol: a hash of them, so the socket names no
// secret. For a
// server store the environment is its token (and proxies and trusted
// certificates): two tokens of one server are two keepers, and a command
// never acts with another token's scope.
func Name(loc string, getenv func(string) string) string {
	h := sha256.New()
	fmt.Fprintf(h, "%d\x00%s", Protocol, loc)
	vars := pgEnv
	if IsServerURL(loc) {
		vars = serverEnv
	}
	for _, k := range vars {
		fmt.Fprintf(h, "\x00%s=%s", k, getenv(k))
	}
	return hex.EncodeToString(h.Sum(nil)[:12])
}

// Paths are a keeper's files in Dir.
type Paths struct {
	Dir, Socket, Lock, Log string
}

// PathsFor returns the files of the keeper of loc.
func PathsFor(loc string, getenv func(string) string) Paths {
	dir := Dir(getenv)
	name := Name(loc, getenv)
	return Paths{Dir: dir, Socket: filepath.Join(dir, name+".sock"), Lock: filepath.Join(dir, name+".lock"), Log: filepath.Join(dir, name+".log")}
}

// ErrUnsafeDir is the refusal of a keeper directory another user could
// write to: not a directory (a symbolic link, say), not owned by the user,
// or open to others.
var ErrUnsafeDir = errors.New("unsafe keeper directory")

// checkDir refuses dir unless it is a directory (not a link) owned by uid
// with no permission for group or others.
func checkDir(dir string, uid int) error {
	fi, err := os.Lstat(dir)
	if err != nil {
		return err
	}
	if !fi.IsDir() {
		return fmt.Errorf("%w: %s is not a directory: remove it", ErrUnsafeDir, dir)
	}
	if owner, ok := ownerOf(fi); ok && owner != uid {
		return fmt.Errorf("%w: %s belongs to user %d, not %d: remove it or set XDG_RUNTIME_DIR", ErrUnsafeDir, dir, owner, uid)
	}
	if fi.Mode().Perm()&0o077 != 0 {
		return fmt.Errorf("%w: %s has mode %v; it must be 0700: chmod 700 %s", ErrUnsafeDir, dir, fi.Mode().Perm(), dir)
	}
	return nil
}

// ensureDir creates dir (mode 0700) when missing and checks it.
func ensureDir(dir string) error {
	if err := os.Mkdir(dir, 0o700); err != nil && !errors.Is(err, os.ErrExist) {
		return err
	}
	return checkDir(dir, os.Getuid())
}
