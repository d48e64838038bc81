package cli

import (
	"context"
	"fmt"
	"runtime"
	"runtime/debug"
	"strings"

	"github.com/spf13/cobra"
)

// VersionInfo is what `ckpt version` reports, from the build information
// the Go toolchain stamps into the binary.
type VersionInfo struct {
	// Version is the module version: a release tag, a pseudo-version when
	// built from a git checkout, "(devel)" when the toolchain knew neither.
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

// buildVersion reads the running binary's build information.
func buildVersion() VersionInfo {
	v := VersionInfo{Version: "(unknown)", Go: runtime.Version(), Platform: runtime.GOOS + "/" + runtime.GOARCH}
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
// "ckpt v0.3.0 (commit 1a2b3c4d5e6f, 2026-01-15T14:30:00Z, modified; go1.26.8 linux/amd64)".
func (v VersionInfo) String() string {
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

// VersionOptions are the inputs of `ckpt version`.
type VersionOptions struct {
	IO   IOStreams
	JSON bool
}

func newVersionCmd(f *factory) *cobra.Command {
	o := &VersionOptions{IO: f.env.IOStreams}
	cmd := &cobra.Command{
		Use:   "version",
		Short: "Print ckpt's version and the commit it was built from",
		Long: `Print the module version of this ckpt binary and, when it was built from a
git checkout, the commit, its time and whether the checkout had changes
(the same as ckpt --version). --json prints the fields.`,
		Args: exactArgs(0, "no arguments"),
		RunE: f.runE(func(ctx context.Context, args []string) error { return runVersion(o) }),
	}
	cmd.Flags().BoolVar(&o.JSON, "json", false, "print the version fields as JSON")
	return cmd
}

func runVersion(o *VersionOptions) error {
	v := buildVersion()
	if o.JSON {
		return writeJSON(o.IO.Out, v)
	}
	_, err := fmt.Fprintln(o.IO.Out, v)
	return err
}
