// Package gitignore keeps a path out of git: it tells whether the repository's top-level .gitignore
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
	"github.com/ckpt-dev/ckpt/internal/gitroot"
)

// State is how a directory stands with its repository's .gitignore.
type State int

const (
	NoRepo         State = iota // in no git repository, or the repository itself
	AlreadyIgnored              // a line of the top-level .gitignore ignores it
	NotIgnored                  // no line ignores it, and none was added
	Added                       // no line ignored it; Ensure added one
)

// Result is what Ensure found or did.
type Result struct {
	State State
	Root  string // the repository (gitroot.Find); "" for NoRepo outside one
	Line  string // the directory's .gitignore line (Pattern)
	File  string // the repository's top-level .gitignore
}

// Ensure tells how the directory path stands with the top-level
// .gitignore of the git repository it is in and, when add is set and no
// line ignores it, adds its Pattern (Add). It changes nothing otherwise:
// what ckpt init does for its store.
func Ensure(path string, add bool) (Result, error) {
	root := gitroot.Find(filepath.Dir(path))
	if root == "" {
		return Result{State: NoRepo}, nil
	}
	r := Result{State: NoRepo, Root: root, File: filepath.Join(root, ".gitignore")}
	line, err := Pattern(root, path)
	if err != nil {
		return r, nil // path is the repository itself: nothing to ignore
	}
	r.Line = line
	ignored, err := Ignored(root, path)
	switch {
	case err != nil:
		return r, fmt.Errorf("reading %s: %w", r.File, err)
	case ignored:
		r.State = AlreadyIgnored
	case !add:
		r.State = NotIgnored
	default:
		if _, err := Add(root, path); err != nil {
			return r, err
		}
		r.State = Added
	}
	return r, nil
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
