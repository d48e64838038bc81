package cli

import (
	"github.com/spf13/cobra"

	"github.com/ckpt-dev/ckpt/internal/cmdutil"
)

// Verb is one top-level command: its name, its group in help ("" for none)
// and its constructor.
type Verb struct {
	Name, Group string
	Build       func(*cmdutil.Factory) *cobra.Command
}

// Program is what one binary runs: its verbs, in the order help shows
// them, and the stores it opens, by location scheme.
type Program struct {
	Verbs  []Verb
	Stores cmdutil.Stores
}

// Replace returns verbs with each verb of the same name as one in with
// replaced by it: how ckpt-server puts its real commands in place of
// ckpt's dispatchers.
func Replace(verbs []Verb, with ...Verb) []Verb {
	out := make([]Verb, len(verbs))
	for i, v := range verbs {
		out[i] = v
		for _, w := range with {
			if w.Name == v.Name {
				out[i] = w
			}
		}
	}
	return out
}

// Verbs lists ckpt's verbs in the order help shows them: serve, mcp, token,
// migrate, monitor and checkpoint are dispatchers to ckpt-server (see
// dispatch.go). (A
// function, not a variable: the demo's constructor runs command lines, so
// a variable would refer to itself.)
func Verbs() []Verb {
	return []Verb{
		{"start", "record", newStartCmd}, {"step", "record", newStepCmd}, {"update", "record", newUpdateCmd},
		{"decision", "record", recordCmd("decision")}, {"block", "record", recordCmd("block")}, {"unblock", "record", recordCmd("unblock")},
		{"error", "record", recordCmd("error")}, {"accept", "record", recordCmd("accept")}, {"cycle", "record", recordCmd("cycle")},
		{"note", "record", recordCmd("note")}, {"tell", "record", recordCmd("tell")}, {"beat", "record", newBeatCmd},
		{"done", "record", recordCmd("done")}, {"fail", "record", recordCmd("fail")}, {"wait", "record", recordCmd("wait")},
		{"show", "read", newShowCmd}, {"ls", "read", newLsCmd}, {"log", "read", newLogCmd}, {"why", "read", newWhyCmd},
		{"init", "store", newInitCmd}, {"keeper", "store", newKeeperCmd}, {"check", "store", newCheckCmd}, {"repair", "store", newRepairCmd},
		{"migrate", "store", serverVerb("migrate")}, {"serve", "store", serverVerb("serve")}, {"token", "store", serverVerb("token")},
		{"resume", "lifecycle", newResumeCmd}, {"takeover", "lifecycle", newTakeoverCmd}, {"restart", "lifecycle", newRestartCmd},
		{"archive", "lifecycle", newArchiveCmd}, {"restore", "lifecycle", newRestoreCmd}, {"prune", "lifecycle", newPruneCmd},
		{"bulk", "lifecycle", newBulkCmd},
		{"inbox", "watch", newInboxCmd}, {"status", "watch", newStatusViewCmd}, {"progress", "watch", newProgressCmd}, {"stale", "watch", newStaleCmd},
		{"monitor", "watch", serverVerb("monitor")},
		{"import", "protocols", newImportCmd}, {"export", "protocols", newExportCmd}, {"mirror", "protocols", newMirrorCmd},
		{"plan", "protocols", newPlanCmd}, {"checkpoint", "protocols", serverVerb("checkpoint")},
		{"hooks", "integrations", newHooksCmd}, {"hook", "integrations", newHookCmd}, {"mcp", "integrations", serverVerb("mcp")},
		{"demo", "", newDemoCmd}, {"version", "", newVersionCmd},
	}
}

// Stores are the stores ckpt opens: a directory (filestore). A ckpt serve
// server and a PostgreSQL store are known but left to other binaries, so
// that ckpt links neither an HTTP client nor a database driver: a command
// that records work goes through this user's keeper of the store when one
// runs (keeper.go), and every other one is handed to ckpt-server (a
// server's store: servercli registers remote) or ckpt-pg (PostgreSQL:
// pgcli registers pgstore).
func Stores() cmdutil.Stores {
	return cmdutil.Stores{
		"":           openFileStoreAt,
		"http":       nil,
		"https":      nil,
		"postgres":   nil,
		"postgresql": nil,
	}
}

// ckptProgram is the ckpt binary's program (what cmd/ckpt assembles).
func ckptProgram() Program { return Program{Verbs: Verbs(), Stores: Stores()} }

// Tree builds the whole command tree of program p, for tests and tools
// that read it.
func Tree(p Program) *cobra.Command {
	return newRootCmd(newFactory(&cmdutil.Env{}, p), p, nil)
}

// newFactory is the factory of a command line of p in env: p's stores,
// every store wrapped with its seed-format mirrors.
func newFactory(env *cmdutil.Env, p Program) *cmdutil.Factory {
	return &cmdutil.Factory{Env: env, Stores: p.Stores, Wrap: wrapStore}
}
