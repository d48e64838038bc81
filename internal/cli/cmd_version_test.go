package cli

import "testing"

func TestVersionLine(t *testing.T) {
	for _, c := range []struct {
		v    VersionInfo
		want string
	}{
		{VersionInfo{Version: "v0.3.0", Go: "go1.26.8", Platform: "linux/amd64"}, "ckpt v0.3.0 (go1.26.8 linux/amd64)"},
		{VersionInfo{Version: "(devel)", Commit: "1e2a5d4b0c9be9132c78d3b9bc2939699a8eac67", Time: "2026-11-23T14:43:04Z", Modified: true, Go: "go1.26.8", Platform: "linux/arm64"},
			"ckpt (devel) (commit 1e2a5d4b0c9b, 2026-11-23T14:43:04Z, modified; go1.26.8 linux/arm64)"},
	} {
		if got := c.v.String(); got != c.want {
			t.Errorf("%+v: %q, want %q", c.v, got, c.want)
		}
	}
	if v := buildVersion(); v.Version == "" || v.Go == "" || v.Platform == "" {
		t.Errorf("the running binary's version: %+v", v)
	}
}
