package main

import (
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// heavyPackages are the libraries ckpt must not link: every hook and agent
// call starts a ckpt process, and these cost each one its package
// initialisation (Prometheus alone ~0.7 ms), size and page faults. They
// belong to ckpt-server (serve, mcp, token, migrate, monitor, checkpoint,
// and every command over a server's store that its keeper does not take)
// or to ckpt-pg (a PostgreSQL store). A prefix ending in "/" matches
// the packages under it.
var heavyPackages = []string{
	"github.com/ckpt-dev/ckpt/internal/server",
	"github.com/ckpt-dev/ckpt/internal/web",
	"github.com/ckpt-dev/ckpt/internal/mcp",
	"github.com/ckpt-dev/ckpt/internal/servercli",
	// HTTP clients: monitor's webhooks, checkpoint's issue trackers.
	"github.com/ckpt-dev/ckpt/internal/monitor",
	"github.com/ckpt-dev/ckpt/internal/fourstep",
	"github.com/ckpt-dev/ckpt/internal/tracker",
	"github.com/ckpt-dev/ckpt/internal/tracker/",
	"github.com/ckpt-dev/ckpt/pgstore", // with the driver and x/text: a third of the binary
	// The server store's HTTP client and its change feed: ckpt hands a
	// server store's commands to its keeper or to ckpt-server.
	"github.com/ckpt-dev/ckpt/remote",
	"github.com/ckpt-dev/ckpt/internal/feed",
	"github.com/jackc/",
	"golang.org/x/text/",
	"github.com/prometheus/",
	"github.com/modelcontextprotocol/",
	"github.com/google/jsonschema-go/",
	"google.golang.org/protobuf/",
	"github.com/chromedp/",
	// goldmark builds a Unicode case-folding map and compiles regular
	// expressions at package initialisation; plan.md is read with the copy
	// in protocols/plan/internal/markdown, which does that on first use.
	"github.com/yuin/goldmark",
	"github.com/yuin/goldmark/",
	"encoding/gob",
	"expvar",
	"html/template",
	// The HTTP stack: importing net/http costs a hello-world 0.37x more CPU,
	// crypto/tls 0.24x (docs/design.md). `net` alone (the keeper's Unix
	// socket) is cheap and allowed.
	"net/http",
	"net/http/",
	"crypto/tls",
}

// pgPackages are the heavy packages ckpt-pg links on purpose: the
// PostgreSQL store and its driver (with x/text). The rest of heavyPackages
// it must not link either: every command over a PostgreSQL store, each
// hook of an agent writing to one, starts it.
var pgPackages = []string{
	"github.com/ckpt-dev/ckpt/pgstore",
	"github.com/jackc/",
	"golang.org/x/text/",
	"crypto/tls", // the driver's sslmode
}

// TestLeanBinary fails when ckpt (the binary every hook call starts) links
// a package that belongs to ckpt-server, or ckpt-pg (every command over a
// PostgreSQL store) one beyond the store and its driver.
func TestLeanBinary(t *testing.T) {
	for _, bin := range []struct{ dir, name string }{{".", "ckpt"}, {"../ckpt-pg", "ckpt-pg"}} {
		out, err := exec.Command("go", "list", "-deps", bin.dir).CombinedOutput()
		if err != nil {
			t.Fatalf("go list -deps %s: %v\n%s", bin.dir, err, out)
		}
		deps := strings.Fields(string(out))
		if len(deps) < 50 {
			t.Fatalf("go list -deps listed %d packages, fewer than ckpt's own: %s", len(deps), out)
		}
		for _, dep := range deps {
			for _, heavy := range heavyPackages {
				if bin.name == "ckpt-pg" && slices.Contains(pgPackages, heavy) {
					continue
				}
				if dep == heavy || strings.HasSuffix(heavy, "/") && strings.HasPrefix(dep, heavy) {
					t.Errorf("%s links %s: keep it in ckpt-server (internal/servercli); see which package imports it with go list -deps -f '{{.ImportPath}}: {{.Imports}}' %s", bin.name, dep, bin.dir)
				}
			}
		}
	}
}

// initBudget is the most any one package's initialisation may allocate in
// ckpt: the largest now is the standard library's unicode tables (11 KB).
// goldmark's case-folding map and internal/claude's secret patterns were
// 139 KB and 109 KB before they moved to first use.
const initBudget = 16 << 10

// ownInitAllocs is the most ckpt's own packages together may allocate at
// start-up, in allocations: 22 now, 168 when map literals and
// package-level sync.OnceValue regular expressions were built in every
// process (docs/design.md, start-up round eight). A set or table is a
// switch or an array, a regular expression a lazyregexp.New.
const ownInitAllocs = 32

// TestLightInit fails when a package linked into ckpt does real work at
// start-up (a map built, a regular expression compiled in a package
// variable or an init function), which every hook and agent call would pay
// whether it uses it or not: do it on first use instead (see
// ownInitAllocs).
// Go reports each package's initialisation under GODEBUG=inittrace=1; its
// allocation counts are exact, unlike its times.
func TestLightInit(t *testing.T) {
	cmd := exec.Command(ckptBinary(t), "version")
	// A fixed, small environment: the first package to read a variable
	// copies the whole environment, which is the caller's size, not ckpt's.
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir(), "GODEBUG=inittrace=1"}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("ckpt version: %v\n%s", err, out)
	}
	inits, own := 0, 0
	for _, line := range strings.Split(string(out), "\n") {
		// init PKG @0.5 ms, 0.01 ms clock, 2392 bytes, 4 allocs
		f := strings.Fields(line)
		if len(f) != 11 || f[0] != "init" || f[8] != "bytes," {
			continue
		}
		inits++
		n, err := strconv.Atoi(f[7])
		if err != nil {
			t.Fatalf("inittrace line %q: %v", line, err)
		}
		if n > initBudget {
			t.Errorf("package %s allocates %d bytes at start-up in every ckpt process (budget %d): build it on first use", f[1], n, initBudget)
		}
		if a, err := strconv.Atoi(f[9]); err != nil {
			t.Fatalf("inittrace line %q: %v", line, err)
		} else if strings.HasPrefix(f[1], "github.com/ckpt-dev/ckpt") {
			own += a
		}
	}
	if own > ownInitAllocs {
		t.Errorf("ckpt's own packages allocate %d times at start-up in every ckpt process (budget %d): make the new map literal a switch, the sync.OnceValue a lazyregexp.New, or build it on first use\n%s", own, ownInitAllocs, out)
	}
	if inits < 50 {
		t.Fatalf("GODEBUG=inittrace=1 reported %d package initialisations; the test no longer reads them:\n%s", inits, out)
	}
}

// TestNoReflectMethodCalls fails when ckpt can reach reflect's
// MethodByName (a text/template executor does, such as cobra's
// SetVersionTemplate): the linker then keeps every exported method of
// every type linked, 2.7 MB of ckpt, and every process's start pays for
// the larger function and interface tables.
func TestNoReflectMethodCalls(t *testing.T) {
	out, err := exec.Command("go", "tool", "nm", ckptBinary(t)).CombinedOutput()
	if err != nil {
		t.Fatalf("go tool nm: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), " main.main") {
		t.Fatalf("go tool nm listed no main.main; the test no longer reads its output:\n%.500s", out)
	}
	for _, line := range strings.Split(string(out), "\n") {
		if strings.HasSuffix(line, " reflect.Value.MethodByName") || strings.HasSuffix(line, " reflect.Value.Method") {
			t.Errorf("ckpt links %s: find its caller with go build -ldflags=-dumpdep ./cmd/ckpt 2>&1 | grep -B1 ReflectMethod", strings.TrimSpace(line))
		}
	}
}
