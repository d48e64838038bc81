package servercli

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/ckpt-dev/ckpt/internal/cli"
	"github.com/spf13/cobra"
)

// suggestion is a ckpt command line a message or help text suggests: the
// words after "ckpt" up to the end of the clause.
var suggestion = regexp.MustCompile("ckpt((?: [^ ();`,\"]+)+)")

// TestSuggestedFlagsExist reads every string in the module's Go sources
// (tests aside) and checks that each `ckpt VERB … --flag` it suggests names
// a flag that VERB has: no message may send a user to a flag that does not
// exist. (It lives here, where the whole tree, serve, mcp and token
// included, is built.)
func TestSuggestedFlagsExist(t *testing.T) {
	root := cli.Tree(program())
	checked := 0
	err := filepath.WalkDir("../..", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".")) && path != "../.." {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, 0)
		if err != nil {
			return err
		}
		ast.Inspect(f, func(n ast.Node) bool {
			lit, ok := n.(*ast.BasicLit)
			if !ok || lit.Kind != token.STRING {
				return true
			}
			s, err := strconv.Unquote(lit.Value)
			if err != nil {
				return true
			}
			for _, m := range suggestion.FindAllStringSubmatch(s, -1) {
				if bad := unknownFlag(root, strings.Fields(m[1])); bad != "" {
					t.Errorf("%s: %q suggests %s, which the command does not have", path, m[0], bad)
				}
				checked++
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if checked < 20 {
		t.Fatalf("only %d suggested command lines found: the scan is broken", checked)
	}
}

// unknownFlag finds the command words name and returns the first --flag
// among them that the command does not accept ("" when all exist, or when
// the words name no command: not every "ckpt …" is a command line).
func unknownFlag(root *cobra.Command, words []string) string {
	cmd := root
	for len(words) > 0 {
		sub := findSub(cmd, words[0])
		if sub == nil {
			break
		}
		cmd, words = sub, words[1:]
	}
	if cmd == root {
		return ""
	}
	for _, w := range words {
		if proseWords[w] {
			break // "ckpt show and retry with --if-rev": the command line ended
		}
		if !strings.HasPrefix(w, "--") || len(w) < 3 {
			continue
		}
		name, _, _ := strings.Cut(strings.TrimPrefix(w, "--"), "=")
		name = strings.TrimRight(name, ".:")
		if name == "" || strings.ContainsAny(name, "%{}<>[]|") {
			continue
		}
		if cmd.Flags().Lookup(name) == nil && cmd.InheritedFlags().Lookup(name) == nil && name != "help" {
			return "--" + name
		}
	}
	return ""
}

// proseWords end a command line inside a sentence.
var proseWords = map[string]bool{"and": true, "or": true, "then": true, "to": true, "if": true, "when": true, "after": true, "before": true}

func findSub(cmd *cobra.Command, name string) *cobra.Command {
	for _, c := range cmd.Commands() {
		if c.Name() == name || c.HasAlias(name) {
			return c
		}
	}
	return nil
}
