package claude

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/ckpt-dev/ckpt"
	"github.com/ckpt-dev/ckpt/internal/request"
)

// Hard bounds of reading a transcript: the file is the client's, may be
// huge, and is hostile input like any other.
const (
	// TranscriptMaxBytes is how much of a transcript's end is read.
	TranscriptMaxBytes = 1 << 20
	// TranscriptMaxLines is how many of its last lines are looked at.
	TranscriptMaxLines = 4000
	// TranscriptMaxTime bounds the whole read.
	TranscriptMaxTime = 300 * time.Millisecond

	transcriptSummaryMax = 2000
	transcriptExchanges  = 6
	transcriptTextMax    = 600
)

// TranscriptTail is what the end of a transcript tells that the hooks did
// not see: the summary a compaction wrote, and the last exchanges (user
// and assistant text, oldest first). It is kept in meta.transcript.
type TranscriptTail struct {
	Summary   string     `json:"summary,omitempty"`
	Exchanges []Exchange `json:"exchanges,omitempty"`
}

// Exchange is one message of a transcript.
type Exchange struct {
	Role string `json:"role"`
	Text string `json:"text"`
}

// ErrOutsideClientDir refuses a transcript path outside the client's own
// directory (a payload can name any file).
var ErrOutsideClientDir = errors.New("transcript is outside the client's directory")

// clientDirs are the directories a client keeps its transcripts in:
// Claude Code's $CLAUDE_CONFIG_DIR or ~/.claude, Codex's $CODEX_HOME or
// ~/.codex, Gemini CLI's ~/.gemini.
func clientDirs(c Client, getenv func(string) string) []string {
	home := getenv("HOME")
	var dirs []string
	add := func(env, sub string) {
		if d := getenv(env); d != "" && filepath.IsAbs(d) {
			dirs = append(dirs, d)
		}
		if home != "" && filepath.IsAbs(home) {
			dirs = append(dirs, filepath.Join(home, sub))
		}
	}
	switch c {
	case Codex:
		add("CODEX_HOME", ".codex")
	case Gemini:
		add("GEMINI_CLI_HOME", ".gemini")
	default:
		add("CLAUDE_CONFIG_DIR", ".claude")
	}
	return dirs
}

// ReadTranscriptTail reads the end of the transcript at path within the
// hard bounds above, and only when path, with every symbolic link
// resolved, is a regular file inside one of dirs (resolved the same way).
// Lines that are not a transcript entry it knows are skipped: Claude
// Code's JSONL (a user entry with isCompactSummary holds the compaction's
// summary; user and assistant entries hold the exchanges) and Codex's
// rollout (a compacted entry, response_item messages).
func ReadTranscriptTail(path string, dirs []string) (TranscriptTail, error) {
	var tr TranscriptTail
	f, size, err := openInside(path, dirs)
	if err != nil {
		return tr, err
	}
	defer f.Close()
	from := max(size-TranscriptMaxBytes, 0)
	buf := make([]byte, size-from)
	n, err := f.ReadAt(buf, from)
	if err != nil && !errors.Is(err, io.EOF) {
		return tr, fmt.Errorf("reading the transcript: %w", err)
	}
	buf = buf[:n]
	if from > 0 { // the first line is cut: skip it
		if i := bytes.IndexByte(buf, '\n'); i >= 0 {
			buf = buf[i+1:]
		} else {
			buf = nil
		}
	}
	return scanTranscript(buf, time.Now().Add(TranscriptMaxTime)), nil
}

// openInside opens path when it resolves to a regular file inside dirs.
func openInside(path string, dirs []string) (*os.File, int64, error) {
	if path == "" || !filepath.IsAbs(path) || strings.ContainsRune(path, 0) {
		return nil, 0, ErrOutsideClientDir
	}
	real, err := filepath.EvalSymlinks(path)
	if err != nil {
		return nil, 0, err
	}
	inside := false
	for _, d := range dirs {
		rd, err := filepath.EvalSymlinks(d)
		if err != nil {
			continue
		}
		if rel, err := filepath.Rel(rd, real); err == nil && rel != "." && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
			inside = true
			break
		}
	}
	if !inside {
		return nil, 0, ErrOutsideClientDir
	}
	f, err := os.Open(real)
	if err != nil {
		return nil, 0, err
	}
	fi, err := f.Stat()
	if err != nil || !fi.Mode().IsRegular() {
		f.Close()
		return nil, 0, fmt.Errorf("transcript %s is not a regular file", path)
	}
	return f, fi.Size(), nil
}

// scanTranscript reads lines from the end of buf until it has the summary
// and the exchanges, or meets TranscriptMaxLines or the deadline.
func scanTranscript(buf []byte, deadline time.Time) TranscriptTail {
	var tr TranscriptTail
	var rev []Exchange // newest first
	end := len(buf)
	for lines := 0; end > 0 && lines < TranscriptMaxLines; lines++ {
		if lines%64 == 63 && time.Now().After(deadline) {
			break
		}
		start := bytes.LastIndexByte(buf[:end], '\n') + 1
		line := bytes.TrimSpace(buf[start:end])
		end = max(start-1, 0)
		if len(line) == 0 || line[0] != '{' {
			continue
		}
		summary, ex := transcriptEntry(line)
		if summary != "" && tr.Summary == "" {
			tr.Summary = shortenMulti(Redact(summary), transcriptSummaryMax)
		}
		if ex != nil && len(rev) < transcriptExchanges {
			rev = append(rev, *ex)
		}
		if tr.Summary != "" && len(rev) >= transcriptExchanges {
			break
		}
	}
	for i := len(rev) - 1; i >= 0; i-- {
		tr.Exchanges = append(tr.Exchanges, rev[i])
	}
	return tr
}

// transcriptEntry reads one line: a compaction summary, or an exchange.
func transcriptEntry(line []byte) (summary string, ex *Exchange) {
	var e struct {
		Type             string          `json:"type"`
		IsCompactSummary bool            `json:"isCompactSummary"`
		IsMeta           bool            `json:"isMeta"`
		Message          json.RawMessage `json:"message"`
		Payload          json.RawMessage `json:"payload"`
	}
	if json.Unmarshal(line, &e) != nil {
		return "", nil
	}
	switch e.Type {
	case "user", "assistant":
		var m struct {
			Role    string          `json:"role"`
			Content json.RawMessage `json:"content"`
		}
		if json.Unmarshal(e.Message, &m) != nil {
			return "", nil
		}
		text := contentText(m.Content)
		if e.IsCompactSummary {
			return text, nil
		}
		if e.IsMeta || text == "" || strings.HasPrefix(text, "<") {
			return "", nil // a command's echo, a reminder: not an exchange
		}
		return "", exchange(e.Type, text)
	case "compacted": // Codex
		var p struct {
			Message string `json:"message"`
		}
		if json.Unmarshal(e.Payload, &p) == nil {
			return p.Message, nil
		}
	case "response_item": // Codex
		var p struct {
			Type    string          `json:"type"`
			Role    string          `json:"role"`
			Content json.RawMessage `json:"content"`
		}
		if json.Unmarshal(e.Payload, &p) == nil && p.Type == "message" && (p.Role == "user" || p.Role == "assistant") {
			if text := contentText(p.Content); text != "" && !strings.HasPrefix(text, "<") {
				return "", exchange(p.Role, text)
			}
		}
	}
	return "", nil
}

func exchange(role, text string) *Exchange {
	return &Exchange{Role: role, Text: shortenMulti(Redact(text), transcriptTextMax)}
}

// contentText is a message's text: a string, or the text of its text
// blocks (Claude's "text", Codex's "input_text" and "output_text").
func contentText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return strings.TrimSpace(s)
	}
	var blocks []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if json.Unmarshal(raw, &blocks) != nil {
		return ""
	}
	var parts []string
	for _, b := range blocks {
		switch b.Type {
		case "text", "input_text", "output_text":
			if t := strings.TrimSpace(b.Text); t != "" {
				parts = append(parts, t)
			}
		}
	}
	return strings.Join(parts, "\n")
}

// recordTranscript reads the session's transcript after a compaction and
// keeps what it tells in meta.transcript, keyed by its content so that a
// repeated start writes nothing. A transcript that cannot be read is
// skipped silently unless it is outside the client's directory.
func (c *hookCall) recordTranscript(cp *ckpt.Checkpoint) *ckpt.Checkpoint {
	if c.in.TranscriptPath == "" || c.h.Getenv == nil {
		return cp
	}
	tr, err := ReadTranscriptTail(c.in.TranscriptPath, clientDirs(c.h.Client, c.h.Getenv))
	if errors.Is(err, ErrOutsideClientDir) {
		c.warn("%s: %v; not read", c.id, err)
	}
	if err != nil || tr.Summary == "" && len(tr.Exchanges) == 0 {
		return cp
	}
	raw, _ := json.Marshal(tr)
	if bytes.Equal(bytes.TrimSpace(cp.Meta["transcript"]), raw) {
		return cp
	}
	sum := sha256.Sum256(raw)
	next, err := c.append(request.Update{Meta: map[string]json.RawMessage{"transcript": raw}}, "hook:transcript:"+hex.EncodeToString(sum[:8]))
	if err != nil {
		c.warn("%s: keeping the transcript's summary: %v", c.id, err)
		return cp
	}
	return next
}
