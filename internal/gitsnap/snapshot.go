// Package gitsnap is step 2 of ccc's (seed 001) four-step checkpoint: a scoped git
// snapshot. It drives the real git binary, commits only the files a
// checkpoint is working on (never `git add -A` or `git add .`), and skips
// gracefully, with the document's messages, when there is nothing to do or a
// commit hook refuses.
//
// The commit is built in a temporary index (GIT_INDEX_FILE) that starts from
// HEAD, so whatever the user had staged for other files is neither committed
// nor disturbed, and a refused commit leaves the real index exactly as it was.
// Only after a successful commit are the committed paths' index entries set
// to the new HEAD.
//
// It needs git 2.26 or later (git rm --pathspec-from-file).
package gitsnap

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	ckpt "github.com/ckpt-dev/ckpt"
)

// SkipClean is the document's message for a clean working tree.
const SkipClean = "Git snapshot skipped — working tree clean."

// DefaultTimeout bounds a Snapshot whose context has no deadline. It is
// generous because a pre-commit hook may run linters or tests.
const DefaultTimeout = 2 * time.Minute

// Result is what a Snapshot did.
type Result struct {
	// Committed is true when a commit was made.
	Committed bool
	// Commit is the new commit's full hash, when Committed.
	Commit string
	// Files are the repository-relative paths (with '/') the commit changed,
	// or, when a hook refused the commit, the paths it would have changed.
	Files []string
	// Skipped says why nothing was committed, as a line to print (e.g.
	// SkipClean). It is empty when Committed. A skip is not a failure: the
	// step has done all it should.
	Skipped string
}

// Snapshot commits the dirty files of scope in the git repository that
// contains repoDir, with message (see CommitMessage).
//
// scope lists the checkpoint's files (its created and modified files, or
// ccc's (seed 001) activeTaskFiles): paths relative to repoDir, or absolute. A
// directory covers the files below it. Only scope files that git status
// shows as changed, deleted or untracked are committed; ignored files never
// are; other dirty files are left alone, staged or not.
//
// Snapshot skips (Result.Skipped set, nil error) when repoDir is not in a git
// work tree, the tree is clean, no scope file is dirty, the in-scope changes
// leave the tree as HEAD has it, a merge, rebase, cherry-pick or revert is in
// progress, or a pre-commit or commit-msg hook refuses the commit (the
// message quotes the hook's first output line; the index is left as it was).
//
// It returns an error, and commits nothing, when message is blank, a scope
// path is outside the repository, names the whole repository or lies inside
// .git (these wrap ckpt.ErrInvalid), git is missing or has no user identity,
// git fails otherwise, or ctx ends. A context without a deadline gets
// DefaultTimeout. The one error that comes with Committed set is a failure
// to update the index after the commit was made; the message says how to
// fix it.
//
// Snapshot is safe to call from several goroutines on different
// repositories; on one repository, git's own locks serialise the writes.
func Snapshot(ctx context.Context, repoDir string, scope []string, message string) (Result, error) {
	if strings.TrimSpace(message) == "" {
		return Result{}, fmt.Errorf("%w: gitsnap: the commit message is empty: build one with gitsnap.CommitMessage", ckpt.ErrInvalid)
	}
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, DefaultTimeout)
		defer cancel()
	}
	if _, err := exec.LookPath("git"); err != nil {
		return Result{}, fmt.Errorf("gitsnap: git is not installed or not on PATH: install git, or use the auto profile, which has no git step")
	}
	base, err := filepath.Abs(repoDir)
	if err != nil {
		return Result{}, fmt.Errorf("gitsnap: %w", err)
	}
	if fi, err := os.Stat(base); err != nil || !fi.IsDir() {
		return Result{}, fmt.Errorf("gitsnap: %s is not a directory: run the checkpoint from the project directory", repoDir)
	}
	if base, err = filepath.EvalSymlinks(base); err != nil {
		return Result{}, fmt.Errorf("gitsnap: %w", err)
	}

	g := &git{dir: base}
	top, skip, err := g.toplevel(ctx)
	if err != nil || skip != "" {
		return Result{Skipped: skip}, err
	}
	g.dir = top
	want, err := scopePaths(top, base, scope)
	if err != nil {
		return Result{}, err
	}

	out, err := g.run(ctx, runOpts{optionalLocks: true}, "status", "--porcelain=v1", "-z", "--untracked-files=all", "--no-renames")
	if err != nil {
		return Result{}, err
	}
	entries, err := parseStatusZ(out)
	if err != nil {
		return Result{}, fmt.Errorf("gitsnap: %w", err)
	}
	if len(entries) == 0 {
		return Result{Skipped: SkipClean}, nil
	}
	dirty := inScope(entries, want)
	if len(dirty) == 0 {
		if len(want) == 0 {
			return Result{Skipped: fmt.Sprintf("Git snapshot skipped — no in-scope files: the checkpoint lists no files (%s left alone).", plural(len(entries), "dirty file"))}, nil
		}
		return Result{Skipped: fmt.Sprintf("Git snapshot skipped — nothing in scope to stage (%s out of scope left alone).", plural(len(entries), "dirty file"))}, nil
	}
	if op, err := g.operationInProgress(ctx); err != nil || op != "" {
		if op != "" {
			return Result{Skipped: fmt.Sprintf("Git snapshot skipped — a %s is in progress; finish or abort it first.", op)}, nil
		}
		return Result{}, err
	}
	if err := g.checkIdentity(ctx); err != nil {
		return Result{}, err
	}
	return g.commit(ctx, dirty, message)
}

// commit stages paths in a temporary index built from HEAD, commits it, and
// then brings the real index's entries for the committed paths up to HEAD.
func (g *git) commit(ctx context.Context, paths []string, message string) (Result, error) {
	tmp, err := os.MkdirTemp("", "ckpt-gitsnap-")
	if err != nil {
		return Result{}, fmt.Errorf("gitsnap: temporary index: %w", err)
	}
	defer os.RemoveAll(tmp)
	idx := runOpts{index: filepath.Join(tmp, "index")}

	if _, err := g.run(ctx, runOpts{}, "rev-parse", "-q", "--verify", "HEAD^{commit}"); err == nil {
		_, err = g.run(ctx, idx, "read-tree", "HEAD")
		if err != nil {
			return Result{}, err
		}
	} else if ctx.Err() != nil {
		return Result{}, g.ctxErr(ctx)
	} else if _, err := g.run(ctx, idx, "read-tree", "--empty"); err != nil {
		return Result{}, err // an unborn branch: the first commit
	}

	var present, gone []string
	for _, p := range paths {
		if _, err := os.Lstat(filepath.Join(g.dir, filepath.FromSlash(p))); err == nil {
			present = append(present, p)
		} else {
			gone = append(gone, p)
		}
	}
	if len(present) > 0 {
		o := idx
		o.pathspecs = present
		if _, err := g.run(ctx, o, "add", "--pathspec-from-file=-", "--pathspec-file-nul"); err != nil {
			return Result{}, err
		}
	}
	if len(gone) > 0 {
		o := idx
		o.pathspecs = gone
		if _, err := g.run(ctx, o, "rm", "--cached", "-q", "--ignore-unmatch", "--pathspec-from-file=-", "--pathspec-file-nul"); err != nil {
			return Result{}, err
		}
	}
	out, err := g.run(ctx, idx, "diff", "--cached", "--name-only", "-z", "--no-renames")
	if err != nil {
		return Result{}, err
	}
	files := splitZ(out)
	if len(files) == 0 {
		return Result{Skipped: "Git snapshot skipped — nothing to stage: the in-scope changes match the last commit."}, nil
	}

	o := idx
	o.stdin = []byte(message)
	o.keepOutput = true
	if out, err := g.run(ctx, o, "commit", "-q", "-F", "-"); err != nil {
		if ctx.Err() != nil {
			return Result{}, g.ctxErr(ctx)
		}
		if hook := g.commitHook(ctx); hook != "" {
			return Result{Files: files, Skipped: fmt.Sprintf("Git snapshot skipped — %s hook failed: %s", hook, firstLine(out))}, nil
		}
		return Result{}, err
	}

	head, err := g.run(ctx, runOpts{}, "rev-parse", "HEAD")
	if err != nil {
		return Result{Committed: true, Files: files}, fmt.Errorf("gitsnap: committed, but reading the new HEAD failed: %w", err)
	}
	res := Result{Committed: true, Commit: strings.TrimSpace(string(head))}
	// The hook may have staged more than we did; the commit is the truth.
	if out, err := g.run(ctx, runOpts{}, "diff-tree", "--no-commit-id", "--name-only", "-r", "-z", "--root", "--no-renames", res.Commit); err == nil && len(out) > 0 {
		files = splitZ(out)
	}
	res.Files = files
	if _, err := g.run(ctx, runOpts{pathspecs: files}, "reset", "-q", "--pathspec-from-file=-", "--pathspec-file-nul"); err != nil {
		return res, fmt.Errorf("gitsnap: committed %s, but updating the index failed (%v): run `git reset -q -- %s` so git status is right", shortHash(res.Commit), err, strings.Join(files, " "))
	}
	return res, nil
}

// scopePaths turns scope into repository-relative, slash-separated paths,
// refusing any that lead outside top (after following symbolic links in
// their directories), name top itself, or lie in .git.
func scopePaths(top, base string, scope []string) ([]string, error) {
	var out []string
	for _, p := range scope {
		if strings.TrimSpace(p) == "" {
			continue
		}
		if strings.ContainsRune(p, 0) {
			return nil, fmt.Errorf("%w: gitsnap: scope path %q contains a NUL byte", ckpt.ErrInvalid, p)
		}
		abs := p
		if !filepath.IsAbs(abs) {
			abs = filepath.Join(base, abs)
		}
		abs = filepath.Clean(abs)
		dir, name := filepath.Split(abs)
		full := filepath.Join(resolveExisting(filepath.Clean(dir)), name)
		rel, err := filepath.Rel(top, full)
		if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
			return nil, fmt.Errorf("%w: gitsnap: scope path %q is outside the repository %s: list only files inside it", ckpt.ErrInvalid, p, top)
		}
		if rel == "." {
			return nil, fmt.Errorf("%w: gitsnap: scope path %q is the whole repository: list the checkpoint's files instead (a snapshot never stages everything)", ckpt.ErrInvalid, p)
		}
		rel = filepath.ToSlash(rel)
		if rel == ".git" || strings.HasPrefix(rel, ".git/") {
			return nil, fmt.Errorf("%w: gitsnap: scope path %q is inside .git: list only work-tree files", ckpt.ErrInvalid, p)
		}
		if !slices.Contains(out, rel) {
			out = append(out, rel)
		}
	}
	return out, nil
}

// resolveExisting follows symbolic links in the longest existing prefix of
// dir and appends the rest, which does not exist and so holds no links.
func resolveExisting(dir string) string {
	rest := ""
	for d := dir; ; d = filepath.Dir(d) {
		if r, err := filepath.EvalSymlinks(d); err == nil {
			return filepath.Join(r, rest)
		}
		parent := filepath.Dir(d)
		if parent == d {
			return dir
		}
		rest = filepath.Join(filepath.Base(d), rest)
	}
}

// inScope returns the dirty paths (ignored files excluded) that equal a
// scope path or lie below one, sorted and unique.
func inScope(entries []statusEntry, want []string) []string {
	var out []string
	match := func(p string) bool {
		for _, w := range want {
			if p == w || strings.HasPrefix(p, strings.TrimSuffix(w, "/")+"/") {
				return true
			}
		}
		return false
	}
	for _, e := range entries {
		if e.X == '!' {
			continue
		}
		for _, p := range []string{e.Path, e.Orig} {
			if p != "" && match(p) && !slices.Contains(out, p) {
				out = append(out, p)
			}
		}
	}
	slices.Sort(out)
	return out
}

func splitZ(out []byte) []string {
	var files []string
	for _, f := range bytes.Split(out, []byte{0}) {
		if len(f) > 0 {
			files = append(files, string(f))
		}
	}
	return files
}

// firstLine returns the first non-blank line of out, cut to 200 runes, or
// "(no output)".
func firstLine(out []byte) string {
	for _, l := range strings.Split(string(out), "\n") {
		if l = strings.TrimSpace(l); l != "" {
			return cutRunes(l, 200)
		}
	}
	return "(no output)"
}

func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}

func shortHash(h string) string {
	if len(h) > 12 {
		return h[:12]
	}
	return h
}
