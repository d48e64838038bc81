// Package pgtest starts a throwaway PostgreSQL cluster for tests, from the
// system's binaries (Debian's postgresql package: /usr/lib/postgresql/15/bin).
// The cluster lives in a temporary directory and listens only on a Unix
// socket there (no TCP port), so parallel test binaries never collide.
// initdb refuses to run as root: as root, the cluster runs as the
// unprivileged user nobody.
//
// One cluster per test package, started by the first test that asks for a
// database and stopped by TestMain (Main), one fresh database per test
// (NewDatabase), dropped when the test ends:
//
//	var cluster pgtest.Cluster
//
//	func TestMain(m *testing.M) { pgtest.Main(m, &cluster) }
//
//	func TestX(t *testing.T) {
//		dsn := cluster.NewDatabase(t) // skips when PostgreSQL is absent outside CI
//		…
//	}
//
// Outside CI a machine without PostgreSQL skips these tests with a message
// naming the install command; with CI=true they fail instead.
package pgtest

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// InstallHint is the command that installs what the tests need.
const InstallHint = "apt-get update && apt-get install -y postgresql"

// BinDirs are where the cluster's binaries are looked for, in order;
// $PGTEST_BIN (a directory holding initdb, pg_ctl and postgres) comes first.
var BinDirs = []string{"/usr/lib/postgresql/15/bin", "/usr/lib/postgresql/16/bin", "/usr/lib/postgresql/17/bin"}

// Cluster is a PostgreSQL cluster in a temporary directory. The zero
// value is ready: the cluster starts on first use (NewDatabase, Need).
type Cluster struct {
	once     sync.Once
	startErr error // why it could not start

	bin     string // directory of initdb, pg_ctl, postgres
	dir     string // temporary root: data/, sock/, log
	data    string
	sock    string
	logFile string
	cred    *syscall.Credential // the user the server runs as, nil for the current one
	seq     atomic.Int64        // database name counter
	killed  bool                // Kill ended the server: Close only removes the files

	tmplMu    sync.Mutex
	templates map[string]error // made by Template, with setup's error
}

// errMissing is the reason the cluster could not start when PostgreSQL is
// not installed (as opposed to a failure to start it).
var errMissing = errors.New("PostgreSQL binaries not found")

// findBin returns the directory holding initdb, pg_ctl and postgres.
func findBin() (string, error) {
	dirs := BinDirs
	if d := os.Getenv("PGTEST_BIN"); d != "" {
		dirs = append([]string{d}, dirs...)
	}
	for _, d := range dirs {
		ok := true
		for _, name := range []string{"initdb", "pg_ctl", "postgres"} {
			if _, err := os.Stat(filepath.Join(d, name)); err != nil {
				ok = false
			}
		}
		if ok {
			return d, nil
		}
	}
	return "", fmt.Errorf("%w in %s (install them: %s)", errMissing, strings.Join(dirs, ", "), InstallHint)
}

// create creates and starts the cluster, once.
func (c *Cluster) create() error {
	c.once.Do(func() {
		bin, err := findBin()
		if err != nil {
			c.startErr = err
			return
		}
		dir, err := os.MkdirTemp("", "pgtest-")
		if err != nil {
			c.startErr = err
			return
		}
		c.bin, c.dir = bin, dir
		c.data, c.sock, c.logFile = filepath.Join(dir, "data"), filepath.Join(dir, "sock"), filepath.Join(dir, "postgres.log")
		if err := c.init(); err != nil {
			os.RemoveAll(dir)
			c.dir, c.startErr = "", err
			return
		}
		if err := c.Start(); err != nil {
			os.RemoveAll(dir)
			c.dir, c.startErr = "", err
		}
	})
	return c.startErr
}

// init runs initdb, as nobody when this process is root.
func (c *Cluster) init() error {
	if os.Geteuid() == 0 {
		u, err := user.Lookup("nobody")
		if err != nil {
			return fmt.Errorf("pgtest: initdb refuses root and there is no user nobody: %w", err)
		}
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		c.cred = &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}
		if err := os.Chmod(c.dir, 0o755); err != nil {
			return err
		}
		if err := os.Chown(c.dir, uid, gid); err != nil {
			return err
		}
	}
	if err := c.mkdir(c.sock); err != nil {
		return err
	}
	out, err := c.run("initdb", "-D", c.data, "-U", "postgres", "--auth=trust", "--encoding=UTF8", "--locale=C", "--no-instructions")
	if err != nil {
		return fmt.Errorf("pgtest: initdb: %v\n%s", err, out)
	}
	// Unix socket only; enough connections for 64 writers in every shape at once (BenchmarkPeer).
	conf := fmt.Sprintf("listen_addresses = ''\nunix_socket_directories = '%s'\nmax_connections = 300\n", c.sock)
	f, err := os.OpenFile(filepath.Join(c.data, "postgresql.conf"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	if _, err := f.WriteString(conf); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

func (c *Cluster) mkdir(dir string) error {
	if err := os.Mkdir(dir, 0o700); err != nil {
		return err
	}
	if c.cred != nil {
		return os.Chown(dir, int(c.cred.Uid), int(c.cred.Gid))
	}
	return nil
}

// run runs one of the cluster's binaries as the cluster's user.
func (c *Cluster) run(name string, args ...string) ([]byte, error) {
	cmd := exec.Command(filepath.Join(c.bin, name), args...)
	cmd.Dir = c.dir
	cmd.Env = append(os.Environ(), "LC_ALL=C")
	if c.cred != nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: c.cred}
	}
	return cmd.CombinedOutput()
}

// Start starts the cluster's server (again, after Stop) and waits until it
// accepts connections.
func (c *Cluster) Start() error {
	out, err := c.run("pg_ctl", "-D", c.data, "-l", c.logFile, "-w", "-t", "60", "start")
	if err != nil {
		return fmt.Errorf("pgtest: pg_ctl start: %v\n%s\n%s", err, out, c.Log())
	}
	return nil
}

// Stop stops the server with a fast shutdown: open connections are
// closed, in-flight transactions rolled back.
func (c *Cluster) Stop() error {
	out, err := c.run("pg_ctl", "-D", c.data, "-m", "fast", "-w", "-t", "60", "stop")
	if err != nil {
		return fmt.Errorf("pgtest: pg_ctl stop: %v\n%s", err, out)
	}
	return nil
}

// Restart stops and starts the server.
func (c *Cluster) Restart() error {
	if err := c.Stop(); err != nil {
		return err
	}
	return c.Start()
}

// Log returns the server's log so far.
func (c *Cluster) Log() string {
	b, _ := os.ReadFile(c.logFile)
	return string(b)
}

// DSN returns the connection string of database db, with extra
// "key=value" settings (e.g. pool_max_conns=64) appended.
func (c *Cluster) DSN(db string, extra ...string) string {
	s := fmt.Sprintf("host=%s user=postgres dbname=%s sslmode=disable", c.sock, db)
	for _, e := range extra {
		s += " " + e
	}
	return s
}

// URL returns database db's connection string as a postgres:// URL (the
// form ckpt's --store takes).
func (c *Cluster) URL(db string) string {
	return fmt.Sprintf("postgres://postgres@/%s?host=%s&sslmode=disable", db, c.sock)
}

// NewDatabase creates a fresh, empty database (a copy of template1) for
// the test and returns its name; it is dropped when the test ends. Without
// PostgreSQL the test skips (fails in CI): see Need.
func (c *Cluster) NewDatabase(t testing.TB) string {
	t.Helper()
	return c.NewDatabaseFrom(t, "template1")
}

// NewDatabaseFrom is NewDatabase with another template: a database made
// once by Template, so that each test need not set up its schema again.
func (c *Cluster) NewDatabaseFrom(t testing.TB, template string) string {
	t.Helper()
	c.Need(t)
	name := fmt.Sprintf("t%d_%d", os.Getpid(), c.seq.Add(1))
	if err := c.Exec("CREATE DATABASE " + name + " TEMPLATE " + template); err != nil {
		t.Fatalf("pgtest: %v", err)
	}
	t.Cleanup(func() {
		if err := c.Exec("DROP DATABASE IF EXISTS " + name + " WITH (FORCE)"); err != nil {
			t.Errorf("pgtest: %v", err)
		}
	})
	return name
}

// Template returns the name of a database made once per cluster by setup
// (given its connection string; it must close its connections before it
// returns), to copy with NewDatabaseFrom.
func (c *Cluster) Template(t testing.TB, name string, setup func(dsn string) error) string {
	t.Helper()
	c.Need(t)
	c.tmplMu.Lock()
	defer c.tmplMu.Unlock()
	if c.templates == nil {
		c.templates = map[string]error{}
	}
	err, done := c.templates[name]
	if !done {
		err = c.Exec("CREATE DATABASE " + name)
		if err == nil {
			err = setup(c.DSN(name))
		}
		c.templates[name] = err
	}
	if err != nil {
		t.Fatalf("pgtest: template %s: %v", name, err)
	}
	return name
}

// Exec runs one statement in the postgres database.
func (c *Cluster) Exec(sql string) error {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	conn, err := pgx.Connect(ctx, c.DSN("postgres"))
	if err != nil {
		return err
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, sql); err != nil {
		return fmt.Errorf("%s: %w", sql, err)
	}
	return nil
}

// Close stops the server and removes the cluster's directory, if it was
// started.
func (c *Cluster) Close() error {
	if c.dir == "" {
		return nil
	}
	var err error
	if !c.killed {
		err = c.Stop()
	}
	if rmErr := os.RemoveAll(c.dir); err == nil {
		err = rmErr
	}
	return err
}

// Need starts the cluster if it is not running yet. When PostgreSQL is not
// installed it skips the test, and fails it in CI (CI=true), where every
// PostgreSQL test must run; any other failure to start fails the test.
func (c *Cluster) Need(t testing.TB) {
	t.Helper()
	err := c.create()
	switch {
	case err == nil:
		return
	case errors.Is(err, errMissing) && os.Getenv("CI") != "true":
		t.Skipf("no PostgreSQL: %v", err)
	case errors.Is(err, errMissing):
		t.Fatalf("no PostgreSQL, and CI must run every PostgreSQL test: %v", err)
	default:
		t.Fatalf("pgtest: %v", err)
	}
}

// Main runs the package's tests and then stops the cluster if a test
// started it, and exits.
func Main(m *testing.M, c *Cluster) {
	code := m.Run()
	if err := c.Close(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		code = max(code, 1)
	}
	os.Exit(code)
}

// CPU returns the processor time the server has used so far: the
// postmaster's and its children's, live and exited (Linux /proc). A live
// process counts in nanoseconds (/proc/PID/schedstat) where the kernel
// keeps them: its clock ticks of 10 ms, truncated per process, would lose
// most of the work of 64 short-lived backends. Exited children count in
// ticks (the postmaster's cutime and cstime). Benchmarks report the
// server's share of a workload with it.
func (c *Cluster) CPU() (time.Duration, error) {
	b, err := os.ReadFile(filepath.Join(c.data, "postmaster.pid"))
	if err != nil {
		return 0, err
	}
	pm, err := strconv.Atoi(strings.TrimSpace(strings.SplitN(string(b), "\n", 2)[0]))
	if err != nil {
		return 0, fmt.Errorf("pgtest: postmaster.pid: %v", err)
	}
	procs, err := filepath.Glob("/proc/[0-9]*/stat")
	if err != nil {
		return 0, err
	}
	var (
		ticks int64
		exact time.Duration
	)
	for _, p := range procs {
		st, err := os.ReadFile(p)
		if err != nil {
			continue // exited meanwhile
		}
		// Fields after the command name, which is in parentheses and may
		// hold spaces: state ppid … utime(14) stime cutime cstime(17).
		i := strings.LastIndexByte(string(st), ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(string(st)[i+1:])
		pid, _ := strconv.Atoi(strings.Fields(string(st))[0])
		ppid, _ := strconv.Atoi(f[1])
		if pid != pm && ppid != pm || len(f) < 15 {
			continue
		}
		own := f[11:13] // utime, stime
		if pid == pm {
			own = f[11:15] // and the reaped children's
		}
		if ns, ok := schedRuntime(pid); ok {
			exact += ns
			own = own[2:]
		}
		for _, k := range own {
			v, _ := strconv.ParseInt(k, 10, 64)
			ticks += v
		}
	}
	return time.Duration(ticks)*10*time.Millisecond + exact, nil
}

// schedRuntime is the time process pid has run, in nanoseconds, from the
// first field of /proc/PID/schedstat; false where it is missing or zero
// (a kernel without scheduler statistics).
func schedRuntime(pid int) (time.Duration, bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/schedstat")
	if err != nil {
		return 0, false
	}
	f := strings.Fields(string(b))
	if len(f) == 0 {
		return 0, false
	}
	ns, err := strconv.ParseInt(f[0], 10, 64)
	if err != nil || ns <= 0 {
		return 0, false
	}
	return time.Duration(ns), true
}
