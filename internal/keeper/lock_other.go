//go:build !unix

package keeper

import "io/fs"

// lock is not reached: Serve refuses first where Supported is false.
func lock(string) (func(), error) { return nil, errUnsupported }

func ownerOf(fs.FileInfo) (int, bool) { return 0, false }

// Supported reports whether this system runs keepers.
const Supported = false
