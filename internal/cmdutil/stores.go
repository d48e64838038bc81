package cmdutil

import (
	"fmt"
	"path/filepath"
	"strings"
	"time"

	ckpt "github.com/ckpt-dev/ckpt"
)

// A store's location is --store, else $CKPT_STORE: a directory (taken from
// the working directory when relative), or a URL whose scheme names the
// kind of store (https://… a ckpt serve server, postgres://… a PostgreSQL
// database). With neither, the directory opener finds the nearest .ckpt/
// walking up from the working directory.

// Opener opens the store at loc for f's command; the caller closes it. loc
// is a URL of the scheme the opener is registered for, or, for the
// directory opener, an absolute directory, or "" when none was given.
type Opener func(f *Factory, loc string) (ckpt.Store, error)

// Stores are the store openers of one binary, by the scheme of the
// location ("https", "postgres"); "" is the opener of a directory. A
// scheme registered with a nil Opener is one the binary knows but leaves to
// another: ckpt hands a command over a PostgreSQL store to ckpt-server
// before it runs (see HandedOver). A scheme not registered at all is
// refused (CheckLocation).
type Stores map[string]Opener

// Scheme is the URL scheme loc is written with ("https"), "" for a path: a
// value written as a URL (SCHEME://…, the scheme a letter then letters,
// digits, + . or -) is never meant as a relative directory. Every command
// asks, so it is a loop, not a regular expression compiled at start-up.
func Scheme(loc string) string {
	for i := 0; i < len(loc); i++ {
		c := loc[i]
		switch {
		case 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z':
		case i > 0 && ('0' <= c && c <= '9' || c == '+' || c == '.' || c == '-'):
		case i > 0 && c == ':' && strings.HasPrefix(loc[i:], "://"):
			return loc[:i]
		default:
			return ""
		}
	}
	return ""
}

// knows reports whether loc is a URL of a scheme registered in s.
func (s Stores) knows(loc string) bool {
	scheme := Scheme(loc)
	if scheme == "" {
		return false
	}
	_, ok := s[scheme]
	return ok
}

// given is the raw --store, else $CKPT_STORE.
func (f *Factory) given() string {
	if f.StoreFlag != "" {
		return f.StoreFlag
	}
	return f.Env.Var(EnvStore)
}

// Location is the store named by --store or CKPT_STORE: a URL of a scheme
// this binary knows as it is, else a directory made absolute; "" when
// neither names one.
func (f *Factory) Location() string {
	loc := f.given()
	if loc != "" && !filepath.IsAbs(loc) && !f.Stores.knows(loc) {
		loc = filepath.Join(f.Env.WorkDir, loc)
	}
	return loc
}

// CheckLocation refuses a --store or CKPT_STORE written as a URL of a kind
// this binary does not speak (ftp://, htps://…), which would otherwise be
// taken for a relative directory named "ftp:".
func (f *Factory) CheckLocation() error {
	v := f.given()
	if Scheme(v) != "" && !f.Stores.knows(v) {
		return fmt.Errorf("%w: the store %q is a URL ckpt does not speak: give a directory, a postgres:// URL or a server's https:// URL (--store, CKPT_STORE)", ckpt.ErrInvalid, v)
	}
	return nil
}

// HandedOver reports whether the store is of a kind this binary leaves to
// another (a scheme registered with a nil Opener), so that the command
// must run there; never when Store is set.
func (f *Factory) HandedOver() bool {
	if f.Store != nil {
		return false
	}
	loc := f.Location()
	op, ok := f.Stores[Scheme(loc)]
	return ok && op == nil && Scheme(loc) != ""
}

// OpenStore opens the store every command uses, wrapped by Wrap; the
// caller closes it.
func (f *Factory) OpenStore() (ckpt.Store, error) {
	st, err := f.OpenRawStore()
	if err != nil || f.Wrap == nil {
		return st, err
	}
	return f.Wrap(f, st), nil
}

// OpenRawStore opens the store without Wrap: Store when set (its clock
// made the command's), else the opener of the location's scheme.
func (f *Factory) OpenRawStore() (ckpt.Store, error) {
	if f.Store != nil {
		if c, ok := f.Store.(clockSetter); ok {
			c.SetClock(f.Now)
		}
		return f.Store, nil
	}
	if err := f.CheckLocation(); err != nil {
		return nil, err
	}
	loc := f.Location()
	scheme := Scheme(loc)
	op := f.Stores[scheme]
	if op == nil {
		if scheme == "" {
			return nil, fmt.Errorf("%w: this program opens no store directory: give a store URL (--store, CKPT_STORE)", ckpt.ErrInvalid)
		}
		return nil, fmt.Errorf("%w: this ckpt opens no %s:// store: run the command with ckpt-server", ckpt.ErrInvalid, scheme)
	}
	return op(f, loc)
}

// clockSetter is a store whose clock can be pinned (CKPT_NOW): a local
// store's clock is the command's.
type clockSetter interface{ SetClock(now func() time.Time) }
