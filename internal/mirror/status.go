package mirror

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	ckpt "github.com/ckpt-dev/ckpt"
	"github.com/ckpt-dev/ckpt/internal/atomicfile"
)

// outboxAgent names c's outbox: messages/outbox-<agent>.md, the agent being
// the agent ID, else its name, else the last segment of c's ID, reduced to
// ID characters so it stays one file in messages/.
func outboxAgent(c *ckpt.Checkpoint) string {
	name := c.Agent.ID
	if name == "" {
		name = c.Agent.Name
	}
	if name == "" {
		name = c.ID[strings.LastIndexByte(c.ID, '/')+1:]
	}
	var b strings.Builder
	for _, r := range strings.ToLower(name) {
		if r < 128 && (r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '_' || r == '-' || r == '.') {
			b.WriteRune(r)
		} else {
			b.WriteByte('-')
		}
	}
	out := strings.Trim(b.String(), "-.")
	if out == "" {
		return "agent"
	}
	return out
}

// appendLine appends line to the file at path durably, creating it and
// its directory if need be.
func appendLine(path, line string) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return err
	}
	if _, err := f.WriteString(line + "\n"); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// statusSections are the sections of STATUS.md that ckpt writes; the rest
// of the file belongs to the orchestrator and is kept as it is.
var statusSections = []string{"## Active Checkpoints", "## Partially Complete"}

// writeStatusSection writes rendered (a whole STATUS.md from
// render.StatusMarkdown) to path: as it is when there is no file yet, else
// by replacing only the file's "## Active Checkpoints" and "## Partially
// Complete" sections with the rendered ones, keeping every other line.
func writeStatusSection(path, rendered string) error {
	old, err := os.ReadFile(path)
	var out string
	switch {
	case errors.Is(err, fs.ErrNotExist):
		out = rendered
	case err != nil:
		return err
	default:
		out = mergeStatusSections(string(old), rendered)
	}
	if string(old) == out {
		return nil
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return atomicfile.WriteFile(path, []byte(out), 0o644)
}

// mergeStatusSections replaces ckpt's sections of the existing STATUS.md
// with those of rendered, where the first of them stood, or appends them.
// A section runs from its heading to the next heading or "---" rule;
// headings inside code fences do not count. A fence that opens inside one
// of ckpt's sections and is never closed is taken as text, not a fence:
// by Markdown it would run to the end of the file and so make every line
// after it part of the section replaced, the orchestrator's own headings
// and sections included.
func mergeStatusSections(existing, rendered string) string {
	i := strings.Index(rendered, statusSections[0])
	if i < 0 {
		return existing
	}
	fresh := strings.TrimRight(rendered[i:], "\n")
	nl := "\n"
	if strings.Contains(existing, "\r\n") {
		// Keep the file's line endings (real STATUS.md files use CRLF).
		nl = "\r\n"
		fresh = strings.ReplaceAll(fresh, "\n", nl)
	}
	header := headerLines(rendered)
	lines := strings.SplitAfter(existing, "\n")
	unclosed := unclosedFence(lines)
	var kept []string
	at, fence, skipping := -1, "", false
	for i, l := range lines {
		t := strings.TrimSpace(l)
		if run := fenceRun(t); fence == "" && run != "" && !(skipping && i == unclosed) {
			fence = run
		} else if run != "" && fence != "" && closesFence(t, run, fence) {
			fence = ""
			if !skipping {
				kept = append(kept, l)
			}
			continue
		}
		if fence == "" {
			switch {
			case isStatusSection(t):
				if at < 0 {
					at = len(kept)
				}
				skipping = true
				continue
			case strings.HasPrefix(t, "#") || t == "---":
				skipping = false
			}
			if fresh, ok := header[headerKey(t)]; ok && !skipping {
				// The header's last-updated time and overall progress go
				// with the table under it.
				l = strings.Replace(l, t, fresh, 1)
			}
		}
		if !skipping {
			kept = append(kept, l)
		}
	}
	if at < 0 {
		body := strings.TrimRight(strings.Join(kept, ""), "\r\n")
		if body == "" {
			return fresh + nl
		}
		if fence != "" {
			// A code block left open would swallow the table (and the next
			// write would add another): close it.
			body += nl + fence
		}
		return body + nl + nl + "---" + nl + nl + fresh + nl
	}
	head := strings.Join(kept[:at], "")
	tail := strings.TrimLeft(strings.Join(kept[at:], ""), "\r\n")
	if head != "" && !strings.HasSuffix(head, "\n") {
		head += nl
	}
	if tail == "" {
		return head + fresh + nl
	}
	return head + fresh + nl + nl + tail
}

// unclosedFence returns the index of the line that opens a code fence
// never closed before the end of lines, or -1.
func unclosedFence(lines []string) int {
	open, fence := -1, ""
	for i, l := range lines {
		t := strings.TrimSpace(l)
		switch run := fenceRun(t); {
		case run == "":
		case fence == "":
			open, fence = i, run
		case closesFence(t, run, fence):
			open, fence = -1, ""
		}
	}
	return open
}

// closesFence reports whether the trimmed line t, starting with the run
// of fence characters run, closes the code fence opened by fence.
func closesFence(t, run, fence string) bool {
	return run[0] == fence[0] && len(run) >= len(fence) && strings.TrimSpace(t[len(run):]) == ""
}

// fenceRun returns the run of three or more '`' or '~' that opens or
// closes a Markdown code fence on the trimmed line t, or "".
func fenceRun(t string) string {
	if len(t) < 3 || t[0] != '`' && t[0] != '~' {
		return ""
	}
	n := 0
	for n < len(t) && t[n] == t[0] {
		n++
	}
	if n < 3 {
		return ""
	}
	return t[:n]
}

// statusHeaderFields are the header lines of STATUS.md ckpt keeps current:
// "**Last Updated**: …" and "**Overall Progress**: …".
var statusHeaderFields = []string{"**last updated**", "**overall progress**"}

// headerKey is the header field a trimmed line starts, or "".
func headerKey(t string) string {
	lower := strings.ToLower(t)
	for _, f := range statusHeaderFields {
		if strings.HasPrefix(lower, f) {
			return f
		}
	}
	return ""
}

// headerLines returns the rendered header lines by field.
func headerLines(rendered string) map[string]string {
	out := map[string]string{}
	for _, l := range strings.Split(rendered, "\n") {
		if k := headerKey(strings.TrimSpace(l)); k != "" {
			out[k] = strings.TrimSpace(l)
		}
	}
	return out
}

func isStatusSection(line string) bool {
	for _, s := range statusSections {
		if strings.EqualFold(line, s) {
			return true
		}
	}
	return false
}
