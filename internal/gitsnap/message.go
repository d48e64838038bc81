package gitsnap

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// MaxSubjectLen is the longest subject line CommitMessage writes, in runes.
const MaxSubjectLen = 72

// CommitMessage returns the commit message of a checkpoint snapshot
// (documented in docs/checkpoint.md):
//
//	checkpoint(<id>): <current step> [<done>/<total>]
//
//	Snapshot of the in-scope files, taken by `ckpt checkpoint`.
//	Task: <title>
//
//	Ckpt-Checkpoint: <id>
//	Ckpt-Step: <current step>
//	Ckpt-Progress: <done>/<total>
//
// The subject names the current step, or the title when there is no current
// step, or "snapshot" when there is neither; the subject is kept within
// MaxSubjectLen runes by cutting that text (or, for a very long ID, the ID)
// with "…". The " [N/M]" suffix, the Task line and the Ckpt-Progress trailer
// appear only when total > 0 (done is clamped to 0…total); the Task line only
// when the title differs from the subject's text; Ckpt-Step only with a
// current step. The last paragraph is git trailers, so
// `git log --format='%(trailers:key=Ckpt-Checkpoint,valueonly)'` finds every
// snapshot of a checkpoint. Line breaks and runs of white space in the inputs
// become single spaces, so no input can add lines or forge a trailer.
func CommitMessage(id, title, current string, done, total int) string {
	id, title, current = oneLine(id), oneLine(title), oneLine(current)
	what := current
	if what == "" {
		what = title
	}
	if what == "" {
		what = "snapshot"
	}
	prefix := "checkpoint: "
	if id != "" {
		prefix = "checkpoint(" + id + "): "
	}
	suffix := ""
	if total > 0 {
		done = min(max(done, 0), total)
		suffix = fmt.Sprintf(" [%d/%d]", done, total)
	}
	room := MaxSubjectLen - utf8.RuneCountInString(prefix) - utf8.RuneCountInString(suffix)
	if keep := min(utf8.RuneCountInString(what), 16); room < keep {
		// A very long ID: cut it in the subject (the trailer keeps it whole).
		idRoom := MaxSubjectLen - len("checkpoint(): ") - utf8.RuneCountInString(suffix) - keep
		prefix = "checkpoint(" + cutRunes(id, max(idRoom, 1)) + "): "
		room = MaxSubjectLen - utf8.RuneCountInString(prefix) - utf8.RuneCountInString(suffix)
	}
	subject := prefix + cutRunes(what, max(room, 1)) + suffix

	var b strings.Builder
	b.WriteString(subject)
	b.WriteString("\n\nSnapshot of the in-scope files, taken by `ckpt checkpoint`.\n")
	if title != "" && title != what {
		b.WriteString("Task: " + title + "\n")
	}
	var trailers []string
	if id != "" {
		trailers = append(trailers, "Ckpt-Checkpoint: "+id)
	}
	if current != "" {
		trailers = append(trailers, "Ckpt-Step: "+current)
	}
	if total > 0 {
		trailers = append(trailers, fmt.Sprintf("Ckpt-Progress: %d/%d", done, total))
	}
	if len(trailers) > 0 {
		b.WriteString("\n" + strings.Join(trailers, "\n") + "\n")
	}
	return b.String()
}

// oneLine collapses every run of white space (line breaks included) into one
// space and trims the ends.
func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// cutRunes shortens s to at most n runes, ending it with "…" when cut.
func cutRunes(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return strings.TrimRight(string(r[:n-1]), " ") + "…"
}
