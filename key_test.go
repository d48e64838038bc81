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

// TestMadeKey: every key NewKey makes is a made key, with any prefix; a
// key a user would type, or one too short or with other digits, is not.
func TestMadeKey(t *testing.T) {
	for _, prefix := range []string{"", "k-", "keeper-", "a b\n"} {
		if k := NewKey(prefix); !MadeKey(k) {
			t.Errorf("NewKey(%q) = %q is not a made key", prefix, k)
		}
	}
	for _, k := range []string{"", "k1", "hook-1", "keeper-019ad4c4e1a8", "keeper-019AD4C4E1A83F2B9C0D4E5F6A7B8C9D", "019ad4c4e1a83f2b9c0d4e5f6a7", "019ad4c4e1a83f2b9c0d4e5f6a7b8c9g"} {
		if MadeKey(k) {
			t.Errorf("MadeKey(%q) = true", k)
		}
	}
}
