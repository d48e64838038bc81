package cli

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/ckpt-dev/ckpt/internal/cmdutil"
	"github.com/ckpt-dev/ckpt/internal/keeper"
)

// TestServerStoreStartsAKeeper: a record command over a server store with
// a token, finding no keeper, runs directly and starts `keeper run` of
// this program with the store and the token; with no token, with the
// keeper turned off, or for a command that does not record, it starts
// none.
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
		runOn(env, nil)
		want := [][]string{{exe, exe, "keeper", "run", cmdutil.EnvStore + "=" + srv.URL, cmdutil.EnvToken + "=tok"}}
		if !tc.start {
			want = nil
		}
		if !reflect.DeepEqual(starts, want) {
			t.Errorf("%s: ckpt %v started %q, want %q (%s)", tc.name, tc.args, starts, want, out.String())
		}
	}
}

// TestKeeperCommandOverServer: ckpt keeper status takes a server store
// with its token, and refuses one without (a server's keeper is one
// token's) or a directory.
func TestKeeperCommandOverServer(t *testing.T) {
	runtime := t.TempDir()
	for _, tc := range []struct {
		vars map[string]string
		code int
		want string
	}{
		{map[string]string{cmdutil.EnvStore: "https://ckpt.example:8470", cmdutil.EnvToken: "tok"}, 0, "no keeper runs for this store"},
		{map[string]string{cmdutil.EnvStore: "https://ckpt.example:8470"}, ExitUsage, "set CKPT_TOKEN"},
		{map[string]string{cmdutil.EnvStore: filepath.Join(runtime, ".ckpt")}, ExitUsage, "postgres:// or https:// URL"},
	} {
		tc.vars["XDG_RUNTIME_DIR"] = runtime
		var out bytes.Buffer
		env := &cmdutil.Env{
			IOStreams: cmdutil.IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &out},
			Getenv:    func(k string) string { return tc.vars[k] },
			WorkDir:   runtime,
			Args:      []string{"keeper", "status"},
		}
		if code := runOn(env, nil); code != tc.code || !strings.Contains(out.String(), tc.want) {
			t.Errorf("ckpt keeper status with %v: exit %d, want %d: %s", tc.vars, code, tc.code, out.String())
		}
		if slices.Contains(strings.Fields(out.String()), "tok") {
			t.Errorf("the token is printed: %s", out.String())
		}
	}
}
