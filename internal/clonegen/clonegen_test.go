package clonegen_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"go/types"
	"strings"
	"testing"

	"github.com/ckpt-dev/ckpt/internal/clonegen"
)

type inner struct{ Tags []string }

type withInterface struct {
	Name  string
	Inner inner
	Any   any
}

type withPointerKeys struct{ M map[*int]string }

type withChan struct{ C []chan int }

type nested struct {
	Grid  [2][]int
	ByKey map[string][]*inner
}

// TestRefusesWhatItCannotCopy: a field the generated code could only
// copy by sharing what it refers to is an error naming that field, so
// no such field ships with a copy that breaks Clone's contract.
func TestRefusesWhatItCannotCopy(t *testing.T) {
	for _, c := range []struct {
		root any
		want string
	}{
		{withInterface{}, "withInterface.Any"},
		{withPointerKeys{}, "withPointerKeys.M"},
		{withChan{}, "withChan.C"},
	} {
		_, err := clonegen.File(c.root, "p")
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("File(%T): %v, want an error naming %s", c.root, err, c.want)
		}
	}
}

// TestCopiesNestedShapes: arrays of slices and maps of slices of
// pointers get a copy at every level, and the code type-checks against
// the types it copies.
func TestCopiesNestedShapes(t *testing.T) {
	src, err := clonegen.File(nested{}, "p")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"func (c *nested) Clone() *nested",
		"make([]int, len(x.Grid[i1]))",
		"make(map[string][]*inner, len(x.ByKey))",
		"deepeninner(&p",
	} {
		if !strings.Contains(string(src), want) {
			t.Errorf("the generated code has no %q:\n%s", want, src)
		}
	}
	const decls = `
type inner struct{ Tags []string }
type nested struct {
	Grid  [2][]int
	ByKey map[string][]*inner
}
`
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "clone_gen.go", string(src)+decls, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := (&types.Config{}).Check("p", fset, []*ast.File{f}, nil); err != nil {
		t.Errorf("the generated code does not type-check: %v\n%s", err, src)
	}
}
