package cli

import (
	"bytes"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ckpt-dev/ckpt/internal/cmdutil"
)

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
