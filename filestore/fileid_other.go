//go:build unix && !linux

package filestore

// oNoAtime is 0: no O_NOATIME here (openQuiet).
const oNoAtime = 0

// idOf is the fileID of the open file fd, the file at path.
func idOf(fd int, path string) (fileID, error) {
	return fstatatID(fd, "", 0, path)
}

// statID is the fileID of name under dir (fstatat(2) with flags).
func statID(dir int, name string, flags int, path string) (fileID, error) {
	return fstatatID(dir, name, flags, path)
}
