package lazyregexp

import (
	"sync"
	"testing"
)

// TestCompiledOnceOnFirstGet: nothing is compiled until Get, every Get
// returns the one compiled expression, concurrent first calls included.
func TestCompiledOnceOnFirstGet(t *testing.T) {
	r := New(`^a(b+)$`)
	if r.re != nil {
		t.Fatal("compiled before the first Get")
	}
	var wg sync.WaitGroup
	got := make([]any, 8)
	for i := range got {
		wg.Add(1)
		go func() {
			defer wg.Done()
			got[i] = r.Get()
		}()
	}
	wg.Wait()
	for _, g := range got {
		if g != got[0] {
			t.Fatal("Get returned two different expressions")
		}
	}
	if m := r.Get().FindStringSubmatch("abbb"); len(m) != 2 || m[1] != "bbb" {
		t.Fatalf("match %q", m)
	}
	if r.Get().MatchString("ac") {
		t.Fatal(`"ac" matched ^a(b+)$`)
	}
}

// TestBadExpressionPanicsOnGet: a bad expression fails where it is used,
// as regexp.MustCompile does, not at declaration.
func TestBadExpressionPanicsOnGet(t *testing.T) {
	r := New(`(`)
	defer func() {
		if recover() == nil {
			t.Fatal("Get of an invalid expression did not panic")
		}
	}()
	r.Get()
}
