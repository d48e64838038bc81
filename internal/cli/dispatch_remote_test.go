package cli

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/ckpt-dev/ckpt/internal/cmdutil"
)

// TestServerStoreDispatch: ckpt links no HTTP client, so a command over a
// server's store (http:// or https:// in --store or CKPT_STORE) that no
// keeper takes is handed to ckpt-server, never to ckpt-pg (which speaks
// only PostgreSQL), before it reads anything: a hook's payload on stdin
// stays for ckpt-server, and ckpt starts no keeper itself (ckpt-server,
// writing directly, does). A failed hand-over of a hook still exits 0.
func TestServerStoreDispatch(t *testing.T) {
	dir := t.TempDir()
	for _, name := range []string{ServerProgram, PGProgram} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte("#!/bin/sh\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	server := filepath.Join(dir, ServerProgram)
	for _, tc := range []struct {
		store string // CKPT_STORE
		args  []string
	}{
		{"https://ckpt.example:8470", []string{"update", "a", "--current-step", "x"}},
		{"http://127.0.0.1:8470", []string{"note", "a", "hi"}},
		{"https://ckpt.example:8470", []string{"hook", "PostToolUse"}},
		{"https://ckpt.example:8470", []string{"ls", "--json"}},
		{"", []string{"--store", "https://ckpt.example:8470", "show", "a"}},
		{"", []string{"status", "--store=http://127.0.0.1:8470"}},
		{"https://ckpt.example:8470", []string{"keeper", "run"}},
		{"https://ckpt.example:8470", []string{"token", "list"}},
	} {
		var calls, starts [][]string
		unread := -1
		stdin := strings.NewReader("payload")
		env := &cmdutil.Env{
			IOStreams: cmdutil.IOStreams{In: stdin, Out: io.Discard, ErrOut: io.Discard},
			Getenv: func(k string) string {
				return map[string]string{cmdutil.EnvStore: tc.store, "XDG_RUNTIME_DIR": dir, cmdutil.EnvToken: "ckpt_x_y"}[k]
			},
			WorkDir:    dir,
			Args:       tc.args,
			Executable: filepath.Join(dir, "ckpt"),
			Exec: func(path string, args, env []string) error {
				calls = append(calls, args)
				unread = stdin.Len()
				return errors.New("stop here")
			},
			Start: func(path string, args, env []string) error {
				starts = append(starts, args)
				return nil
			},
		}
		code := runOn(env, nil)
		if want := append([]string{server}, tc.args...); len(calls) != 1 || !reflect.DeepEqual(calls[0], want) {
			t.Errorf("ckpt %v with CKPT_STORE=%q: exec %v, want %v", tc.args, tc.store, calls, want)
		}
		if len(starts) != 0 {
			t.Errorf("ckpt %v started %v; want ckpt-server to start the keeper", tc.args, starts)
		}
		if unread != len("payload") {
			t.Errorf("ckpt %v read stdin before handing over to ckpt-server", tc.args)
		}
		if want := ExitFailure; tc.args[0] == "hook" {
			if code != 0 {
				t.Errorf("ckpt hook: a failed hand-over exits %d, want 0 (a hook never breaks the session)", code)
			}
		} else if code != want {
			t.Errorf("ckpt %v: a failed exec exits %d, want %d", tc.args, code, want)
		}
	}
}
