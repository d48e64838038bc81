// Package atomicfile writes whole files atomically: a reader sees either the
// old content or the new, never a mix, and a failed write leaves no temporary
// file behind. It is the one helper every part of ckpt uses to replace a file.
package atomicfile

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// WriteFile replaces path with data durably: it writes a temporary file in the
// same directory, fsyncs it, renames it over path and fsyncs the directory, so
// that once WriteFile returns nil the new content survives a crash. perm is
// the mode the new file gets, exactly (the umask does not apply). On any
// error before the rename the temporary file is removed and path is left as
// it was. Concurrent writers of one path are safe: the last rename wins.
func WriteFile(path string, data []byte, perm os.FileMode) error {
	return write(path, data, perm, true)
}

// ReplaceFile replaces path with data atomically but without any fsync: a
// reader never sees a partial file, but after a crash path may hold the old
// content, the new, or (on some file systems) be empty. Use it only for caches
// that can be rebuilt. On any error the temporary file is removed.
func ReplaceFile(path string, data []byte, perm os.FileMode) error {
	return write(path, data, perm, false)
}

// ReplaceCache replaces path with data for a cache whose readers cope with
// a missing file: it writes a temporary file, removes path, then renames the
// temporary file to path, with no fsync. A reader sees the old content, no
// file, or the new content, never a partial file; after a crash any of the
// three may be there. On any error the temporary file is removed.
//
// Removing path before the rename is deliberate: on ext4 (auto_da_alloc) a
// rename over an existing file makes the kernel start writing the new file's
// data at once, which a writer that fsyncs another file (the history) then
// waits for; measured, that tripled the cost of a durable update.
func ReplaceCache(path string, data []byte, perm os.FileMode) error {
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	err := writeTemp(dir, base, path, data, perm, false, func() error {
		if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("atomicfile: writing %s: %w", path, err)
	}
	return nil
}

func write(path string, data []byte, perm os.FileMode, durable bool) error {
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	if err := writeTemp(dir, base, path, data, perm, durable, nil); err != nil {
		return fmt.Errorf("atomicfile: writing %s: %w", path, err)
	}
	if durable {
		// The new file is in place; only its directory entry may still be
		// in the page cache.
		return SyncDir(dir)
	}
	return nil
}

// writeTemp writes data to a new temporary file in dir and renames it to
// path, calling beforeRename (if not nil) just before the rename. It removes
// the temporary file if any step fails.
func writeTemp(dir, base, path string, data []byte, perm os.FileMode, durable bool, beforeRename func() error) (err error) {
	f, err := os.CreateTemp(dir, "."+base+".tmp*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	closed := false
	defer func() {
		if err != nil {
			if !closed {
				f.Close()
			}
			os.Remove(tmp)
		}
	}()
	if err = f.Chmod(perm); err != nil {
		return err
	}
	if _, err = f.Write(data); err != nil {
		return err
	}
	if durable {
		if err = f.Sync(); err != nil {
			return err
		}
	}
	closed = true
	if err = f.Close(); err != nil {
		return err
	}
	if beforeRename != nil {
		if err = beforeRename(); err != nil {
			return err
		}
	}
	return os.Rename(tmp, path)
}

// SyncDir fsyncs directory dir so that entries created, renamed or removed
// in it survive a crash.
func SyncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("atomicfile: syncing directory %s: %w", dir, err)
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("atomicfile: syncing directory %s: %w", dir, err)
	}
	return nil
}
