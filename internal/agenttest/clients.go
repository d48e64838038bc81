package agenttest

import (
	"os"
	"path/filepath"
	"testing"
)

// Client is an agent client pinned at the version ckpt is tested with.
type Client struct {
	Name    string // the trace's client name: claude-code, codex, gemini
	Package string // the npm package
	Version string
	Bin     string // the command the package installs
}

// The pinned clients. .ci/run installs exactly these (keep them in step).
var (
	ClaudeCode = Client{Name: "claude-code", Package: "@anthropic-ai/claude-code", Version: "2.1.197", Bin: "claude"}
	Codex      = Client{Name: "codex", Package: "@openai/codex", Version: "0.171.0", Bin: "codex"}
	Gemini     = Client{Name: "gemini", Package: "@google/gemini-cli", Version: "0.61.0", Bin: "gemini"}
)

// ClientsEnv names the directory the clients are installed in:
// $CKPT_AGENT_CLIENTS/<npm package name without scope>-<version>, an npm
// prefix whose node_modules/.bin holds the command (see .ci/run).
const ClientsEnv = "CKPT_AGENT_CLIENTS"

// Dir is the npm prefix the client is installed in under root.
func (c Client) Dir(root string) string {
	return filepath.Join(root, filepath.Base(c.Package)+"-"+c.Version)
}

// Path returns the client's command under $CKPT_AGENT_CLIENTS, or "" when
// it is not installed there.
func (c Client) Path() string {
	root := os.Getenv(ClientsEnv)
	if root == "" {
		return ""
	}
	p := filepath.Join(c.Dir(root), "node_modules", ".bin", c.Bin)
	if fi, err := os.Stat(p); err != nil || fi.IsDir() {
		return ""
	}
	return p
}

// Need returns the client's command. When it is missing the test is
// skipped, naming how to install it; with CI=true it fails instead, since
// CI must run every client.
func Need(t testing.TB, c Client) string {
	t.Helper()
	if p := c.Path(); p != "" {
		return p
	}
	msg := c.Package + "@" + c.Version + " is not installed under $" + ClientsEnv +
		" (" + os.Getenv(ClientsEnv) + "): run .ci/run, or npm install --prefix $" + ClientsEnv + "/" +
		filepath.Base(c.Package) + "-" + c.Version + " " + c.Package + "@" + c.Version
	SkipOrFail(t, "CI must run the real clients: "+msg)
	return ""
}
