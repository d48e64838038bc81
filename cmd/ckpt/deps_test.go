package main

import (
	"os/exec"
	"strings"
	"testing"
)

// heavyPackages are the libraries ckpt must not link: every hook and agent
// call starts a ckpt process, and these cost each one its package
// initialisation (Prometheus alone ~0.7 ms), size and page faults. They
// belong to ckpt-server (serve, mcp, token, migrate, and every command
// over a PostgreSQL store). A prefix ending in "/" matches
// the packages under it.
var heavyPackages = []string{
	"github.com/ckpt-dev/ckpt/internal/server",
	"github.com/ckpt-dev/ckpt/internal/web",
	"github.com/ckpt-dev/ckpt/internal/mcp",
	"github.com/ckpt-dev/ckpt/internal/servercli",
	"github.com/ckpt-dev/ckpt/pgstore", // with the driver and x/text: a third of the binary
	"github.com/jackc/",
	"golang.org/x/text/",
	"github.com/prometheus/",
	"github.com/modelcontextprotocol/",
	"github.com/google/jsonschema-go/",
	"google.golang.org/protobuf/",
	"github.com/chromedp/",
	"github.com/yuin/goldmark/extension", // GFM; ckpt needs only the parser and the task-list AST
	"encoding/gob",
	"expvar",
	"html/template",
}

// TestLeanBinary fails when ckpt (the binary every hook call starts) links
// a package that belongs to ckpt-server.
func TestLeanBinary(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go list -deps: %v\n%s", err, out)
	}
	deps := strings.Fields(string(out))
	if len(deps) < 50 {
		t.Fatalf("go list -deps listed %d packages, fewer than ckpt's own: %s", len(deps), out)
	}
	for _, dep := range deps {
		for _, heavy := range heavyPackages {
			if dep == heavy || strings.HasSuffix(heavy, "/") && strings.HasPrefix(dep, heavy) {
				t.Errorf("ckpt links %s: keep it in ckpt-server (internal/servercli); see which package imports it with go list -deps -f '{{.ImportPath}}: {{.Imports}}' .", dep)
			}
		}
	}
}
