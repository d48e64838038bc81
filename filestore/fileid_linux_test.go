package filestore

import "testing"

// hasStatx says statID tries statx before fstatat.
const hasStatx = true

// statxFallback makes statID use fstatat, as after statx failed with
// ENOSYS or EPERM, until t ends.
func statxFallback(t *testing.T) {
	was := noStatx.Load()
	noStatx.Store(true)
	t.Cleanup(func() { noStatx.Store(was) })
}
