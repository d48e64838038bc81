package cli

import (
	"encoding/json"
	"os"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	ckpt "github.com/ckpt-dev/ckpt"
	"github.com/ckpt-dev/ckpt/internal/cmdutil"
	"github.com/ckpt-dev/ckpt/internal/testsupport"
)

// Tests of whole command lines: flags, arguments, exit codes, output.

func TestIssueWalkthrough(t *testing.T) {
	h := newHarness(t)
	h.OK("start", "kai-7/secondary-a", "--agent", "Secondary-A", "--title", "Schedule fetcher spec",
		"--step", "research", "--step", "spec", "--step", "checklist", "--interval", "15m")
	if out := h.OK("step", "kai-7/secondary-a", "research", "--done", "--output", "research/NOTES.md"); out != "kai-7/secondary-a  rev 2  step research done  (1/3, 33%, in_progress)\n" {
		t.Errorf("step output %q", out)
	}
	h.OK("update", "kai-7/secondary-a", "--stage", "S2.P2", "--current-step", "Writing acceptance criteria",
		"--file-modified", "feature_02/spec.md", "--next-step", "Write checklist.md")
	h.OK("decision", "kai-7/secondary-a", "Use the v2 API", "--reason", "v1 is rate limited")
	h.OK("block", "kai-7/secondary-a", "Waiting for DISCOVERY.md")
	h.OK("unblock", "kai-7/secondary-a")
	h.Now = t0.Add(10 * time.Minute)
	h.OK("beat", "kai-7/secondary-a")
	show := h.OK("show", "kai-7/secondary-a")
	for _, want := range []string{
		"kai-7/secondary-a  Schedule fetcher spec\n",
		"status       in_progress  (rev 6)\n",
		"agent        Secondary-A\n",
		"stage        S2.P2\n",
		"current      Writing acceptance criteria\n",
		"progress     1/3, 33%\n",
		"  [x] research  (done, 2026-01-15T14:30:00Z)  -> research/NOTES.md\n",
		"  [ ] spec\n",
		"  - Use the v2 API  (because v1 is rate limited)\n",
		"    b1  Waiting for DISCOVERY.md  (cleared 2026-01-15T14:30:00Z)\n",
		"  ~ feature_02/spec.md\n",
		"  next steps      1. Write checklist.md\n",
		"heartbeat    every 15m; last seen 0s ago (2026-01-15T14:40:00Z)\n",
		"presence     working\n",
	} {
		if !strings.Contains(show, want) {
			t.Errorf("show lacks %q:\n%s", want, show)
		}
	}
	c := decodeCheckpoint(t, h.OK("show", "kai-7/secondary-a", "--json", "--rev", "3"))
	if c.Rev != 3 || c.Stage != "S2.P2" || len(c.Decisions) != 0 {
		t.Errorf("show --rev 3: rev %d stage %q decisions %d", c.Rev, c.Stage, len(c.Decisions))
	}
	h.OK("done", "kai-7/secondary-a")
	if c := h.Get("kai-7/secondary-a"); c.Status != ckpt.StatusDone || c.Rev != 7 {
		t.Errorf("after done: %s rev %d", c.Status, c.Rev)
	}
}

func TestLsFiltersAndJSON(t *testing.T) {
	h := newHarness(t)
	if out := h.OK("ls", "--json"); out != "[]\n" {
		t.Errorf("empty ls --json printed %q", out)
	}
	if code, out, errOut := h.Run("ls"); code != 0 || out != "" || !strings.Contains(errOut, "ckpt start") {
		t.Errorf("empty ls: %d %q %q", code, out, errOut)
	}
	h.OK("start", "kai-7/a", "--agent", "A", "--parent", "kai-7", "--label", "wave-1")
	h.OK("start", "kai-7/b", "--agent", "B", "--parent", "kai-7", "--status", "NOT_STARTED")
	h.OK("start", "other", "--agent", "A")
	h.OK("wait", "other", "--reason", "review")
	list := func(args ...string) []string {
		t.Helper()
		var cs []ckpt.Checkpoint
		out := h.OK(append([]string{"ls", "--json"}, args...)...)
		if err := json.Unmarshal([]byte(out), &cs); err != nil {
			t.Fatalf("ls --json %v: %v\n%s", args, err, out)
		}
		var ids []string
		for _, c := range cs {
			ids = append(ids, c.ID)
		}
		return ids
	}
	for _, tc := range []struct {
		args []string
		want []string
	}{
		{nil, []string{"kai-7/a", "kai-7/b", "other"}},
		{[]string{"--agent", "A"}, []string{"kai-7/a", "other"}},
		{[]string{"--status", "pending"}, []string{"kai-7/b"}},
		{[]string{"--status", "PAUSED", "--status", "in_progress"}, []string{"kai-7/a", "other"}},
		{[]string{"--parent", "kai-7", "--label", "wave-1"}, []string{"kai-7/a"}},
		{[]string{"--prefix", "kai-7/"}, []string{"kai-7/a", "kai-7/b"}},
	} {
		if got := list(tc.args...); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("ls %v = %v, want %v", tc.args, got, tc.want)
		}
	}
	h.Now = t0.Add(45 * time.Minute)
	out := h.OK("ls")
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 4 || !strings.HasPrefix(lines[0], "ID ") || !strings.Contains(lines[1], "kai-7/a") ||
		!strings.Contains(lines[1], "45m ago (warn)") || !strings.Contains(lines[2], "pending") {
		t.Errorf("ls table:\n%s", out)
	}
	if errOut := h.Fails(ExitUsage, "ls", "--status", "sleeping"); !strings.Contains(errOut, "use one of pending") {
		t.Errorf("bad status: %s", errOut)
	}
}

func TestLogShowsEveryEvent(t *testing.T) {
	h := newHarness(t)
	h.Vars[cmdutil.EnvSession] = "sess-1"
	h.OK("start", "w", "--agent", "A", "--step", "s1")
	h.OK("step", "w", "s1", "--start", "--agent", "B", "--key", "hook-1")
	h.OK("note", "w", "hello")
	out := h.OK("log", "w", "--json")
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 3 {
		t.Fatalf("log --json printed %d lines:\n%s", len(lines), out)
	}
	var e struct {
		Seq   int64           `json:"seq"`
		Type  string          `json:"type"`
		Actor ckpt.Actor      `json:"actor"`
		Key   string          `json:"key"`
		Data  json.RawMessage `json:"data"`
		Prev  string          `json:"prev"`
		Sum   string          `json:"sum"`
	}
	if err := json.Unmarshal([]byte(lines[1]), &e); err != nil {
		t.Fatal(err)
	}
	if e.Seq != 2 || e.Type != "step" || e.Actor != (ckpt.Actor{Agent: "B", Session: "sess-1"}) || e.Key != "hook-1" ||
		len(e.Sum) != 32 || e.Prev == "" || !strings.Contains(string(e.Data), `"in_progress"`) {
		t.Errorf("event 2: %+v", e)
	}
	if out := h.OK("log", "w", "--from", "3", "--json"); strings.Count(out, "\n") != 1 || !strings.Contains(out, `"seq":3`) {
		t.Errorf("log --from 3: %s", out)
	}
	human := h.OK("log", "w")
	for _, want := range []string{
		"   1  2026-01-15T14:30:00Z  created     A@sess-1        started\n",
		"   2  2026-01-15T14:30:00Z  step        B@sess-1        step s1 in_progress  [key hook-1]\n",
		"   3  2026-01-15T14:30:00Z  note        A@sess-1        note added\n", // the checkpoint's agent: no agent was named
	} {
		if !strings.Contains(human, want) {
			t.Errorf("log lacks %q:\n%s", want, human)
		}
	}
	if from := h.OK("log", "w", "--from", "2"); !strings.HasPrefix(from, "   2  ") || !strings.Contains(from, "step s1 in_progress") {
		t.Errorf("log --from 2:\n%s", from)
	}
}

func TestUsageErrorsExit2(t *testing.T) {
	h := newHarness(t)
	h.OK("start", "w")
	for _, args := range [][]string{
		{"frobnicate"},
		{"start"},
		{"start", "a", "b"},
		{"update", "w", "--no-such-flag"},
		{"update", "w", "--max-cycles", "many"},
		{"step", "w", "s", "--done", "--fail"},
		{"unblock", "w", "b1", "extra"},
		{"show", "w", "--rev", "-1"},
		{"log", "w", "--from", "-1"},
		{"update", "w"},
	} {
		errOut := h.Fails(ExitUsage, args...)
		if !strings.Contains(errOut, "ckpt ") && !strings.Contains(errOut, "--") {
			t.Errorf("ckpt %v: message does not say what to do: %s", args, errOut)
		}
	}
}

func TestErrorPathsSayWhatToDo(t *testing.T) {
	h := newHarness(t)
	h.OK("start", "w")
	cases := []struct {
		code int
		args []string
		say  string
	}{
		{ExitNotFound, []string{"show", "nope"}, "ckpt "},
		{ExitNotFound, []string{"update", "nope", "--stage", "x"}, "ckpt start nope"},
		{ExitNotFound, []string{"show", "w", "--rev", "9"}, "ckpt "},
		{ExitUsage, []string{"show", "../x"}, "IDs cannot refer to directories"},
		{ExitUsage, []string{"note", "", "x"}, "give an ID such as"},
		{ExitUsage, []string{"show", strings.Repeat("x", 201)}, "the limit is 200"},
		{ExitUsage, []string{"update", "w", "--status", "bogus"}, "use one of pending, in_progress"},
		{ExitUsage, []string{"update", "w", "--interval", "fortnight"}, "90s, 15m or 1h30m"},
		{ExitUsage, []string{"update", "w", "--progress", "half"}, "DONE/TOTAL"},
		{ExitUsage, []string{"update", "w", "--meta", "x"}, "KEY=VALUE"},
		{ExitConflict, []string{"note", "w", "x", "--if-rev", "7"}, "retry with --if-rev 1"},
		{ExitExists, []string{"start", "w"}, "checkpoint already exists: w (revision 1): use another ID, or start it over with ckpt restart w"},
		{ExitUsage, []string{"fail", "w"}, "--reason"},
	}
	for _, tc := range cases {
		errOut := h.Fails(tc.code, tc.args...)
		if !strings.Contains(errOut, tc.say) {
			t.Errorf("ckpt %v: %q does not say %q", tc.args, errOut, tc.say)
		}
	}
	if c := h.Get("w"); c.Rev != 1 {
		t.Errorf("failed commands wrote: rev %d", c.Rev)
	}
}

func TestCKPTNowPinsTheClock(t *testing.T) {
	h := newHarness(t)
	h.Vars[cmdutil.EnvNow] = "2030-02-03T04:05:06Z"
	h.OK("start", "w")
	if c := h.Get("w"); !c.StartedAt.Equal(time.Date(2030, 2, 3, 4, 5, 6, 0, time.UTC)) {
		t.Errorf("started at %v", c.StartedAt)
	}
	h.Vars[cmdutil.EnvNow] = "yesterday"
	if errOut := h.Fails(ExitUsage, "note", "w", "x"); !strings.Contains(errOut, "CKPT_NOW") || !strings.Contains(errOut, "RFC 3339") {
		t.Errorf("bad CKPT_NOW: %s", errOut)
	}
}

func TestActingAgentFromEnvAndFlag(t *testing.T) {
	h := newHarness(t)
	h.Vars[cmdutil.EnvAgent] = "env-agent"
	h.OK("start", "w", "--step", "s")
	h.OK("step", "w", "s", "--done", "--agent", "flag-agent")
	ev := h.History("w")
	if ev[0].Actor.Agent != "env-agent" || ev[1].Actor.Agent != "flag-agent" {
		t.Errorf("actors %+v %+v", ev[0].Actor, ev[1].Actor)
	}
	if c := h.Get("w"); c.Agent.ID != "env-agent" || c.Steps[0].By != "flag-agent" {
		t.Errorf("agent %+v step by %q", c.Agent, c.Steps[0].By)
	}
}

// TestVerbsCoverEveryField drives every verb and checks that, together, they
// set every field of the checkpoint model. Only Archived and
// ResumesWithoutProgress are left out: the lifecycle commands (resume,
// takeover, restart) set them.
func TestVerbsCoverEveryField(t *testing.T) {
	h := newHarness(t)
	h.Vars[cmdutil.EnvSession] = "sess-1"
	id := "kai-7/secondary-a"
	h.OK("start", id, "--agent", "Secondary-A", "--agent-type", "secondary", "--agent-name", "Secondary A",
		"--title", "Spec", "--task", "KAI-7", "--parent", "kai-7", "--label", "wave-1",
		"--step", "research", "--step", "spec", "--accept", "tests=All tests pass", "--interval", "5m",
		"--max-cycles", "3", "--meta", "feature=f2", "--stage", "S2.P1", "--phase", "Research")
	h.OK("step", id, "research", "--start", "--title", "Research", "--phase", "P1", "--notes", "reading")
	h.OK("step", id, "research", "--done", "--output", "NOTES.md", "--by", "main", "--after", "kickoff")
	h.OK("update", id, "--current-step", "Writing spec", "--file-created", "spec.md", "--file-modified", "README.md",
		"--last-processed", "s4", "--next-to-process", "s5", "--notes", "n", "--last-message", "Next: s5", "--instructions", "Continue at s5",
		"--next-step", "Write s5", "--review-score", "code=85", "--reason", "r")
	h.OK("decision", id, "v2 API", "--reason", "v1 limited")
	h.OK("block", id, "DISCOVERY.md")
	h.OK("unblock", id)
	h.OK("error", id, "timeout", "--type", "network", "--blocking")
	h.OK("error", id, "--clear")
	h.OK("accept", id, "tests")
	h.OK("cycle", id)
	h.OK("note", id, "more")
	h.OK("tell", id, "pending until a hook delivers it")
	repo := testsupport.DivergedRepo(t)
	if err := os.WriteFile(repo+"/untracked.txt", []byte("u\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	recordCode(h, id, repo) // the hooks' final checkpoint and ckpt-server's checkpoint record where the code is
	h.Now = t0.Add(time.Minute)
	h.OK("beat", id)
	h.OK("beat", id, "--state", "busy", "--reason", "make test", "--pid", strconv.Itoa(os.Getpid()))
	h.OK("beat", id, "--state", "waiting", "--for", "thing", "--reason", "CI run")
	h.OK("done", id, "--reason", "all criteria met")
	c := h.Get(id)
	missing := zeroFields(reflect.ValueOf(*c), "")
	want := []string{"ResumesWithoutProgress", "Archived"}
	if !reflect.DeepEqual(missing, want) {
		t.Errorf("fields no verb set: %v, want only %v", missing, want)
	}
}

// zeroFields lists the struct fields of v (recursively, by path) that hold
// their zero value; slices are checked through their first element.
func zeroFields(v reflect.Value, prefix string) []string {
	var out []string
	for i := 0; i < v.NumField(); i++ {
		f, name := v.Field(i), prefix+v.Type().Field(i).Name
		switch {
		case f.Kind() == reflect.Struct && f.Type() != reflect.TypeOf(time.Time{}):
			out = append(out, zeroFields(f, name+".")...)
		case f.Kind() == reflect.Slice && f.Len() > 0 && f.Index(0).Kind() == reflect.Struct:
			out = append(out, zeroFields(f.Index(0), name+"[0].")...)
		case f.Kind() == reflect.Pointer && !f.IsNil() && f.Elem().Kind() == reflect.Struct && f.Elem().Type() != reflect.TypeOf(time.Time{}):
			out = append(out, zeroFields(f.Elem(), name+".")...)
		case f.IsZero():
			out = append(out, name)
		}
	}
	return out
}
