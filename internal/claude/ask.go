package claude

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"regexp"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/ckpt-dev/ckpt"
	"github.com/ckpt-dev/ckpt/internal/request"
)

// Bounds of what the hooks keep of a session's prompts.
const (
	// MaxAsks is how many of a checkpoint's latest prompts meta.asks keeps.
	MaxAsks = 5
	// askMax bounds one kept prompt, titleMax the title made from one.
	askMax   = 600
	titleMax = 120
)

// Ask is one prompt of a session as meta.asks keeps it.
type Ask struct {
	At      time.Time `json:"at"`
	Session string    `json:"session,omitempty"`
	Text    string    `json:"text"`
}

// secretPatterns are strings that look like credentials. Whatever matches
// is replaced before a prompt, a message or a command's output is stored:
// an agent's history is shared, printed and sent to other sessions.
//
// They are compiled on first use, not at start-up: every hook process links
// this package, and most never redact anything.
var secretPatterns = sync.OnceValue(func() []secretPattern {
	return []secretPattern{
		{regexp.MustCompile(`-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]*?(-----END [A-Z ]*PRIVATE KEY-----|$)`), Redacted},
		{regexp.MustCompile(`\b(sk|pk|rk)-[A-Za-z0-9_-]{16,}`), Redacted}, // OpenAI, Anthropic, Stripe
		{regexp.MustCompile(`\b(ghp|gho|ghu|ghs|ghr)_[A-Za-z0-9]{20,}|\bgithub_pat_[A-Za-z0-9_]{20,}`), Redacted},
		{regexp.MustCompile(`\bglpat-[A-Za-z0-9_-]{16,}`), Redacted},
		{regexp.MustCompile(`\bxox[abposr]-[A-Za-z0-9-]{10,}`), Redacted}, // Slack
		{regexp.MustCompile(`\b(AKIA|ASIA)[0-9A-Z]{16}\b`), Redacted},     // AWS access key
		{regexp.MustCompile(`\bAIza[0-9A-Za-z_-]{30,}`), Redacted},        // Google API key
		{regexp.MustCompile(`\blin_(api|oauth)_[A-Za-z0-9]{20,}`), Redacted},
		{regexp.MustCompile(`\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}`), Redacted}, // JWT
		{regexp.MustCompile(`(?i)\b(bearer|basic)\s+[A-Za-z0-9._~+/=-]{16,}`), Redacted},
		// name = value: the name stays
		{regexp.MustCompile(`(?i)([a-z0-9_]*(api[_-]?key|secret|token|passw(or)?d|credential)[a-z0-9_]*\s*[:=]\s*)("[^"\s]{6,}"|'[^'\s]{6,}'|[^\s"']{6,})`), "${1}" + Redacted},
		{regexp.MustCompile(`://[^/\s:@]+:[^/\s@]{3,}@`), "://" + Redacted + "@"}, // a password in a URL
	}
})

type secretPattern struct {
	re   *regexp.Regexp
	repl string
}

// Redacted is what replaces a string that looks like a secret.
const Redacted = "[redacted]"

// Redact replaces every string in s that looks like a secret (an API key,
// a token, a private key, a password assignment or a password in a URL)
// with [redacted], keeping the name of an assignment ("API_KEY=…" becomes
// "API_KEY=[redacted]").
func Redact(s string) string {
	if !mayHoldSecret(s) {
		return s
	}
	return redactAll(s)
}

// redactAll runs every pattern over s.
func redactAll(s string) string {
	for _, p := range secretPatterns() {
		s = p.re.ReplaceAllString(s, p.repl)
	}
	return s
}

// secretHints are substrings, in lower case, one of which each secret
// pattern needs to match (in pattern order): a string holding none of them
// holds no secret, and most tool calls' commands are redacted without a
// pattern compiled or run (FuzzRedact holds Redact to redactAll).
var secretHints = []string{
	"-----begin ", "sk-", "pk-", "rk-", "ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_", "glpat-", "xox",
	"akia", "asia", "aiza", "lin_api_", "lin_oauth_", "eyj", "bearer", "basic",
	"api", "secret", "token", "passw", "credential", "://",
}

// mayHoldSecret reports whether a secret pattern could match s. Outside
// ASCII it says yes: the case-insensitive patterns fold some other
// letters to ASCII ones (the Kelvin sign to k), which lower-casing does not.
func mayHoldSecret(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return true
		}
	}
	lower := strings.ToLower(s)
	for _, h := range secretHints {
		if strings.Contains(lower, h) {
			return true
		}
	}
	return false
}

// askTitle makes a checkpoint's title from a session's first prompt: its
// first line that is not blank, secrets redacted, cut to titleMax runes.
// "" when the prompt has no words.
func askTitle(prompt string) string {
	return firstLine(Redact(prompt), titleMax)
}

// isHookTitle reports a title the hooks made up ("Claude Code session in
// app"): one the first prompt may replace.
func isHookTitle(t string) bool {
	t = strings.TrimSpace(t)
	if t == "" {
		return true
	}
	for _, client := range []string{"Claude Code", "Codex", "Gemini CLI"} {
		if t == client+" session" || strings.HasPrefix(t, client+" session in ") {
			return true
		}
	}
	return false
}

// readAsks returns meta.asks, or nothing when it is missing or unreadable.
func readAsks(cp *ckpt.Checkpoint) []Ask {
	var asks []Ask
	if raw, ok := cp.Meta["asks"]; ok {
		if json.Unmarshal(raw, &asks) != nil {
			return nil
		}
	}
	return asks
}

// askUpdate is the change a prompt makes: the prompt added to meta.asks
// (the last MaxAsks kept) and, while the checkpoint has no title of its
// own, the prompt as its title. It returns nil when the prompt has no
// words or is already the latest ask of this session.
func (c *hookCall) askUpdate(cp *ckpt.Checkpoint) *request.Update {
	text := shortenMulti(Redact(c.in.Prompt), askMax)
	if text == "" {
		return nil
	}
	asks := readAsks(cp)
	if n := len(asks); n > 0 && asks[n-1].Text == text && asks[n-1].Session == c.in.SessionID {
		return nil
	}
	asks = append(asks, Ask{At: c.now(), Session: c.in.SessionID, Text: text})
	if len(asks) > MaxAsks {
		asks = asks[len(asks)-MaxAsks:]
	}
	raw, _ := json.Marshal(asks)
	p := &request.Update{Meta: map[string]json.RawMessage{"asks": raw}}
	if t := askTitle(c.in.Prompt); t != "" && isHookTitle(cp.Title) {
		p.Title = &t
	}
	return p
}

// recordAsk keeps the session's prompt (askUpdate), keyed by the session
// and the prompt so that a retried hook adds nothing.
func (c *hookCall) recordAsk(cp *ckpt.Checkpoint) *ckpt.Checkpoint {
	p := c.askUpdate(cp)
	if p == nil {
		return cp
	}
	sum := sha256.Sum256([]byte(c.in.Prompt))
	next, err := c.append(*p, "hook:ask:"+c.in.SessionID+":"+hex.EncodeToString(sum[:8]))
	if err != nil {
		c.warn("%s: recording the prompt: %v", c.id, err)
		return cp
	}
	return next
}

// shortenMulti trims s and cuts it to at most max runes, keeping its
// lines, marking a cut with "…".
func shortenMulti(s string, max int) string {
	s = strings.TrimSpace(strings.ReplaceAll(s, "\r\n", "\n"))
	r := []rune(s)
	if len(r) <= max {
		return s
	}
	return strings.TrimSpace(string(r[:max-1])) + "…"
}
