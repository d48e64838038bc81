package buildinfo

import "testing"

func TestString(t *testing.T) {
	for _, c := range []struct {
		v    Info
		want string
	}{
		{Info{Version: "v0.3.0", Go: "go1.26.8", Platform: "linux/amd64"}, "ckpt v0.3.0 (go1.26.8 linux/amd64)"},
		{Info{Version: "(devel)", Commit: "1e2a5d4b0c9be9132c78d3b9bc2939699a8eac67", Time: "2026-11-23T14:43:04Z", Modified: true, Go: "go1.26.8", Platform: "linux/arm64"},
			"ckpt (devel) (commit 1e2a5d4b0c9b, 2026-11-23T14:43:04Z, modified; go1.26.8 linux/arm64)"},
		{Info{Version: "v1.0.0", Commit: "abc", Go: "go1.26.8", Platform: "darwin/arm64"}, "ckpt v1.0.0 (commit abc; go1.26.8 darwin/arm64)"},
	} {
		if got := c.v.String(); got != c.want {
			t.Errorf("%+v: %q, want %q", c.v, got, c.want)
		}
	}
}

func TestReadTheRunningBinary(t *testing.T) {
	if v := Read(); v.Version == "" || v.Go == "" || v.Platform == "" {
		t.Errorf("the running binary's build information: %+v", v)
	}
}
