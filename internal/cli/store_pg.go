package cli

import "strings"

// A PostgreSQL store is named by a postgres:// or postgresql:// URL in
// --store or CKPT_STORE. ckpt-server opens it (servercli registers
// pgstore's opener for those schemes); pgstore and its driver are not
// linked into ckpt, whose Stores name the schemes without an opener, so
// ckpt hands a command over such a store to ckpt-server before the command
// runs (see prepare).

// isPGURL reports whether s names a PostgreSQL store: pgstore.IsURL's rule
// (servercli's tests keep the two the same), for the messages of commands
// that work on a local store only.
func isPGURL(s string) bool {
	return strings.HasPrefix(s, "postgres://") || strings.HasPrefix(s, "postgresql://")
}
