package claude

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"
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
		getenv := func(k string) string { return tc.vars[k] }
		if got := InstallCommand(tc.exe, getenv, true); got != tc.want {
			t.Errorf("%s: InstallCommand(%q, %v) = %q, want %q", tc.name, tc.exe, tc.vars, got, tc.want)
		}
		// A project's shared settings file always gets plain ckpt.
		if got := InstallCommand(tc.exe, getenv, false); got != "ckpt" {
			t.Errorf("%s: for a shared project file InstallCommand = %q, want ckpt", tc.name, got)
		}
	}
	if got := InstallCommand("/usr/local/bin/ckpt", nil, true); got != "/usr/local/bin/ckpt" {
		t.Errorf("without Getenv: %q", got)
	}
}
