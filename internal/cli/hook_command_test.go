package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
)

func TestInstallCommand(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("the cases are Unix paths")
	}
	// A temporary directory reached through a link, as macOS's $TMPDIR is.
	real := t.TempDir()
	link := filepath.Join(t.TempDir(), "tmp-link")
	if err := os.Symlink(real, link); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name, exe string
		vars      map[string]string
		want      string
	}{
		{"unknown", "", nil, "ckpt"},
		{"relative", "bin/ckpt", nil, "ckpt"},
		{"installed", "/usr/local/bin/ckpt", map[string]string{"TMPDIR": "/var/tmp"}, "/usr/local/bin/ckpt"},
		{"installed in the home", "/home/u/go/bin/ckpt", nil, "/home/u/go/bin/ckpt"},
		{"unclean path", "/opt/ckpt/../ckpt/bin//ckpt", nil, "/opt/ckpt/bin/ckpt"},
		{"another name", "/usr/local/bin/ckpt-dev", nil, "ckpt"},
		{"a test binary", "/home/u/src/ckpt/ckpt.test", nil, "ckpt"},
		{"go run, default build cache", "/home/u/.cache/go-build/3f/3f9a-d/ckpt", nil, "ckpt"},
		{"go run, work directory", "/var/tmp/go-build2718281/b001/exe/ckpt", map[string]string{"TMPDIR": "/var/tmp"}, "ckpt"},
		{"GOCACHE", "/srv/gocache/exe/ab/ckpt", map[string]string{"GOCACHE": "/srv/gocache"}, "ckpt"},
		{"GOTMPDIR", "/scratch/run/ckpt", map[string]string{"GOTMPDIR": "/scratch"}, "ckpt"},
		{"TMPDIR", "/var/folders/x/T/run/ckpt", map[string]string{"TMPDIR": "/var/folders/x/T/"}, "ckpt"},
		{"no TMPDIR: /tmp", "/tmp/run/ckpt", nil, "ckpt"},
		{"TMPDIR elsewhere: /tmp is not temporary", "/tmp/run/ckpt", map[string]string{"TMPDIR": "/var/tmp"}, "/tmp/run/ckpt"},
		{"a sibling of TMPDIR", "/opt/tmpfoo/ckpt", map[string]string{"TMPDIR": "/opt/tmp"}, "/opt/tmpfoo/ckpt"},
		{"TMPDIR through a link", filepath.Join(real, "run", "ckpt"), map[string]string{"TMPDIR": link}, "ckpt"},
		{"relative TMPDIR is ignored", "/usr/local/bin/ckpt", map[string]string{"TMPDIR": "usr"}, "/usr/local/bin/ckpt"},
	}
	for _, tc := range cases {
		e := &Env{Executable: tc.exe, Getenv: func(k string) string { return tc.vars[k] }}
		if got := installCommand(e, true); got != tc.want {
			t.Errorf("%s: installCommand(%q, %v) = %q, want %q", tc.name, tc.exe, tc.vars, got, tc.want)
		}
		// A project's shared settings file always gets plain ckpt.
		if got := installCommand(e, false); got != "ckpt" {
			t.Errorf("%s: for a shared project file installCommand = %q, want ckpt", tc.name, got)
		}
	}
	if got := installCommand(&Env{Executable: "/usr/local/bin/ckpt"}, true); got != "/usr/local/bin/ckpt" {
		t.Errorf("without Getenv: %q", got)
	}
}

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
		env := &Env{
			IOStreams:  IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut},
			Getenv:     func(k string) string { return map[string]string{"TMPDIR": "/var/tmp", "HOME": project}[k] },
			WorkDir:    project,
			Now:        func() time.Time { return t0 },
			Args:       args,
			Executable: exe,
		}
		if code := run(&factory{env: env}); code != 0 {
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

// TestSystemExecutable: the running binary, absolute, links resolved.
func TestSystemExecutable(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Skip("the system cannot tell the executable:", err)
	}
	want, err := filepath.EvalSymlinks(exe)
	if err != nil {
		t.Fatal(err)
	}
	if got := System().Executable; got != want || !filepath.IsAbs(got) {
		t.Fatalf("System().Executable = %q, want %q", got, want)
	}
}
