// Package gitignore keeps a path out of git: it finds the repository a
// directory is in, tells whether the repository's top-level .gitignore
// already ignores a path, and adds a line for it. `ckpt init` uses it so
// that a store inside a repository is not committed by accident, and never
// changes .gitignore without being asked.
package gitignore

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/ckpt-dev/ckpt/internal/atomicfile"
)

// RepoRoot returns the nearest directory at or above dir that holds a .git
// entry (a directory, or a file for a worktree or submodule), or "" when
// there is none. It reads the file system only: no git process.
func RepoRoot(dir string) string {
	d := filepath.Clean(dir)
	for {
		if _, err := os.Lstat(filepath.Join(d, ".git")); err == nil {
			return d
		}
		parent := filepath.Dir(d)
		if parent == d {
			return ""
		}
		d = parent
	}
}

// Pattern is the .gitignore line for the directory path in the repository
// at root: "/" + its path from root + "/", e.g. "/.ckpt/". path must be
// inside root.
func Pattern(root, path string) (string, error) {
	rel, err := filepath.Rel(root, path)
	if err != nil || rel == "." || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return "", fmt.Errorf("%s is not inside the repository %s", path, root)
	}
	return "/" + filepath.ToSlash(rel) + "/", nil
}

// Ignored reports whether root's top-level .gitignore has a line that
// ignores the directory path: its Pattern, with or without the leading and
// trailing slash. Other ignore files, negations and wildcards are not read: a false answer
// means "not ignored by a line ckpt would recognise".
func Ignored(root, path string) (bool, error) {
	want, err := Pattern(root, path)
	if err != nil {
		return false, err
	}
	b, err := os.ReadFile(filepath.Join(root, ".gitignore"))
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	bare := strings.Trim(want, "/")
	for _, line := range strings.Split(string(b), "\n") {
		// "/x/", "x/", "/x" and "x" all ignore the directory x.
		if strings.Trim(strings.TrimSpace(line), "/") == bare {
			return true, nil
		}
	}
	return false, nil
}

// Add appends path's Pattern to root's top-level .gitignore, creating the
// file if needed, and returns the .gitignore's path. The file is replaced
// atomically with its old content plus the line, so a crash leaves either.
func Add(root, path string) (string, error) {
	line, err := Pattern(root, path)
	if err != nil {
		return "", err
	}
	file := filepath.Join(root, ".gitignore")
	old, err := os.ReadFile(file)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return "", err
	}
	perm := fs.FileMode(0o644)
	if fi, err := os.Lstat(file); err == nil {
		if !fi.Mode().IsRegular() {
			// Replacing it would swap a link for a file: say so instead.
			return "", fmt.Errorf("%s is not a regular file (a symbolic link?): add the line %s to it yourself", file, line)
		}
		perm = fi.Mode().Perm()
	}
	var b bytes.Buffer
	b.Write(old)
	if len(old) > 0 && old[len(old)-1] != '\n' {
		b.WriteByte('\n')
	}
	b.WriteString(line + "\n")
	return file, atomicfile.WriteFile(file, b.Bytes(), perm)
}
