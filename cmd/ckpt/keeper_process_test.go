package main

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ckpt-dev/ckpt"
	"github.com/ckpt-dev/ckpt/internal/keeper"
	"github.com/ckpt-dev/ckpt/pgstore"
	"github.com/ckpt-dev/ckpt/remote"
)

// keeperRig runs ckpt against one store (a PostgreSQL database, or a ckpt
// serve server with a token) with a private keeper directory, as a user's
// agent does: the first record command over the store starts a keeper,
// later ones go through it.
type keeperRig struct {
	t       *testing.T
	bin     string
	url     string
	token   string // CKPT_TOKEN, for a server store
	runtime string // XDG_RUNTIME_DIR
	extra   []string
	// history reads a checkpoint's events from the store itself.
	history func(id string) ([]ckpt.Event, error)
}

func newKeeperRig(t *testing.T, extra ...string) *keeperRig {
	t.Helper()
	url := pgCluster.URL(pgCluster.NewDatabase(t))
	k := newRig(t, url, "", extra...)
	k.history = func(id string) ([]ckpt.Event, error) {
		st, err := pgstore.Open(context.Background(), url)
		if err != nil {
			return nil, err
		}
		defer st.Close()
		return st.History(context.Background(), id, 1, 0)
	}
	return k
}

// newRig is a rig of the store at url with the token.
func newRig(t *testing.T, url, token string, extra ...string) *keeperRig {
	t.Helper()
	// Short: a Unix socket's path is limited to about 100 bytes.
	runtime, err := os.MkdirTemp("", "kr")
	if err != nil {
		t.Fatal(err)
	}
	k := &keeperRig{t: t, bin: ckptBinary(t), url: url, token: token, runtime: runtime, extra: extra}
	t.Cleanup(func() {
		k.killKeeper()
		os.RemoveAll(runtime) // a keeper still starting finds no directory and exits
	})
	return k
}

func (k *keeperRig) getenv(key string) string {
	switch key {
	case "XDG_RUNTIME_DIR":
		return k.runtime
	case "CKPT_TOKEN":
		return k.token
	}
	return ""
}

func (k *keeperRig) env() []string {
	// A short idle, yet long past a command on a loaded machine: a
	// keeper the cleanup did not see start exits on its own.
	env := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + k.runtime, "USER=kai", "XDG_RUNTIME_DIR=" + k.runtime,
		"CKPT_STORE=" + k.url, "CKPT_KEEPER_IDLE=1m"}
	if k.token != "" {
		env = append(env, "CKPT_TOKEN="+k.token)
	}
	return append(env, k.extra...)
}

// run runs ckpt with args and returns its stdout, stderr and exit code.
func (k *keeperRig) run(args ...string) (string, string, int) {
	k.t.Helper()
	return k.runIn("", args...)
}

// runIn is run with stdin as the command's standard input.
func (k *keeperRig) runIn(stdin string, args ...string) (string, string, int) {
	k.t.Helper()
	cmd := exec.Command(k.bin, args...)
	cmd.Dir = k.runtime
	cmd.Env = append(k.env(), "XDG_STATE_HOME="+filepath.Join(k.runtime, "state"))
	cmd.Stdin = strings.NewReader(stdin)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		k.t.Fatal(err)
	}
	return out.String(), errOut.String(), cmd.ProcessState.ExitCode()
}

// must runs ckpt and fails the test unless it exits 0.
func (k *keeperRig) must(args ...string) string {
	k.t.Helper()
	out, errOut, code := k.run(args...)
	if code != 0 {
		k.t.Fatalf("ckpt %v: exit %d: %s%s", args, code, out, errOut)
	}
	return out
}

func (k *keeperRig) paths() keeper.Paths { return keeper.PathsFor(k.url, k.getenv) }

// status is the running keeper's status; ok is false when none answers.
func (k *keeperRig) status() (keeper.Status, bool) {
	c, err := keeper.Dial(k.paths())
	if err != nil {
		return keeper.Status{}, false
	}
	defer c.Close()
	s, err := c.Status()
	return s, err == nil
}

// waitKeeper waits until a keeper answers (started in the background by a
// command: no command waits for it) and returns its status.
func (k *keeperRig) waitKeeper() keeper.Status {
	k.t.Helper()
	for end := time.Now().Add(time.Minute); time.Now().Before(end); time.Sleep(20 * time.Millisecond) {
		if s, ok := k.status(); ok {
			return s
		}
	}
	k.t.Fatal("no keeper answered within a minute of the first command")
	return keeper.Status{}
}

// waitGone waits until no keeper answers.
func (k *keeperRig) waitGone(why string) {
	k.t.Helper()
	for end := time.Now().Add(time.Minute); time.Now().Before(end); time.Sleep(20 * time.Millisecond) {
		c, err := keeper.Dial(k.paths())
		if errors.Is(err, keeper.ErrNoKeeper) {
			return
		}
		if err == nil {
			c.Close()
		}
	}
	k.t.Fatalf("a keeper still answers a minute after %s", why)
}

// killKeeper kills the running keeper, if any, with SIGKILL and waits
// until it no longer answers.
func (k *keeperRig) killKeeper() {
	s, ok := k.status()
	if !ok {
		return
	}
	if err := syscall.Kill(s.PID, syscall.SIGKILL); err != nil && !errors.Is(err, syscall.ESRCH) {
		k.t.Fatal(err)
	}
	k.waitGone("SIGKILL")
}

// testKeeper: the first update over PostgreSQL starts a keeper and the
// next ones go through it (its count of requests says so), each printing
// and exiting exactly as writing directly does, errors included; a keeper
// killed between commands costs nothing but its warm pool.
func testKeeper(t *testing.T) {
	keeperParity(t, newKeeperRig(t, "CKPT_KEEPER=off"), newKeeperRig(t))
}

// keeperParity runs the same command lines and hooks with direct (which
// writes directly) and k (through its keeper, once one runs) over two
// stores alike, and requires the same stdout, stderr, exit codes and
// stored checkpoints.
func keeperParity(t *testing.T, direct, k *keeperRig) {
	id := "kai-7/secondary-a"
	for _, r := range []*keeperRig{direct, k} {
		r.must("start", id, "--step", "research", "--step", "spec")
	}
	s0 := k.waitKeeper()
	if _, ok := direct.status(); ok {
		t.Fatal("CKPT_KEEPER=off started a keeper")
	}
	stamp := regexp.MustCompile(`\d{4}-\d\d-\d\dT[0-9:.]+Z|\d+(ms|s|m) ago`)
	lines := [][]string{
		{"update", id, "--current-step", "reading the spec", "--stage", "S1"},
		{"step", id, "research", "--done"},
		{"note", id, "a note"},
		{"update", "kai-7/nosuch", "--current-step", "x"},      // not found
		{"update", id, "--if-rev", "1", "--current-step", "y"}, // conflict
		{"start", id},                    // exists
		{"step", id, "nosuch", "--done"}, // the store refuses it
		{"update", id, "--progress", "2/9", "--json"},
		{"beat", id, "--state", "busy", "--reason", "make test"},
	}
	for _, args := range lines {
		do, de, dc := direct.run(args...)
		ko, ke, kc := k.run(args...)
		if dc != kc || stamp.ReplaceAllString(do, "T") != stamp.ReplaceAllString(ko, "T") || de != ke {
			t.Errorf("ckpt %v:\ndirectly: exit %d\n%s%s\nthrough the keeper: exit %d\n%s%s", args, dc, do, de, kc, ko, ke)
		}
	}
	sMid, ok := k.status()
	if !ok || sMid.PID != s0.PID || sMid.Requests-s0.Requests < int64(len(lines)) {
		t.Fatalf("the keeper served %d requests for %d commands (pid %d, then %d, %v)", sMid.Requests-s0.Requests, len(lines), s0.PID, sMid.PID, ok)
	}
	// A Claude Code session's hooks: the first prompt creates the
	// session's checkpoint, a write is recorded, the stop writes.
	for _, r := range []*keeperRig{direct, k} {
		if err := os.MkdirAll(filepath.Join(r.runtime, "app", ".git"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	hooks := []struct{ event, payload string }{
		{"UserPromptSubmit", `{"session_id":"s1","cwd":"@/app","hook_event_name":"UserPromptSubmit","prompt":"Refactor parseConfig"}`},
		{"PostToolUse", `{"session_id":"s1","cwd":"@/app","hook_event_name":"PostToolUse","tool_name":"Write","tool_input":{"file_path":"@/app/new.go","content":"package app\n"},"tool_response":{"type":"create","filePath":"@/app/new.go"},"tool_use_id":"toolu_01"}`},
		{"Stop", `{"session_id":"s1","cwd":"@/app","hook_event_name":"Stop","stop_hook_active":false,"last_assistant_message":"Refactored."}`},
	}
	for _, h := range hooks {
		do, de, dc := direct.runIn(strings.ReplaceAll(h.payload, "@", direct.runtime), "hook", h.event)
		ko, ke, kc := k.runIn(strings.ReplaceAll(h.payload, "@", k.runtime), "hook", h.event)
		if dc != kc || stamp.ReplaceAllString(do, "T") != stamp.ReplaceAllString(ko, "T") || de != ke {
			t.Errorf("ckpt hook %s:\ndirectly: exit %d\n%s%s\nthrough the keeper: exit %d\n%s%s", h.event, dc, do, de, kc, ko, ke)
		}
	}
	s1, ok := k.status()
	if !ok || s1.PID != s0.PID || s1.Requests-sMid.Requests-1 < int64(len(hooks)) { // -1: the status request
		t.Fatalf("the keeper served %d requests for %d hooks (pid %d, then %d, %v)", s1.Requests-sMid.Requests-1, len(hooks), s0.PID, s1.PID, ok)
	}
	for _, cp := range []string{id, "app/session-s1"} {
		show := func(r *keeperRig) string { return stamp.ReplaceAllString(r.must("show", cp, "--json"), "T") }
		if a, b := show(direct), show(k); a != b {
			t.Errorf("%s differs:\ndirectly: %s\nthrough the keeper: %s", cp, a, b)
		}
	}

	// --no-keeper writes directly while the keeper runs.
	before, _ := k.status()
	k.must("--no-keeper", "note", id, "written directly")
	if after, _ := k.status(); after.Requests != before.Requests+1 { // +1: the status request
		t.Errorf("--no-keeper: the keeper served %d requests", after.Requests-before.Requests-1)
	}

	// Killed between commands: the next update writes directly (and
	// starts another keeper).
	k.killKeeper()
	if out := k.must("update", id, "--current-step", "after the kill"); !strings.Contains(out, "after the kill") && !strings.Contains(out, id) {
		t.Errorf("the update after the kill printed %q", out)
	}
	if s2 := k.waitKeeper(); s2.PID == s0.PID {
		t.Errorf("the killed keeper (pid %d) answers", s0.PID)
	}
	k.must("keeper", "stop")
	k.waitGone("keeper stop")
}

// testKeeperKilledMidRequest: a keeper killed (SIGKILL) after taking a
// request, before or after applying it, loses no write and doubles none:
// ckpt retries the command directly under the hand-off's key.
func testKeeperKilledMidRequest(t *testing.T) {
	keeperKilledMidRequest(t, newKeeperRig)
}

// keeperKilledMidRequest is testKeeperKilledMidRequest over the stores of
// rig.
func keeperKilledMidRequest(t *testing.T, rig func(*testing.T, ...string) *keeperRig) {
	for _, when := range []string{"before", "after"} {
		k := rig(t, "CKPT_KEEPER=off")
		id := "kai-7/mid-" + when
		k.must("start", id)
		k.extra = nil
		dying := k.startDyingKeeper(t, when)
		text := "written as the keeper died " + when + " applying it"
		out, errOut, code := k.run("update", id, "--current-step", text)
		if code != 0 || !strings.Contains(out, id) {
			t.Fatalf("%s: the update through a dying keeper: exit %d: %s%s", when, code, out, errOut)
		}
		dying.waitKilled(t)
		if n, total := k.eventsWith(t, id, text); n != 1 || total != 2 {
			t.Errorf("%s: the update is in the history %d times (%d events), want once", when, n, total)
		}
	}
}

// dyingKeeper is TestKeeperHelperProcess serving a rig's store: it kills
// itself with SIGKILL at its first append, before or after applying it.
type dyingKeeper struct {
	when string // "before" or "after"
	cmd  *exec.Cmd
	log  bytes.Buffer
}

// startDyingKeeper starts a dyingKeeper for k's store and returns once it
// answers.
func (k *keeperRig) startDyingKeeper(t *testing.T, when string) *dyingKeeper {
	t.Helper()
	d := &dyingKeeper{when: when, cmd: exec.Command(os.Args[0], "-test.run=^TestKeeperHelperProcess$")}
	d.cmd.Env = append(k.env(), "CKPT_KEEPER_HELPER="+when)
	d.cmd.Stdout, d.cmd.Stderr = &d.log, &d.log
	if err := d.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	k.waitKeeper()
	return d
}

// waitKilled waits for the keeper to end and fails t unless SIGKILL ended
// it (at the append, not before one came).
func (d *dyingKeeper) waitKilled(t *testing.T) {
	t.Helper()
	_ = d.cmd.Wait()
	if ws, ok := d.cmd.ProcessState.Sys().(syscall.WaitStatus); !ok || !ws.Signaled() || ws.Signal() != syscall.SIGKILL {
		t.Fatalf("%s: the helper keeper was not killed at the append (%v): %s", d.when, d.cmd.ProcessState, d.log.String())
	}
}

// eventsWith returns how many of id's events carry text in their data, and
// how many events id has.
func (k *keeperRig) eventsWith(t *testing.T, id, text string) (n, total int) {
	t.Helper()
	events, err := k.history(id)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range events {
		if strings.Contains(string(e.Data), text) {
			n++
		}
	}
	return n, len(events)
}

// TestKeeperHelperProcess is the keeper testKeeperKilledMidRequest runs
// (Go's helper-process pattern): it serves the store and kills itself
// with SIGKILL at the first append, before or after applying it
// (CKPT_KEEPER_HELPER). Run directly it has nothing to do.
func TestKeeperHelperProcess(t *testing.T) {
	when := os.Getenv("CKPT_KEEPER_HELPER")
	if when == "" {
		t.Skip("the keeper of testKeeperKilledMidRequest")
	}
	url := os.Getenv("CKPT_STORE")
	err := keeper.Serve(context.Background(), keeper.Options{
		Paths: keeper.PathsFor(url, os.Getenv), Idle: time.Minute,
		Open: func() (ckpt.Store, error) {
			if keeper.IsServerURL(url) {
				st, err := remote.New(url, remote.Options{Token: os.Getenv("CKPT_TOKEN")})
				return dying{Store: st, after: when == "after"}, err
			}
			st, err := pgstore.Open(context.Background(), url)
			return dying{Store: st, after: when == "after"}, err
		},
	})
	t.Fatalf("the helper keeper ended: %v", err)
}

// dying is a store that kills its process at the first append.
type dying struct {
	ckpt.Store
	after bool
}

func (d dying) Append(ctx context.Context, id string, e ckpt.Event, o ckpt.AppendOptions) (ckpt.AppendResult, error) {
	if d.after {
		if _, err := d.Store.Append(ctx, id, e, o); err != nil {
			return ckpt.AppendResult{}, err
		}
	}
	_ = syscall.Kill(os.Getpid(), syscall.SIGKILL)
	select {}
}

// testKeeperIdleExit: a keeper exits after its idle period and removes its
// socket.
func testKeeperIdleExit(t *testing.T) {
	// 3 s: the test must see it running before it goes, on a loaded machine.
	k := newKeeperRig(t, "CKPT_KEEPER_IDLE=3s")
	k.must("start", "kai-7/idle")
	k.waitKeeper()
	k.waitGone("its idle period")
	if _, err := os.Stat(k.paths().Socket); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the idle keeper left its socket: %v", err)
	}
}

// testKeeperRefusesUnsafeDirectories: a keeper directory open to others,
// or another user's, is not used (the command writes directly and says
// why) and no keeper starts in it.
func testKeeperRefusesUnsafeDirectories(t *testing.T) {
	k := newKeeperRig(t)
	dir := k.paths().Dir
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, 0o755); err != nil { // past the umask
		t.Fatal(err)
	}
	check := func(what string) {
		out, errOut, code := k.run("start", "kai-7/"+what)
		if code != 0 || !strings.Contains(out, "kai-7/"+what) || !strings.Contains(errOut, "not using the keeper") {
			t.Errorf("%s: exit %d: %s%s", what, code, out, errOut)
		}
		if strings.Count(errOut, "not using the keeper") != 1 {
			t.Errorf("%s: the warning is not said once: %s", what, errOut)
		}
		if _, err := os.Stat(k.paths().Lock); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s: a keeper started in it: %v", what, err)
		}
	}
	check("open")
	if os.Getuid() == 0 {
		if err := os.Chmod(dir, 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.Chown(dir, 65534, 65534); err != nil {
			t.Fatal(err)
		}
		check("another-users")
	}
}

// testKeeperStopsWhenUpgraded: a keeper whose binary is replaced (as an
// upgrade installs a new file at its path) stops at its next check (a
// third of its idle period here) however busy, and the next command
// starts the new one.
func testKeeperStopsWhenUpgraded(t *testing.T) {
	k := newKeeperRig(t, "CKPT_KEEPER_IDLE=3s")
	dir := t.TempDir()
	for _, name := range []string{"ckpt", "ckpt-pg"} {
		copyFile(t, filepath.Join(filepath.Dir(k.bin), name), filepath.Join(dir, name))
	}
	k.bin = filepath.Join(dir, "ckpt")
	pg := filepath.Join(dir, "ckpt-pg")
	copyFile(t, pg, pg+".new") // the upgrade, made ready before the keeper starts
	k.must("start", "kai-7/upgraded")
	old := k.waitKeeper()
	if err := os.Rename(pg+".new", pg); err != nil {
		t.Fatal(err)
	}
	// Busy (a request every 20 ms), so not idle: the replacement stops it.
	for end := time.Now().Add(time.Minute); ; time.Sleep(20 * time.Millisecond) {
		if _, ok := k.status(); !ok {
			break
		}
		if time.Now().After(end) {
			t.Fatal("the keeper still answers a minute after its binary was replaced")
		}
	}
	k.must("note", "kai-7/upgraded", "after the upgrade")
	if s := k.waitKeeper(); s.PID == old.PID {
		t.Errorf("the old keeper (pid %d) answers", old.PID)
	}
}

// copyFile copies the executable src to dst.
func copyFile(t *testing.T, src, dst string) {
	t.Helper()
	b, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dst, b, 0o755); err != nil {
		t.Fatal(err)
	}
}
