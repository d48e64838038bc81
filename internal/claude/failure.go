package claude

import (
	"encoding/json"
	"errors"
	"strconv"
	"strings"

	"github.com/ckpt-dev/ckpt"
	"github.com/ckpt-dev/ckpt/internal/lazyregexp"
	"github.com/ckpt-dev/ckpt/internal/request"
)

// Bounds of a recorded failure: the command's first line and the tail of
// its output.
const (
	failCommandMax = 200
	failTailLines  = 20
	failTailMax    = 1500
)

// shellTool reports whether a tool runs a command, by normalised name:
// Claude Code's and Codex's Bash, Codex's exec_command and shell, Gemini
// CLI's run_shell_command. (Switches, not map literals, here and in this
// package's other sets: a map literal is built at every process's start.)
func shellTool(name string) bool {
	switch name {
	case "bash", "shell", "execcommand", "runshellcommand", "localshell":
		return true
	}
	return false
}

// toolFailure is what went wrong in a tool call: the error's kind (the
// command's first line, or the tool's name) and a bounded tail of its
// output.
type toolFailure struct {
	Type    string
	Message string
}

// command returns the first line of a shell tool call's command, "" for
// any other tool. Codex may send the command as an argument list.
func (in Input) command() string {
	if !shellTool(normTool(in.ToolName)) {
		return ""
	}
	args, _ := objectMembers(in.ToolInput)
	raw := args.raw("command")
	cmd := lenientString(raw)
	if cmd == "" {
		if parts := idList(raw); len(parts) > 0 {
			// ["bash", "-lc", "go test ./..."]: the script is the last
			cmd = parts[len(parts)-1]
		}
	}
	return firstLine(Redact(cmd), failCommandMax)
}

// errorTypeOf is the type a failure of this call, whose command() is cmd,
// is recorded under, and the one a later success of the same command
// clears.
func (in Input) errorTypeOf(cmd string) string {
	if cmd != "" {
		return "command: " + cmd
	}
	return "tool: " + orDash(in.ToolName)
}

// exitCodeLine is compiled on first use: most hook events never read a
// shell call's output.
var exitCodeLine = lazyregexp.New(`(?im)^\s*(?:exit code|exit status|exited with code)[:\s]+(-?\d+)`)

// findExitCodeLine is exitCodeLine's first match in s, nil for none. Each
// of the pattern's phrases starts with "exit", whose letters fold only to
// their ASCII capitals, so text without it is not searched: a shell
// call's usual output (Claude Code's stdout and stderr) costs no pattern.
func findExitCodeLine(s string) []string {
	if !strings.Contains(strings.ToLower(s), "exit") {
		return nil
	}
	return exitCodeLine.Get().FindStringSubmatch(s)
}

// exitCode finds a shell call's exit code in its response: a number
// member (exit_code, exitCode, returncode), or a line "Exit code: N"
// (Codex's text response, Gemini CLI's llmContent). ok is false when the
// response says nothing about one.
func exitCode(resp json.RawMessage) (code int, ok bool) {
	if ms, isObj := objectMembers(resp); isObj {
		for _, k := range []string{"exit_code", "exitCode", "returncode", "return_code"} {
			if n, err := strconv.Atoi(lenientString(ms.raw(k))); err == nil {
				return n, true
			}
		}
		for _, k := range []string{"llmContent", "output", "stdout", "returnDisplay"} {
			if code, ok := exitCode(ms.raw(k)); ok {
				return code, true
			}
		}
		return 0, false
	}
	m := findExitCodeLine(lenientString(resp))
	if m == nil {
		return 0, false
	}
	n, err := strconv.Atoi(m[1])
	return n, err == nil
}

// responseText is a tool response as text: a string as it is, an object's
// stderr, stdout, output, llmContent or error members joined.
func responseText(resp json.RawMessage) string {
	if s := lenientString(resp); s != "" {
		return s
	}
	ms, ok := objectMembers(resp)
	if !ok {
		return ""
	}
	var parts []string
	for _, k := range []string{"stdout", "stderr", "output", "llmContent", "error", "message"} {
		raw := ms.raw(k)
		if s := lenientString(raw); strings.TrimSpace(s) != "" {
			parts = append(parts, s)
		} else if sub, ok := objectMembers(raw); ok {
			if m := lenientString(sub.raw("message")); m != "" {
				parts = append(parts, m)
			}
		}
	}
	return strings.Join(parts, "\n")
}

// failure reads what went wrong in this tool call: a PostToolUseFailure
// (failed is set), or a PostToolUse of a shell command whose exit code is
// not 0. nil when nothing failed.
func (in Input) failure(failed bool) *toolFailure { return in.failureOf(failed, in.command()) }

// failureOf is failure for a call whose command() is cmd: the PostToolUse
// hook finds the command once.
func (in Input) failureOf(failed bool, cmd string) *toolFailure {
	text := ""
	if failed {
		text = in.Error
		if strings.TrimSpace(text) == "" {
			text = responseText(in.ToolResponse)
		}
	} else {
		if cmd == "" {
			return nil
		}
		code, ok := exitCode(in.ToolResponse)
		if !ok || code == 0 {
			return nil
		}
		text = responseText(in.ToolResponse)
		if !exitCodeLine.Get().MatchString(text) {
			text = "Exit code " + strconv.Itoa(code) + "\n" + text
		}
	}
	msg := outputTail(Redact(text))
	if msg == "" {
		msg = "failed"
	}
	return &toolFailure{Type: in.errorTypeOf(cmd), Message: msg}
}

// outputTail keeps the end of a command's output, where test runners and
// compilers say what failed: its last failTailLines non-blank lines, at
// most failTailMax bytes, cut at a line start; an exit-code line from
// earlier is kept first.
func outputTail(s string) string {
	s = strings.ReplaceAll(s, "\r\n", "\n")
	var lines []string
	for _, l := range strings.Split(s, "\n") {
		if l = strings.TrimRight(l, " \t\r"); strings.TrimSpace(l) != "" {
			lines = append(lines, l)
		}
	}
	head := ""
	if len(lines) > failTailLines && exitCodeLine.Get().MatchString(lines[0]) {
		head, lines = strings.TrimSpace(lines[0])+"\n…\n", lines[1:]
	}
	if len(lines) > failTailLines {
		lines = lines[len(lines)-failTailLines:]
	}
	out := strings.Join(lines, "\n")
	for len(out) > failTailMax {
		i := strings.IndexByte(out, '\n')
		if i < 0 {
			out = string([]rune(out)[len([]rune(out))-failTailMax/4:])
			break
		}
		out = out[i+1:]
	}
	return head + out
}

// recordFailure records f as an error of the checkpoint whose errors not
// yet cleared are open, unless the same failure is one of them.
func (c *hookCall) recordFailure(open []ckpt.ErrorItem, f *toolFailure) {
	for _, e := range open {
		if e.Type == f.Type && e.Message == f.Message {
			return
		}
	}
	if _, err := c.append(request.Error{Type: f.Type, Message: f.Message}, c.toolKey("fail")); err != nil {
		c.warn("%s: recording the failure: %v", c.id, err)
	}
}

// clearFailure clears the open error of type typ, if there is one: the
// shell command whose failure left it has now succeeded.
func (c *hookCall) clearFailure(open []ckpt.ErrorItem, typ string) {
	for _, e := range open {
		if e.Type == typ {
			if _, err := c.append(request.Error{Type: typ, Clear: true}, c.toolKey("ok")); err != nil {
				c.warn("%s: clearing the failure of %s: %v", c.id, typ, err)
			}
			return
		}
	}
}

// toolKey is the idempotency key of an event this tool call writes.
func (c *hookCall) toolKey(what string) string {
	if c.in.ToolUseID == "" {
		return ""
	}
	return "hook:" + what + ":" + c.in.ToolUseID
}

// shellDone handles the PostToolUse of shell command cmd: a failure (exit
// code not 0) is recorded, creating the checkpoint if need be; a success
// clears the same command's open failure. A success on a session without a
// checkpoint creates none.
func (c *hookCall) shellDone(cmd string) {
	f := c.in.failureOf(false, cmd)
	open, err := c.openErrors(f != nil)
	switch {
	case errors.Is(err, ckpt.ErrNotFound):
		return
	case err != nil:
		c.warn("%s: %v", c.id, err)
		return
	}
	if f != nil {
		c.recordFailure(open, f)
	} else {
		c.clearFailure(open, c.in.errorTypeOf(cmd))
	}
	c.signal(ckpt.PresenceWorking, "")
}

// openErrors returns the checkpoint's errors not yet cleared, reading only
// them (ckpt.OpenErrors), not the whole state: a shell command is the most
// common tool call, and it rarely leaves anything to clear. With create, a
// missing checkpoint is created first (see get).
func (c *hookCall) openErrors(create bool) ([]ckpt.ErrorItem, error) {
	open, err := ckpt.OpenErrors(c.ctx, c.h.Store, c.id)
	if create && errors.Is(err, ckpt.ErrNotFound) {
		var cp *ckpt.Checkpoint
		if cp, _, err = c.get(true); err != nil {
			return nil, err
		}
		return cp.ActiveErrors(), nil
	}
	return open, err
}

// toolFailed records a PostToolUseFailure as an open error.
func (c *hookCall) toolFailed() {
	open, err := c.openErrors(true)
	if err != nil {
		c.warn("%s: %v", c.id, err)
		return
	}
	c.recordFailure(open, c.in.failure(true))
	c.signal(ckpt.PresenceWorking, "")
}
