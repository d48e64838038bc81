//go:build unix && !linux

package filestore

import "testing"

// hasStatx says statID tries statx before fstatat: not here.
const hasStatx = false

func statxFallback(*testing.T) {}
