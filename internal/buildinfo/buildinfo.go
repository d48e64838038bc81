// Package buildinfo says which build of ckpt is running, from the build
// information the Go toolchain stamps into the binary: what `ckpt version`
// and `ckpt --version` print, and the version ckpt-server reports to its
// HTTP and MCP clients.
package buildinfo

import (
	"fmt"
	"runtime"
	"runtime/debug"
	"strings"
)

// Info is one binary's build information.
type Info struct {
	// Version is the module version: a release tag, a pseudo-version when
	// built from a git checkout, "(devel)" when the toolchain knew neither,
	// "(unknown)" when the binary carries no build information.
	Version string `json:"version"`
	// Commit, Time and Modified describe the checkout it was built from
	// (vcs.revision, vcs.time, vcs.modified); empty when not stamped (go
	// run, -buildvcs=false, a build outside a repository).
	Commit   string `json:"commit,omitempty"`
	Time     string `json:"commit_time,omitempty"`
	Modified bool   `json:"modified,omitempty"`
	Go       string `json:"go"`
	Platform string `json:"platform"`
}

// Read returns the running binary's build information. It never fails:
// what the binary does not carry is left empty (Version: "(unknown)").
func Read() Info {
	v := Info{Version: "(unknown)", Go: runtime.Version(), Platform: runtime.GOOS + "/" + runtime.GOARCH}
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return v
	}
	if bi.Main.Version != "" {
		v.Version = bi.Main.Version
	}
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			v.Commit = s.Value
		case "vcs.time":
			v.Time = s.Value
		case "vcs.modified":
			v.Modified = s.Value == "true"
		}
	}
	return v
}

// String is the one line `ckpt version` and `ckpt --version` print, e.g.
// "ckpt v0.3.0 (commit 1a2b3c4d5e6f, 2026-01-15T14:30:00Z, modified; go1.26.8 linux/amd64)":
// the commit shortened to 12 characters, and only what is known.
func (v Info) String() string {
	var extra []string
	if v.Commit != "" {
		extra = append(extra, "commit "+v.Commit[:min(len(v.Commit), 12)])
	}
	if v.Time != "" {
		extra = append(extra, v.Time)
	}
	if v.Modified {
		extra = append(extra, "modified")
	}
	tail := v.Go + " " + v.Platform
	if len(extra) > 0 {
		tail = strings.Join(extra, ", ") + "; " + tail
	}
	return fmt.Sprintf("ckpt %s (%s)", v.Version, tail)
}
