package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/ckpt-dev/ckpt/internal/cmdutil"
)

// TestInstallCommandDefault: hooks install and mcp install write the
// running binary's path into personal settings (local or user scope, a
// printed command) when it is an installed ckpt, ckpt into a project's
// shared file or for a go run build, and --command over either.
func TestInstallCommandDefault(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("the paths are Unix paths")
	}
	project := t.TempDir()
	run1 := func(exe string, args ...string) string {
		t.Helper()
		var out, errOut bytes.Buffer
		env := &cmdutil.Env{
			IOStreams:  cmdutil.IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut},
			Getenv:     func(k string) string { return map[string]string{"TMPDIR": "/var/tmp", "HOME": project}[k] },
			WorkDir:    project,
			Now:        func() time.Time { return t0 },
			Args:       args,
			Executable: exe,
		}
		if code := runOn(env, nil); code != 0 {
			t.Fatalf("ckpt %s: exit %d: %s", strings.Join(args, " "), code, errOut.String())
		}
		return out.String()
	}
	const installed = "/opt/ckpt/bin/ckpt"
	const goRun = "/var/tmp/go-build99/b001/exe/ckpt"
	for _, tc := range []struct {
		exe  string
		args []string
		want string
	}{
		{installed, []string{"hooks", "install", "claude", "--print", "--scope", "local"}, `"command": "/opt/ckpt/bin/ckpt hook Stop"`},
		{installed, []string{"hooks", "install", "claude", "--print", "--scope", "user"}, `"command": "/opt/ckpt/bin/ckpt hook Stop"`},
		{installed, []string{"hooks", "install", "claude", "--print"}, `"command": "ckpt hook Stop"`},
		{goRun, []string{"hooks", "install", "claude", "--print", "--scope", "local"}, `"command": "ckpt hook Stop"`},
		{installed, []string{"hooks", "install", "codex", "--print", "--command", "ckpt"}, `"command": "ckpt hook Stop --client codex"`},
		{goRun, []string{"hooks", "install", "gemini", "--print", "--command", "/usr/bin/ckpt"}, `"command": "/usr/bin/ckpt hook AfterAgent --client gemini"`},
	} {
		if out := run1(tc.exe, tc.args...); !strings.Contains(out, tc.want) {
			t.Errorf("ckpt %s run as %s:\n%s\nwant it to contain %q", strings.Join(tc.args, " "), tc.exe, out, tc.want)
		}
	}
	// The help names the default.
	if out := run1(installed, "hooks", "install", "--help"); !strings.Contains(out, `for local and user (/opt/ckpt/bin/ckpt)`) {
		t.Errorf("help does not name the default:\n%s", out)
	}
}

// TestSystemExecutable: the running binary, absolute, links resolved,
// looked up when first asked for (a command line that never asks pays
// nothing).
func TestSystemExecutable(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Skip("the system cannot tell the executable:", err)
	}
	want, err := filepath.EvalSymlinks(exe)
	if err != nil {
		t.Fatal(err)
	}
	env := cmdutil.System()
	if env.Executable != "" {
		t.Fatalf("System resolved the executable up front: %q", env.Executable)
	}
	if got := env.ExecutablePath(); got != want || !filepath.IsAbs(got) {
		t.Fatalf("cmdutil.System().ExecutablePath() = %q, want %q", got, want)
	}
}
