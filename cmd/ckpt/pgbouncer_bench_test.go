package main

import (
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"
)

// startPgBouncer starts a PgBouncer in session mode in front of the
// PostgreSQL whose store URL is pgURL and returns the store URL through
// it and PgBouncer's processor time so far (a func), or "" when PgBouncer
// is not installed. A client's session borrows a
// server connection that outlives it: a `ckpt update` process through it
// starts no PostgreSQL backend (docs/deploy.md, "A pooler on each agent
// host").
func startPgBouncer(tb testing.TB, pgURL string) (string, func() time.Duration) {
	tb.Helper()
	bin, err := exec.LookPath("pgbouncer")
	if err != nil {
		if _, serr := os.Stat("/usr/sbin/pgbouncer"); serr != nil {
			return "", nil
		}
		bin = "/usr/sbin/pgbouncer"
	}
	u, err := url.Parse(pgURL)
	if err != nil {
		tb.Fatal(err)
	}
	dir, err := os.MkdirTemp("", "pgbouncer-")
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { os.RemoveAll(dir) })
	ini := fmt.Sprintf(`[databases]
* = host=%s
[pgbouncer]
listen_addr =
unix_socket_dir = %s
listen_port = 6432
auth_type = trust
auth_file = %s/users.txt
pool_mode = session
server_reset_query = DISCARD ALL
max_client_conn = 200
default_pool_size = 8
logfile = %s/log
`, u.Query().Get("host"), dir, dir, dir)
	for name, body := range map[string]string{"pgbouncer.ini": ini, "users.txt": `"postgres" ""` + "\n"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			tb.Fatal(err)
		}
	}
	cmd := exec.Command(bin, filepath.Join(dir, "pgbouncer.ini"))
	if os.Geteuid() == 0 { // PgBouncer refuses to run as root
		nobody, err := user.Lookup("nobody")
		if err != nil {
			tb.Fatal(err)
		}
		uid, _ := strconv.Atoi(nobody.Uid)
		gid, _ := strconv.Atoi(nobody.Gid)
		if err := os.Chmod(dir, 0o777); err != nil {
			tb.Fatal(err)
		}
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}}
	}
	if err := cmd.Start(); err != nil {
		tb.Fatalf("pgbouncer: %v", err)
	}
	tb.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	sock := filepath.Join(dir, ".s.PGSQL.6432")
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		if _, err := os.Stat(sock); err == nil {
			break
		}
		if time.Now().After(deadline) {
			log, _ := os.ReadFile(filepath.Join(dir, "log"))
			tb.Fatalf("pgbouncer did not listen in 30 s:\n%s", log)
		}
	}
	q := u.Query()
	q.Set("host", dir)
	q.Set("port", "6432")
	u.RawQuery = q.Encode()
	pid := cmd.Process.Pid
	cpu := func() time.Duration {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/schedstat", pid))
		if err != nil {
			return 0
		}
		var ns int64
		fmt.Sscan(string(b), &ns)
		return time.Duration(ns)
	}
	return u.String(), cpu
}
