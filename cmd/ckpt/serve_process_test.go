package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ckpt-dev/ckpt/internal/mcp"
	"github.com/ckpt-dev/ckpt/internal/syncbuf"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// A real `ckpt serve` and ckpt commands on "another machine" that reach it
// with CKPT_STORE=http://… and CKPT_TOKEN.

// serveProcess is a running `ckpt serve`.
type serveProcess struct {
	cmd    *exec.Cmd
	url    string
	admin  string // the token printed at the first start ("" on a restart)
	stdout *syncbuf.Buffer
}

// startServe runs `ckpt serve --addr addr` (and the extra flags) over the
// store and waits until it listens.
func startServe(t testing.TB, bin, store, addr string, extra ...string) *serveProcess {
	t.Helper()
	return startServeEnv(t, bin, store, addr, nil, extra...)
}

// startServeEnv is startServe with more environment variables.
func startServeEnv(t testing.TB, bin, store, addr string, env []string, extra ...string) *serveProcess {
	t.Helper()
	cmd := exec.Command(bin, append([]string{"serve", "--addr", addr, "--store", store}, extra...)...)
	cmd.Env = append([]string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir()}, env...)
	errPipe, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	// No token file yet: this start prints the first admin token.
	_, statErr := os.Stat(filepath.Join(store, "tokens.json"))
	first := errors.Is(statErr, os.ErrNotExist)
	var stdout syncbuf.Buffer
	cmd.Stdout = &stdout
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	rd := bufio.NewReader(errPipe)
	serving := regexp.MustCompile(`ckpt serve: serving (https?://127\.0\.0\.1:\d+) `)
	for {
		line, err := rd.ReadString('\n')
		if err != nil {
			t.Fatalf("ckpt serve ended before listening: %v (stdout %q)", err, stdout.String())
		}
		if m := serving.FindStringSubmatch(line); m != nil {
			go io.Copy(io.Discard, rd)
			p := &serveProcess{cmd: cmd, url: m[1], stdout: &stdout}
			// The token went to stdout before the server listened, but its
			// copier may not have caught up with stderr's yet.
			token := regexp.MustCompile(`ckpt_[0-9a-f]+_[0-9a-f]+`)
			for deadline := time.Now().Add(time.Minute); ; {
				p.admin = token.FindString(stdout.String())
				if p.admin != "" || !first || time.Now().After(deadline) {
					return p
				}
				time.Sleep(50 * time.Millisecond)
			}
		}
	}
}

// remoteRun runs a ckpt command against the server with token, from an
// empty directory (no local store to fall back on).
func remoteRun(t *testing.T, bin, url, token string, args ...string) (string, int) {
	t.Helper()
	return remoteRunIn(t, bin, t.TempDir(), []string{"CKPT_STORE=" + url, "CKPT_TOKEN=" + token}, args...)
}

// remoteRunIn runs a ckpt command with HOME home and the extra environment,
// writing directly (keeper_serve_process_test.go holds the keeper's path
// to the direct one).
func remoteRunIn(t *testing.T, bin, home string, env []string, args ...string) (string, int) {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Dir = t.TempDir()
	cmd.Env = append([]string{"PATH=" + os.Getenv("PATH"), "HOME=" + home, "CKPT_AGENT=claimed", "CKPT_KEEPER=off"}, env...)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		return out.String() + errOut.String(), ee.ExitCode()
	case err != nil:
		t.Fatal(err)
	}
	if strings.Contains(errOut.String(), "spooled") {
		return out.String() + errOut.String(), 0 // the warning is the result
	}
	return out.String(), 0
}

func TestServeAndRemoteCommands(t *testing.T) {
	bin := ckptBinary(t)
	store := newProcessStore(t, bin)
	srv := startServe(t, bin, store, "127.0.0.1:0")
	if srv.admin == "" {
		t.Fatalf("the first start printed no admin token: %q", srv.stdout.String())
	}
	fi, err := os.Stat(filepath.Join(store, "tokens.json"))
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("tokens.json: %v, %v", fi, err)
	}
	// An agent's token, made through the server's API with the admin token.
	out, code := remoteRun(t, bin, srv.url, srv.admin, "token", "create", "--scope", "write", "--prefix", "kai-7/", "--agent", "kai-7")
	agent := strings.TrimSpace(out)
	if code != 0 || !strings.HasPrefix(agent, "ckpt_") {
		t.Fatalf("token create: exit %d: %q", code, out)
	}
	if out, code := remoteRun(t, bin, srv.url, agent, "start", "kai-7/task", "--title", "over the wire", "--step", "a", "--step", "b"); code != 0 {
		t.Fatalf("start over the server: exit %d: %s", code, out)
	}
	if out, code := remoteRun(t, bin, srv.url, agent, "step", "kai-7/task", "a", "--done"); code != 0 {
		t.Fatalf("step over the server: exit %d: %s", code, out)
	}
	if out, code := remoteRun(t, bin, srv.url, agent, "start", "other/task"); code == 0 || !strings.Contains(out, "kai-7/") {
		t.Errorf("a kai-7/ token started other/task: exit %d: %s", code, out)
	}
	out, code = remoteRun(t, bin, srv.url, agent, "show", "kai-7/task", "--json")
	var c struct {
		Rev   int64  `json:"rev"`
		Title string `json:"title"`
	}
	if code != 0 || json.Unmarshal([]byte(out), &c) != nil || c.Rev != 2 || c.Title != "over the wire" {
		t.Fatalf("show over the server: exit %d: %s", code, out)
	}
	// The local store has it, written by the agent the token names.
	local, err := ckptRun(t, bin, "--store", store, "log", "kai-7/task", "--json")
	if err != nil || strings.Contains(local, `"actor":{"agent":"claimed"`) || strings.Count(local, `"actor":{"agent":"kai-7"}`) != 2 {
		t.Errorf("the server recorded the client's claimed actor, not the token's agent: %v %s", err, local)
	}
	// No token, a wrong one: refused.
	if out, code := remoteRun(t, bin, srv.url, "ckpt_0_0", "ls"); code == 0 {
		t.Errorf("a wrong token listed: %s", out)
	}
	// Stopped with SIGTERM: exit 0; restarted: no new admin token, the old
	// tokens still work.
	if err := srv.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- srv.cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("ckpt serve after SIGTERM: %v", err)
		}
	case <-time.After(time.Minute):
		t.Fatal("ckpt serve did not stop on SIGTERM")
	}
	// With the server away, a write given CKPT_SPOOL=1 waits in this
	// machine's spool (exit 0, a warning) and the next call delivers it.
	home := t.TempDir()
	away := []string{"CKPT_STORE=" + srv.url, "CKPT_TOKEN=" + agent, "CKPT_SPOOL=1"}
	if out, code := remoteRunIn(t, bin, home, away, "note", "kai-7/task", "written while the server was away"); code != 0 || !strings.Contains(out, "spooled") {
		t.Fatalf("a spooled note: exit %d: %s", code, out)
	}
	if out, code := remoteRunIn(t, bin, home, away[:2], "note", "kai-7/task", "not spooled"); code == 0 {
		t.Errorf("a note without CKPT_SPOOL to an absent server: exit 0: %s", out)
	}
	again := startServe(t, bin, store, strings.TrimPrefix(srv.url, "http://"))
	if out, code := remoteRunIn(t, bin, home, away, "show", "kai-7/task", "--json"); code != 0 || !strings.Contains(out, "written while the server was away") || !strings.Contains(out, `"rev": 3`) {
		t.Errorf("show after the server came back did not deliver the spooled note: exit %d: %s", code, out)
	}
	if again.admin != "" {
		t.Errorf("a restart printed a new admin token")
	}
	if out, code := remoteRun(t, bin, again.url, agent, "show", "kai-7/task"); code != 0 {
		t.Errorf("show after a restart: exit %d: %s", code, out)
	}
}

// bearer adds a bearer token to every request.
type bearer struct{ token string }

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return http.DefaultTransport.RoundTrip(r)
}

// TestServeMountsMCPAndDashboard: the MCP server at /mcp answers only with
// a token, a read token's write tools are refused, an agent-bound token's
// writes record its agent; the dashboard answers at /.
func TestServeMountsMCPAndDashboard(t *testing.T) {
	bin := ckptBinary(t)
	store := newProcessStore(t, bin)
	srv := startServe(t, bin, store, "127.0.0.1:0")
	resp, err := http.Post(srv.url+"/mcp", "application/json", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("/mcp without a token: %d, want 401", resp.StatusCode)
	}
	token := func(args ...string) string {
		out, code := remoteRun(t, bin, srv.url, srv.admin, append([]string{"token", "create"}, args...)...)
		if code != 0 {
			t.Fatalf("token create: %s", out)
		}
		return strings.TrimSpace(out)
	}
	connect := func(tok string) *sdk.ClientSession {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		client := sdk.NewClient(&sdk.Implementation{Name: "ckpt-test", Version: "1"}, nil)
		cs, err := client.Connect(ctx, &sdk.StreamableClientTransport{Endpoint: srv.url + "/mcp", HTTPClient: &http.Client{Transport: bearer{tok}}, MaxRetries: -1}, nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cs.Close() })
		return cs
	}
	reader := connect(token("--scope", "read"))
	res, err := reader.CallTool(context.Background(), &sdk.CallToolParams{Name: "ckpt_start", Arguments: map[string]any{"id": "mcp/a"}})
	if err != nil || !res.IsError || !strings.Contains(contentText(res.Content), "scope") {
		t.Errorf("ckpt_start with a read token: %v %+v", err, res)
	}
	writer := connect(token("--scope", "write", "--agent", "kai-7"))
	var st mcp.StateOutput
	mcpCall(t, writer, "ckpt_start", map[string]any{"id": "mcp/a", "agent": "someone-else"}, &st)
	if st.Rev != 1 {
		t.Fatalf("ckpt_start over /mcp: rev %d", st.Rev)
	}
	log, err := ckptRun(t, bin, "--store", store, "log", "mcp/a", "--json")
	if err != nil || !strings.Contains(log, `"actor":{"agent":"kai-7"`) {
		t.Errorf("the MCP write's actor is not the token's agent: %v %s", err, log)
	}
	page, err := http.Get(srv.url + "/")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(page.Body)
	page.Body.Close()
	if page.StatusCode != http.StatusOK || !strings.Contains(string(body), "<html") {
		t.Errorf("the dashboard at /: %d %.200s", page.StatusCode, body)
	}
}
