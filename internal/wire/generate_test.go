package wire_test

import (
	"bytes"
	"flag"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/ckpt-dev/ckpt/internal/wire"
	"github.com/ckpt-dev/ckpt/internal/wire/wiregen"
)

var update = flag.Bool("update", false, "rewrite the generated codec files (go generate ./internal/wire)")

// generated lists the generated files in this directory.
func generated(t *testing.T) []string {
	t.Helper()
	names, err := filepath.Glob("codec*_gen.go")
	if err != nil {
		t.Fatal(err)
	}
	return names
}

// TestGeneratedCodeIsCurrent: the codec_*gen.go files are what wiregen
// writes for wire.Roots now, no more and no fewer, so a field added to a
// domain type (or retagged) cannot ship with a stale codec. Run `go
// generate ./internal/wire` to update them.
func TestGeneratedCodeIsCurrent(t *testing.T) {
	files, err := wiregen.Files(wire.Roots()...)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]bool{}
	for _, f := range files {
		want[f.Name] = true
	}
	if *update {
		for _, name := range generated(t) {
			if !want[name] {
				if err := os.Remove(name); err != nil {
					t.Fatal(err)
				}
			}
		}
		for _, f := range files {
			if err := os.WriteFile(f.Name, f.Src, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		return
	}
	const rerun = "(a domain type changed): run `go generate ./internal/wire` and commit the result"
	for _, name := range generated(t) {
		if !want[name] {
			t.Errorf("internal/wire/%s is no longer generated %s", name, rerun)
		}
	}
	for _, f := range files {
		have, err := os.ReadFile(f.Name)
		if err != nil || !bytes.Equal(have, f.Src) {
			t.Errorf("internal/wire/%s is stale or missing %s", f.Name, rerun)
		}
	}
}

// TestGeneratedFilesAreShort: no generated file is longer than the
// repository's rule, and the code is spread over files of types, not one.
func TestGeneratedFilesAreShort(t *testing.T) {
	files, err := wiregen.Files(wire.Roots()...)
	if err != nil {
		t.Fatal(err)
	}
	if len(files) < 3 {
		t.Fatalf("wiregen wrote %d files", len(files))
	}
	for _, f := range files {
		if n := bytes.Count(f.Src, []byte("\n")); n > wiregen.MaxLines {
			t.Errorf("%s has %d lines, more than %d", f.Name, n, wiregen.MaxLines)
		}
	}
}

// TestEveryEventPayloadIsARoot: each event type's payload (named in the
// comment after its constant, as event.go declares them) is one of
// wire.Roots, so a new event type's data is written and read by generated
// code and checked field by field.
func TestEveryEventPayloadIsARoot(t *testing.T) {
	roots := map[string]bool{}
	for _, r := range wire.Roots() {
		roots[reflect.TypeOf(r).Name()] = true
	}
	fset := token.NewFileSet()
	files, err := filepath.Glob("../../*.go")
	if err != nil {
		t.Fatal(err)
	}
	found := 0
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, parser.ParseComments)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			g, ok := d.(*ast.GenDecl)
			if !ok || g.Tok != token.CONST {
				continue
			}
			for _, spec := range g.Specs {
				v := spec.(*ast.ValueSpec)
				if id, ok := v.Type.(*ast.Ident); !ok || id.Name != "EventType" || v.Comment == nil {
					continue
				}
				payload := strings.Fields(v.Comment.Text())
				if len(payload) == 0 {
					continue
				}
				found++
				if !roots[payload[0]] {
					t.Errorf("%s's payload %s is not in wire.Roots: add it there and run go generate ./internal/wire", v.Names[0].Name, payload[0])
				}
			}
		}
	}
	if found < 15 {
		t.Fatalf("found the payloads of %d event types in the root package's comments; the test no longer reads them", found)
	}
}
