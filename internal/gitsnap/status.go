package gitsnap

import (
	"bytes"
	"fmt"
)

// statusEntry is one record of `git status --porcelain=v1 -z`: the index (X)
// and work-tree (Y) status letters and the repository-relative path, with
// Orig set for a rename or copy (the path it came from).
type statusEntry struct {
	X, Y byte
	Path string
	Orig string
}

// parseStatusZ parses the output of `git status --porcelain=v1 -z`. Each
// record is "XY PATH" terminated by NUL; a rename or copy (X or Y is 'R' or
// 'C') is followed by a second NUL-terminated field, the source path. Paths
// are raw bytes, never quoted, in -z mode. An empty output is a clean tree.
// A record that does not have this shape is an error: git's output is not
// trusted blindly, because staging a misread path could stage the wrong file.
func parseStatusZ(out []byte) ([]statusEntry, error) {
	var entries []statusEntry
	for len(out) > 0 {
		end := bytes.IndexByte(out, 0)
		if end < 0 {
			return nil, fmt.Errorf("git status: record %q is not NUL-terminated", clip(out))
		}
		rec := out[:end]
		out = out[end+1:]
		if len(rec) < 4 || rec[2] != ' ' || !statusLetter(rec[0]) || !statusLetter(rec[1]) {
			return nil, fmt.Errorf("git status: malformed record %q", clip(rec))
		}
		e := statusEntry{X: rec[0], Y: rec[1], Path: string(rec[3:])}
		if e.X == 'R' || e.X == 'C' || e.Y == 'R' || e.Y == 'C' {
			end = bytes.IndexByte(out, 0)
			if end <= 0 {
				return nil, fmt.Errorf("git status: rename of %q has no source path", e.Path)
			}
			e.Orig = string(out[:end])
			out = out[end+1:]
		}
		entries = append(entries, e)
	}
	return entries, nil
}

// statusLetter reports whether b is a status letter of porcelain v1.
func statusLetter(b byte) bool {
	switch b {
	case ' ', 'M', 'T', 'A', 'D', 'R', 'C', 'U', '?', '!':
		return true
	}
	return false
}

// formatStatusZ is the inverse of parseStatusZ (used by its tests).
func formatStatusZ(entries []statusEntry) []byte {
	var b bytes.Buffer
	for _, e := range entries {
		b.WriteByte(e.X)
		b.WriteByte(e.Y)
		b.WriteByte(' ')
		b.WriteString(e.Path)
		b.WriteByte(0)
		if e.Orig != "" {
			b.WriteString(e.Orig)
			b.WriteByte(0)
		}
	}
	return b.Bytes()
}

func clip(b []byte) string {
	if len(b) > 80 {
		return string(b[:80]) + "…"
	}
	return string(b)
}
