package filestore

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/ckpt-dev/ckpt"
	"github.com/ckpt-dev/ckpt/internal/atomicfile"
)

// A `.ckpt/` directory can arrive inside a cloned repository, so every file
// in it is hostile: the store never follows a symbolic link inside itself.
// Files are opened with O_NOFOLLOW (the last path element), directories are
// checked with Lstat (or opened with O_NOFOLLOW to lock them) before
// anything is created, written or removed in them, check reports each link
// as an error and repair moves the link itself into quarantine/.

// linkError is the refusal to follow the symbolic link at path. It wraps
// ckpt.ErrCorrupt: the store holds something it did not write.
func linkError(path string) error {
	return fmt.Errorf("%w: %s is a symbolic link; ckpt never follows a link inside a store (a .ckpt directory may come from a cloned repository)",
		ckpt.ErrCorrupt, path)
}

// realDir returns nil if path is a directory and not a symbolic link, the
// Lstat error (fs.ErrNotExist for none), or an error wrapping
// ckpt.ErrCorrupt.
func realDir(path string) error {
	fi, err := os.Lstat(path)
	switch {
	case err != nil:
		return err
	case fi.Mode()&fs.ModeSymlink != 0:
		return linkError(path)
	case !fi.IsDir():
		return fmt.Errorf("%w: %s is not a directory", ckpt.ErrCorrupt, path)
	}
	return nil
}

// realFile is realDir for a regular file.
func realFile(path string) error {
	fi, err := os.Lstat(path)
	switch {
	case err != nil:
		return err
	case fi.Mode()&fs.ModeSymlink != 0:
		return linkError(path)
	case !fi.Mode().IsRegular():
		return fmt.Errorf("%w: %s is not a regular file", ckpt.ErrCorrupt, path)
	}
	return nil
}

// openNoFollow is os.OpenFile that refuses a symbolic link at path with a
// linkError.
func openNoFollow(path string, flag int, perm os.FileMode) (*os.File, error) {
	if oNoFollow == 0 {
		if err := realFile(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return nil, err
		}
	}
	f, err := os.OpenFile(path, flag|oNoFollow, perm)
	if err != nil && isLinkErr(err) {
		return nil, linkError(path)
	}
	return f, err
}

// readNoFollow is os.ReadFile that refuses a symbolic link, by plain
// system calls (an *os.File registers with the runtime's poller: every
// process that opens a store read config.json that way).
func readNoFollow(path string) ([]byte, error) { return readNoFollowIn(-1, path) }

// readNoFollowIn is readNoFollow through dfd (atfile_unix.go).
func readNoFollowIn(dfd int, path string) ([]byte, error) {
	fd, err := openFileIn(dfd, path, syscall.O_RDONLY)
	if err != nil {
		return nil, err
	}
	defer syscall.Close(fd)
	var st syscall.Stat_t
	if err := syscall.Fstat(fd, &st); err != nil {
		return nil, &os.PathError{Op: "stat", Path: path, Err: err}
	}
	b := make([]byte, 0, st.Size+512)
	for {
		if len(b) == cap(b) {
			b = append(b, 0)[:len(b)]
		}
		n, err := syscall.Read(fd, b[len(b):cap(b)])
		switch {
		case err == syscall.EINTR:
			continue
		case err != nil:
			return b, &os.PathError{Op: "read", Path: path, Err: err}
		case n == 0:
			return b, nil
		}
		b = b[:len(b)+n]
	}
}

// linkProblem is the check finding for a symbolic link at name (relative to
// the store), with the repair that moves it aside.
func (s *Store) linkProblem(id, name, repair string) ckpt.Problem {
	target, _ := os.Readlink(filepath.Join(s.dir, name))
	return ckpt.Problem{ID: id, Severity: ckpt.SeverityError,
		What:   fmt.Sprintf("%s is a symbolic link (to %s); ckpt never follows links inside a store and has not used it", name, target),
		Repair: repair + " (moves the link itself into " + quarantineDir + "/)"}
}

// quarantine moves the symbolic link at path (inside the store) into
// quarantine/, where the store never looks, under a name that says where
// it was. It touches nothing the link points to. It returns the new path.
func (s *Store) quarantine(path string) (string, error) {
	q := filepath.Join(s.dir, quarantineDir)
	if err := os.Mkdir(q, 0o755); err != nil && !errors.Is(err, fs.ErrExist) {
		return "", err
	}
	if err := realDir(q); err != nil {
		return "", fmt.Errorf("%w (remove it by hand, then repair again)", err)
	}
	rel, err := filepath.Rel(s.dir, path)
	if err != nil || strings.HasPrefix(rel, "..") {
		return "", fmt.Errorf("filestore: %s is outside the store", path)
	}
	dst := uniquePath(filepath.Join(q, fmt.Sprintf("%s.%d", strings.ReplaceAll(rel, sep, "+"), s.clock().Unix())))
	if err := os.Rename(path, dst); err != nil {
		return "", err
	}
	if err := atomicfile.SyncDir(filepath.Dir(path)); err != nil {
		return dst, err
	}
	return dst, atomicfile.SyncDir(q)
}

// isSymlink reports whether de is a symbolic link.
func isSymlink(de fs.DirEntry) bool { return de.Type()&fs.ModeSymlink != 0 }
