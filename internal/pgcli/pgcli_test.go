package pgcli_test

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/ckpt-dev/ckpt/internal/cli"
	"github.com/ckpt-dev/ckpt/internal/cmdutil"
	"github.com/ckpt-dev/ckpt/internal/pgcli"
)

// TestServerCommandsFromPG: ckpt-pg, started by ckpt's dispatcher (with
// CKPT_EXECUTABLE naming ckpt), hands the server commands to the
// ckpt-server beside it, passing ckpt's path on, instead of taking its
// own ckpt for a copy of itself.
func TestServerCommandsFromPG(t *testing.T) {
	dir := t.TempDir()
	ckpt, server := filepath.Join(dir, "ckpt"), filepath.Join(dir, cli.ServerProgram)
	for _, p := range []string{ckpt, server, filepath.Join(dir, cli.PGProgram)} {
		if err := os.WriteFile(p, []byte("#!/bin/sh\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	type call struct{ args, env []string }
	var calls []call
	var errOut strings.Builder
	env := &cmdutil.Env{
		IOStreams:  cmdutil.IOStreams{In: strings.NewReader(""), Out: io.Discard, ErrOut: &errOut},
		Getenv:     func(k string) string { return map[string]string{cli.EnvExecutable: ckpt}[k] },
		WorkDir:    dir,
		Args:       []string{"serve", "--addr", "8470"},
		Executable: filepath.Join(dir, cli.PGProgram),
		Exec: func(path string, args, env []string) error {
			calls = append(calls, call{args, env})
			return errors.New("stop here")
		},
	}
	cli.Main(cli.AsCkpt(env, cli.PGProgram), cli.Program{Verbs: cli.Verbs(), Stores: pgcli.Stores()})
	want := []call{{[]string{server, "serve", "--addr", "8470"}, []string{cli.EnvExecutable + "=" + ckpt}}}
	if !reflect.DeepEqual(calls, want) {
		t.Fatalf("ckpt-pg serve: exec %v (%s), want %v", calls, errOut.String(), want)
	}
}
