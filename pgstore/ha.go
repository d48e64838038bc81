package pgstore

import (
	"errors"
	"slices"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/ckpt-dev/ckpt"
)

// A store over a primary and its standbys is opened with a multi-host
// connection string and target_session_attrs=read-write
// (postgres://ckpt@db1,db2/ckpt?target_session_attrs=read-write): every
// new connection goes to whichever host takes writes now. After a
// failover the pool's connections to the old primary fail once each (the
// call returns ckpt.ErrUnavailable and is retried by its caller, a keyed
// append exactly once), and new ones reach the promoted standby. Watch
// reconnects the same way and resumes from its cursor, read from the
// ckpt_changes table, so the feed has no gap and no repeat across it.
// docs/deploy.md describes the deployment.

// hostNames lists the hosts a configuration tries, in order, as a person
// writes them (host:port, or the socket directory).
func hostNames(cfg *pgconn.Config) []string {
	name := func(host string, port uint16) string {
		if strings.HasPrefix(host, "/") {
			return host
		}
		return host + ":" + strconv.Itoa(int(port))
	}
	names := []string{name(cfg.Host, cfg.Port)}
	for _, fb := range cfg.Fallbacks {
		// sslmode=prefer lists each host twice, with and without TLS.
		if n := name(fb.Host, fb.Port); !slices.Contains(names, n) {
			names = append(names, n)
		}
	}
	return names
}

// multiHostError words a failure to connect to any of several hosts: which
// refused and why, and, when the ones that answered are standbys, that
// none takes writes until one is promoted.
func (e *connectError) multiHostError() (string, bool) {
	hosts := hostNames(e.cfg)
	if len(hosts) < 2 {
		return "", false
	}
	var ce *pgconn.ConnectError
	var errs []error
	if errors.As(e.err, &ce) {
		if j, ok := errors.Unwrap(ce).(interface{ Unwrap() []error }); ok {
			errs = j.Unwrap()
		}
	}
	readOnly := errors.Is(e.err, pgconn.ErrReadOnlyConnection)
	var each []string
	for i, err := range errs {
		why := connectReason(err)
		if errors.Is(err, pgconn.ErrReadOnlyConnection) {
			why = "read-only: a standby"
		}
		if len(errs) == len(hosts) {
			why = hosts[i] + ": " + why
		}
		each = append(each, why)
	}
	msg := "no PostgreSQL server at " + strings.Join(hosts, ", ") + " takes writes (as " + e.cfg.User + ", database " + e.cfg.Database + "; " + strings.Join(each, "; ") + ")"
	if readOnly {
		msg += ": if the primary is lost, promote the standby (pg_ctl promote, or SELECT pg_promote()); docs/deploy.md"
	} else {
		msg += ": are the servers running, and is the connection string right?"
	}
	if errors.Is(e.err, ckpt.ErrUnavailable) {
		msg = ckpt.ErrUnavailable.Error() + ": " + msg
	}
	return msg, true
}
