package cli

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	ckpt "github.com/ckpt-dev/ckpt"
	"github.com/ckpt-dev/ckpt/filestore"
	"github.com/ckpt-dev/ckpt/internal/cmdutil"
	"github.com/ckpt-dev/ckpt/memstore"
)

// check and repair go through the store's capabilities: a store without
// them (memstore here, a server without a check endpoint) says so clearly
// instead of failing on a type.
func TestCheckOnAStoreWithoutTheCapabilitySaysSo(t *testing.T) {
	h := newHarness(t)
	h.OK("start", "w")
	for _, verb := range []string{"check", "repair"} {
		msg := h.Fails(ExitUsage, verb)
		if !strings.Contains(msg, "this store offers no "+verb) || !strings.Contains(msg, "run ckpt "+verb+" on the host") {
			t.Errorf("ckpt %s on a store without the capability: %q", verb, msg)
		}
	}
}

// TestCheckUsesTheMirrorListInUse: ckpt check and repair look at the
// mirrors of the list every write uses ($CKPT_MIRRORS here), not only the
// store's own mirrors.json.
func TestCheckUsesTheMirrorListInUse(t *testing.T) {
	project := t.TempDir()
	store := filepath.Join(project, filestore.StoreDirName)
	list := filepath.Join(project, "seed-mirrors.json") // not the store's own mirrors.json
	cli := func(want int, args ...string) string {
		t.Helper()
		var out, errOut bytes.Buffer
		env := &cmdutil.Env{
			IOStreams: cmdutil.IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut},
			Getenv:    func(k string) string { return map[string]string{EnvMirrors: list}[k] },
			WorkDir:   project, Now: func() time.Time { return t0 }, Args: append([]string{"--store", store}, args...),
		}
		if code := runOn(env, nil); code != want {
			t.Fatalf("ckpt %s: exit %d, want %d; stderr:\n%s", strings.Join(args, " "), code, want, errOut.String())
		}
		return out.String()
	}
	cli(0, "init")
	cli(0, "mirror", "add", "agent-checkpoints", "--root", "seed")
	cli(0, "start", "w", "--agent", "a1", "--stage", "S1")
	file := filepath.Join(filepath.Dir(list), "seed", "agent_checkpoints", "w.json")
	if err := os.Remove(file); err != nil {
		t.Fatal(err)
	}
	if out := cli(0, "check"); !strings.Contains(out, "w.json") {
		t.Errorf("check does not report the missing mirror of the list in use:\n%s", out)
	}
	cli(0, "repair")
	if data, _ := os.ReadFile(file); !strings.Contains(string(data), `"stage": "S1"`) {
		t.Errorf("repair did not rewrite the mirror:\n%s", data)
	}
}

// TestPartialFindings: ckpt check's warnings for work marked done with
// criteria unmet, found among every checkpoint or only those named.
func TestPartialFindings(t *testing.T) {
	ctx := context.Background()
	st := memstore.New()
	at := time.Date(2026, 1, 15, 16, 0, 0, 0, time.UTC)
	add := func(id string, evs ...ckpt.Event) {
		for _, e := range evs {
			if _, err := st.Append(ctx, id, e, ckpt.AppendOptions{}); err != nil {
				t.Fatal(err)
			}
		}
	}
	created := ckpt.MustEvent(ckpt.EventCreated, at, ckpt.Actor{}, ckpt.Created{Acceptance: []ckpt.Criterion{{ID: "c1"}}})
	done := ckpt.MustEvent(ckpt.EventStatus, at, ckpt.Actor{}, ckpt.StatusChange{Status: ckpt.StatusDone})
	add("partial", created, done)
	add("met", created, ckpt.MustEvent(ckpt.EventAccept, at, ckpt.Actor{}, ckpt.AcceptChange{ID: "c1", Met: true}), done)
	add("open", created)
	ids := func(ps []ckpt.Problem) (out []string) {
		for _, p := range ps {
			out = append(out, p.ID)
		}
		return out
	}
	if got := ids(partialFindings(ctx, st, nil)); len(got) != 1 || got[0] != "partial" {
		t.Errorf("every checkpoint: %v, want [partial]", got)
	}
	if got := ids(partialFindings(ctx, st, []string{"met", "open", "missing"})); len(got) != 0 {
		t.Errorf("named, none partial: %v", got)
	}
	if got := ids(partialFindings(ctx, st, []string{"partial"})); len(got) != 1 {
		t.Errorf("named partial: %v", got)
	}
}
