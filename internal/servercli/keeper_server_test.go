package servercli

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/ckpt-dev/ckpt/internal/cli"
	"github.com/ckpt-dev/ckpt/internal/cmdutil"
	"github.com/ckpt-dev/ckpt/internal/keeper"
)

// TestServerStoreStartsAKeeper: a record command over a server store with
// a token, finding no keeper, runs directly in ckpt-server (ckpt hands it
// over: cli's TestServerStoreDispatch) and starts `ckpt-server keeper run`
// with the store and the token; with no token, with the keeper turned
// off, or for a command that does not record, it starts none.
func TestServerStoreStartsAKeeper(t *testing.T) {
	if !keeper.Supported {
		t.Skip("the keeper runs on Linux only")
	}
	// A server that refuses every token at once: the command's own call
	// fails without retries, and only its start of a keeper is looked at.
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusUnauthorized)
		_, _ = w.Write([]byte(`{"code":"unauthorized","message":"unknown token"}`))
	}))
	defer srv.Close()
	runtime, err := os.MkdirTemp("", "ks") // short: a socket's path is limited
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(runtime)
	exe := filepath.Join(runtime, "ckpt")
	server := filepath.Join(runtime, cli.ServerProgram) // the keeper's binary, beside ckpt
	if err := os.WriteFile(server, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name  string
		vars  map[string]string
		args  []string
		start bool
	}{
		{"a record command", map[string]string{cmdutil.EnvToken: "tok"}, []string{"note", "a/b", "hi"}, true},
		{"a hook", map[string]string{cmdutil.EnvToken: "tok"}, []string{"hook", "Stop"}, true},
		{"no token", nil, []string{"note", "a/b", "hi"}, false},
		{"CKPT_KEEPER=off", map[string]string{cmdutil.EnvToken: "tok", keeper.EnvKeeper: "off"}, []string{"note", "a/b", "hi"}, false},
		{"--no-keeper", map[string]string{cmdutil.EnvToken: "tok"}, []string{"--no-keeper", "note", "a/b", "hi"}, false},
		{"a read", map[string]string{cmdutil.EnvToken: "tok"}, []string{"ls"}, false},
	} {
		vars := map[string]string{cmdutil.EnvStore: srv.URL, "XDG_RUNTIME_DIR": runtime}
		for k, v := range tc.vars {
			vars[k] = v
		}
		var starts [][]string
		var out bytes.Buffer
		env := &cmdutil.Env{
			IOStreams:  cmdutil.IOStreams{In: strings.NewReader("{}"), Out: &out, ErrOut: &out},
			Getenv:     func(k string) string { return vars[k] },
			WorkDir:    runtime,
			Args:       tc.args,
			Executable: exe,
			Start: func(path string, args, env []string) error {
				starts = append(starts, append(append([]string{path}, args...), env...))
				return nil
			},
		}
		cli.Main(AsCkpt(env), program())
		want := [][]string{{server, server, "keeper", "run", cmdutil.EnvStore + "=" + srv.URL, cmdutil.EnvToken + "=tok"}}
		if !tc.start {
			want = nil
		}
		if !reflect.DeepEqual(starts, want) {
			t.Errorf("%s: ckpt %v started %q, want %q (%s)", tc.name, tc.args, starts, want, out.String())
		}
	}
}
