package codestate

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	ckpt "github.com/ckpt-dev/ckpt"
	"github.com/ckpt-dev/ckpt/internal/testsupport"
)

var t0 = time.Date(2026, 1, 15, 14, 30, 0, 0, time.UTC)

// run is testsupport.Git's output without its surrounding white space.
func run(t *testing.T, dir string, args ...string) string {
	t.Helper()
	return strings.TrimSpace(testsupport.Git(t, dir, args...))
}

func write(t *testing.T, path, s string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestProbeAndSince(t *testing.T) {
	testsupport.NeedCommand(t, "git", "the code state is read from a real repository")
	ctx := context.Background()
	base := t.TempDir()
	origin := filepath.Join(base, "origin")
	run(t, base, "init", "-q", "-b", "main", origin)
	write(t, filepath.Join(origin, "a.txt"), "a\n")
	run(t, origin, "add", "a.txt")
	run(t, origin, "commit", "-q", "-m", "a")
	repo := filepath.Join(base, "work")
	run(t, base, "clone", "-q", origin, repo)
	sub := filepath.Join(repo, "src")
	os.Mkdir(sub, 0o755)

	was, err := Probe(ctx, sub, "h1", t0)
	if err != nil || was == nil {
		t.Fatalf("Probe = %+v, %v", was, err)
	}
	head := run(t, repo, "rev-parse", "HEAD")
	want := ckpt.CodeState{Root: repo, Host: "h1", Branch: "main", Head: head, Upstream: "origin/main", At: t0}
	if *was != want {
		t.Fatalf("Probe = %+v\nwant %+v", *was, want)
	}
	// Probing writes nothing: no index lock, no index rewrite.
	fi, _ := os.Stat(filepath.Join(repo, ".git", "index"))
	write(t, filepath.Join(repo, "a.txt"), "changed\n")
	write(t, filepath.Join(repo, "new.txt"), "n\n")
	now, err := Probe(ctx, repo, "h1", t0)
	if err != nil || now.Uncommitted != 1 || now.Untracked != 1 {
		t.Fatalf("after edits: %+v, %v", now, err)
	}
	if fi2, _ := os.Stat(filepath.Join(repo, ".git", "index")); !fi2.ModTime().Equal(fi.ModTime()) {
		t.Error("Probe rewrote the index")
	}
	if ch := Since(ctx, was, now); ch != (Change{Uncommitted: 1}) {
		t.Errorf("Since after edits = %+v", ch)
	}
	run(t, repo, "commit", "-q", "-am", "b")
	run(t, repo, "commit", "-q", "--allow-empty", "-m", "c")
	now, _ = Probe(ctx, repo, "h1", t0)
	if now.Ahead != 2 || now.Uncommitted != 0 {
		t.Errorf("after two commits: %+v", now)
	}
	if ch := Since(ctx, was, now); ch != (Change{Moved: 2}) {
		t.Errorf("Since after two commits = %+v", ch)
	}
	run(t, repo, "checkout", "-q", "-b", "feature")
	now, _ = Probe(ctx, repo, "h1", t0)
	if ch := Since(ctx, was, now); !ch.OtherBranch || ch.Moved != 2 {
		t.Errorf("Since on another branch = %+v", ch)
	}
	run(t, repo, "reset", "-q", "--hard", head)
	run(t, repo, "commit", "-q", "--allow-empty", "-m", "other line")
	moved, _ := Probe(ctx, repo, "h1", t0)
	run(t, repo, "reset", "-q", "--hard", head)
	run(t, repo, "commit", "-q", "--allow-empty", "-m", "yet another")
	now, _ = Probe(ctx, repo, "h1", t0)
	if ch := Since(ctx, moved, now); ch.Moved != -1 {
		t.Errorf("Since across a rewrite = %+v, want Moved -1", ch)
	}
	if ch := Since(ctx, was, &ckpt.CodeState{Root: repo, Host: "h2"}); !ch.Elsewhere {
		t.Errorf("Since on another host = %+v", ch)
	}
	run(t, repo, "checkout", "-q", "--detach")
	now, _ = Probe(ctx, repo, "h1", t0)
	if now.Branch != "" || now.Head == "" {
		t.Errorf("detached: %+v", now)
	}
}

func TestProbeOutsideARepository(t *testing.T) {
	dir := t.TempDir()
	if cs, err := Probe(context.Background(), dir, "h", t0); cs != nil || err != nil {
		t.Fatalf("Probe outside a repository = %+v, %v", cs, err)
	}
	// A .git that is not a repository (an empty directory) is none either.
	os.Mkdir(filepath.Join(dir, ".git"), 0o755)
	if cs, err := Probe(context.Background(), dir, "h", t0); cs != nil || err != nil {
		t.Fatalf("Probe under an empty .git = %+v, %v", cs, err)
	}
}

func TestParseStatus(t *testing.T) {
	out := "# branch.oid (initial)\n# branch.head (detached)\n# branch.ab +3 -1\n1 .M N... 100644 100644 100644 a a a.txt\n2 R. N... 100644 100644 100644 a a R100 b.txt\ta.txt\nu UU N... 1 2 3 4 a b c d.txt\n? x.txt\n! ignored\n"
	cs, err := ParseStatus([]byte(out))
	if err != nil {
		t.Fatal(err)
	}
	if *cs != (ckpt.CodeState{Ahead: 3, Behind: 1, Uncommitted: 3, Untracked: 1}) {
		t.Fatalf("ParseStatus = %+v", *cs)
	}
	for _, bad := range []string{"# branch.ab 3\n", "# branch.ab +x -1\n", "garbage\n"} {
		if _, err := ParseStatus([]byte(bad)); err == nil {
			t.Errorf("ParseStatus(%q) accepted", bad)
		}
	}
}

func FuzzParseStatus(f *testing.F) {
	f.Add([]byte("# branch.oid 0123abcd\n# branch.head main\n# branch.upstream origin/main\n# branch.ab +0 -0\n1 .M N... 100644 100644 100644 a a a.txt\n? b\n"))
	f.Add([]byte("# branch.ab +-1 --2\n"))
	f.Add([]byte(""))
	f.Fuzz(func(t *testing.T, out []byte) {
		cs, err := ParseStatus(out)
		if err != nil {
			return
		}
		if cs.Ahead < 0 || cs.Behind < 0 || cs.Uncommitted < 0 || cs.Untracked < 0 {
			t.Fatalf("negative counts from %q: %+v", out, cs)
		}
	})
}

// TestNoteFrom: what a resumed session is told about its code: how far
// HEAD moved since the recorded state, or that it is not in the recorded
// repository; nothing when no state was recorded.
func TestNoteFrom(t *testing.T) {
	testsupport.NeedCommand(t, "git", "the code state is read from a real repository")
	ctx := context.Background()
	repo := t.TempDir()
	run(t, repo, "init", "-q", "-b", "main")
	write(t, filepath.Join(repo, "a.txt"), "a\n")
	run(t, repo, "add", "a.txt")
	run(t, repo, "commit", "-q", "-m", "a")
	was, err := Probe(ctx, repo, "h1", t0)
	if err != nil || was == nil {
		t.Fatalf("Probe = %+v, %v", was, err)
	}
	run(t, repo, "commit", "-q", "--allow-empty", "-m", "b")
	note := NoteFrom(ctx, was, repo, "h1")
	for _, want := range []string{"The last session left the code on branch main at ", "HEAD moved 1 commit forward"} {
		if !strings.Contains(note, want) {
			t.Errorf("note lacks %q: %q", want, note)
		}
	}
	if note := NoteFrom(ctx, was, t.TempDir(), "h1"); !strings.Contains(note, "This session is not in that repository: fetch it and check out branch main at ") {
		t.Errorf("note outside the repository: %q", note)
	}
	if note := NoteFrom(ctx, nil, repo, "h1"); note != "" {
		t.Errorf("nothing recorded, note %q", note)
	}
	if note := NoteFrom(ctx, was, "", "h1"); note != "" {
		t.Errorf("no directory, note %q", note)
	}
}
