package ckpt_test

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"

	ckpt "github.com/ckpt-dev/ckpt"
)

func TestValidateID(t *testing.T) {
	good := []string{"kai-7/secondary-a", "migration-T060", "a", "a.b_c-d/e", strings.Repeat("x", ckpt.MaxIDLen), "...x", "x..y"}
	for _, id := range good {
		if err := ckpt.ValidateID(id); err != nil {
			t.Errorf("ValidateID(%q) = %v, want nil", id, err)
		}
	}
	bad := []string{"", "../x", "..", ".", "a/../b", "a//b", "/a", "a/", "a b", "a\\b", "a\x00", "é", strings.Repeat("x", ckpt.MaxIDLen+1), "a/./b"}
	for _, id := range bad {
		err := ckpt.ValidateID(id)
		if !errors.Is(err, ckpt.ErrInvalid) {
			t.Errorf("ValidateID(%q) = %v, want ErrInvalid", id, err)
		}
	}
}

func FuzzValidateID(f *testing.F) {
	for _, s := range []string{"kai-7/secondary-a", "../x", "a//b", "", "a/./b", "x/.."} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, id string) {
		if ckpt.ValidateID(id) != nil {
			return
		}
		// A valid ID, used as a path below a root, stays below that root.
		root := "/store/checkpoints"
		p := filepath.Join(root, filepath.FromSlash(id))
		if !strings.HasPrefix(p, root+"/") || filepath.Clean(p) != p || len(id) > ckpt.MaxIDLen {
			t.Fatalf("valid ID %q escapes or is not clean: %s", id, p)
		}
		if strings.Contains(id, "+") {
			t.Fatalf("valid ID %q contains '+', which stores use to flatten IDs", id)
		}
	})
}

// TestValidateIDNamesTheCharacter: a character an ID cannot hold is named
// as the character it is, a multi-byte one too, with its code point.
func TestValidateIDNamesTheCharacter(t *testing.T) {
	for _, c := range []struct{ id, want string }{
		{"café/a", `'é' (U+00E9)`},
		{"kai 7", `' ' (U+0020)`},
		{"日本", `'日' (U+65E5)`},
		{"a\xffb", `the byte 0xff, which is not UTF-8`},
		{"tab\there", `'\t' (U+0009)`},
	} {
		err := ckpt.ValidateID(c.id)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("ValidateID(%q) = %v, want it to name %s", c.id, err, c.want)
		}
	}
}

// A prefix is a path prefix: team-a grants team-a/… and nothing beside it.
func TestUnderPrefixIsAPathPrefix(t *testing.T) {
	for _, c := range []struct {
		id, prefix string
		want       bool
	}{
		{"team-a/x", "team-a", true}, {"team-a/x/y", "team-a/", true},
		{"team-ab/x", "team-a", false}, {"team-a-evil/x", "team-a", false},
		{"team-a", "team-a", false}, {"anything", "", true},
	} {
		if got := ckpt.UnderPrefix(c.id, c.prefix); got != c.want {
			t.Errorf("UnderPrefix(%q, %q) = %v, want %v", c.id, c.prefix, got, c.want)
		}
	}
}

func TestNarrowPrefix(t *testing.T) {
	for _, c := range []struct{ asked, limit, want string }{
		{"", "team-a", "team-a/"}, {"team-a/x", "team-a", "team-a/x"}, {"team", "team-a", "team-a/"}, {"team-b", "team-a", "!"},
	} {
		got, ok := ckpt.NarrowPrefix(c.asked, c.limit)
		if !ok {
			got = "!"
		}
		if got != c.want {
			t.Errorf("NarrowPrefix(%q, %q) = %q, want %q", c.asked, c.limit, got, c.want)
		}
	}
}
