package claude

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/ckpt-dev/ckpt/internal/atomicfile"
)

// Client is an agent client whose hooks ckpt can install.
type Client string

// The clients ckpt installs hooks for.
const (
	Claude Client = "claude" // Claude Code: .claude/settings.json
	Codex  Client = "codex"  // OpenAI Codex: .codex/hooks.json
	Gemini Client = "gemini" // Gemini CLI: .gemini/settings.json
)

// ParseClient reads a client name: claude (or claude-code), codex, gemini
// (or gemini-cli).
func ParseClient(name string) (Client, error) {
	switch strings.ToLower(strings.TrimSpace(name)) {
	case "claude", "claude-code", "claudecode":
		return Claude, nil
	case "codex", "openai-codex":
		return Codex, nil
	case "gemini", "gemini-cli":
		return Gemini, nil
	}
	return "", fmt.Errorf("unknown client %q: use claude, codex or gemini", name)
}

// Scope is which settings file of a client the hooks go into.
type Scope string

// The scopes. Local exists for Claude Code only.
const (
	ScopeProject Scope = "project" // the project's shared settings, meant to be committed
	ScopeLocal   Scope = "local"   // the project's personal settings (Claude Code's settings.local.json)
	ScopeUser    Scope = "user"    // the user's settings for every project
)

// ParseScope reads a scope name; an empty name is ScopeProject.
func ParseScope(name string) (Scope, error) {
	switch strings.ToLower(strings.TrimSpace(name)) {
	case "", "project":
		return ScopeProject, nil
	case "local":
		return ScopeLocal, nil
	case "user", "global":
		return ScopeUser, nil
	}
	return "", fmt.Errorf("unknown scope %q: use project, local or user", name)
}

// SettingsPath returns the file that holds client's hooks at scope:
//
//	claude  project  <projectDir>/.claude/settings.json
//	claude  local    <projectDir>/.claude/settings.local.json
//	claude  user     <homeDir>/.claude/settings.json
//	codex   project  <projectDir>/.codex/hooks.json
//	codex   user     <homeDir>/.codex/hooks.json
//	gemini  project  <projectDir>/.gemini/settings.json
//	gemini  user     <homeDir>/.gemini/settings.json
//
// Codex and Gemini CLI have no local scope; asking for it is an error.
func SettingsPath(client Client, scope Scope, projectDir, homeDir string) (string, error) {
	dir := map[Client]string{Claude: ".claude", Codex: ".codex", Gemini: ".gemini"}[client]
	if dir == "" {
		return "", fmt.Errorf("unknown client %q: use claude, codex or gemini", client)
	}
	file := "settings.json"
	if client == Codex {
		file = "hooks.json"
	}
	base := projectDir
	switch scope {
	case ScopeProject:
	case ScopeLocal:
		if client != Claude {
			return "", fmt.Errorf("%s has no local settings file: use --scope project or --scope user", client)
		}
		file = "settings.local.json"
	case ScopeUser:
		base = homeDir
	default:
		return "", fmt.Errorf("unknown scope %q: use project, local or user", scope)
	}
	if base == "" {
		if scope == ScopeUser {
			return "", fmt.Errorf("no home directory: cannot find the user settings of %s", client)
		}
		return "", fmt.Errorf("no project directory: cannot find the project settings of %s", client)
	}
	return filepath.Join(base, dir, file), nil
}

// hookSpec is one hook ckpt registers: the event as the client names it and
// the matcher ("" for none).
type hookSpec struct {
	event   string
	matcher string
}

// Matchers of the presence hooks. busyTools are the tools that can run
// long (a shell command, a subagent, the web, an MCP server): PreToolUse
// marks the agent busy in them, PostToolUse and PostToolUseFailure mark it
// working again. Quick tools (Read, Grep, Edit) are left out: a hook
// process per call would cost more than it tells. editTools are the ones
// whose files PostToolUse records (editToolMatcher).
const (
	busyTools         = "Bash|Task|Agent|WebFetch|WebSearch|mcp__.*"
	editToolMatcher   = "Edit|Write|MultiEdit"
	waitNotifications = "permission_prompt|idle_prompt|elicitation_dialog"
	geminiBusyTools   = "run_shell_command|web_fetch|google_web_search"
	geminiEditTools   = "write_file|replace"
	// planTools are the tools with which the clients write their own plan,
	// recorded as steps: Claude Code's TaskCreate, TaskUpdate and (before
	// 2.1) TodoWrite, Codex's update_plan, Gemini CLI's write_todos.
	planTools = "TaskCreate|TaskUpdate|TodoWrite"
)

// hookSpecs lists what ckpt registers for each client, in the order a
// session meets the events. Codex has no SessionEnd, SubagentStart or
// Notification, runs PreToolUse for Bash only, edits files with
// apply_patch and asks for permission through PermissionRequest; Gemini
// CLI has no subagent events, names the events differently and matches
// lifecycle events by exact string, so its SessionStart and Notification
// take every source. (A switch over slices, which are static data, not a
// map literal, which Go builds at every process's start.)
func hookSpecs(c Client) []hookSpec {
	switch c {
	case Claude:
		return claudeHooks
	case Codex:
		return codexHooks
	case Gemini:
		return geminiHooks
	}
	return nil
}

var claudeHooks = []hookSpec{
	{"SessionStart", "startup|resume|clear|compact"},
	{"UserPromptSubmit", ""},
	{"PreToolUse", busyTools},
	{"PostToolUse", editToolMatcher + "|" + planTools + "|" + busyTools},
	{"PostToolUseFailure", busyTools},
	{"SubagentStart", ""},
	{"SubagentStop", ""},
	{"Notification", waitNotifications},
	{"Stop", ""},
	{"StopFailure", ""},
	{"PreCompact", ""},
	{"SessionEnd", ""},
}

var codexHooks = []hookSpec{
	{"SessionStart", "startup|resume|clear|compact"},
	{"UserPromptSubmit", ""},
	{"PreToolUse", "Bash"},
	{"PermissionRequest", ""},
	{"PostToolUse", "apply_patch|Bash|update_plan"},
	{"SubagentStop", ""},
	{"Stop", ""},
	{"PreCompact", ""},
}

var geminiHooks = []hookSpec{
	{"SessionStart", ""},
	{"BeforeAgent", ""},
	{"BeforeTool", geminiBusyTools},
	{"AfterTool", geminiEditTools + "|write_todos|" + geminiBusyTools},
	{"Notification", ""},
	{"AfterAgent", ""},
	{"PreCompress", ""},
	{"SessionEnd", ""},
}

// HookTimeout is the time limit, in seconds, ckpt's hook entries give the
// client: a hook that hangs (a store on a dead network drive) must not hold
// the agent for the clients' default of minutes.
const HookTimeout = 10

// hookCommand is the command registered for one event.
func hookCommand(client Client, command, event string) string {
	c := command + " hook " + event
	if client != Claude {
		c += " --client " + string(client)
	}
	return c
}

// hookGroup is the matcher group ckpt adds for one event.
func hookGroup(client Client, command string, s hookSpec) *node {
	h := newObject()
	if client == Gemini {
		h.set("name", newString("ckpt-"+kebab(s.event)))
	}
	h.set("type", newString("command"))
	h.set("command", newString(hookCommand(client, command, s.event)))
	if client == Gemini {
		h.set("timeout", newNumber(HookTimeout*1000)) // Gemini CLI counts milliseconds
	} else {
		h.set("timeout", newNumber(HookTimeout))
	}
	g := newObject()
	if s.matcher != "" {
		g.set("matcher", newString(s.matcher))
	}
	g.set("hooks", newArray(h))
	return g
}

func kebab(s string) string {
	var b strings.Builder
	for i, r := range s {
		if r >= 'A' && r <= 'Z' {
			if i > 0 {
				b.WriteByte('-')
			}
			r += 'a' - 'A'
		}
		b.WriteRune(r)
	}
	return b.String()
}

// normalizeCommand checks the command that runs ckpt and quotes it when it
// holds white space, so the client's shell sees one word.
func normalizeCommand(command string) (string, error) {
	command = strings.TrimSpace(command)
	if command == "" {
		return "", errors.New("no ckpt command given: pass the path of the ckpt binary, e.g. ckpt")
	}
	if strings.ContainsAny(command, "\n\r\x00") {
		return "", fmt.Errorf("ckpt command %q contains a line break or NUL", command)
	}
	if strings.ContainsAny(command, " \t") && command[0] != '\'' && command[0] != '"' {
		command = "'" + strings.ReplaceAll(command, "'", `'\''`) + "'"
	}
	return command, nil
}

// IsCkptCommand reports whether a hook command is one of ckpt's: its first
// word is a program named ckpt and its second is "hook", or it starts with
// command followed by " hook ". Install and Uninstall recognise their own
// entries this way, whatever path to ckpt installed them.
func IsCkptCommand(hookCmd, command string) bool {
	hookCmd = strings.TrimSpace(hookCmd)
	if command != "" && strings.HasPrefix(hookCmd, command+" hook ") {
		return true
	}
	first, rest := firstWord(hookCmd)
	base := filepath.Base(strings.ReplaceAll(first, `\`, "/"))
	if base != "ckpt" && base != "ckpt.exe" {
		return false
	}
	second, _ := firstWord(rest)
	return second == "hook"
}

// firstWord splits a shell command after its first word, honouring single
// and double quotes around it.
func firstWord(s string) (word, rest string) {
	s = strings.TrimLeft(s, " \t")
	if s == "" {
		return "", ""
	}
	if q := s[0]; q == '\'' || q == '"' {
		if end := strings.IndexByte(s[1:], q); end >= 0 {
			return s[1 : end+1], s[end+2:]
		}
		return s[1:], ""
	}
	if i := strings.IndexAny(s, " \t"); i >= 0 {
		return s[:i], s[i+1:]
	}
	return s, ""
}

// Install adds ckpt's hooks for client to its settings file at scope and
// reports whether the file changed and its path. command is how the client
// should run ckpt (e.g. "ckpt" or an absolute path).
//
// The merge keeps every key and every hook ckpt does not own, in order.
// ckpt's own entries (see IsCkptCommand) are replaced in place, so
// installing twice leaves the file byte for byte as it was (changed is
// false and nothing is written); entries of ckpt's for events it no longer
// registers are removed. The file is written atomically and durably, with
// its old permissions (0644 when new); a symbolic link is followed, not
// replaced. A file that is not valid JSON, or whose "hooks" is not an
// object of lists, is refused with an error and never overwritten.
func Install(client Client, scope Scope, projectDir, homeDir, command string) (changed bool, path string, err error) {
	return apply(client, scope, projectDir, homeDir, command, true)
}

// Uninstall removes ckpt's hooks for client from its settings file at scope
// and reports whether the file changed and its path. ckpt's entries are
// those IsCkptCommand recognises, with command (which may be empty) as the
// command that installed them. Everything else stays as it was, byte for
// byte (formatting included) when the file's own text can be cut, else
// JSON-equal; a matcher group, event list or "hooks" object left empty by
// the removal is removed too, and a file left with nothing at all is
// removed (with its directory, when that is then empty; a file behind a
// symbolic link is kept, as {}). A missing file is not an error and is not
// created.
func Uninstall(client Client, scope Scope, projectDir, homeDir, command string) (changed bool, path string, err error) {
	return apply(client, scope, projectDir, homeDir, command, false)
}

// Print returns the settings file Install would write, without writing it,
// so a user can review it or merge it by hand.
func Print(client Client, scope Scope, projectDir, homeDir, command string) ([]byte, error) {
	path, err := SettingsPath(client, scope, projectDir, homeDir)
	if err != nil {
		return nil, err
	}
	cmd, err := normalizeCommand(command)
	if err != nil {
		return nil, err
	}
	_, doc, _, err := readSettings(path)
	if err != nil {
		return nil, err
	}
	if err := merge(doc, client, cmd, true); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return doc.marshal(), nil
}

func apply(client Client, scope Scope, projectDir, homeDir, command string, install bool) (bool, string, error) {
	path, err := SettingsPath(client, scope, projectDir, homeDir)
	if err != nil {
		return false, "", err
	}
	if install || command != "" {
		if command, err = normalizeCommand(command); err != nil {
			return false, path, err
		}
	}
	target, doc, exists, err := readSettings(path)
	if err != nil {
		return false, path, err
	}
	if !exists && !install {
		return false, path, nil
	}
	before := doc.marshal()
	if err := merge(doc, client, command, install); err != nil {
		return false, path, fmt.Errorf("%s: %w", path, err)
	}
	after := doc.marshal()
	if exists && bytes.Equal(before, after) {
		return false, path, nil
	}
	if !install {
		if len(doc.keys) == 0 && target == path {
			return true, path, removeSettings(target)
		}
		if data, err := os.ReadFile(target); err == nil {
			if cut, ok := uninstallBytes(data, after, command); ok {
				after = cut
			}
		}
	}
	perm := fs.FileMode(0o644)
	if fi, err := os.Stat(target); err == nil {
		perm = fi.Mode().Perm()
	}
	if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
		return false, path, fmt.Errorf("creating the directory of %s: %w", path, err)
	}
	if err := atomicfile.WriteFile(target, after, perm); err != nil {
		return false, path, fmt.Errorf("writing %s: %w", path, err)
	}
	return true, path, nil
}

// removeSettings removes a settings file that held nothing but ckpt's
// hooks, and its directory when that is left empty (.claude/ made by
// install): uninstalling leaves no "{}" behind. A file reached through a
// symbolic link is someone's own (dotfiles): it is emptied, never removed.
func removeSettings(path string) error {
	if err := os.Remove(path); err != nil {
		return fmt.Errorf("removing %s: %w", path, err)
	}
	_ = os.Remove(filepath.Dir(path)) // only if empty
	return nil
}

// readSettings reads and parses a settings file. It returns the file to
// write (path, or where its symbolic link points), the document (an empty
// object when the file is missing or blank), and whether the file exists.
func readSettings(path string) (target string, doc *node, exists bool, err error) {
	target = path
	if resolved, err := filepath.EvalSymlinks(path); err == nil {
		target = resolved
	}
	data, err := os.ReadFile(target)
	if errors.Is(err, fs.ErrNotExist) {
		return target, newObject(), false, nil
	}
	if err != nil {
		return target, nil, false, fmt.Errorf("reading %s: %w", path, err)
	}
	data = bytes.TrimPrefix(data, []byte("\ufeff"))
	if len(bytes.TrimSpace(data)) == 0 {
		return target, newObject(), true, nil
	}
	doc, err = parseDoc(data)
	if err != nil {
		return target, nil, true, fmt.Errorf("%s is not valid JSON (%v); ckpt will not overwrite a settings file it cannot read: fix the file (or merge the output of --print by hand) and run the command again", path, err)
	}
	if doc.kind != '{' {
		return target, nil, true, fmt.Errorf("%s is not a JSON object; ckpt will not overwrite it: fix the file and run the command again", path)
	}
	return target, doc, true, nil
}

// merge removes ckpt's entries from every event of doc's "hooks" and, when
// install is set, puts the current ones in: in place of the first group
// that held only ckpt's entries, else at the end of the event's list.
func merge(doc *node, client Client, command string, install bool) error {
	hooks := doc.get("hooks")
	if hooks == nil {
		if !install {
			return nil
		}
		hooks = newObject()
		doc.set("hooks", hooks)
	}
	if hooks.kind != '{' {
		return fmt.Errorf(`"hooks" is not an object; fix it by hand and run the command again`)
	}
	want := map[string]*node{}
	var order []string
	if install {
		for _, s := range hookSpecs(client) {
			want[s.event] = hookGroup(client, command, s)
			order = append(order, s.event)
		}
	}
	ours := func(h *node) bool {
		if h == nil || h.kind != '{' {
			return false
		}
		if t, ok := h.get("type").str(); ok && t != "command" {
			return false
		}
		c, ok := h.get("command").str()
		return ok && IsCkptCommand(c, command)
	}
	removed := false
	for i := 0; i < len(hooks.keys); i++ {
		event, list := hooks.keys[i], hooks.vals[i]
		if list.kind != '[' {
			if _, ok := want[event]; ok {
				return fmt.Errorf(`"hooks.%s" is not a list; fix it by hand and run the command again`, event)
			}
			continue
		}
		placed, stripped := rewriteList(list, want[event], ours)
		removed = removed || stripped
		if want[event] != nil && !placed {
			list.items = append(list.items, want[event])
		}
		delete(want, event)
		if stripped && len(list.items) == 0 {
			hooks.keys = append(hooks.keys[:i], hooks.keys[i+1:]...)
			hooks.vals = append(hooks.vals[:i], hooks.vals[i+1:]...)
			i--
		}
	}
	for _, event := range order {
		if g := want[event]; g != nil {
			hooks.set(event, newArray(g))
		}
	}
	if !install && removed && len(hooks.keys) == 0 {
		doc.del("hooks")
	}
	return nil
}

// rewriteList strips ckpt's entries from one event's list of matcher
// groups. A group that held only ckpt's entries is replaced by want (the
// first such group) or dropped; a group that also held others keeps them.
// It reports whether want was placed and whether anything was removed.
func rewriteList(list *node, want *node, ours func(*node) bool) (placed, removed bool) {
	out := list.items[:0:0]
	for _, g := range list.items {
		hs := g.get("hooks")
		if g.kind != '{' || hs == nil || hs.kind != '[' {
			out = append(out, g)
			continue
		}
		var keep []*node
		for _, h := range hs.items {
			if !ours(h) {
				keep = append(keep, h)
			}
		}
		switch {
		case len(keep) == len(hs.items):
			out = append(out, g)
		case len(keep) > 0:
			hs.items = keep
			removed = true
			out = append(out, g)
		default:
			removed = true
			if want != nil && !placed {
				out = append(out, want)
				placed = true
			}
		}
	}
	list.items = out
	return placed, removed
}
