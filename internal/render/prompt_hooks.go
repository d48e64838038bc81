package render

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	ckpt "github.com/ckpt-dev/ckpt"
)

// The prompt's budget is counted in tokens, estimated without a
// tokenizer: EstimateTokens.
const (
	// DefaultBudget is the continuation prompt's size by default, in
	// tokens (`ckpt resume --budget`).
	DefaultBudget = 2000
	// MinBudget is the smallest budget a prompt can be rendered in: the
	// header and the next action need about this much.
	MinBudget = 400
	// BytesPerToken is the bytes of ASCII text one token stands for.
	BytesPerToken = 4
)

// EstimateTokens estimates the tokens s takes for a model: one per
// BytesPerToken bytes of ASCII text, rounded up, plus one per other
// character (a letter outside ASCII is usually a token of its own, a CJK
// character about one). The Claude, GPT and Gemini tokenizers give
// English prose and code 3.5 to 4.5 bytes per token, so this is close for
// them and errs high for text with many accented letters.
func EstimateTokens(s string) int {
	ascii, other := 0, 0
	for i := 0; i < len(s); {
		if s[i] < utf8.RuneSelf {
			ascii++
			i++
			continue
		}
		_, n := utf8.DecodeRuneInString(s[i:])
		i += n
		other++
	}
	return (ascii+BytesPerToken-1)/BytesPerToken + other
}

// MarkdownBudget is Markdown within about budget tokens (EstimateTokens):
// the header, then the sections in order of importance (warnings, next
// action, the agent's last message, blockers, open errors, next steps,
// asks, remaining steps, decisions, done steps, what the transcript
// showed after a compaction, criteria, files, notes), each squeezed to
// what is left. The result never passes the budget nor MaxPromptChars:
// whole lines are dropped from the end when the estimate does. A budget
// under MinBudget is MinBudget.
func (p Prompt) MarkdownBudget(budget int) string {
	budget = max(budget, MinBudget)
	limit := min(budget*BytesPerToken, MaxPromptChars-1)
	md := p.render(limit)
	for range 3 {
		over := EstimateTokens(md) - budget
		if over <= 0 {
			return fitPrompt(md, limit)
		}
		limit -= over * BytesPerToken
		md = p.render(limit)
	}
	return fitTokens(fitPrompt(md, limit), budget)
}

// fitTokens drops whole lines from the end of s until it is within budget
// tokens.
func fitTokens(s string, budget int) string {
	const note = "\n" + ellipsis + " (prompt shortened to fit its budget)\n"
	for EstimateTokens(s)+EstimateTokens(note) > budget {
		cut := strings.LastIndexByte(strings.TrimRight(s, "\n"), '\n')
		if cut <= 0 {
			return note
		}
		s = s[:cut]
	}
	return s + note
}

// TranscriptTail is what the hooks read from a client's transcript after
// a compaction (meta.transcript): the compaction's summary and the last
// exchanges before it.
type TranscriptTail struct {
	Summary   string     `json:"summary,omitempty"`
	Exchanges []Exchange `json:"exchanges,omitempty"`
}

// Exchange is one message of a transcript: who (user or assistant) and
// its text.
type Exchange struct {
	Role string `json:"role"`
	Text string `json:"text"`
}

// fromHooks fills the parts of p the hooks keep in meta: the asks, the
// last message when context.last_message is not set, the transcript.
func fromHooks(c *ckpt.Checkpoint, p *Prompt) {
	p.Asks = []string{}
	var asks []struct {
		Text string `json:"text"`
	}
	if json.Unmarshal(c.Meta["asks"], &asks) == nil {
		for _, a := range asks {
			if strings.TrimSpace(a.Text) != "" {
				p.Asks = append(p.Asks, a.Text)
			}
		}
	}
	p.LastWords = c.Context.LastMessage
	if p.LastWords == "" {
		var last struct {
			Text string `json:"text"`
		}
		if json.Unmarshal(c.Meta["last_message"], &last) == nil {
			p.LastWords = last.Text
		}
	}
	if pr := c.Heartbeat.Presence; pr != nil && pr.State == ckpt.PresenceBusy && !c.Status.Final() && !strings.HasPrefix(pr.Reason, "compacting") {
		// busy in a tool, a subagent: what a session that died left running
		// (a compaction is the client's, and SessionStart follows it)
		p.LastSeen = string(pr.State)
		if pr.Reason != "" {
			p.LastSeen += " (" + pr.Reason + ")"
		}
		if !pr.Since.IsZero() {
			p.LastSeen += " since " + pr.Since.UTC().Format(time.RFC3339)
		}
	}
	var tr TranscriptTail
	if json.Unmarshal(c.Meta["transcript"], &tr) == nil && (tr.Summary != "" || len(tr.Exchanges) > 0) {
		p.Transcript = &tr
	}
}

// asksToShow are the asks worth a section: all of them unless the only
// one is the goal itself.
func (p Prompt) asksToShow() []string {
	if len(p.Asks) == 1 && strings.TrimSpace(oneLine(p.Asks[0])) == strings.TrimSpace(p.Goal) {
		return nil
	}
	return p.Asks
}

// errorItem renders an open error: its type and first line, then the
// tail of its output, indented under it.
func errorItem(e ckpt.ErrorItem) string {
	lines := strings.Split(strings.ReplaceAll(e.Message, "\r\n", "\n"), "\n")
	head := clip(oneLine(lines[0]), itemMax)
	if t := clip(e.Type, 200); t != "" {
		head = t + ": " + head
	}
	if e.Blocking {
		head += " (blocking)"
	}
	var b strings.Builder
	b.WriteString("- " + blockStart(head))
	size := 0
	for _, l := range lines[1:] {
		l = clip(oneLine(l), 200)
		if l == "" {
			continue
		}
		if size += len(l) + 5; size > 900 {
			break
		}
		b.WriteString("\n    " + blockStart(l))
	}
	return b.String()
}

// afterText names the steps a step waits for: " (after task-1, task-2)".
func afterText(s ckpt.Step) string {
	if len(s.DependsOn) == 0 {
		return ""
	}
	ids := s.DependsOn
	if len(ids) > 5 {
		ids = append(ids[:5:5], fmt.Sprintf("%d more", len(s.DependsOn)-5))
	}
	return " (after " + clip(strings.Join(ids, ", "), 120) + ")"
}

// transcriptText is the transcript's summary and last exchanges as text,
// oldest first, the summary cut to its start.
func (p Prompt) transcriptText() string {
	tr := p.Transcript
	if tr == nil {
		return ""
	}
	var b strings.Builder
	if s := multiLine(tr.Summary, 600); s != "" {
		b.WriteString("Summary: " + s + "\n")
	}
	for _, x := range tr.Exchanges {
		if t := clip(oneLine(x.Text), 300); t != "" {
			b.WriteString("- " + clip(oneLine(x.Role), 20) + ": " + blockStart(t) + "\n")
		}
	}
	return strings.TrimRight(b.String(), "\n")
}
