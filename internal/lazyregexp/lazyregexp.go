// Package lazyregexp is a regular expression compiled on first use.
//
// Go runs every linked package's initialisation in every process, and ckpt
// starts a process per hook event and recorded step, most of which never
// match the expressions a package holds. A package-level
// `sync.OnceValue(func() *regexp.Regexp {…})` defers the compile but still
// allocates its closures at initialisation; `New` with a constant
// expression is inlined and its result laid out by the compiler as static
// data, so declaring one costs a process nothing.
package lazyregexp

import (
	"regexp"
	"sync"
)

// Regexp is an expression compiled on its first Get. The zero value is
// not usable; declare one with New.
type Regexp struct {
	expr string
	once sync.Once
	re   *regexp.Regexp
}

// New returns expr, to be compiled on first use. expr must compile: Get
// panics as regexp.MustCompile does otherwise, so declare it at package
// level where a test that uses it finds the mistake.
func New(expr string) *Regexp { return &Regexp{expr: expr} }

// Get returns the compiled expression, compiling it on the first call;
// it is safe for concurrent use.
func (r *Regexp) Get() *regexp.Regexp {
	r.once.Do(func() { r.re = regexp.MustCompile(r.expr) })
	return r.re
}
