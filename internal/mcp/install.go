package mcp

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strings"

	"github.com/ckpt-dev/ckpt/internal/atomicfile"
)

// ServerName is the name ckpt's server is registered under in a client.
const ServerName = "ckpt"

// ProjectConfigFile is Claude Code's project-scoped MCP configuration,
// meant to be committed so that everyone on the project gets the server.
const ProjectConfigFile = ".mcp.json"

// ClaudeAddArgs is the command that registers the server with Claude
// Code's own CLI at scope (local, project or user), for command (how to
// run ckpt, e.g. "ckpt"):
//
//	claude mcp add --scope user ckpt -- ckpt mcp
//
// Local and user scopes live in ~/.claude.json, a file Claude Code manages
// and ckpt does not write; run this command for them.
func ClaudeAddArgs(scope, command string) []string {
	if command == "" {
		command = "ckpt"
	}
	args := []string{"claude", "mcp", "add"}
	if scope != "" {
		args = append(args, "--scope", scope)
	}
	return append(args, ServerName, "--", command, "mcp")
}

// InstallClaudeProject adds the server to projectDir's .mcp.json (creating
// it if needed) as {"command": command, "args": ["mcp"]} under
// mcpServers.ckpt, keeping every other key and server. It reports whether
// the file changed and its path; installing twice changes nothing. The
// file is written atomically and durably. A file that is not a JSON
// object, or whose mcpServers is not an object, is refused and never
// overwritten. Keys are rewritten in sorted order (the content is kept).
func InstallClaudeProject(projectDir, command string) (changed bool, path string, err error) {
	command = strings.TrimSpace(command)
	if command == "" {
		return false, "", errors.New("no ckpt command given: pass the path of the ckpt binary, e.g. ckpt")
	}
	entry, _ := json.Marshal(map[string]any{"command": command, "args": []string{"mcp"}})
	return editProjectConfig(projectDir, func(servers map[string]json.RawMessage) {
		servers[ServerName] = entry
	})
}

// UninstallClaudeProject removes mcpServers.ckpt from projectDir's
// .mcp.json, and mcpServers itself if that leaves it empty. A missing file
// or entry is not an error.
func UninstallClaudeProject(projectDir string) (changed bool, path string, err error) {
	return editProjectConfig(projectDir, func(servers map[string]json.RawMessage) {
		delete(servers, ServerName)
	})
}

func editProjectConfig(projectDir string, edit func(map[string]json.RawMessage)) (bool, string, error) {
	if projectDir == "" {
		return false, "", errors.New("no project directory given")
	}
	path := filepath.Join(projectDir, ProjectConfigFile)
	target := path
	if resolved, err := filepath.EvalSymlinks(path); err == nil {
		target = resolved
	}
	doc := map[string]json.RawMessage{}
	data, err := os.ReadFile(target)
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return false, path, fmt.Errorf("reading %s: %w", path, err)
	case len(bytes.TrimSpace(data)) > 0:
		if err := json.Unmarshal(data, &doc); err != nil || doc == nil {
			return false, path, fmt.Errorf("%s is not a JSON object (%v); ckpt will not overwrite it: fix it and run the command again", path, err)
		}
	}
	servers := map[string]json.RawMessage{}
	if raw, ok := doc["mcpServers"]; ok {
		if err := json.Unmarshal(raw, &servers); err != nil || servers == nil {
			return false, path, fmt.Errorf(`%s: "mcpServers" is not an object; ckpt will not overwrite it: fix it and run the command again`, path)
		}
	}
	before := decoded(servers)
	edit(servers)
	if reflect.DeepEqual(before, decoded(servers)) {
		return false, path, nil
	}
	if len(servers) == 0 {
		delete(doc, "mcpServers")
	} else {
		doc["mcpServers"], _ = json.Marshal(servers)
	}
	out, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		return false, path, err
	}
	perm := fs.FileMode(0o644)
	if fi, err := os.Stat(target); err == nil {
		perm = fi.Mode().Perm()
	}
	if err := atomicfile.WriteFile(target, append(out, '\n'), perm); err != nil {
		return false, path, fmt.Errorf("writing %s: %w", path, err)
	}
	return true, path, nil
}

// decoded is the value of servers, for comparing before and after.
func decoded(servers map[string]json.RawMessage) any {
	var v any
	b, _ := json.Marshal(servers)
	json.Unmarshal(b, &v)
	return v
}
