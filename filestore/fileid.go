package filestore

// fileID is what an append checks of a file it is about to write or has
// just written: which file a path names and its size. It is read without
// asking the kernel for the file's times (statx with a mask, fileid_linux.go):
// on a multigrain-timestamp file system (ext4, XFS, btrfs since Linux 6.13)
// a file whose times were read gets a fine-grained new time at its next
// write, so every write then changes its inode, and each such inode change
// is a journalled block write that the next append's fdatasync commits.
// Left alone, the times move at the clock tick (4 ms at HZ=250), so most
// appends dirty no inode but the history's (docs/design.md, "Issue 22, round
// four: what an append's commit carries").
type fileID struct {
	dev, ino uint64
	regular  bool // a regular file (not a link, directory or device)
	dir      bool
	size     int64
}
