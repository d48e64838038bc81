package cli

import (
	"fmt"
	"strings"

	ckpt "github.com/ckpt-dev/ckpt"
)

// A PostgreSQL store is named by a postgres:// or postgresql:// URL in
// --store or CKPT_STORE. ckpt-server opens it (pgstore.Open, which brings
// the schema up to date; ckpt migrate does only that): pgstore and its
// driver are not linked into ckpt, so ckpt hands a command over such a
// store to ckpt-server before the command runs (see dispatchStore).

// isPGURL reports whether s names a PostgreSQL store: pgstore.IsURL's rule
// (servercli's tests keep the two the same).
func isPGURL(s string) bool {
	return strings.HasPrefix(s, "postgres://") || strings.HasPrefix(s, "postgresql://")
}

// dispatchStore replaces ckpt with ckpt-server when the store is a
// PostgreSQL database and this binary cannot open one; it returns nil when
// the command runs here.
func (f *factory) dispatchStore() error {
	if f.openPG != nil || f.store != nil || !isPGURL(f.givenStoreDir()) {
		return nil
	}
	f.reached = true // not a usage error
	return f.execServer()
}

// openPGStore opens the PostgreSQL store at dsn (ckpt-server only).
func (f *factory) openPGStore(dsn string) (ckpt.Store, error) {
	if f.openPG == nil {
		return nil, fmt.Errorf("%w: this ckpt opens no PostgreSQL store: run the command with %s", ckpt.ErrInvalid, ServerProgram)
	}
	return f.openPG(f, dsn)
}
