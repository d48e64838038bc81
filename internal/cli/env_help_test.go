package cli

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestHelpNamesEveryVariable: every CKPT_ variable the ckpt binary's
// packages read (a "CKPT_…" string in their source) is named in the
// Environment section of ckpt --help, so the help cannot fall behind
// env.go again.
func TestHelpNamesEveryVariable(t *testing.T) {
	out := newHarness(t).OK("--help")
	i, j := strings.Index(out, "Environment:"), strings.Index(out, "Exit codes:")
	if i < 0 || j < i {
		t.Fatalf("no Environment section in ckpt --help:\n%s", out)
	}
	section := out[i:j]
	for _, v := range []string{"postgres://", "https://"} {
		if !strings.Contains(section, v) {
			t.Errorf("the Environment section does not say CKPT_STORE may be %s:\n%s", v, section)
		}
	}
	// Set by ckpt for the ckpt-server it runs, not by people.
	internal := map[string]bool{EnvExecutable: true}
	name := regexp.MustCompile(`"(CKPT_[A-Z_]+)"`)
	seen := map[string]bool{}
	for _, dir := range []string{".", "../claude", "../../remote", "../mcp", "../monitor", "../mirror"} {
		files, err := filepath.Glob(filepath.Join(dir, "*.go"))
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range files {
			if strings.HasSuffix(f, "_test.go") {
				continue
			}
			src, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			for _, m := range name.FindAllStringSubmatch(string(src), -1) {
				seen[m[1]] = true
				if !internal[m[1]] && !regexp.MustCompile(`\b`+m[1]+`\b`).MatchString(section) {
					t.Errorf("%s (read in %s) is not in ckpt --help's Environment section", m[1], f)
				}
			}
		}
	}
	if len(seen) < 8 {
		t.Errorf("found only %v: the scan looks in the wrong place", seen)
	}
}
