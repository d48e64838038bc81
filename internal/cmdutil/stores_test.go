package cmdutil

import (
	"errors"
	"path/filepath"
	"regexp"
	"testing"

	ckpt "github.com/ckpt-dev/ckpt"
	"github.com/ckpt-dev/ckpt/memstore"
)

// TestStoresOpenByScheme: the store a command line names is opened by the
// opener its binary registered for the location's scheme, given the
// location as the command line wrote it (a relative directory made
// absolute); a scheme registered without an opener is handed over, and one
// not registered is refused as invalid input naming the value.
func TestStoresOpenByScheme(t *testing.T) {
	var opened []string
	opener := func(kind string) Opener {
		return func(f *Factory, loc string) (ckpt.Store, error) {
			opened = append(opened, kind+" "+loc)
			return memstore.New(), nil
		}
	}
	stores := Stores{"": opener("dir"), "https": opener("server"), "postgres": nil}
	wd := t.TempDir()
	factory := func(flag, env string) *Factory {
		return &Factory{Env: &Env{WorkDir: wd, Getenv: func(k string) string {
			if k == EnvStore {
				return env
			}
			return ""
		}}, StoreFlag: flag, Stores: stores}
	}
	cases := []struct {
		flag, env string
		want      string // what was opened; "" when nothing may be
		handed    bool
		invalid   bool
	}{
		{"", "", "dir ", false, false},
		{"proj/.ckpt", "", "dir " + filepath.Join(wd, "proj/.ckpt"), false, false},
		{"", "/srv/.ckpt", "dir /srv/.ckpt", false, false},
		{"https://ckpt.example:8470", "/srv/.ckpt", "server https://ckpt.example:8470", false, false},
		{"", "postgres://kai@db/ckpt", "", true, true},
		{"ftp://files.example/ckpt", "", "", false, true},
		{"htps://typo.example", "", "", false, true},
	}
	for _, c := range cases {
		opened = nil
		f := factory(c.flag, c.env)
		if got := f.HandedOver(); got != c.handed {
			t.Errorf("--store %q CKPT_STORE %q: HandedOver = %v, want %v", c.flag, c.env, got, c.handed)
		}
		st, err := f.OpenStore()
		switch {
		case c.invalid && !errors.Is(err, ckpt.ErrInvalid):
			t.Errorf("--store %q CKPT_STORE %q: opened (%v), want invalid input", c.flag, c.env, err)
		case !c.invalid && err != nil:
			t.Errorf("--store %q CKPT_STORE %q: %v", c.flag, c.env, err)
		case !c.invalid && (len(opened) != 1 || opened[0] != c.want || st == nil):
			t.Errorf("--store %q CKPT_STORE %q: opened %q, want %q", c.flag, c.env, opened, c.want)
		case c.invalid && len(opened) != 0:
			t.Errorf("--store %q CKPT_STORE %q: opened %q although refused", c.flag, c.env, opened)
		}
	}
	// A store given to the factory (tests, the demo) is the store, whatever
	// the command line names, and nothing is handed over.
	given := memstore.New()
	f := factory("", "postgres://kai@db/ckpt")
	f.Store = given
	if st, err := f.OpenStore(); err != nil || st != given || f.HandedOver() {
		t.Errorf("given store: %v %v handed=%v", st, err, f.HandedOver())
	}
}

// TestOpenStoreWraps: every store OpenStore opens passes through Wrap (the
// CLI's mirrors), OpenRawStore's does not.
func TestOpenStoreWraps(t *testing.T) {
	inner := memstore.New()
	type wrapped struct{ ckpt.Store }
	f := &Factory{Env: &Env{WorkDir: t.TempDir()}, Store: inner,
		Wrap: func(f *Factory, st ckpt.Store) ckpt.Store { return wrapped{st} }}
	if st, err := f.OpenStore(); err != nil || st != (wrapped{inner}) {
		t.Errorf("OpenStore = %v, %v; want the wrapped store", st, err)
	}
	if st, err := f.OpenRawStore(); err != nil || st != inner {
		t.Errorf("OpenRawStore = %v, %v; want the store itself", st, err)
	}
}

// schemeOracle is the definition Scheme implements by hand.
var schemeOracle = regexp.MustCompile(`^([A-Za-z][A-Za-z0-9+.-]*)://`)

func schemeWant(loc string) string {
	if m := schemeOracle.FindStringSubmatch(loc); m != nil {
		return m[1]
	}
	return ""
}

// TestScheme: a store location written as a URL names its scheme; a path
// (relative, absolute, or with a colon that is not "://") names none.
func TestScheme(t *testing.T) {
	for loc, want := range map[string]string{
		"https://ckpt.example:8080/x": "https",
		"postgres://u@h/db":           "postgres",
		"postgresql+x.y-z://h":        "postgresql+x.y-z",
		"HTTP://h":                    "HTTP",
		".ckpt":                       "",
		"/srv/ckpt":                   "",
		"c:/ckpt":                     "",
		"1http://h":                   "",
		"://h":                        "",
		"http:/h":                     "",
		"ht tp://h":                   "",
		"":                            "",
	} {
		if got := Scheme(loc); got != want || got != schemeWant(loc) {
			t.Errorf("Scheme(%q) = %q, want %q", loc, got, want)
		}
	}
}

// FuzzScheme holds Scheme to the regular expression it replaces, on any
// location a flag or CKPT_STORE may hold.
func FuzzScheme(f *testing.F) {
	for _, s := range []string{"https://h", "postgres://u@h/db", ".ckpt", "a+b.c-d://", "a:/", "é://"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, loc string) {
		if got, want := Scheme(loc), schemeWant(loc); got != want {
			t.Fatalf("Scheme(%q) = %q, the pattern says %q", loc, got, want)
		}
	})
}
