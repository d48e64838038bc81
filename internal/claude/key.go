package claude

import (
	"path/filepath"
	"strings"

	"github.com/ckpt-dev/ckpt"
)

// EnvID is the environment variable that names the checkpoint a session
// works on, overriding the session and repository mapping.
const EnvID = "CKPT_ID"

// maxSegment bounds one sanitised segment of a derived ID.
const maxSegment = 64

// SessionKey returns the checkpoint ID a hook payload belongs to, or "" when
// nothing identifies one. In order:
//
//  1. the CKPT_ID environment variable (read with env), sanitised;
//  2. the session: "<project>/session-<session id>", where project is the
//     base name of repoRoot, else of the payload's cwd; just
//     "session-<session id>" when neither is known;
//  3. the repository: "<project>", from repoRoot alone.
//
// Sanitising keeps the characters an ID allows ([A-Za-z0-9._-] and '/'),
// turns runs of anything else into '-', drops empty, "." and ".." segments
// and leading or trailing '-' and '.', and bounds the length, so the result
// always passes ckpt.ValidateID (or is ""). env may be nil.
func SessionKey(in Input, env func(string) string, repoRoot string) string {
	if env != nil {
		if id := sanitizeID(env(EnvID)); id != "" {
			return id
		}
	}
	project := ""
	if repoRoot != "" {
		project = sanitizeSegment(filepath.Base(filepath.Clean(repoRoot)))
	} else if in.CWD != "" {
		project = sanitizeSegment(filepath.Base(filepath.Clean(in.CWD)))
	}
	if sid := sanitizeSegment(in.SessionID); sid != "" {
		id := "session-" + sid
		if project != "" {
			id = project + "/" + id
		}
		return checked(id)
	}
	if repoRoot != "" {
		return checked(project)
	}
	return ""
}

// sanitizeID sanitises each '/'-separated segment of id (a '\' counts as a
// separator too) and drops the empty ones.
func sanitizeID(id string) string {
	var segs []string
	for _, s := range strings.FieldsFunc(id, func(r rune) bool { return r == '/' || r == '\\' }) {
		if s = sanitizeSegment(s); s != "" {
			segs = append(segs, s)
		}
	}
	return checked(strings.Join(segs, "/"))
}

// sanitizeSegment keeps [A-Za-z0-9._-], turns each run of other bytes into
// one '-', trims '-' and '.' from both ends and cuts to maxSegment bytes.
func sanitizeSegment(s string) string {
	var b strings.Builder
	dash := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-' {
			b.WriteByte(c)
			dash = false
		} else if !dash {
			b.WriteByte('-')
			dash = true
		}
	}
	out := strings.Trim(b.String(), "-.")
	if len(out) > maxSegment {
		out = strings.TrimRight(out[:maxSegment], "-.")
	}
	return out
}

// checked bounds id to ckpt.MaxIDLen and returns it if valid, else "".
func checked(id string) string {
	if len(id) > ckpt.MaxIDLen {
		id = strings.TrimRight(id[:ckpt.MaxIDLen], "/-.")
	}
	if ckpt.ValidateID(id) != nil {
		return ""
	}
	return id
}
