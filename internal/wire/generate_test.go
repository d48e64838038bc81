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

var update = flag.Bool("update", false, "rewrite codec_gen.go (go generate ./internal/wire)")

// TestGeneratedCodeIsCurrent: codec_gen.go is what wiregen writes for
// wire.Roots now, so a field added to a domain type (or retagged) cannot
// ship with a stale codec. Run `go generate ./internal/wire` to update it.
func TestGeneratedCodeIsCurrent(t *testing.T) {
	src, err := wiregen.Source(wire.Roots()...)
	if err != nil {
		t.Fatal(err)
	}
	if *update {
		if err := os.WriteFile("codec_gen.go", src, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	have, err := os.ReadFile("codec_gen.go")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(have, src) {
		t.Fatal("internal/wire/codec_gen.go is stale (a domain type changed): run `go generate ./internal/wire` and commit the result")
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
