package gitsnap

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// git runs the git binary in one directory.
type git struct {
	dir string
}

// runOpts are the per-command settings of git.run.
type runOpts struct {
	index         string   // GIT_INDEX_FILE, when set
	pathspecs     []string // fed NUL-separated on stdin, taken literally
	stdin         []byte
	optionalLocks bool // a read that must not take index.lock to refresh
	keepOutput    bool // return stdout+stderr even on failure
}

// inheritedGitVars are the environment variables that would point git at
// another repository, index or pathspec syntax than the ones Snapshot
// chooses. They are removed so that a checkpoint run from inside a git hook
// or a shell with GIT_DIR set still snapshots repoDir.
var inheritedGitVars = []string{
	"GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_COMMON_DIR", "GIT_PREFIX",
	"GIT_LITERAL_PATHSPECS", "GIT_GLOB_PATHSPECS", "GIT_NOGLOB_PATHSPECS", "GIT_ICASE_PATHSPECS",
}

// run runs git with args and returns its standard output. A failure is an
// error naming the command and quoting git's message; with keepOutput the
// combined output is returned too.
func (g *git) run(ctx context.Context, o runOpts, args ...string) ([]byte, error) {
	if o.pathspecs != nil {
		// Literal pathspecs: a file named "*.go" is that file, not a glob.
		args = append([]string{"--literal-pathspecs"}, args...)
		o.stdin = []byte(strings.Join(o.pathspecs, "\x00"))
	}
	cmd := exec.CommandContext(ctx, "git", args...)
	cmd.Dir = g.dir
	// A hook's children may hold the pipes open after git is killed.
	cmd.WaitDelay = 2 * time.Second
	env := make([]string, 0, len(os.Environ())+4)
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		if !slices.Contains(inheritedGitVars, name) {
			env = append(env, kv)
		}
	}
	env = append(env, "GIT_TERMINAL_PROMPT=0")
	if o.index != "" {
		env = append(env, "GIT_INDEX_FILE="+o.index)
	}
	if o.optionalLocks {
		env = append(env, "GIT_OPTIONAL_LOCKS=0")
	}
	cmd.Env = env
	if o.stdin != nil {
		cmd.Stdin = bytes.NewReader(o.stdin)
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdout = &stdout
	cmd.Stderr = &stderr
	if o.keepOutput {
		cmd.Stdout = &stderr // one stream, in the order written
	}
	err := cmd.Run()
	if err == nil {
		if o.keepOutput {
			return stderr.Bytes(), nil
		}
		return stdout.Bytes(), nil
	}
	if ctx.Err() != nil {
		return stderr.Bytes(), g.ctxErr(ctx)
	}
	msg := firstLine(stderr.Bytes())
	if msg == "(no output)" {
		msg = err.Error()
	}
	e := fmt.Errorf("gitsnap: git %s: %s", args[0], msg)
	if args[0] == "--literal-pathspecs" {
		e = fmt.Errorf("gitsnap: git %s: %s", args[1], msg)
	}
	if o.keepOutput {
		return stderr.Bytes(), e
	}
	return nil, e
}

func (g *git) ctxErr(ctx context.Context) error {
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return fmt.Errorf("gitsnap: git timed out in %s: %w", g.dir, ctx.Err())
	}
	return fmt.Errorf("gitsnap: %w", ctx.Err())
}

// toplevel returns the root of the work tree containing g.dir, with symbolic
// links resolved. When g.dir is not in a work tree it returns a skip message
// (which quotes git, since "not a repository" may really be, say, a
// safe.directory refusal).
func (g *git) toplevel(ctx context.Context) (top, skip string, err error) {
	out, err := g.run(ctx, runOpts{}, "rev-parse", "--show-toplevel")
	if err != nil {
		if ctx.Err() != nil {
			return "", "", err
		}
		// Tell "no repository" from "a repository without a work tree"
		// without reading git's (translated) messages.
		if _, gerr := g.run(ctx, runOpts{}, "rev-parse", "--git-dir"); gerr != nil {
			if ctx.Err() != nil {
				return "", "", gerr
			}
			if _, msg, _ := strings.Cut(gerr.Error(), "git rev-parse: "); !strings.Contains(msg, "not a git repository") {
				return "", fmt.Sprintf("Git snapshot skipped — %s is not in a usable git repository (git: %s).", g.dir, msg), nil
			}
			return "", fmt.Sprintf("Git snapshot skipped — %s is not in a git repository.", g.dir), nil
		}
		return "", fmt.Sprintf("Git snapshot skipped — %s has no working tree (a bare repository or a .git directory).", g.dir), nil
	}
	top = strings.TrimSpace(string(out))
	if top == "" {
		return "", fmt.Sprintf("Git snapshot skipped — %s has no working tree (a bare repository or a .git directory).", g.dir), nil
	}
	if r, err := filepath.EvalSymlinks(top); err == nil {
		top = r
	}
	return top, "", nil
}

// operationInProgress names a merge, rebase, cherry-pick or revert that is
// under way, or returns "". Committing in the middle of one would record a
// partial result, or a merge commit holding only the scope files.
func (g *git) operationInProgress(ctx context.Context) (string, error) {
	marks := []struct{ path, op string }{
		{"MERGE_HEAD", "merge"}, {"rebase-merge", "rebase"}, {"rebase-apply", "rebase or git am"},
		{"CHERRY_PICK_HEAD", "cherry-pick"}, {"REVERT_HEAD", "revert"},
	}
	args := []string{"rev-parse"}
	for _, m := range marks {
		args = append(args, "--git-path", m.path)
	}
	out, err := g.run(ctx, runOpts{}, args...)
	if err != nil {
		return "", err
	}
	paths := strings.Split(strings.TrimRight(string(out), "\n"), "\n")
	for i, p := range paths {
		if i >= len(marks) {
			break
		}
		if !filepath.IsAbs(p) {
			p = filepath.Join(g.dir, p)
		}
		if _, err := os.Lstat(p); err == nil {
			return marks[i].op, nil
		}
	}
	return "", nil
}

// checkIdentity fails early, with the fix, when git cannot name the author
// or committer; otherwise the failure would look like a refusing hook.
func (g *git) checkIdentity(ctx context.Context) error {
	for _, v := range []string{"GIT_AUTHOR_IDENT", "GIT_COMMITTER_IDENT"} {
		if _, err := g.run(ctx, runOpts{}, "var", v); err != nil {
			if ctx.Err() != nil {
				return err
			}
			return fmt.Errorf("gitsnap: git does not know who you are, so it cannot commit: run git config --global user.name \"Your Name\" and git config --global user.email you@example.com")
		}
	}
	return nil
}

// commitHook names the installed hook that can refuse a commit
// ("pre-commit" first, then "commit-msg"), or returns "" when there is none.
// git rev-parse --git-path honours core.hooksPath.
func (g *git) commitHook(ctx context.Context) string {
	hooks := []string{"pre-commit", "commit-msg"}
	args := []string{"rev-parse"}
	for _, h := range hooks {
		args = append(args, "--git-path", "hooks/"+h)
	}
	out, err := g.run(ctx, runOpts{}, args...)
	if err != nil {
		return ""
	}
	for i, p := range strings.Split(strings.TrimRight(string(out), "\n"), "\n") {
		if i >= len(hooks) {
			break
		}
		if !filepath.IsAbs(p) {
			p = filepath.Join(g.dir, p)
		}
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() && fi.Mode().Perm()&0o111 != 0 {
			return hooks[i]
		}
	}
	return ""
}
