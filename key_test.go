package ckpt

import (
	"strings"
	"testing"
	"time"
)

// TestNewKeysSortInTimeOrder: a key made later sorts after one made
// earlier (what keeps a store's key index growing at its end), keys have
// one length and their prefix, and a burst of them is unique.
func TestNewKeysSortInTimeOrder(t *testing.T) {
	first := NewKey("keeper-")
	time.Sleep(2 * time.Millisecond)
	second := NewKey("keeper-")
	if !(first < second) {
		t.Errorf("a key made 2 ms later sorts first: %s, then %s", first, second)
	}
	seen := map[string]bool{}
	for range 10_000 {
		k := NewKey("k-")
		if seen[k] || len(k) != len("k-")+28 || !strings.HasPrefix(k, "k-") {
			t.Fatalf("key %q: repeated, or not k- and 28 hex digits", k)
		}
		seen[k] = true
	}
	if len(first) != len("keeper-")+28 {
		t.Errorf("key %q is not keeper- and 28 hex digits", first)
	}
}
