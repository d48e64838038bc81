package pgtest

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// HA is a primary with a streaming, synchronous standby: two clusters in
// two slots (each its own directory and socket directory), the second made
// from the first by pg_basebackup -R. A commit on the primary returns only
// once the standby has flushed it (synchronous_standby_names = '*',
// synchronous_commit = on), so a failover loses no acknowledged
// transaction.
//
// A failover is KillPrimary (the machine is lost: the postmaster and every
// backend get SIGKILL at once), then Promote. Rebuild makes the dead slot a
// new synchronous standby of the promoted one, so failovers can repeat
// while URL stays the same.
type HA struct {
	nodes   [2]*Cluster
	mu      sync.Mutex // guards primary for Primary, called by a Proxy's goroutines
	primary int        // the slot of the primary
	standby bool       // the other slot holds a running standby
}

// NewHA starts a primary and a synchronous standby of it for the test;
// both are stopped and removed when it ends. Without PostgreSQL the test
// skips (fails in CI), as with Need.
func NewHA(t testing.TB) *HA {
	t.Helper()
	h := &HA{nodes: [2]*Cluster{{}, {}}}
	t.Cleanup(func() {
		for _, c := range h.nodes {
			if err := c.Close(); err != nil {
				t.Errorf("pgtest: %v", err)
			}
		}
	})
	h.nodes[0].Need(t)
	// The second slot: a directory like the first's, filled by Rebuild.
	dir, err := os.MkdirTemp("", "pgtest-standby-")
	if err != nil {
		t.Fatal(err)
	}
	s := h.nodes[1]
	s.once.Do(func() {})
	s.bin, s.dir, s.cred = h.nodes[0].bin, dir, h.nodes[0].cred
	s.data, s.sock, s.logFile = filepath.Join(dir, "data"), filepath.Join(dir, "sock"), filepath.Join(dir, "postgres.log")
	if s.cred != nil {
		if err := os.Chmod(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Chown(dir, int(s.cred.Uid), int(s.cred.Gid)); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.mkdir(s.sock); err != nil {
		t.Fatal(err)
	}
	s.killed = true // no server yet: Close only removes the directory
	if err := h.Rebuild(); err != nil {
		t.Fatal(err)
	}
	return h
}

// Primary is the cluster that takes writes.
func (h *HA) Primary() *Cluster {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.nodes[h.primary]
}

// URL returns database db's multi-host connection string: both slots'
// sockets, primary first, with target_session_attrs=read-write, so a
// client connects to whichever is the primary now.
func (h *HA) URL(db string) string {
	return fmt.Sprintf("postgres://postgres@/%s?host=%s,%s&sslmode=disable&target_session_attrs=read-write",
		db, h.nodes[0].sock, h.nodes[1].sock)
}

// CreateDatabase creates an empty database on the primary (the standby
// gets it by replication) and returns its name.
func (h *HA) CreateDatabase() (string, error) {
	p := h.Primary()
	name := fmt.Sprintf("ha%d_%d", os.Getpid(), p.seq.Add(1))
	return name, p.Exec("CREATE DATABASE " + name)
}

// KillPrimary kills the primary's postmaster and every backend with
// SIGKILL at once: a lost machine. (Killing the postmaster alone would
// let its backends finish what they were doing, and a backend waiting for
// the standby's confirmation would make its commit visible locally as it
// exits.) Writes fail until Promote.
func (h *HA) KillPrimary() error {
	return h.Primary().Kill()
}

// StallPrimary freezes (SIGSTOP) every client backend of the primary, then
// waits until the standby has flushed all the WAL the primary has: a
// commit that was waiting for the standby's confirmation is then on the
// standby, but its client never hears of it. It returns how many backends
// were waiting so. KillPrimary then loses the machine: a write whose
// outcome its client cannot know, and must retry.
func (h *HA) StallPrimary() (waiting int, err error) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	p := h.Primary()
	conn, err := pgx.Connect(ctx, p.DSN("postgres"))
	if err != nil {
		return 0, err
	}
	defer conn.Close(context.Background())
	rows, err := conn.Query(ctx, "SELECT pid FROM pg_stat_activity WHERE backend_type = 'client backend' AND pid <> pg_backend_pid()")
	if err != nil {
		return 0, err
	}
	pids, err := pgx.CollectRows(rows, pgx.RowTo[int32])
	if err != nil {
		return 0, err
	}
	for _, pid := range pids {
		_ = syscall.Kill(int(pid), syscall.SIGSTOP)
	}
	if err := conn.QueryRow(ctx, "SELECT count(*) FROM pg_stat_activity WHERE pid = ANY($1) AND wait_event = 'SyncRep'", pids).Scan(&waiting); err != nil {
		return 0, err
	}
	var lsn string
	if err := conn.QueryRow(ctx, "SELECT pg_current_wal_flush_lsn()::text").Scan(&lsn); err != nil {
		return 0, err
	}
	return waiting, p.waitFor("SELECT count(*) FROM pg_stat_replication WHERE flush_lsn >= '" + lsn + "'::pg_lsn")
}

// PauseStandby freezes (SIGSTOP) the standby's WAL receiver: it gets and
// confirms nothing more, so the primary's synchronous commits wait, while
// asynchronous ones go on. resume lets it go on (SIGCONT).
func (h *HA) PauseStandby() (resume func(), err error) {
	if !h.standby {
		return nil, fmt.Errorf("pgtest: no standby to pause")
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	s := h.nodes[1-h.primary]
	conn, err := pgx.Connect(ctx, s.DSN("postgres"))
	if err != nil {
		return nil, err
	}
	defer conn.Close(context.Background())
	var pid int
	if err := conn.QueryRow(ctx, "SELECT pid FROM pg_stat_wal_receiver").Scan(&pid); err != nil {
		return nil, fmt.Errorf("pgtest: the standby's WAL receiver: %w", err)
	}
	if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
		return nil, err
	}
	return func() { _ = syscall.Kill(pid, syscall.SIGCONT) }, nil
}

// KillStandby loses the standby's machine: its postmaster and every
// process of it get SIGKILL at once. The primary's commits then wait for
// it (synchronous_commit = on), until StartStandby.
func (h *HA) KillStandby() error {
	if !h.standby {
		return fmt.Errorf("pgtest: no standby to kill")
	}
	return h.nodes[1-h.primary].Kill()
}

// StartStandby starts the standby KillStandby killed again, on its data:
// it reconnects to the primary and catches up, and the commits that
// waited for it complete. It waits until the standby is synchronous again.
func (h *HA) StartStandby() error {
	s := h.nodes[1-h.primary]
	if !h.standby || !s.killed {
		return fmt.Errorf("pgtest: no killed standby to start")
	}
	if err := s.Start(); err != nil {
		return err
	}
	s.killed = false
	return h.Primary().waitFor("SELECT count(*) FROM pg_stat_replication WHERE state = 'streaming' AND sync_state = 'sync'")
}

// WaitingForStandby returns how many of the primary's backends wait for
// the standby to confirm their commit (wait_event SyncRep).
func (h *HA) WaitingForStandby() (int, error) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	conn, err := pgx.Connect(ctx, h.Primary().DSN("postgres"))
	if err != nil {
		return 0, err
	}
	defer conn.Close(context.Background())
	var n int
	err = conn.QueryRow(ctx, "SELECT count(*) FROM pg_stat_activity WHERE wait_event = 'SyncRep'").Scan(&n)
	return n, err
}

// Promote makes the standby the primary (pg_ctl promote, waiting until it
// takes writes). It then runs alone, without a synchronous standby, until
// Rebuild gives it one.
func (h *HA) Promote() error {
	if !h.standby {
		return fmt.Errorf("pgtest: no standby to promote")
	}
	s := h.nodes[1-h.primary]
	if out, err := s.run("pg_ctl", "-D", s.data, "-w", "-t", "60", "promote"); err != nil {
		return fmt.Errorf("pgtest: pg_ctl promote: %v\n%s\n%s", err, out, s.Log())
	}
	h.mu.Lock()
	h.primary, h.standby = 1-h.primary, false
	h.mu.Unlock()
	return nil
}

// Rebuild makes the slot that is not the primary a new synchronous
// standby of it (stopping what runs there, if anything), and waits until
// the primary's commits wait for it.
func (h *HA) Rebuild() error {
	p, s := h.nodes[h.primary], h.nodes[1-h.primary]
	if !s.killed {
		if err := s.Stop(); err != nil {
			return err
		}
	}
	if err := os.RemoveAll(s.data); err != nil {
		return err
	}
	// The primary's settings come with the copy; the standby's own socket
	// directory goes after them (the last setting wins), and a promoted
	// standby must not wait for a standby of its own.
	if out, err := s.run("pg_basebackup", "-d", "host="+p.sock+" user=postgres application_name=standby",
		"-D", s.data, "-R", "-X", "stream", "-c", "fast"); err != nil {
		return fmt.Errorf("pgtest: pg_basebackup: %v\n%s", err, out)
	}
	if err := dropSetting(filepath.Join(s.data, "postgresql.auto.conf"), "synchronous_standby_names"); err != nil {
		return err
	}
	if err := appendConf(filepath.Join(s.data, "postgresql.conf"), fmt.Sprintf("unix_socket_directories = '%s'\n", s.sock)); err != nil {
		return err
	}
	if err := s.Start(); err != nil {
		return err
	}
	s.killed, h.standby = false, true
	// Commits wait for a synchronous standby still catching up: make it
	// synchronous once it streams.
	if err := p.waitFor("SELECT count(*) FROM pg_stat_replication WHERE state = 'streaming'"); err != nil {
		return err
	}
	if err := p.Exec("ALTER SYSTEM SET synchronous_standby_names = '*'"); err != nil {
		return err
	}
	if err := p.Exec("SELECT pg_reload_conf()"); err != nil {
		return err
	}
	return p.waitFor("SELECT count(*) FROM pg_stat_replication WHERE state = 'streaming' AND sync_state = 'sync'")
}

// waitFor polls the count query until it is at least 1, for up to a
// minute.
func (c *Cluster) waitFor(query string) error {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	conn, err := pgx.Connect(ctx, c.DSN("postgres"))
	if err != nil {
		return err
	}
	defer conn.Close(context.Background())
	for {
		var n int
		if err := conn.QueryRow(ctx, query).Scan(&n); err != nil {
			return fmt.Errorf("pgtest: %s: %w", query, err)
		}
		if n > 0 {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("pgtest: waited a minute for %s", query)
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// Kill sends SIGKILL to the server's postmaster and all its children at
// once, as losing the machine would; Close then only removes the files.
func (c *Cluster) Kill() error {
	pm, err := c.postmaster()
	if err != nil {
		return err
	}
	pids := []int{pm}
	procs, _ := filepath.Glob("/proc/[0-9]*/stat")
	for _, p := range procs {
		st, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		i := strings.LastIndexByte(string(st), ')')
		if f := strings.Fields(string(st)[min(i+1, len(st)):]); i > 0 && len(f) > 1 && f[1] == strconv.Itoa(pm) {
			pid, _ := strconv.Atoi(strings.Fields(string(st))[0])
			pids = append(pids, pid)
		}
	}
	for _, pid := range pids {
		_ = syscall.Kill(pid, syscall.SIGKILL)
	}
	c.killed = true
	// Wait until the postmaster is gone, so that nothing answers on the
	// socket any more.
	for range 500 {
		if !running(pm) {
			return c.removeSocketLocks()
		}
		time.Sleep(10 * time.Millisecond)
	}
	return fmt.Errorf("pgtest: postmaster %d outlived SIGKILL for 5 s", pm)
}

// removeSocketLocks removes the socket, its lock file and postmaster.pid
// that a killed postmaster left behind. A server started later in the same
// directories refuses a lock file whose PID kill(pid, 0) still finds, and
// a killed postmaster stays a zombie until whatever adopted it reaps it
// (in a container, PID 1 may take its time or never do it: seen here).
func (c *Cluster) removeSocketLocks() error {
	left, err := filepath.Glob(filepath.Join(c.sock, ".s.PGSQL.*"))
	if err != nil {
		return err
	}
	left = append(left, filepath.Join(c.data, "postmaster.pid"))
	for _, f := range left {
		if err := os.Remove(f); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
	}
	return nil
}

// running reports whether process pid exists and is not a zombie (the
// postmaster's parent, pg_ctl, has gone, so init reaps it when it will).
func running(pid int) bool {
	st, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	i := strings.LastIndexByte(string(st), ')')
	f := strings.Fields(string(st)[i+1:])
	return len(f) > 0 && f[0] != "Z" && f[0] != "X"
}

// postmaster returns the server's process ID from postmaster.pid.
func (c *Cluster) postmaster() (int, error) {
	b, err := os.ReadFile(filepath.Join(c.data, "postmaster.pid"))
	if err != nil {
		return 0, err
	}
	pm, err := strconv.Atoi(strings.TrimSpace(strings.SplitN(string(b), "\n", 2)[0]))
	if err != nil {
		return 0, fmt.Errorf("pgtest: postmaster.pid: %v", err)
	}
	return pm, nil
}

// appendConf appends lines to a configuration file.
func appendConf(path, lines string) error {
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	if _, err := f.WriteString(lines); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// dropSetting removes a setting's lines from a configuration file.
func dropSetting(path, name string) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	var keep []string
	for _, l := range strings.SplitAfter(string(b), "\n") {
		if !strings.HasPrefix(strings.TrimSpace(l), name) {
			keep = append(keep, l)
		}
	}
	return os.WriteFile(path, []byte(strings.Join(keep, "")), 0o600)
}
