package claude

import (
	"path/filepath"
	"runtime"
	"strings"
)

// defaultCommand is how a client runs ckpt when the installing binary's own
// path is no good: the ckpt on the client's PATH.
const defaultCommand = "ckpt"

// InstallCommand is the command `ckpt hooks install` and `ckpt mcp
// install` write into a client's settings unless --command says otherwise.
// For a personal settings file (own is true: local or user scope, or a
// printed command) it is exe, the absolute path of the running binary
// (links resolved), when that
// is an installed ckpt, so the client finds the same ckpt whatever its PATH
// (a GUI editor, a login shell without ~/go/bin); otherwise, and always for
// a project file that teammates share through git, it is "ckpt".
//
// An installed ckpt is a binary named ckpt (ckpt.exe) outside the places
// where go run and go test build theirs, which are deleted soon after: the
// Go build cache ($GOCACHE, or any directory named go-build…, as the default
// cache and the go command's work directories are), $GOTMPDIR and the
// temporary directory. A binary with another name is not taken either:
// `hooks uninstall` recognises ckpt's entries by the program's name.
func InstallCommand(exe string, getenv func(string) string, own bool) string {
	if !own || exe == "" || !filepath.IsAbs(exe) {
		return defaultCommand
	}
	exe = filepath.Clean(exe)
	if name := strings.ToLower(filepath.Base(exe)); name != "ckpt" && name != "ckpt.exe" {
		return defaultCommand
	}
	for _, part := range strings.Split(filepath.ToSlash(exe), "/") {
		if strings.HasPrefix(part, "go-build") {
			return defaultCommand
		}
	}
	for _, dir := range transientDirs(getenv) {
		if within(dir, exe) {
			return defaultCommand
		}
	}
	return exe
}

// transientDirs are the directories, from the environment, whose binaries
// do not last: $GOCACHE, $GOTMPDIR and the temporary directory as
// os.TempDir finds it ($TMPDIR, else /tmp; on Windows %TMP%, %TEMP%).
func transientDirs(getenv func(string) string) []string {
	if getenv == nil {
		getenv = func(string) string { return "" }
	}
	dirs := []string{getenv("GOCACHE"), getenv("GOTMPDIR")}
	if runtime.GOOS == "windows" {
		dirs = append(dirs, getenv("TMP"), getenv("TEMP"))
	} else if tmp := getenv("TMPDIR"); tmp != "" {
		dirs = append(dirs, tmp)
	} else {
		dirs = append(dirs, "/tmp")
	}
	var out []string
	for _, d := range dirs {
		if d == "" || !filepath.IsAbs(d) {
			continue
		}
		out = append(out, filepath.Clean(d))
		// The executable's path has its links resolved: compare with the
		// directory's resolved path too (macOS's $TMPDIR is under /var,
		// a link to /private/var).
		if r, err := filepath.EvalSymlinks(d); err == nil && r != filepath.Clean(d) {
			out = append(out, r)
		}
	}
	return out
}

// within reports whether path is dir or inside it.
func within(dir, path string) bool {
	rel, err := filepath.Rel(dir, path)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel)
}
