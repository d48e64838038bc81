package main

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	ckpt "github.com/ckpt-dev/ckpt"
	"github.com/ckpt-dev/ckpt/filestore"
	"github.com/ckpt-dev/ckpt/internal/process"
)

// Presence through the real binary and real processes: an agent client
// that runs the hooks and is then killed with SIGKILL is dead at the next
// look, not after four intervals; a PID that now belongs to another
// process is not life.

// envFakeClient makes the test binary act as an agent client (see
// TestFakeClient).
const envFakeClient = "CKPT_TEST_FAKE_CLIENT"

// TestFakeClient is not a test: run by fakeClient with envFakeClient set to
// the ckpt binary, it plays an agent client. It runs `ckpt hook EVENT` as
// its child for each event named in CKPT_TEST_EVENTS, with the payload in
// CKPT_TEST_PAYLOAD_<EVENT>, says "ready" and then waits to be killed.
func TestFakeClient(t *testing.T) {
	bin := os.Getenv(envFakeClient)
	if bin == "" {
		t.Skip("only run as a fake agent client")
	}
	for _, ev := range strings.Fields(os.Getenv("CKPT_TEST_EVENTS")) {
		cmd := exec.Command(bin, "hook", ev)
		cmd.Stdin = strings.NewReader(os.Getenv("CKPT_TEST_PAYLOAD_" + ev))
		if out, err := cmd.CombinedOutput(); err != nil || len(out) > 0 && ev != "UserPromptSubmit" {
			fmt.Printf("hook %s: %v %s\n", ev, err, out)
			os.Exit(1)
		}
	}
	fmt.Println("ready")
	time.Sleep(10 * time.Minute)
}

// fakeClient starts an agent client in dir that runs the hooks for events
// (payloads by event) and waits; it returns once they ran.
func fakeClient(t *testing.T, bin, dir string, events []string, payloads map[string]string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestFakeClient$")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), envFakeClient+"="+bin, "CKPT_TEST_EVENTS="+strings.Join(events, " "), "XDG_STATE_HOME="+t.TempDir())
	for ev, p := range payloads {
		cmd.Env = append(cmd.Env, "CKPT_TEST_PAYLOAD_"+ev+"="+p)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil || line != "ready\n" {
		t.Fatalf("fake client: %q, %v", line, err)
	}
	return cmd
}

// presenceLine is the presence row of `ckpt show ID`.
func presenceLine(t *testing.T, bin, store, id string) string {
	t.Helper()
	out := mustCkpt(t, bin, store, "show", id)
	for _, l := range strings.Split(out, "\n") {
		if rest, ok := strings.CutPrefix(l, "presence"); ok {
			return strings.TrimSpace(rest)
		}
	}
	t.Fatalf("ckpt show %s has no presence row:\n%s", id, out)
	return ""
}

func TestPresenceDeadClientKilled(t *testing.T) {
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		t.Skip("needs Linux's /proc")
	}
	bin := ckptBinary(t)
	dir := hookProject(t, bin)
	store := dir + "/.ckpt"
	payload := func(ev, extra string) string {
		return fmt.Sprintf(`{"session_id":"s1","cwd":%q,"hook_event_name":%q%s}`, dir, ev, extra)
	}
	client := fakeClient(t, bin, dir, []string{"UserPromptSubmit", "PreToolUse"}, map[string]string{
		"UserPromptSubmit": payload("UserPromptSubmit", `,"prompt":"run the tests"`),
		"PreToolUse":       payload("PreToolUse", `,"tool_name":"Bash","tool_input":{"command":"go test ./..."}`),
	})
	id := strings.TrimPrefix(dir, "/")
	id = id[strings.LastIndex(id, "/")+1:] + "/session-s1"
	if got := presenceLine(t, bin, store, id); !strings.HasPrefix(got, "busy since ") || !strings.HasSuffix(got, ": Bash: go test ./...") {
		t.Fatalf("presence while the client runs a tool: %q", got)
	}
	st, err := filestore.Open(store)
	if err != nil {
		t.Fatal(err)
	}
	c, err := st.Get(context.Background(), id, 0)
	st.Close()
	if err != nil {
		t.Fatal(err)
	}
	if p := c.Heartbeat.Presence.Process; p == nil || p.PID != client.Process.Pid || p.Host != process.Host() || p.Start == "" {
		t.Fatalf("recorded process %+v, want the client %d", p, client.Process.Pid)
	}
	if err := client.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	client.Wait()
	want := "dead since "
	if got := presenceLine(t, bin, store, id); !strings.HasPrefix(got, want) || !strings.HasSuffix(got, fmt.Sprintf(": process %d on %s is gone, last reported busy (Bash: go test ./...)", client.Process.Pid, process.Host())) {
		t.Fatalf("presence right after the client was killed: %q", got)
	}
}

// TestPresencePIDReused records the live test process with a start time it
// never had: the PID runs, but it is another process, so the agent is dead.
func TestPresencePIDReused(t *testing.T) {
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		t.Skip("needs Linux's /proc")
	}
	bin := ckptBinary(t)
	store := newProcessStore(t, bin)
	mustCkpt(t, bin, store, "start", "w", "--title", "W")
	self := process.Of(os.Getpid())
	st, err := filestore.Open(store)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	beat := func(p ckpt.Process) {
		t.Helper()
		if err := st.Beat(context.Background(), "w", ckpt.Signal{State: ckpt.PresenceWorking, Process: &p}); err != nil {
			t.Fatal(err)
		}
	}
	beat(*self)
	if got := presenceLine(t, bin, store, "w"); !strings.HasPrefix(got, "working") {
		t.Fatalf("presence of a live process: %q", got)
	}
	reused := *self
	start, _ := strconv.ParseUint(self.Start, 10, 64)
	reused.Start = strconv.FormatUint(start+1, 10)
	beat(reused)
	if got := presenceLine(t, bin, store, "w"); !strings.HasPrefix(got, "dead since ") || !strings.Contains(got, fmt.Sprintf("process %d on", os.Getpid())) {
		t.Fatalf("presence of a reused PID: %q", got)
	}
	// On another host nothing is known: the clock decides.
	other := *self
	other.Host += "-elsewhere"
	beat(other)
	if got := presenceLine(t, bin, store, "w"); !strings.HasPrefix(got, "working") {
		t.Fatalf("presence of a process on another host: %q", got)
	}
}
