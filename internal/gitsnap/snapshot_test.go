package gitsnap

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	ckpt "github.com/ckpt-dev/ckpt"
	"github.com/ckpt-dev/ckpt/internal/testsupport"
)

// isolateGit keeps the user's global and system git configuration (hooks
// paths, signing, identity) out of the tests.
func isolateGit(t *testing.T) {
	t.Helper()
	testsupport.NeedCommand(t, "git", "snapshots are real commits")
	t.Setenv("HOME", t.TempDir())
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	t.Setenv("GIT_CONFIG_NOSYSTEM", "1")
	for _, v := range []string{"GIT_AUTHOR_NAME", "GIT_AUTHOR_EMAIL", "GIT_COMMITTER_NAME", "GIT_COMMITTER_EMAIL", "GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE"} {
		t.Setenv(v, "")
		os.Unsetenv(v)
	}
}

// newRepo makes a real repository with an identity and one commit holding
// the given files.
func newRepo(t *testing.T, files map[string]string) string {
	t.Helper()
	isolateGit(t)
	dir := t.TempDir()
	testsupport.Git(t, dir, "init", "-q", "-b", "main")
	testsupport.Git(t, dir, "config", "user.name", "Test Agent")
	testsupport.Git(t, dir, "config", "user.email", "agent@example.com")
	if len(files) > 0 {
		for name, content := range files {
			write(t, dir, name, content)
		}
		testsupport.Git(t, dir, "add", "--all")
		testsupport.Git(t, dir, "commit", "-q", "-m", "initial")
	}
	return dir
}

func write(t *testing.T, dir, name, content string) {
	t.Helper()
	p := filepath.Join(dir, filepath.FromSlash(name))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func head(t *testing.T, dir string) string {
	t.Helper()
	return strings.TrimSpace(testsupport.Git(t, dir, "rev-parse", "HEAD"))
}

// indexState is everything a user could see of the index and work tree.
func indexState(t *testing.T, dir string) string {
	t.Helper()
	return testsupport.Git(t, dir, "ls-files", "-s") + "\n--\n" + testsupport.Git(t, dir, "status", "--porcelain=v1", "--untracked-files=all")
}

func snapshot(t *testing.T, dir string, scope ...string) Result {
	t.Helper()
	res, err := Snapshot(context.Background(), dir, scope, "checkpoint(t): test [1/2]\n")
	if err != nil {
		t.Fatalf("Snapshot: %v", err)
	}
	return res
}

func TestSnapshotCleanTreeSkipsWithTheDocumentsMessage(t *testing.T) {
	dir := newRepo(t, map[string]string{"a.txt": "a\n"})
	before := head(t, dir)
	res := snapshot(t, dir, "a.txt")
	if res.Skipped != "Git snapshot skipped — working tree clean." || res.Committed || res.Commit != "" {
		t.Fatalf("result = %+v, want the clean-tree skip", res)
	}
	if head(t, dir) != before {
		t.Fatal("HEAD moved on a clean tree")
	}
}

func TestSnapshotCommitsOnlyInScopeFilesAndLeavesTheRestAsItWas(t *testing.T) {
	dir := newRepo(t, map[string]string{
		"a.txt": "a\n", "b.txt": "b\n", "c.txt": "c\n", "gone.txt": "gone\n", "src/keep.go": "package src\n",
	})
	before := head(t, dir)
	write(t, dir, "a.txt", "a changed\n")        // tracked, in scope
	write(t, dir, "b.txt", "b changed\n")        // tracked, out of scope, unstaged
	write(t, dir, "c.txt", "c staged\n")         // out of scope, staged by the user
	testsupport.Git(t, dir, "add", "c.txt")      //
	os.Remove(filepath.Join(dir, "gone.txt"))    // tracked, in scope, deleted
	write(t, dir, "new.txt", "new\n")            // untracked, in scope
	write(t, dir, "src/new.go", "package src\n") // untracked, under an in-scope directory
	write(t, dir, "other.txt", "other\n")        // untracked, out of scope

	res := snapshot(t, dir, "a.txt", "gone.txt", "new.txt", "src", "missing-but-listed.txt")
	if !res.Committed || res.Skipped != "" {
		t.Fatalf("result = %+v, want a commit", res)
	}
	want := []string{"a.txt", "gone.txt", "new.txt", "src/new.go"}
	if !slices.Equal(res.Files, want) {
		t.Fatalf("Files = %q, want %q", res.Files, want)
	}
	if res.Commit != head(t, dir) || res.Commit == before {
		t.Fatalf("Commit = %s, HEAD = %s, before = %s", res.Commit, head(t, dir), before)
	}
	if parent := strings.TrimSpace(testsupport.Git(t, dir, "rev-parse", "HEAD~1")); parent != before {
		t.Fatalf("parent = %s, want %s", parent, before)
	}
	changed := testsupport.Git(t, dir, "show", "--name-status", "--format=", "HEAD")
	if changed != "M\ta.txt\nD\tgone.txt\nA\tnew.txt\nA\tsrc/new.go\n" {
		t.Fatalf("commit changed:\n%s", changed)
	}
	if msg := testsupport.Git(t, dir, "log", "-1", "--format=%B"); msg != "checkpoint(t): test [1/2]\n\n" {
		t.Fatalf("commit message = %q", msg)
	}
	// Out-of-scope files keep their state: b unstaged, c still staged (and
	// not committed), other untracked; in-scope files are clean.
	status := testsupport.Git(t, dir, "status", "--porcelain=v1", "--untracked-files=all")
	if status != " M b.txt\nM  c.txt\n?? other.txt\n" {
		t.Fatalf("status after snapshot:\n%s", status)
	}
	if got := testsupport.Git(t, dir, "show", "HEAD:c.txt"); got != "c\n" {
		t.Fatalf("the staged out-of-scope file was committed: HEAD:c.txt = %q", got)
	}
}

func TestSnapshotAddsAnUntrackedInScopeFileInANewRepository(t *testing.T) {
	dir := newRepo(t, nil) // no commit yet: an unborn branch
	write(t, dir, "notes/plan.md", "# plan\n")
	write(t, dir, "scratch.txt", "not mine\n")
	res := snapshot(t, dir, "notes/plan.md")
	if !res.Committed || !slices.Equal(res.Files, []string{"notes/plan.md"}) {
		t.Fatalf("result = %+v", res)
	}
	if tree := testsupport.Git(t, dir, "ls-tree", "-r", "--name-only", "HEAD"); tree != "notes/plan.md\n" {
		t.Fatalf("first commit holds:\n%s", tree)
	}
	if status := testsupport.Git(t, dir, "status", "--porcelain=v1", "--untracked-files=all"); status != "?? scratch.txt\n" {
		t.Fatalf("status:\n%s", status)
	}
}

func TestSnapshotFailingPreCommitHookSkipsAndLeavesTheIndexAlone(t *testing.T) {
	dir := newRepo(t, map[string]string{"a.txt": "a\n", "c.txt": "c\n"})
	hook := "#!/bin/sh\necho\necho 'lint: a.txt: trailing whitespace on line 1'\necho 'second line' >&2\nexit 1\n"
	if err := os.WriteFile(filepath.Join(dir, ".git", "hooks", "pre-commit"), []byte(hook), 0o755); err != nil {
		t.Fatal(err)
	}
	write(t, dir, "a.txt", "a changed \n")
	write(t, dir, "new.txt", "new\n")
	write(t, dir, "c.txt", "c staged\n")
	testsupport.Git(t, dir, "add", "c.txt")
	before, beforeState := head(t, dir), indexState(t, dir)

	res := snapshot(t, dir, "a.txt", "new.txt")
	want := "Git snapshot skipped — pre-commit hook failed: lint: a.txt: trailing whitespace on line 1"
	if res.Committed || res.Skipped != want {
		t.Fatalf("result = %+v\nwant Skipped %q", res, want)
	}
	if !slices.Equal(res.Files, []string{"a.txt", "new.txt"}) {
		t.Fatalf("Files = %q, want the files the commit would have held", res.Files)
	}
	if head(t, dir) != before {
		t.Fatal("HEAD moved although the hook refused")
	}
	if after := indexState(t, dir); after != beforeState {
		t.Fatalf("index changed by a refused snapshot:\nbefore:\n%s\nafter:\n%s", beforeState, after)
	}
}

func TestSnapshotFailingCommitMsgHookUnderHooksPathSkips(t *testing.T) {
	dir := newRepo(t, map[string]string{"a.txt": "a\n"})
	hooks := filepath.Join(dir, "githooks")
	write(t, dir, "githooks/commit-msg", "#!/bin/sh\necho 'message must reference an issue'\nexit 1\n")
	if err := os.Chmod(filepath.Join(hooks, "commit-msg"), 0o755); err != nil {
		t.Fatal(err)
	}
	testsupport.Git(t, dir, "config", "core.hooksPath", hooks)
	testsupport.Git(t, dir, "add", "githooks")
	testsupport.Git(t, dir, "commit", "-q", "--no-verify", "-m", "hooks")
	write(t, dir, "a.txt", "a changed\n")
	before := indexState(t, dir)
	res := snapshot(t, dir, "a.txt")
	if res.Committed || res.Skipped != "Git snapshot skipped — commit-msg hook failed: message must reference an issue" {
		t.Fatalf("result = %+v", res)
	}
	if after := indexState(t, dir); after != before {
		t.Fatalf("index changed:\n%s\n%s", before, after)
	}
}

func TestSnapshotPassingHookSeesOnlyTheScopedIndex(t *testing.T) {
	dir := newRepo(t, map[string]string{"a.txt": "a\n", "c.txt": "c\n"})
	// The hook records what it would check: the staged names.
	hook := "#!/bin/sh\ngit diff --cached --name-only > \"$(git rev-parse --git-dir)/hook-saw\"\n"
	if err := os.WriteFile(filepath.Join(dir, ".git", "hooks", "pre-commit"), []byte(hook), 0o755); err != nil {
		t.Fatal(err)
	}
	write(t, dir, "a.txt", "a changed\n")
	write(t, dir, "c.txt", "c staged\n")
	testsupport.Git(t, dir, "add", "c.txt")
	res := snapshot(t, dir, "a.txt")
	if !res.Committed {
		t.Fatalf("result = %+v", res)
	}
	saw, err := os.ReadFile(filepath.Join(dir, ".git", "hook-saw"))
	if err != nil {
		t.Fatal(err)
	}
	if string(saw) != "a.txt\n" {
		t.Fatalf("pre-commit hook saw staged %q, want only a.txt", saw)
	}
}

func TestSnapshotSkipsWhenNothingInScopeIsDirty(t *testing.T) {
	dir := newRepo(t, map[string]string{"a.txt": "a\n", "b.txt": "b\n"})
	write(t, dir, "b.txt", "b changed\n")
	before := indexState(t, dir)

	res := snapshot(t, dir, "a.txt")
	if res.Committed || res.Skipped != "Git snapshot skipped — nothing in scope to stage (1 dirty file out of scope left alone)." {
		t.Fatalf("result = %+v", res)
	}
	res = snapshot(t, dir)
	if res.Committed || res.Skipped != "Git snapshot skipped — no in-scope files: the checkpoint lists no files (1 dirty file left alone)." {
		t.Fatalf("empty scope: result = %+v", res)
	}
	if after := indexState(t, dir); after != before {
		t.Fatalf("index changed:\n%s\n%s", before, after)
	}
}

func TestSnapshotSkipsWhenTheInScopeChangesMatchHEAD(t *testing.T) {
	dir := newRepo(t, map[string]string{"a.txt": "a\n"})
	write(t, dir, "a.txt", "a staged\n")
	testsupport.Git(t, dir, "add", "a.txt")
	write(t, dir, "a.txt", "a\n") // the work tree is back to HEAD; the index is not
	before := indexState(t, dir)
	res := snapshot(t, dir, "a.txt")
	if res.Committed || res.Skipped != "Git snapshot skipped — nothing to stage: the in-scope changes match the last commit." {
		t.Fatalf("result = %+v", res)
	}
	if after := indexState(t, dir); after != before {
		t.Fatalf("index changed:\n%s\n%s", before, after)
	}
}

func TestSnapshotOutsideARepositorySkips(t *testing.T) {
	isolateGit(t)
	dir := t.TempDir()
	// Even if the temporary directory lies inside some repository, git must
	// not look above it.
	t.Setenv("GIT_CEILING_DIRECTORIES", filepath.Dir(dir))
	write(t, dir, "a.txt", "a\n")
	res := snapshot(t, dir, "a.txt")
	if res.Committed || res.Skipped != "Git snapshot skipped — "+mustEval(t, dir)+" is not in a git repository." {
		t.Fatalf("result = %+v", res)
	}

	repo := newRepo(t, map[string]string{"a.txt": "a\n"})
	res = snapshot(t, filepath.Join(repo, ".git"), "a.txt")
	if res.Committed || !strings.Contains(res.Skipped, "has no working tree") {
		t.Fatalf("inside .git: result = %+v", res)
	}

	if _, err := Snapshot(context.Background(), filepath.Join(dir, "nope"), nil, "m"); err == nil || !strings.Contains(err.Error(), "is not a directory") {
		t.Fatalf("missing directory: err = %v", err)
	}
}

func mustEval(t *testing.T, p string) string {
	t.Helper()
	r, err := filepath.EvalSymlinks(p)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestSnapshotRefusesPathsOutsideTheRepository(t *testing.T) {
	dir := newRepo(t, map[string]string{"a.txt": "a\n"})
	outside := t.TempDir()
	write(t, outside, "secret.txt", "secret\n")
	if err := os.Symlink(outside, filepath.Join(dir, "link")); err != nil {
		t.Fatal(err)
	}
	write(t, dir, "a.txt", "a changed\n")
	before, beforeState := head(t, dir), indexState(t, dir)

	for _, p := range []string{
		"../escape.txt",
		"sub/../../escape.txt",
		filepath.Join(outside, "secret.txt"),
		"link/secret.txt", // through a symbolic link to a directory outside
		".",
		".git/config",
	} {
		res, err := Snapshot(context.Background(), dir, []string{"a.txt", p}, "m")
		if !errors.Is(err, ckpt.ErrInvalid) || res.Committed {
			t.Errorf("scope %q: result %+v, err %v; want an ErrInvalid refusal", p, res, err)
		}
	}
	if head(t, dir) != before || indexState(t, dir) != beforeState {
		t.Fatal("a refused snapshot changed the repository")
	}
	// An absolute path inside the repository is fine.
	if res := snapshot(t, dir, filepath.Join(dir, "a.txt")); !res.Committed {
		t.Fatalf("absolute in-repo path: %+v", res)
	}
}

func TestSnapshotFromASubdirectoryTakesPathsLiterally(t *testing.T) {
	dir := newRepo(t, map[string]string{"pkg/a.txt": "a\n", "pkg/b.txt": "b\n"})
	write(t, dir, "pkg/a.txt", "a changed\n")
	write(t, dir, "pkg/b.txt", "b changed\n")
	write(t, dir, "pkg/*.txt", "a file with a star in its name\n")
	res := snapshot(t, filepath.Join(dir, "pkg"), "*.txt")
	if !res.Committed || !slices.Equal(res.Files, []string{"pkg/*.txt"}) {
		t.Fatalf("result = %+v; the scope entry must not act as a glob", res)
	}
	if status := testsupport.Git(t, dir, "status", "--porcelain=v1"); status != " M pkg/a.txt\n M pkg/b.txt\n" {
		t.Fatalf("status:\n%s", status)
	}
}

func TestSnapshotSkipsDuringAMerge(t *testing.T) {
	dir := newRepo(t, map[string]string{"a.txt": "base\n"})
	testsupport.Git(t, dir, "checkout", "-q", "-b", "other")
	write(t, dir, "a.txt", "other\n")
	testsupport.Git(t, dir, "commit", "-q", "-am", "other")
	testsupport.Git(t, dir, "checkout", "-q", "main")
	write(t, dir, "a.txt", "main\n")
	testsupport.Git(t, dir, "commit", "-q", "-am", "main")
	cmd := exec.Command("git", "merge", "-q", "other")
	cmd.Dir = dir
	if err := cmd.Run(); err == nil {
		t.Fatal("expected a merge conflict")
	}
	before := head(t, dir)
	res := snapshot(t, dir, "a.txt")
	if res.Committed || res.Skipped != "Git snapshot skipped — a merge is in progress; finish or abort it first." {
		t.Fatalf("result = %+v", res)
	}
	if head(t, dir) != before {
		t.Fatal("HEAD moved during a merge")
	}
}

func TestSnapshotWithoutAnIdentityFailsWithTheFix(t *testing.T) {
	dir := newRepo(t, map[string]string{"a.txt": "a\n"})
	testsupport.Git(t, dir, "config", "--unset", "user.name")
	testsupport.Git(t, dir, "config", "--unset", "user.email")
	t.Setenv("EMAIL", "")
	os.Unsetenv("EMAIL")
	write(t, dir, "a.txt", "a changed\n")
	before := indexState(t, dir)
	res, err := Snapshot(context.Background(), dir, []string{"a.txt"}, "m")
	if err == nil || res.Committed || !strings.Contains(err.Error(), "git config --global user.email") {
		t.Fatalf("result %+v, err %v; want an identity error", res, err)
	}
	if indexState(t, dir) != before {
		t.Fatal("index changed")
	}
}

func TestSnapshotTimesOutWithoutTouchingTheIndex(t *testing.T) {
	dir := newRepo(t, map[string]string{"a.txt": "a\n"})
	hook := "#!/bin/sh\nsleep 30\n"
	if err := os.WriteFile(filepath.Join(dir, ".git", "hooks", "pre-commit"), []byte(hook), 0o755); err != nil {
		t.Fatal(err)
	}
	write(t, dir, "a.txt", "a changed\n")
	before, beforeState := head(t, dir), indexState(t, dir)
	ctx, cancel := context.WithTimeout(context.Background(), 1500*time.Millisecond)
	defer cancel()
	res, err := Snapshot(ctx, dir, []string{"a.txt"}, "m")
	if !errors.Is(err, context.DeadlineExceeded) || res.Committed {
		t.Fatalf("result %+v, err %v; want a deadline error", res, err)
	}
	if head(t, dir) != before || indexState(t, dir) != beforeState {
		t.Fatal("a timed-out snapshot changed the repository")
	}
}

func TestSnapshotRejectsAnEmptyMessage(t *testing.T) {
	dir := newRepo(t, map[string]string{"a.txt": "a\n"})
	if _, err := Snapshot(context.Background(), dir, []string{"a.txt"}, " \n"); !errors.Is(err, ckpt.ErrInvalid) {
		t.Fatalf("err = %v, want ErrInvalid", err)
	}
}

func TestSnapshotIgnoresAnInheritedGitDir(t *testing.T) {
	dir := newRepo(t, map[string]string{"a.txt": "a\n"})
	other := newRepo(t, map[string]string{"x.txt": "x\n"})
	t.Setenv("GIT_DIR", filepath.Join(other, ".git"))
	write(t, dir, "a.txt", "a changed\n")
	res := snapshot(t, dir, "a.txt")
	os.Unsetenv("GIT_DIR")
	if !res.Committed || res.Commit != head(t, dir) {
		t.Fatalf("result = %+v; the commit must land in repoDir's repository", res)
	}
}

func BenchmarkSnapshot(b *testing.B) {
	if _, err := exec.LookPath("git"); err != nil {
		b.Skip("git is not installed")
	}
	dir := b.TempDir()
	run := func(args ...string) {
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			b.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	b.Setenv("HOME", b.TempDir())
	b.Setenv("GIT_CONFIG_NOSYSTEM", "1")
	run("init", "-q", "-b", "main")
	run("config", "user.name", "Bench")
	run("config", "user.email", "bench@example.com")
	for i := range 200 {
		p := filepath.Join(dir, "f", strings.Repeat("x", i%7+1)+string(rune('a'+i%26))+".txt")
		os.MkdirAll(filepath.Dir(p), 0o755)
		os.WriteFile(p, []byte(p), 0o644)
	}
	run("add", "--all")
	run("commit", "-q", "-m", "init")
	target := filepath.Join(dir, "work.txt")
	b.ResetTimer()
	for i := range b.N {
		if err := os.WriteFile(target, []byte(strings.Repeat("y", i+1)), 0o644); err != nil {
			b.Fatal(err)
		}
		res, err := Snapshot(context.Background(), dir, []string{"work.txt"}, CommitMessage("bench", "bench", "step", i, b.N))
		if err != nil || !res.Committed {
			b.Fatalf("%+v %v", res, err)
		}
	}
}
