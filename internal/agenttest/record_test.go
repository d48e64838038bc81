package agenttest

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// RecordEnv, set to 1, makes TestRecordTraces run every scenario below
// against the real clients and (re)write internal/claude/testdata/traces.
const RecordEnv = "CKPT_RECORD_TRACES"

// traceDir is where the recorded traces live (the shared corpus).
const traceDir = "../claude/testdata/traces"

// scenario is one recorded session: its trace name, the client, what it
// does (for the trace's .md) and how to run it.
type scenario struct {
	name   string
	client Client
	about  string
	script Script
	env    []string
	files  map[string]string
	run    func(t *testing.T, s *Session)
}

// TestRecordTraces records the real clients' hook payloads for every
// scenario into internal/claude/testdata/traces (CKPT_RECORD_TRACES=1; the
// clients from CKPT_AGENT_CLIENTS). Each trace is checked for the hooks its
// scenario must fire before it is written.
func TestRecordTraces(t *testing.T) {
	if os.Getenv(RecordEnv) != "1" {
		t.Skip("set " + RecordEnv + "=1 to record the hook traces of the real clients")
	}
	only := os.Getenv("CKPT_RECORD_ONLY")
	for _, sc := range scenarios() {
		if only != "" && !strings.Contains(sc.name, only) {
			continue
		}
		t.Run(sc.name, func(t *testing.T) {
			srv := NewServer(t, sc.script)
			s := NewSession(t, sc.client, srv, Options{Record: true, Files: sc.files})
			s.Env = append(s.Env, sc.env...)
			sc.run(t, s)
			time.Sleep(500 * time.Millisecond) // hooks the client did not wait for
			tr := s.Recording()
			if len(tr) == 0 {
				t.Fatal("no hook fired")
			}
			path := filepath.Join(traceDir, sc.name+".jsonl")
			if err := WriteTrace(path, tr); err != nil {
				t.Fatal(err)
			}
			md := traceNote(sc, s, tr)
			if err := os.WriteFile(strings.TrimSuffix(path, ".jsonl")+".md", []byte(md), 0o644); err != nil {
				t.Fatal(err)
			}
			t.Logf("%s: %s", path, strings.Join(Events(tr), " "))
		})
	}
}

// traceNote is the .md beside a trace: what the session did and how it
// was recorded.
func traceNote(sc scenario, s *Session, tr []TraceEvent) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# %s\n\n", sc.name)
	fmt.Fprintf(&b, "**Real**: recorded from the real %s %s (npm %s), run headless by\n", sc.client.Name, sc.client.Version, sc.client.Package)
	b.WriteString("`internal/agenttest` (`CKPT_RECORD_TRACES=1 go test -run TestRecordTraces ./internal/agenttest`)\n")
	b.WriteString("against the local mock of its model API, which answered from the script below.\n\n")
	fmt.Fprintf(&b, "## Scenario\n\n%s\n\n", sc.about)
	b.WriteString("## The mock's script\n\n")
	for _, c := range sc.script.Conversations {
		fmt.Fprintf(&b, "Conversation whose first user message contains %q:\n\n", c.Match)
		for i, st := range c.Steps {
			fmt.Fprintf(&b, "%d. %s\n", i+1, describeStep(st))
		}
		b.WriteString("\n")
	}
	d := sc.script.Default
	if d == "" {
		d = "OK."
	}
	fmt.Fprintf(&b, "Any other request (titles, summaries, routing): the text %q.\n\n", d)
	b.WriteString("## Events\n\n")
	for _, e := range tr {
		fmt.Fprintf(&b, "- %6d ms  %s\n", e.OffsetMS, e.Event)
	}
	b.WriteString("\n## How it was recorded\n\n")
	fmt.Fprintf(&b, "ckpt's hooks were installed (`ckpt hooks install %s`, the ckpt built from this tree), and beside\n", hookClient(sc.client))
	b.WriteString("each event ckpt registers a recording hook with no matcher (every tool, every source) that saved\n")
	b.WriteString("its stdin; so the trace also holds tool events ckpt's own matchers skip. A replay must filter by\n")
	b.WriteString("the matchers it installs. Payloads are the client's JSON, compacted (whitespace only); nothing\n")
	b.WriteString("was trimmed. Lines are in the order the client started the hooks (the recording hook's start\n")
	b.WriteString("time); `offset_ms` is from the first hook.\n\n")
	fmt.Fprintf(&b, "Temporary root of the recording (rewrite it in replays): `%s`\n", s.Root)
	fmt.Fprintf(&b, "(home `%s`, project `%s`).\n", s.Home, s.Project)
	return b.String()
}

func scenarios() []scenario {
	return append(append(append(claudeScenarios(), tuiScenarios()...), codexScenarios()...), geminiScenarios()...)
}

// describeStep is one step of a script in words, for a trace's .md.
func describeStep(st Step) string {
	var parts []string
	if st.Text != "" {
		parts = append(parts, fmt.Sprintf("says %q", st.Text))
	}
	if c := st.Tool; c != nil {
		arg := c.Raw
		if arg == "" {
			arg = toolArgs(c)
		}
		parts = append(parts, fmt.Sprintf("calls `%s` with `%s`", c.Name, strings.ReplaceAll(arg, "\n", `\n`)))
	}
	if e := st.Error; e != nil {
		parts = append(parts, fmt.Sprintf("answers HTTP %d %s %q", e.Status, e.Type, e.Message))
	}
	if st.Delay > 0 {
		parts = append(parts, fmt.Sprintf("after %s", st.Delay))
	}
	return strings.Join(parts, ", ")
}
