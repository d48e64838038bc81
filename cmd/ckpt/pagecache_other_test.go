//go:build !linux

package main

import "testing"

// evictFromPageCache does nothing where there is no posix_fadvise in
// golang.org/x/sys/unix; see the Linux version.
func evictFromPageCache(tb testing.TB, paths ...string) {}
