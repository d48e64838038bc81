package cli

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/ckpt-dev/ckpt/internal/cmdutil"
	"github.com/ckpt-dev/ckpt/pgstore"
)

// TestDispatchToServer: ckpt runs serve, mcp and token by replacing itself
// with the ckpt-server beside it (else on PATH), given the whole command
// line, help included; without one it says how to install it.
func TestDispatchToServer(t *testing.T) {
	beside, onPath := t.TempDir(), t.TempDir()
	exe := filepath.Join(beside, "ckpt")
	writeProgram := func(path string) {
		t.Helper()
		if err := os.WriteFile(path, []byte("#!/bin/sh\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	writeProgram(filepath.Join(onPath, ServerProgram))
	// A ckpt-server that is not executable, or a relative PATH entry, is never taken.
	if err := os.WriteFile(filepath.Join(beside, ServerProgram), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	type call struct {
		path      string
		args, env []string
	}
	run1 := func(execErr error, args ...string) (int, []call, string) {
		var calls []call
		var out, errOut bytes.Buffer
		env := &cmdutil.Env{
			IOStreams:  cmdutil.IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut},
			Getenv:     func(k string) string { return map[string]string{"PATH": "bin:" + onPath}[k] },
			WorkDir:    t.TempDir(),
			Args:       args,
			Executable: exe,
			Exec: func(path string, args, env []string) error {
				calls = append(calls, call{path, args, env})
				return execErr
			},
		}
		code := runOn(env, nil)
		return code, calls, errOut.String()
	}
	server := filepath.Join(onPath, ServerProgram)
	for _, args := range [][]string{
		{"serve"},
		{"--store", "/x/.ckpt", "serve", "--addr", "8470", "--insecure-dev"},
		{"mcp", "--help"},
		{"help", "mcp"},
		{"token", "create", "--scope", "read"},
		{"--agent=kai", "mcp", "install", "claude", "--print"},
	} {
		code, calls, errOut := run1(nil, args...)
		want := []call{{server, append([]string{server}, args...), []string{EnvExecutable + "=" + exe}}}
		if code != 0 || !reflect.DeepEqual(calls, want) {
			t.Errorf("ckpt %s: exit %d, exec %v (%s); want %v", strings.Join(args, " "), code, calls, errOut, want)
		}
	}
	// The one beside ckpt wins over PATH.
	if err := os.Chmod(filepath.Join(beside, ServerProgram), 0o755); err != nil {
		t.Fatal(err)
	}
	if _, calls, _ := run1(nil, "mcp"); len(calls) != 1 || calls[0].path != filepath.Join(beside, ServerProgram) {
		t.Errorf("exec %v, want the ckpt-server beside ckpt", calls)
	}
	// Other commands stay in ckpt.
	if code, calls, _ := run1(nil, "version"); code != 0 || len(calls) != 0 {
		t.Errorf("ckpt version: exit %d, exec %v; want no exec", code, calls)
	}
	if code, _, errOut := run1(errors.New("exec format error"), "serve"); code != ExitFailure || !strings.Contains(errOut, "exec format error") {
		t.Errorf("a failed exec: exit %d, %q", code, errOut)
	}
	os.Remove(filepath.Join(beside, ServerProgram))
	os.Remove(server)
	for _, args := range [][]string{{"serve"}, {"help", "serve"}} {
		code, calls, errOut := run1(nil, args...)
		if code != ExitFailure || len(calls) != 0 || !strings.Contains(errOut, "ckpt-server is not installed beside "+exe) ||
			!strings.Contains(errOut, "go install github.com/ckpt-dev/ckpt/cmd/...") || strings.Count(errOut, "\n") != 1 {
			t.Errorf("ckpt %s without ckpt-server: exit %d, exec %v, stderr %q; want one line saying how to install it", strings.Join(args, " "), code, calls, errOut)
		}
	}
}

// TestDispatchRefusesItself: a ckpt-server that is ckpt itself (a link, or
// a copy that finds itself again) is refused instead of exec'd forever.
func TestDispatchRefusesItself(t *testing.T) {
	for _, copied := range []bool{false, true} {
		dir := t.TempDir()
		exe := filepath.Join(dir, "ckpt")
		if err := os.WriteFile(exe, []byte("#!/bin/sh\n"), 0o755); err != nil {
			t.Fatal(err)
		}
		var vars map[string]string
		if copied {
			// A copy is another file; it shows when it starts with the
			// CKPT_EXECUTABLE its own dispatcher set.
			if err := os.WriteFile(filepath.Join(dir, ServerProgram), []byte("#!/bin/sh\n"), 0o755); err != nil {
				t.Fatal(err)
			}
			vars = map[string]string{EnvExecutable: exe}
		} else if err := os.Symlink(exe, filepath.Join(dir, ServerProgram)); err != nil {
			t.Fatal(err)
		}
		execs := 0
		var errOut bytes.Buffer
		env := &cmdutil.Env{
			IOStreams:  cmdutil.IOStreams{In: strings.NewReader(""), Out: io.Discard, ErrOut: &errOut},
			Getenv:     func(k string) string { return vars[k] },
			WorkDir:    dir,
			Args:       []string{"serve"},
			Executable: exe,
			Exec:       func(string, []string, []string) error { execs++; return nil },
		}
		if code := runOn(env, nil); code != ExitFailure || execs != 0 || !strings.Contains(errOut.String(), "is ckpt itself") {
			t.Errorf("copied %v: exit %d, %d exec(s), %q; want a refusal", copied, code, execs, errOut.String())
		}
	}
}

// TestHelpListsServerCommands: ckpt --help lists the commands ckpt-server
// runs with their one-line help.
func TestHelpListsServerCommands(t *testing.T) {
	h := newHarness(t)
	out := h.OK("--help")
	for verb, short := range serverCommands {
		if !strings.Contains(out, "  "+verb+" ") || !strings.Contains(out, short) {
			t.Errorf("ckpt --help does not list %s (%q):\n%s", verb, short, out)
		}
	}
}

// TestPostgresStoreDispatch: a command over a PostgreSQL store (--store or
// CKPT_STORE) is handed to ckpt-server before it runs, so it reads nothing
// (a hook's payload on stdin stays for ckpt-server); a local store is not.
func TestPostgresStoreDispatch(t *testing.T) {
	dir := t.TempDir()
	server := filepath.Join(dir, ServerProgram)
	if err := os.WriteFile(server, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		vars map[string]string
		args []string
		exec bool
	}{
		{map[string]string{cmdutil.EnvStore: "postgres://ckpt@db/ckpt"}, []string{"note", "a", "hi"}, true},
		{map[string]string{cmdutil.EnvStore: "postgresql://db/ckpt"}, []string{"hook", "Stop"}, true},
		{nil, []string{"--store", "postgres://db/ckpt", "ls"}, true},
		{nil, []string{"ls", "--store=postgres://db/ckpt"}, true},
		{map[string]string{cmdutil.EnvStore: "/x/.ckpt"}, []string{"version"}, false},
	} {
		var calls [][]string
		unread := -1 // the stdin left when ckpt-server is started
		stdin := strings.NewReader("payload")
		var out, errOut bytes.Buffer
		env := &cmdutil.Env{
			IOStreams:  cmdutil.IOStreams{In: stdin, Out: &out, ErrOut: &errOut},
			Getenv:     func(k string) string { return tc.vars[k] },
			WorkDir:    dir,
			Args:       tc.args,
			Executable: filepath.Join(dir, "ckpt"),
			Exec: func(path string, args, env []string) error {
				calls = append(calls, args)
				unread = stdin.Len()
				return errors.New("stop here")
			},
		}
		code := runOn(env, nil)
		if !tc.exec {
			if len(calls) != 0 || code != 0 {
				t.Errorf("ckpt %v with %v: exit %d, exec %v; want it run here", tc.args, tc.vars, code, calls)
			}
			continue
		}
		if want := append([]string{server}, tc.args...); len(calls) != 1 || !reflect.DeepEqual(calls[0], want) {
			t.Errorf("ckpt %v with %v: exec %v, want %v", tc.args, tc.vars, calls, want)
		}
		if unread != len("payload") {
			t.Errorf("ckpt %v read stdin before handing over to ckpt-server", tc.args)
		}
		if tc.args[0] != "hook" && code != ExitFailure {
			t.Errorf("ckpt %v: a failed exec exits %d, want %d", tc.args, code, ExitFailure)
		}
	}
}

// TestPostgresStoreDispatchToPG: with ckpt-pg installed beside ckpt, a
// command over a PostgreSQL store goes to it (the lean binary with the
// driver), while the server commands over one still go to ckpt-server.
func TestPostgresStoreDispatchToPG(t *testing.T) {
	dir := t.TempDir()
	for _, name := range []string{ServerProgram, PGProgram} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte("#!/bin/sh\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		args []string
		to   string
	}{
		{[]string{"update", "a", "--current-step", "x"}, PGProgram},
		{[]string{"hook", "PostToolUse"}, PGProgram},
		{[]string{"ls"}, PGProgram},
		{[]string{"serve", "--addr", "8470"}, ServerProgram},
		{[]string{"mcp"}, ServerProgram},
		{[]string{"migrate"}, ServerProgram},
	} {
		var calls [][]string
		env := &cmdutil.Env{
			IOStreams:  cmdutil.IOStreams{In: strings.NewReader(""), Out: io.Discard, ErrOut: io.Discard},
			Getenv:     func(k string) string { return map[string]string{cmdutil.EnvStore: "postgres://db/ckpt"}[k] },
			WorkDir:    dir,
			Args:       tc.args,
			Executable: filepath.Join(dir, "ckpt"),
			Exec: func(path string, args, env []string) error {
				calls = append(calls, args)
				return errors.New("stop here")
			},
		}
		runOn(env, nil)
		to := filepath.Join(dir, tc.to)
		if len(calls) != 1 || !reflect.DeepEqual(calls[0], append([]string{to}, tc.args...)) {
			t.Errorf("ckpt %v over PostgreSQL: exec %v, want %s", tc.args, calls, tc.to)
		}
	}
}

// TestPGURLIsPgstoreRule: ckpt recognises a PostgreSQL store by pgstore's
// own rule, without linking pgstore.
func TestPGURLIsPgstoreRule(t *testing.T) {
	for _, s := range []string{"postgres://a", "postgresql://a/b", "postgres:/a", "Postgres://a", "pg://a", "", "https://x", "./postgres://"} {
		if isPGURL(s) != pgstore.IsURL(s) {
			t.Errorf("isPGURL(%q) = %v, pgstore.IsURL says %v", s, isPGURL(s), pgstore.IsURL(s))
		}
	}
}
