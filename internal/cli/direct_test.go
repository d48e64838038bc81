package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/ckpt-dev/ckpt/internal/cmdutil"
	"github.com/ckpt-dev/ckpt/memstore"
)

// directSetup is the store every line of directLines runs on.
var directSetup = [][]string{
	{"start", "a/b", "--step", "s1", "--step", "s2", "--agent", "bot"},
	{"block", "a/b", "waiting on Y"},
}

// directLines are the command lines TestDirectRunIsCobrasRun runs both ways.
var directLines = [][]string{
	{"update", "a/b", "--stage", "S2.P2", "--current-step", "x y", "--file-modified", "f.md"},
	{"update", "a/b"},
	{"update"},
	{"update", "a/b", "c"},
	{"update", "a/b", "--bogus"},
	{"update", "a/b", "--stage"},
	{"update", "a/b", "--progress", "1/2"},
	{"update", "a/b", "--status", "done"},
	{"update", "a/b", "--json", "--title", "T"},
	{"update", "a/b", "--if-rev", "1", "--title", "T"},
	{"update", "a/b", "--if-rev", "-1", "--title", "T"},
	{"update", "missing/x", "--title", "T"},
	{"update", "a/b", "--key", "k1", "--title", "T"},
	{"update", "a/b", "--max-cycles", "x"},
	{"update", "a/b", "--resumable=false", "--next-step", "n1", "--next-step", "n2"},
	{"update", "a/b", "--meta", "k=v", "--meta-json", `j={"a":1}`, "--review-score", "code=85"},
	{"update", "a/b", "--", "--title"},
	{"update", "a/b", "--title", "T", "--"},
	{"update", "-h"},
	{"update", "a/b", "--help"},
	{"update", "a/b", "--help=false", "--title", "T"},
	{"update", "a/b", "-x"},
	{"--agent", "bot2", "update", "a/b", "--title", "T"},
	{"--agent=bot2", "update", "a/b", "--agent", "bot3", "--title", "T"},
	{"--no-keeper", "update", "a/b", "--title", "T"},
	{"--store", "update", "update", "a/b", "--title", "T"},
	{"--store", "ftp://x", "update", "a/b", "--title", "T"},
	{"--title", "T", "update", "a/b"},
	{"update", "bad id!", "--title", "T"},
	{"step", "a/b", "s1", "--done"},
	{"step", "a/b", "s1", "--notes", "pass 1"},
	{"step", "a/b", "nosuch", "--done"},
	{"step", "a/b"},
	{"start", "c/d", "--step", "x"},
	{"start", "a/b"},
	{"beat", "a/b"},
	{"beat", "a/b", "--state", "waiting", "--reason", "r"},
	{"beat", "a/b", "--state", "bogus"},
	{"decision", "a/b", "chose X", "--reason", "why"},
	{"unblock", "a/b"},
	{"error", "a/b", "boom", "--type", "network"},
	{"accept", "a/b", "tests"},
	{"cycle", "a/b", "--note", "n"},
	{"note", "a/b", "a note"},
	{"tell", "a/b", "go ahead"},
	{"done", "a/b"},
	{"fail", "a/b", "--reason", "upstream"},
	{"wait", "a/b", "--reason", "review"},
	{"hook", "PreToolUse"},
	{"hook", "--client", "bogus", "PreToolUse"},
	{"hook", "--newer-flag", "PreToolUse"},
	{"hook"},
	{"ls"},
	{"show", "a/b"},
	{"version"},
	{"updat", "a/b"},
}

// TestDirectRunIsCobrasRun runs command lines of the direct verbs, and
// lines that only look like them, once through runDirect and once through
// cobra's Execute, each on its own copy of the same store, and requires
// the same exit code, output, errors and stored checkpoints.
func TestDirectRunIsCobrasRun(t *testing.T) {
	for _, line := range directLines {
		t.Run(strings.Join(line, " "), func(t *testing.T) {
			direct := newDirectCase(t, directSetup)
			viaCobra := newDirectCase(t, directSetup)
			dCode, dOut, dErr := direct.run(line, true)
			cCode, cOut, cErr := viaCobra.run(line, false)
			if dCode != cCode || dOut != cOut || dErr != cErr {
				t.Errorf("direct: exit %d, stdout %q, stderr %q\ncobra:  exit %d, stdout %q, stderr %q", dCode, dOut, dErr, cCode, cOut, cErr)
			}
			for _, id := range []string{"a/b", "c/d"} {
				if d, c := direct.state(id), viaCobra.state(id); d != c {
					t.Errorf("%s after the direct run:\n%s\nafter cobra's:\n%s", id, d, c)
				}
			}
		})
	}
}

// directCase is one store with the command lines of setup applied.
type directCase struct {
	t     *testing.T
	store *memstore.Store
	dir   string
}

func newDirectCase(t *testing.T, setup [][]string) *directCase {
	c := &directCase{t: t, store: memstore.New(), dir: t.TempDir()}
	for _, line := range setup {
		if code, _, errOut := c.run(line, false); code != 0 {
			t.Fatalf("ckpt %s: exit %d: %s", strings.Join(line, " "), code, errOut)
		}
	}
	return c
}

// run runs `ckpt args…`, through runDirect when direct.
func (c *directCase) run(args []string, direct bool) (code int, stdout, stderr string) {
	var out, errOut bytes.Buffer
	vars := map[string]string{"CKPT_STATE_DIR": c.dir, "USER": "kai"}
	env := &cmdutil.Env{
		IOStreams: cmdutil.IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut},
		Getenv:    func(k string) string { return vars[k] },
		WorkDir:   c.dir,
		Now:       func() time.Time { return t0 },
		Args:      args,
	}
	p := ckptProgram()
	f := newFactory(env, p)
	f.Store = c.store
	code = runLine(f, p, direct)
	return code, out.String(), strings.ReplaceAll(errOut.String(), c.dir, "DIR")
}

// state is checkpoint id as JSON, or the error reading it.
func (c *directCase) state(id string) string {
	got, err := c.store.Get(context.Background(), id, 0)
	if err != nil {
		return err.Error()
	}
	b, err := json.Marshal(got)
	if err != nil {
		c.t.Fatal(err)
	}
	return string(b)
}

// TestDirectVerbsAreLeaves: runDirect runs a verb as cobra's execute does
// only for a command without subcommands, with its flags parsed, not
// deprecated, and without deprecated flags (whose warning ParseFlags
// prints, and a line runDirect then leaves to cobra would print twice).
func TestDirectVerbsAreLeaves(t *testing.T) {
	f := newFactory(&cmdutil.Env{}, ckptProgram())
	seen := 0
	for _, v := range Verbs() {
		if !isDirectVerb(v.Name) {
			continue
		}
		seen++
		cmd := v.Build(f)
		if cmd.HasSubCommands() || cmd.DisableFlagParsing || cmd.Deprecated != "" {
			t.Errorf("%s: subcommands %v, flag parsing disabled %v, deprecated %q", v.Name, cmd.HasSubCommands(), cmd.DisableFlagParsing, cmd.Deprecated)
		}
		cmd.Flags().VisitAll(func(fl *pflag.Flag) {
			if fl.Deprecated != "" || fl.ShorthandDeprecated != "" {
				t.Errorf("%s --%s is deprecated", v.Name, fl.Name)
			}
		})
		if cobra.EnableTraverseRunHooks {
			t.Error("cobra.EnableTraverseRunHooks is set: execute runs the first persistent hook only")
		}
	}
	if seen != len(directVerbs) {
		t.Errorf("%d of the %d direct verbs are verbs", seen, len(directVerbs))
	}
}
