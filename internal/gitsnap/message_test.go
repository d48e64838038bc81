package gitsnap

import (
	"context"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/ckpt-dev/ckpt/internal/testsupport"
)

func TestCommitMessageFormat(t *testing.T) {
	got := CommitMessage("kai-7/secondary-a", "Port the CSV importer", "Write the parser", 3, 8)
	want := "checkpoint(kai-7/secondary-a): Write the parser [3/8]\n" +
		"\n" +
		"Snapshot of the in-scope files, taken by `ckpt checkpoint`.\n" +
		"Task: Port the CSV importer\n" +
		"\n" +
		"Ckpt-Checkpoint: kai-7/secondary-a\n" +
		"Ckpt-Step: Write the parser\n" +
		"Ckpt-Progress: 3/8\n"
	if got != want {
		t.Fatalf("got:\n%s\nwant:\n%s", got, want)
	}
}

func TestCommitMessageFallbacks(t *testing.T) {
	for _, tc := range []struct {
		id, title, current string
		done, total        int
		subject            string
	}{
		{"m-1", "Migrate users", "", 0, 0, "checkpoint(m-1): Migrate users"},
		{"m-1", "", "", 2, 5, "checkpoint(m-1): snapshot [2/5]"},
		{"", "", "step", 9, 4, "checkpoint: step [4/4]"},
		{"m-1", "t", "s", -3, 4, "checkpoint(m-1): s [0/4]"},
		{"m-1", "t", "line one\nCkpt-Checkpoint: forged", 1, 2, "checkpoint(m-1): line one Ckpt-Checkpoint: forged [1/2]"},
	} {
		msg := CommitMessage(tc.id, tc.title, tc.current, tc.done, tc.total)
		if subject, _, _ := strings.Cut(msg, "\n"); subject != tc.subject {
			t.Errorf("CommitMessage(%q, %q, %q, %d, %d) subject = %q, want %q", tc.id, tc.title, tc.current, tc.done, tc.total, subject, tc.subject)
		}
	}
}

func TestCommitMessageCutsLongSubjects(t *testing.T) {
	msg := CommitMessage("plan/very-long-id", "", strings.Repeat("implement ", 20), 10, 12)
	subject, _, _ := strings.Cut(msg, "\n")
	if n := utf8.RuneCountInString(subject); n > MaxSubjectLen {
		t.Fatalf("subject is %d runes: %q", n, subject)
	}
	if !strings.HasSuffix(subject, "… [10/12]") || !strings.HasPrefix(subject, "checkpoint(plan/very-long-id): implement") {
		t.Fatalf("subject = %q", subject)
	}
	// The step keeps its full text in the trailer.
	if !strings.Contains(msg, "Ckpt-Step: "+strings.TrimSpace(strings.Repeat("implement ", 20))+"\n") {
		t.Fatalf("trailer lost the full step:\n%s", msg)
	}
}

// git itself must read the trailers back, or the format is not what the
// documentation promises.
func TestCommitMessageTrailersParseWithGit(t *testing.T) {
	testsupport.NeedCommand(t, "git", "git itself reads the trailers back")
	msg := CommitMessage("kai-7/a", "Title", "Step two", 2, 3)
	cmd := exec.CommandContext(context.Background(), "git", "interpret-trailers", "--parse")
	cmd.Stdin = strings.NewReader(msg)
	out, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	want := "Ckpt-Checkpoint: kai-7/a\nCkpt-Step: Step two\nCkpt-Progress: 2/3\n"
	if string(out) != want {
		t.Fatalf("git interpret-trailers --parse:\n%s\nwant:\n%s", out, want)
	}
}

func FuzzCommitMessage(f *testing.F) {
	f.Add("kai-7/a", "Title", "Step", 1, 3)
	f.Add("", "", "", 0, 0)
	f.Add("x", "a\nb", "c\r\nd", -1, 2)
	f.Add("é", strings.Repeat("ü", 100), "", 5, 1)
	f.Fuzz(func(t *testing.T, id, title, current string, done, total int) {
		msg := CommitMessage(id, title, current, done, total)
		lines := strings.Split(msg, "\n")
		if utf8.RuneCountInString(lines[0]) > MaxSubjectLen {
			t.Fatalf("subject longer than %d runes: %q", MaxSubjectLen, lines[0])
		}
		if lines[0] == "" || lines[1] != "" {
			t.Fatalf("no subject line then blank line: %q", msg)
		}
		// Only the trailers CommitMessage writes may appear as trailer lines.
		for _, l := range lines[2:] {
			if k, _, ok := strings.Cut(l, ": "); ok && strings.HasPrefix(k, "Ckpt-") && !slices.Contains([]string{"Ckpt-Checkpoint", "Ckpt-Step", "Ckpt-Progress"}, k) {
				t.Fatalf("unexpected trailer %q", l)
			}
		}
		// subject, blank, sentence, Task, blank, three trailers, final "".
		if len(lines) > 9 {
			t.Fatalf("inputs added lines: %q", msg)
		}
	})
}
