package claude

import (
	"bytes"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// userSettings is a Claude Code settings file a user already has: keys and
// hooks ckpt does not own, in an order ckpt must keep.
const userSettings = `{
  "model": "opus",
  "permissions": {"allow": ["Bash(go test:*)"], "deny": []},
  "env": {"FOO": "1", "N": 1.50},
  "hooks": {
    "PostToolUse": [
      {"matcher": "Write|Edit", "hooks": [{"type": "command", "command": "gofmt -w \"$CLAUDE_PROJECT_DIR\"", "timeout": 30}]}
    ],
    "Stop": [
      {"hooks": [{"type": "command", "command": "notify-send done"}]}
    ],
    "PreToolUse": [
      {"matcher": "Bash", "hooks": [{"type": "command", "command": "./guard.sh"}]}
    ]
  },
  "statusLine": {"type": "command", "command": "echo hi"}
}
`

func decodeFile(t *testing.T, path string) any {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return decodeJSON(t, data)
}

func decodeJSON(t *testing.T, data []byte) any {
	t.Helper()
	var v any
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if err := dec.Decode(&v); err != nil {
		t.Fatalf("decoding %s: %v", data, err)
	}
	return v
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func ckptHook(cmd string) map[string]any {
	return map[string]any{"type": "command", "command": cmd, "timeout": json.Number("10")}
}

func TestInstallMergesIntoExistingClaudeSettings(t *testing.T) {
	project := t.TempDir()
	path := filepath.Join(project, ".claude", "settings.json")
	writeFile(t, path, userSettings)
	original := decodeFile(t, path)

	changed, got, err := Install(Claude, ScopeProject, project, "", "ckpt")
	if err != nil || !changed || got != path {
		t.Fatalf("Install = %v, %q, %v; want true, %q, nil", changed, got, err, path)
	}

	want := decodeJSON(t, []byte(userSettings)).(map[string]any)
	hooks := want["hooks"].(map[string]any)
	hooks["PostToolUse"] = append(hooks["PostToolUse"].([]any), map[string]any{"matcher": "Edit|Write|MultiEdit|" + planTools + "|" + busyTools, "hooks": []any{ckptHook("ckpt hook PostToolUse")}})
	hooks["PreToolUse"] = append(hooks["PreToolUse"].([]any), map[string]any{"matcher": busyTools, "hooks": []any{ckptHook("ckpt hook PreToolUse")}})
	hooks["PostToolUseFailure"] = []any{map[string]any{"matcher": busyTools, "hooks": []any{ckptHook("ckpt hook PostToolUseFailure")}}}
	hooks["Notification"] = []any{map[string]any{"matcher": "permission_prompt|idle_prompt|elicitation_dialog", "hooks": []any{ckptHook("ckpt hook Notification")}}}
	hooks["Stop"] = append(hooks["Stop"].([]any), map[string]any{"hooks": []any{ckptHook("ckpt hook Stop")}})
	hooks["SessionStart"] = []any{map[string]any{"matcher": "startup|resume|clear|compact", "hooks": []any{ckptHook("ckpt hook SessionStart")}}}
	for _, ev := range []string{"UserPromptSubmit", "SubagentStart", "SubagentStop", "StopFailure", "PreCompact", "SessionEnd"} {
		hooks[ev] = []any{map[string]any{"hooks": []any{ckptHook("ckpt hook " + ev)}}}
	}
	if d := cmp.Diff(any(want), decodeFile(t, path)); d != "" {
		t.Fatalf("settings after install (-want +got):\n%s", d)
	}

	// The user's keys keep their order.
	data, _ := os.ReadFile(path)
	order := []string{`"model"`, `"permissions"`, `"env"`, `"hooks"`, `"statusLine"`}
	last := -1
	for _, k := range order {
		i := bytes.Index(data, []byte(k))
		if i < last {
			t.Errorf("key %s moved: file is\n%s", k, data)
		}
		last = i
	}

	// Installing again changes nothing, byte for byte.
	changed, _, err = Install(Claude, ScopeProject, project, "", "ckpt")
	if err != nil || changed {
		t.Fatalf("second Install = %v, %v; want false, nil", changed, err)
	}
	again, _ := os.ReadFile(path)
	if !bytes.Equal(data, again) {
		t.Fatalf("second install rewrote the file:\n%s\nthen\n%s", data, again)
	}

	// Uninstalling restores the user's settings.
	changed, _, err = Uninstall(Claude, ScopeProject, project, "", "")
	if err != nil || !changed {
		t.Fatalf("Uninstall = %v, %v; want true, nil", changed, err)
	}
	if d := cmp.Diff(original, decodeFile(t, path)); d != "" {
		t.Fatalf("settings after uninstall (-original +got):\n%s", d)
	}
	changed, _, err = Uninstall(Claude, ScopeProject, project, "", "")
	if err != nil || changed {
		t.Fatalf("second Uninstall = %v, %v; want false, nil", changed, err)
	}
}

func TestInstallAndUninstallWithARealPluginsHooks(t *testing.T) {
	// A real plugin's hook registration (shared/fixtures/real/001-ccc).
	fixture, err := os.ReadFile("testdata/ccc.hooks.json")
	if err != nil {
		t.Fatal(err)
	}
	project := t.TempDir()
	path := filepath.Join(project, ".claude", "settings.local.json")
	writeFile(t, path, string(fixture))
	if _, _, err := Install(Claude, ScopeLocal, project, "", "ckpt"); err != nil {
		t.Fatal(err)
	}
	doc := decodeFile(t, path).(map[string]any)["hooks"].(map[string]any)
	if n := len(doc["Stop"].([]any)); n != 4 {
		t.Errorf("Stop has %d groups, want the plugin's 3 and ckpt's", n)
	}
	if _, _, err := Uninstall(Claude, ScopeLocal, project, "", ""); err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(decodeJSON(t, fixture), decodeFile(t, path)); d != "" {
		t.Fatalf("after install and uninstall (-fixture +got):\n%s", d)
	}
}

func TestInstallCreatesAMissingFile(t *testing.T) {
	home := t.TempDir()
	changed, path, err := Install(Claude, ScopeUser, "", home, "ckpt")
	if err != nil || !changed || path != filepath.Join(home, ".claude", "settings.json") {
		t.Fatalf("Install = %v, %q, %v", changed, path, err)
	}
	want := `{
  "hooks": {
    "SessionStart": [
      {
        "matcher": "startup|resume|clear|compact",
        "hooks": [
          {
            "type": "command",
            "command": "ckpt hook SessionStart",
            "timeout": 10
          }
        ]
      }
    ],
`
	data, _ := os.ReadFile(path)
	if !strings.HasPrefix(string(data), want) {
		t.Errorf("new file starts\n%s\nwant\n%s", data[:min(len(data), len(want))], want)
	}
	if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o644 {
		t.Errorf("new file mode %v, want 0644", fi.Mode().Perm())
	}
	if _, _, err := Uninstall(Claude, ScopeUser, "", home, ""); err != nil {
		t.Fatal(err)
	}
	// The file held only ckpt's hooks: uninstall leaves no "{}" behind,
	// and no empty .claude directory either.
	if _, err := os.Stat(filepath.Dir(path)); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("after uninstall %s is still there (%v)", filepath.Dir(path), err)
	}
}

// TestUninstallKeepsTheFilesOwnBytes: uninstall cuts ckpt's entries out of
// the file as it is, so the rest keeps its formatting byte for byte (four
// spaces, tabs, escapes, odd spacing), and a group that also held the
// user's hook keeps it.
func TestUninstallKeepsTheFilesOwnBytes(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, ".claude", "settings.json")
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	before := "{\n" +
		"    \"model\" :  \"opus\",\n" +
		"    \"hooks\": {\n" +
		"        \"SessionStart\": [ { \"hooks\": [ {\"type\": \"command\", \"command\": \"ckpt hook SessionStart\"} ] } ],\n" +
		"\t\"Stop\": [\n" +
		"            {\"hooks\": [{\"type\": \"command\", \"command\": \"./lint.sh \\u00e9\"}, {\"type\": \"command\", \"command\": \"/opt/ckpt hook Stop\"}]},\n" +
		"            {\"hooks\": [{\"type\": \"command\", \"command\": \"ckpt hook Stop\", \"timeout\": 10}]}\n" +
		"        ]\n" +
		"    },\n" +
		"    \"env\": {\"A\": \"1\"}\n" +
		"}\n"
	want := "{\n" +
		"    \"model\" :  \"opus\",\n" +
		"    \"hooks\": {\n" +
		"        \"Stop\": [\n" +
		"            {\"hooks\": [{\"type\": \"command\", \"command\": \"./lint.sh \\u00e9\"}]}\n" +
		"        ]\n" +
		"    },\n" +
		"    \"env\": {\"A\": \"1\"}\n" +
		"}\n"
	if err := os.WriteFile(path, []byte(before), 0o644); err != nil {
		t.Fatal(err)
	}
	changed, _, err := Uninstall(Claude, ScopeProject, dir, "", "")
	if err != nil || !changed {
		t.Fatalf("Uninstall: changed %v, %v", changed, err)
	}
	got, _ := os.ReadFile(path)
	if string(got) != want {
		t.Errorf("after uninstall:\n%s\nwant:\n%s", got, want)
	}

	// Only ckpt's hooks and nothing else: the "hooks" member goes, the
	// user's keys stay as written.
	only := "{\"hooks\": {\"Stop\": [{\"hooks\": [{\"type\": \"command\", \"command\": \"ckpt hook Stop\"}]}]}, \"model\": \"opus\"}\n"
	if err := os.WriteFile(path, []byte(only), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, _, err := Uninstall(Claude, ScopeProject, dir, "", ""); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(path); string(got) != "{\"model\": \"opus\"}\n" {
		t.Errorf("after uninstall: %q", got)
	}
}

func TestInstallRefusesInvalidSettings(t *testing.T) {
	for name, content := range map[string]string{
		"syntax error":      "{\n  \"model\": \"opus\",\n  \"hooks\": {\n}\n",
		"trailing comma":    `{"model": "opus",}`,
		"comment":           "// my settings\n{\"model\": \"opus\"}",
		"two values":        `{} {}`,
		"not an object":     `["hooks"]`,
		"hooks not object":  `{"hooks": []}`,
		"event not a list":  `{"hooks": {"Stop": {"hooks": []}}}`,
		"unclosed":          `{"hooks": {"Stop": [`,
		"nested too deeply": strings.Repeat("[", 2000) + strings.Repeat("]", 2000),
	} {
		t.Run(name, func(t *testing.T) {
			project := t.TempDir()
			path := filepath.Join(project, ".claude", "settings.json")
			writeFile(t, path, content)
			_, _, err := Install(Claude, ScopeProject, project, "", "ckpt")
			if err == nil || !strings.Contains(err.Error(), path) {
				t.Fatalf("Install: err = %v, want an error naming %s", err, path)
			}
			if changed, _, err := Uninstall(Claude, ScopeProject, project, "", ""); err == nil && changed {
				t.Error("Uninstall changed an invalid file")
			}
			if _, err := Print(Claude, ScopeProject, project, "", "ckpt"); err == nil {
				t.Error("Print of an invalid file succeeded")
			}
			data, _ := os.ReadFile(path)
			if string(data) != content {
				t.Errorf("the invalid file was changed to\n%s", data)
			}
		})
	}
	t.Run("line and column", func(t *testing.T) {
		project := t.TempDir()
		writeFile(t, filepath.Join(project, ".claude", "settings.json"), "{\n  \"a\": 1,\n  \"b\": x\n}")
		_, _, err := Install(Claude, ScopeProject, project, "", "ckpt")
		if err == nil || !strings.Contains(err.Error(), "line 3") {
			t.Errorf("err = %v, want it to point at line 3", err)
		}
	})
}

func TestInstallReplacesCkptEntriesWhateverPathInstalledThem(t *testing.T) {
	project := t.TempDir()
	path := filepath.Join(project, ".claude", "settings.json")
	writeFile(t, path, `{"hooks": {
  "Stop": [
    {"hooks": [{"type": "command", "command": "notify-send done"}, {"type": "command", "command": "/opt/old/ckpt hook Stop"}]},
    {"hooks": [{"type": "command", "command": "/opt/old/ckpt hook Stop"}]},
    {"hooks": [{"type": "command", "command": "make lint"}]}
  ],
  "PostCompact": [{"hooks": [{"type": "command", "command": "ckpt hook PostCompact"}]}],
  "PreToolUse": [{"hooks": [{"type": "command", "command": "ckpt-lint hook"}, {"type": "prompt", "prompt": "ckpt hook Stop"}]}]
}}`)
	if _, _, err := Install(Claude, ScopeProject, project, "", "/usr/local/bin/ckpt"); err != nil {
		t.Fatal(err)
	}
	hooks := decodeFile(t, path).(map[string]any)["hooks"].(map[string]any)
	wantStop := []any{
		map[string]any{"hooks": []any{map[string]any{"type": "command", "command": "notify-send done"}}},
		map[string]any{"hooks": []any{ckptHook("/usr/local/bin/ckpt hook Stop")}},
		map[string]any{"hooks": []any{map[string]any{"type": "command", "command": "make lint"}}},
	}
	if d := cmp.Diff(any(wantStop), hooks["Stop"]); d != "" {
		t.Errorf("Stop (-want +got):\n%s", d)
	}
	if _, ok := hooks["PostCompact"]; ok {
		t.Error("ckpt's entry for an event it no longer registers was kept")
	}
	if d := cmp.Diff(any([]any{map[string]any{"hooks": []any{
		map[string]any{"type": "command", "command": "ckpt-lint hook"},
		map[string]any{"type": "prompt", "prompt": "ckpt hook Stop"},
	}}, map[string]any{"matcher": busyTools, "hooks": []any{ckptHook("/usr/local/bin/ckpt hook PreToolUse")}}}), hooks["PreToolUse"]); d != "" {
		t.Errorf("hooks that only look like ckpt's were touched (-want +got):\n%s", d)
	}
}

func TestInstallForCodexAndGemini(t *testing.T) {
	project := t.TempDir()
	_, path, err := Install(Codex, ScopeProject, project, "", "ckpt")
	if err != nil || path != filepath.Join(project, ".codex", "hooks.json") {
		t.Fatalf("Install(Codex) = %q, %v", path, err)
	}
	codex := decodeFile(t, path).(map[string]any)["hooks"].(map[string]any)
	wantCodex := map[string]any{
		"SessionStart":      []any{map[string]any{"matcher": "startup|resume|clear|compact", "hooks": []any{ckptHook("ckpt hook SessionStart --client codex")}}},
		"UserPromptSubmit":  []any{map[string]any{"hooks": []any{ckptHook("ckpt hook UserPromptSubmit --client codex")}}},
		"PreToolUse":        []any{map[string]any{"matcher": "Bash", "hooks": []any{ckptHook("ckpt hook PreToolUse --client codex")}}},
		"PermissionRequest": []any{map[string]any{"hooks": []any{ckptHook("ckpt hook PermissionRequest --client codex")}}},
		"PostToolUse":       []any{map[string]any{"matcher": "apply_patch|Bash|update_plan", "hooks": []any{ckptHook("ckpt hook PostToolUse --client codex")}}},
		"SubagentStop":      []any{map[string]any{"hooks": []any{ckptHook("ckpt hook SubagentStop --client codex")}}},
		"Stop":              []any{map[string]any{"hooks": []any{ckptHook("ckpt hook Stop --client codex")}}},
		"PreCompact":        []any{map[string]any{"hooks": []any{ckptHook("ckpt hook PreCompact --client codex")}}},
	}
	if d := cmp.Diff(any(wantCodex), any(codex)); d != "" {
		t.Errorf("Codex hooks (-want +got):\n%s", d)
	}

	gpath := filepath.Join(project, ".gemini", "settings.json")
	writeFile(t, gpath, `{"general": {"vimMode": true}, "hooks": {"disabled": ["secret-scanner"], "BeforeTool": [{"matcher": "run_shell_command", "hooks": [{"name": "guard", "type": "command", "command": "./guard.sh"}]}]}}`)
	if _, _, err := Install(Gemini, ScopeProject, project, "", "ckpt"); err != nil {
		t.Fatal(err)
	}
	gemini := decodeFile(t, gpath).(map[string]any)
	ghook := func(name, ev string) map[string]any {
		return map[string]any{"name": name, "type": "command", "command": "ckpt hook " + ev + " --client gemini", "timeout": json.Number("10000")}
	}
	wantGemini := map[string]any{
		"general": map[string]any{"vimMode": true},
		"hooks": map[string]any{
			"disabled": []any{"secret-scanner"},
			"BeforeTool": []any{
				map[string]any{"matcher": "run_shell_command", "hooks": []any{map[string]any{"name": "guard", "type": "command", "command": "./guard.sh"}}},
				map[string]any{"matcher": "run_shell_command|web_fetch|google_web_search", "hooks": []any{ghook("ckpt-before-tool", "BeforeTool")}},
			},
			"Notification": []any{map[string]any{"hooks": []any{ghook("ckpt-notification", "Notification")}}},
			"SessionStart": []any{map[string]any{"hooks": []any{ghook("ckpt-session-start", "SessionStart")}}},
			"BeforeAgent":  []any{map[string]any{"hooks": []any{ghook("ckpt-before-agent", "BeforeAgent")}}},
			"AfterTool":    []any{map[string]any{"matcher": "write_file|replace|write_todos|run_shell_command|web_fetch|google_web_search", "hooks": []any{ghook("ckpt-after-tool", "AfterTool")}}},
			"AfterAgent":   []any{map[string]any{"hooks": []any{ghook("ckpt-after-agent", "AfterAgent")}}},
			"PreCompress":  []any{map[string]any{"hooks": []any{ghook("ckpt-pre-compress", "PreCompress")}}},
			"SessionEnd":   []any{map[string]any{"hooks": []any{ghook("ckpt-session-end", "SessionEnd")}}},
		},
	}
	if d := cmp.Diff(any(wantGemini), any(gemini)); d != "" {
		t.Errorf("Gemini settings (-want +got):\n%s", d)
	}
	if _, _, err := Uninstall(Gemini, ScopeProject, project, "", ""); err != nil {
		t.Fatal(err)
	}
	left := decodeFile(t, gpath).(map[string]any)["hooks"].(map[string]any)
	if len(left) != 2 {
		t.Errorf("after uninstall Gemini hooks are %v, want only the user's two keys", left)
	}

	for _, c := range []Client{Codex, Gemini} {
		if _, _, err := Install(c, ScopeLocal, project, "", "ckpt"); err == nil || !strings.Contains(err.Error(), "no local settings") {
			t.Errorf("Install(%s, local): err = %v, want a no-local-scope error", c, err)
		}
	}
}

func TestInstallFollowsASymlinkAndKeepsPermissions(t *testing.T) {
	project, dotfiles := t.TempDir(), t.TempDir()
	real := filepath.Join(dotfiles, "claude-settings.json")
	writeFile(t, real, `{"model": "opus"}`)
	if err := os.Chmod(real, 0o600); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(project, ".claude", "settings.json")
	if err := os.MkdirAll(filepath.Dir(link), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(real, link); err != nil {
		t.Fatal(err)
	}
	if _, _, err := Install(Claude, ScopeProject, project, "", "ckpt"); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Lstat(link); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Fatalf("the symlink was replaced: %v %v", fi, err)
	}
	if fi, _ := os.Stat(real); fi.Mode().Perm() != 0o600 {
		t.Errorf("mode %v, want 0600 kept", fi.Mode().Perm())
	}
	if _, ok := decodeFile(t, real).(map[string]any)["hooks"]; !ok {
		t.Error("the link's target did not get the hooks")
	}
	// Uninstalling from a file that then holds nothing keeps the link and
	// its target (someone's dotfiles), emptied.
	writeFile(t, real, `{"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "ckpt hook Stop"}]}]}}`)
	if _, _, err := Uninstall(Claude, ScopeProject, project, "", ""); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Lstat(link); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Fatalf("uninstall removed the symlink: %v %v", fi, err)
	}
	if d := cmp.Diff(any(map[string]any{}), decodeFile(t, real)); d != "" {
		t.Errorf("the link's target after uninstall (-want +got):\n%s", d)
	}
}

func TestPrintShowsWhatInstallWritesWithoutWriting(t *testing.T) {
	project := t.TempDir()
	path := filepath.Join(project, ".claude", "settings.json")
	writeFile(t, path, userSettings)
	printed, err := Print(Claude, ScopeProject, project, "", "ckpt")
	if err != nil {
		t.Fatal(err)
	}
	if data, _ := os.ReadFile(path); string(data) != userSettings {
		t.Fatal("Print wrote the file")
	}
	if _, _, err := Install(Claude, ScopeProject, project, "", "ckpt"); err != nil {
		t.Fatal(err)
	}
	if data, _ := os.ReadFile(path); !bytes.Equal(data, printed) {
		t.Errorf("Print showed\n%s\nInstall wrote\n%s", printed, data)
	}
	if _, err := os.Stat(filepath.Join(project, ".codex")); !os.IsNotExist(err) {
		t.Error("Print created a directory")
	}
}

func TestUninstallOfAMissingFileCreatesNothing(t *testing.T) {
	project := t.TempDir()
	changed, _, err := Uninstall(Claude, ScopeProject, project, "", "")
	if err != nil || changed {
		t.Fatalf("Uninstall = %v, %v", changed, err)
	}
	if _, err := os.Stat(filepath.Join(project, ".claude")); !os.IsNotExist(err) {
		t.Error("Uninstall created the settings directory")
	}
}

func TestInstallQuotesACommandWithSpaces(t *testing.T) {
	project := t.TempDir()
	if _, _, err := Install(Claude, ScopeProject, project, "", "/Applications/My Tools/ckpt"); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(filepath.Join(project, ".claude", "settings.json"))
	if !strings.Contains(string(data), `"'/Applications/My Tools/ckpt' hook Stop"`) {
		t.Errorf("command not quoted:\n%s", data)
	}
	changed, _, err := Install(Claude, ScopeProject, project, "", "/Applications/My Tools/ckpt")
	if err != nil || changed {
		t.Errorf("second install = %v, %v; want no change", changed, err)
	}
	for _, bad := range []string{"", "  ", "ckpt\nrm -rf /"} {
		if _, _, err := Install(Claude, ScopeProject, project, "", bad); err == nil {
			t.Errorf("Install with command %q succeeded", bad)
		}
	}
}

func TestIsCkptCommand(t *testing.T) {
	for cmd, want := range map[string]bool{
		"ckpt hook Stop":                        true,
		"/usr/local/bin/ckpt hook SessionStart": true,
		"'/My Tools/ckpt' hook Stop":            true,
		`"C:\Tools\ckpt.exe" hook Stop`:         true,
		"ckpt hook Stop --client codex":         true,
		"go run ./cmd/ckpt hook Stop":           true, // installed with that command
		"ckpt show x":                           false,
		"ckpt-lint hook":                        false,
		"echo ckpt hook Stop":                   false,
		"":                                      false,
	} {
		if got := IsCkptCommand(cmd, "go run ./cmd/ckpt"); got != want {
			t.Errorf("IsCkptCommand(%q) = %v, want %v", cmd, got, want)
		}
	}
}

func TestSettingsPath(t *testing.T) {
	for _, tt := range []struct {
		client Client
		scope  Scope
		want   string
	}{
		{Claude, ScopeProject, "/p/.claude/settings.json"},
		{Claude, ScopeLocal, "/p/.claude/settings.local.json"},
		{Claude, ScopeUser, "/h/.claude/settings.json"},
		{Codex, ScopeProject, "/p/.codex/hooks.json"},
		{Codex, ScopeUser, "/h/.codex/hooks.json"},
		{Gemini, ScopeProject, "/p/.gemini/settings.json"},
		{Gemini, ScopeUser, "/h/.gemini/settings.json"},
	} {
		got, err := SettingsPath(tt.client, tt.scope, "/p", "/h")
		if err != nil || got != filepath.FromSlash(tt.want) {
			t.Errorf("SettingsPath(%s, %s) = %q, %v; want %q", tt.client, tt.scope, got, err, tt.want)
		}
	}
	if _, err := SettingsPath(Claude, ScopeUser, "/p", ""); err == nil {
		t.Error("user scope without a home directory succeeded")
	}
	if _, err := SettingsPath("cursor", ScopeProject, "/p", "/h"); err == nil {
		t.Error("an unknown client succeeded")
	}
	for in, want := range map[string]Client{"claude": Claude, "Claude-Code": Claude, "codex": Codex, "gemini-cli": Gemini} {
		if got, err := ParseClient(in); err != nil || got != want {
			t.Errorf("ParseClient(%q) = %q, %v", in, got, err)
		}
	}
	for in, want := range map[string]Scope{"": ScopeProject, "project": ScopeProject, "LOCAL": ScopeLocal, "user": ScopeUser} {
		if got, err := ParseScope(in); err != nil || got != want {
			t.Errorf("ParseScope(%q) = %q, %v", in, got, err)
		}
	}
	if _, err := ParseScope("team"); err == nil {
		t.Error("ParseScope(team) succeeded")
	}
}

// TestInstallUpgradesAnOldInstallInPlace installs over the hooks an earlier
// ckpt registered (no presence events, a narrower PostToolUse matcher): the
// entries are replaced where they stand, the new events are added, and a
// second install changes nothing.
func TestInstallUpgradesAnOldInstallInPlace(t *testing.T) {
	project := t.TempDir()
	path := filepath.Join(project, ".claude", "settings.json")
	writeFile(t, path, `{"hooks": {
  "SessionStart": [{"matcher": "startup|resume|clear|compact", "hooks": [{"type": "command", "command": "ckpt hook SessionStart", "timeout": 10}]}],
  "PostToolUse": [
    {"matcher": "Write", "hooks": [{"type": "command", "command": "gofmt -w ."}]},
    {"matcher": "Edit|Write|MultiEdit", "hooks": [{"type": "command", "command": "ckpt hook PostToolUse", "timeout": 10}]}
  ],
  "Stop": [{"hooks": [{"type": "command", "command": "ckpt hook Stop", "timeout": 10}]}]
}}`)
	changed, _, err := Install(Claude, ScopeProject, project, "", "ckpt")
	if err != nil || !changed {
		t.Fatalf("Install = %v, %v", changed, err)
	}
	hooks := decodeFile(t, path).(map[string]any)["hooks"].(map[string]any)
	wantPost := []any{
		map[string]any{"matcher": "Write", "hooks": []any{map[string]any{"type": "command", "command": "gofmt -w ."}}},
		map[string]any{"matcher": "Edit|Write|MultiEdit|" + planTools + "|" + busyTools, "hooks": []any{ckptHook("ckpt hook PostToolUse")}},
	}
	if d := cmp.Diff(any(wantPost), hooks["PostToolUse"]); d != "" {
		t.Errorf("PostToolUse (-want +got):\n%s", d)
	}
	for _, s := range hookSpecs(Claude) {
		list, _ := hooks[s.event].([]any)
		n := 0
		for _, g := range list {
			for _, h := range g.(map[string]any)["hooks"].([]any) {
				if c, _ := h.(map[string]any)["command"].(string); c == "ckpt hook "+s.event {
					n++
				}
			}
		}
		if n != 1 {
			t.Errorf("%s has %d ckpt entries, want 1", s.event, n)
		}
	}
	data, _ := os.ReadFile(path)
	if changed, _, err := Install(Claude, ScopeProject, project, "", "ckpt"); err != nil || changed {
		t.Fatalf("second Install = %v, %v; want no change", changed, err)
	}
	if again, _ := os.ReadFile(path); !bytes.Equal(data, again) {
		t.Fatal("a second install rewrote the file")
	}
}
