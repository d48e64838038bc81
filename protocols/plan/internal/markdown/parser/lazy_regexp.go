package parser

// ckpt: this file is not goldmark's. Its regular expressions are compiled
// on first use instead of at package initialisation, which every process
// that links the parser would pay (see ../README.md).

import (
	"regexp"
	"sync"
)

type lazyRE struct {
	expr string
	once sync.Once
	re   *regexp.Regexp
}

func lazyRegexp(expr string) *lazyRE { return &lazyRE{expr: expr} }

func (l *lazyRE) get() *regexp.Regexp {
	l.once.Do(func() { l.re = regexp.MustCompile(l.expr) })
	return l.re
}

func (l *lazyRE) Match(b []byte) bool { return l.get().Match(b) }

func (l *lazyRE) FindSubmatchIndex(b []byte) []int { return l.get().FindSubmatchIndex(b) }
