package servercli

import (
	"bytes"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ckpt-dev/ckpt/internal/cli"
	"github.com/ckpt-dev/ckpt/internal/clitest"
	"github.com/ckpt-dev/ckpt/internal/cmdutil"
)

// program is what cmd/ckpt-server runs.
func program() cli.Program { return cli.Program{Verbs: Verbs(), Stores: Stores()} }

// t0 is the clock of every test.
var t0 = clitest.T0

// run executes `ckpt-server args...` in dir, run as the binary exe, and
// returns the exit code and both streams.
func run(t *testing.T, dir, exe string, args ...string) (int, string, string) {
	t.Helper()
	return runEnv(t, dir, exe, nil, args...)
}

// runEnv is run with the environment variables vars added.
func runEnv(t *testing.T, dir, exe string, vars map[string]string, args ...string) (int, string, string) {
	t.Helper()
	var out, errOut bytes.Buffer
	env := &cmdutil.Env{
		IOStreams: cmdutil.IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut},
		Getenv: func(k string) string {
			if v, ok := vars[k]; ok {
				return v
			}
			return map[string]string{"TMPDIR": "/var/tmp", "HOME": dir}[k]
		},
		WorkDir:    dir,
		Now:        func() time.Time { return t0 },
		Args:       args,
		Executable: exe,
	}
	code := cli.Main(AsCkpt(env), program())
	return code, out.String(), errOut.String()
}

// TestHelpListsTheRealCommands: ckpt --help lists the dispatchers with the
// one-line help of the commands ckpt-server runs, so the two binaries'
// help says the same, and ckpt-server's help is the full one.
func TestHelpListsTheRealCommands(t *testing.T) {
	dir := t.TempDir()
	var lean bytes.Buffer
	code := cli.Main(&cmdutil.Env{IOStreams: cmdutil.IOStreams{In: strings.NewReader(""), Out: &lean, ErrOut: &lean}, WorkDir: dir, Args: []string{"--help"}}, cli.Program{Verbs: cli.Verbs(), Stores: cli.Stores()})
	if code != 0 {
		t.Fatalf("ckpt --help: exit %d: %s", code, lean.String())
	}
	code, full, errOut := run(t, dir, "", "--help")
	if code != 0 {
		t.Fatalf("ckpt-server --help: exit %d: %s", code, errOut)
	}
	if lean.String() != full {
		t.Errorf("ckpt --help and ckpt-server --help differ:\n--- ckpt\n%s\n--- ckpt-server\n%s", lean.String(), full)
	}
	for _, c := range serverVerbs() {
		if !cli.IsServerCommand(c.Name) {
			t.Errorf("ckpt has no dispatcher for %s", c.Name)
		}
		code, out, _ := run(t, dir, "", c.Name, "--help")
		if code != 0 || !strings.Contains(out, "Usage:\n  ckpt "+c.Name) || !strings.Contains(out, "Flags:") {
			t.Errorf("ckpt-server %s --help: exit %d, not the real help:\n%s", c.Name, code, out)
		}
	}
}

// TestInstallNamesCkpt: run as ckpt-server (through ckpt's dispatcher, or
// directly), mcp install and hooks install name the ckpt beside it, which
// every client setting and hook goes through; a binary go run built is
// named as plain ckpt.
func TestInstallNamesCkpt(t *testing.T) {
	project := t.TempDir()
	if err := os.Mkdir(filepath.Join(project, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	const installed = "/opt/ckpt/bin/ckpt"
	const server = "/opt/ckpt/bin/ckpt-server"
	const goRun = "/var/tmp/go-build99/b001/exe/ckpt-server"
	for _, tc := range []struct {
		exe  string
		args []string
		want string
	}{
		{server, []string{"mcp", "install", "claude", "--print"}, "claude mcp add ckpt -- /opt/ckpt/bin/ckpt mcp\n"},
		{installed, []string{"mcp", "install", "claude", "--print"}, "claude mcp add ckpt -- /opt/ckpt/bin/ckpt mcp\n"},
		{goRun, []string{"mcp", "install", "claude", "--print"}, "claude mcp add ckpt -- ckpt mcp\n"},
		{server, []string{"mcp", "install", "claude", "--print", "--command", "ckpt"}, "claude mcp add ckpt -- ckpt mcp\n"},
		{server, []string{"hooks", "install", "claude", "--print", "--scope", "local"}, `"command": "/opt/ckpt/bin/ckpt hook Stop"`},
	} {
		code, out, errOut := run(t, project, tc.exe, tc.args...)
		if code != 0 || !strings.Contains(out, tc.want) {
			t.Errorf("ckpt %s run as %s: exit %d, %q (%s); want %q", strings.Join(tc.args, " "), tc.exe, code, out, errOut, tc.want)
		}
	}
	// Dispatched from a ckpt elsewhere, it names that ckpt.
	code, out, errOut := runEnv(t, project, server, map[string]string{cli.EnvExecutable: "/usr/local/bin/ckpt"}, "mcp", "install", "claude", "--print")
	if want := "claude mcp add ckpt -- /usr/local/bin/ckpt mcp\n"; code != 0 || out != want {
		t.Errorf("dispatched mcp install: exit %d, %q (%s); want %q", code, out, errOut, want)
	}
	code, out, _ = run(t, project, server, "mcp", "install", "--help")
	if code != 0 || !strings.Contains(out, "local and user (/opt/ckpt/bin/ckpt)") {
		t.Errorf("mcp install --help does not name the ckpt beside ckpt-server:\n%s", out)
	}
}

// TestServeURL: ckpt serve prints a URL a person can open: an address on
// all interfaces becomes localhost (or the first --host), never 0.0.0.0 or
// [::].
func TestServeURL(t *testing.T) {
	for _, tc := range []struct {
		scheme, addr string
		hosts        []string
		want         string
		all          bool
	}{
		{"http", "127.0.0.1:8470", nil, "http://127.0.0.1:8470", false},
		{"https", "[::]:8470", nil, "https://localhost:8470", true},
		{"http", "0.0.0.0:9000", nil, "http://localhost:9000", true},
		{"https", "0.0.0.0:8470", []string{"ckpt.internal"}, "https://ckpt.internal:8470", true},
		{"http", "[::1]:8470", nil, "http://[::1]:8470", false},
		{"https", "192.168.1.5:443", nil, "https://192.168.1.5:443", false},
	} {
		a, err := net.ResolveTCPAddr("tcp", tc.addr)
		if err != nil {
			t.Fatal(err)
		}
		if got, all := serveURL(tc.scheme, a, tc.hosts); got != tc.want || all != tc.all {
			t.Errorf("serveURL(%s, %s, %v) = %s, %v; want %s, %v", tc.scheme, tc.addr, tc.hosts, got, all, tc.want, tc.all)
		}
	}
}
