package mirror

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	ckpt "github.com/ckpt-dev/ckpt"
	"github.com/ckpt-dev/ckpt/filestore"
	"github.com/ckpt-dev/ckpt/memstore"
	"github.com/ckpt-dev/ckpt/protocols"
	"github.com/ckpt-dev/ckpt/protocols/agentcheckpoints"
	"github.com/ckpt-dev/ckpt/protocols/ccc"
	"github.com/ckpt-dev/ckpt/protocols/plan"
	"github.com/ckpt-dev/ckpt/protocols/sitebuilder"
	"github.com/ckpt-dev/ckpt/protocols/superpowers"
)

// mirrorEnv is a project directory with a store directory in it (only its
// mirrors.json is used: the checkpoints live in a memstore) and a mirroring
// store over them.
type mirrorEnv struct {
	t        *testing.T
	project  string
	storeDir string
	mem      *memstore.Store
	warn     bytes.Buffer
}

func newMirrorEnv(t *testing.T, entries ...Entry) (*mirrorEnv, *Store) {
	t.Helper()
	env := &mirrorEnv{t: t, project: t.TempDir(), mem: memstore.New()}
	env.storeDir = filepath.Join(env.project, ".ckpt")
	if err := os.Mkdir(env.storeDir, 0o755); err != nil {
		t.Fatal(err)
	}
	if len(entries) > 0 {
		if _, err := ForStoreDir(env.storeDir).Edit(func(cfg *Config) error {
			cfg.Mirrors = append(cfg.Mirrors, entries...)
			return nil
		}); err != nil {
			t.Fatal(err)
		}
	}
	st := Wrap(env.mem, ForStoreDir(env.storeDir), env.options(func() time.Time { return t0 }))
	m, _ := st.(*Store)
	return env, m
}

var t0 = time.Date(2026, 1, 15, 14, 30, 0, 0, time.UTC)

// options print each warning as a line on env.warn.
func (env *mirrorEnv) options(now func() time.Time) Options {
	return Options{Now: now, Warn: func(msg string) { fmt.Fprintln(&env.warn, msg) }}
}

func (env *mirrorEnv) path(parts ...string) string {
	return filepath.Join(append([]string{env.project}, parts...)...)
}

func startEvent(title string, steps ...string) ckpt.Event {
	cr := ckpt.Created{Patch: ckpt.Patch{Title: &title}}
	for _, s := range steps {
		cr.Steps = append(cr.Steps, ckpt.Step{ID: s})
	}
	return ckpt.MustEvent(ckpt.EventCreated, t0, ckpt.Actor{}, cr)
}

func TestWithMirrorsLeavesAStoreWithoutMirrorsAlone(t *testing.T) {
	env, m := newMirrorEnv(t)
	if m != nil {
		t.Fatalf("a store without mirrors.json was wrapped")
	}
	if err := os.WriteFile(filepath.Join(env.storeDir, FileName), []byte(`{"version":1,"mirrors":[]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if st := Wrap(env.mem, ForStoreDir(env.storeDir), env.options(nil)); st != ckpt.Store(env.mem) {
		t.Errorf("an empty mirror list wrapped the store")
	}
	os.WriteFile(filepath.Join(env.storeDir, FileName), []byte(`{"version":1,"mirrors":[{"format":"ccc"}]}`), 0o644)
	if st := Wrap(env.mem, ForStoreDir(env.storeDir), env.options(nil)); st != ckpt.Store(env.mem) {
		t.Errorf("a damaged mirror list wrapped the store")
	}
	if !strings.Contains(env.warn.String(), "mirrors not written: ") || !strings.Contains(env.warn.String(), "has no root directory") {
		t.Errorf("warning %q", env.warn.String())
	}
}

func TestMirrorWrittenAfterEachChangeOnly(t *testing.T) {
	env, m := newMirrorEnv(t, Entry{Format: ccc.Name, Root: "out", ID: "a"})
	ctx := context.Background()
	progress := env.path("out", ccc.ProgressFile)

	if _, err := m.Append(ctx, "a", startEvent("Parser", "parse"), ckpt.AppendOptions{}); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(progress)
	if err != nil || !bytes.Contains(data, []byte("**Issue:** Parser\n")) || !bytes.Contains(data, []byte("Resume a.")) {
		t.Fatalf("mirror after create: %v\n%s", err, data)
	}

	// A replayed key changed nothing: the mirror is not written.
	e := ckpt.MustEvent(ckpt.EventNote, t0, ckpt.Actor{}, ckpt.Note{Text: "x"})
	e.Key = "k1"
	if _, err := m.Append(ctx, "a", e, ckpt.AppendOptions{}); err != nil {
		t.Fatal(err)
	}
	os.Remove(progress)
	if res, err := m.Append(ctx, "a", e, ckpt.AppendOptions{}); err != nil || !res.Replayed {
		t.Fatalf("replay: %v %+v", err, res)
	}
	if _, err := os.Stat(progress); !os.IsNotExist(err) {
		t.Errorf("a replayed key rewrote the mirror: %v", err)
	}
	// A refused event writes nothing either.
	if _, err := m.Append(ctx, "a", ckpt.MustEvent(ckpt.EventDecision, t0, ckpt.Actor{}, ckpt.DecisionData{}), ckpt.AppendOptions{}); err == nil {
		t.Fatal("an empty decision was accepted")
	}
	if _, err := os.Stat(progress); !os.IsNotExist(err) {
		t.Errorf("a refused event wrote the mirror: %v", err)
	}
	// Another checkpoint is not selected.
	if _, err := m.Append(ctx, "b", startEvent("Other"), ckpt.AppendOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(progress); !os.IsNotExist(err) {
		t.Errorf("checkpoint b was mirrored by an entry for a: %v", err)
	}
	if env.warn.Len() != 0 {
		t.Errorf("warnings: %s", env.warn.String())
	}
}

func TestMirrorFailureWarnsAndTheWriteStands(t *testing.T) {
	env, m := newMirrorEnv(t, Entry{Format: ccc.Name, Root: ".", ID: "a"})
	if err := os.Mkdir(env.path(ccc.ProgressFile), 0o755); err != nil {
		t.Fatal(err)
	}
	res, err := m.Append(context.Background(), "a", startEvent("Parser"), ckpt.AppendOptions{})
	if err != nil || res.State.Rev != 1 {
		t.Fatalf("the write failed with its mirror: %v", err)
	}
	if c, err := env.mem.Get(context.Background(), "a", 0); err != nil || c.Rev != 1 {
		t.Errorf("event not stored: %v", err)
	}
	w := env.warn.String()
	if !strings.HasPrefix(w, "mirror ccc of a under "+env.project+" not written: ") || strings.Count(w, "\n") != 1 {
		t.Errorf("warning %q", w)
	}
}

func TestMirrorHonoursTheMetadataLock(t *testing.T) {
	env, m := newMirrorEnv(t, Entry{Format: superpowers.Name, Root: "."})
	// Short while the lock is held for good; then a minute, a bound that
	// only ends a broken test, for a release that a loaded machine may
	// make late.
	lockTimeout := 150 * time.Millisecond
	m.opts.Formats = func(name string) (protocols.Format, error) {
		return &superpowers.Format{LockTimeout: lockTimeout, LockPoll: 10 * time.Millisecond}, nil
	}
	ctx := context.Background()
	if _, err := m.Append(ctx, "t1", startEvent("Track", "PLAN"), ckpt.AppendOptions{}); err != nil {
		t.Fatal(err)
	}
	meta := env.path("conductor", "tracks", "t1", "metadata.json")
	before, err := os.ReadFile(meta)
	if err != nil {
		t.Fatal(err)
	}
	lock := env.path("conductor", "tracks", "t1", ".metadata.lock")
	if err := os.Mkdir(lock, 0o755); err != nil {
		t.Fatal(err)
	}
	// Held for good: the mirror gives up, the file is untouched, the lock
	// is still the other tool's.
	if _, err := m.Append(ctx, "t1", ckpt.MustEvent(ckpt.EventStep, t0, ckpt.Actor{}, ckpt.StepChange{ID: "PLAN", Status: ckpt.StepInProgress}), ckpt.AppendOptions{}); err != nil {
		t.Fatal(err)
	}
	if after, _ := os.ReadFile(meta); !bytes.Equal(before, after) {
		t.Errorf("metadata.json written while .metadata.lock was held:\n%s", after)
	}
	if !strings.Contains(env.warn.String(), "metadata.json is locked") || !strings.Contains(env.warn.String(), "rmdir "+lock) {
		t.Errorf("warning %q", env.warn.String())
	}
	if _, err := os.Stat(lock); err != nil {
		t.Errorf("the other tool's lock was removed: %v", err)
	}
	// Released a moment later: the next change waits for it, then writes.
	lockTimeout = time.Minute
	go func() {
		time.Sleep(40 * time.Millisecond)
		os.Remove(lock)
	}()
	env.warn.Reset()
	if _, err := m.Append(ctx, "t1", ckpt.MustEvent(ckpt.EventStep, t0, ckpt.Actor{}, ckpt.StepChange{ID: "PLAN", Status: ckpt.StepDone}), ckpt.AppendOptions{}); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Loop struct {
			Checkpoints map[string]struct{ Status string } `json:"checkpoints"`
		} `json:"loop_state"`
	}
	data, _ := os.ReadFile(meta)
	if err := json.Unmarshal(data, &doc); err != nil || doc.Loop.Checkpoints["PLAN"].Status != "PASSED" || env.warn.Len() != 0 {
		t.Errorf("after release: %v %s; warnings %q", err, data, env.warn.String())
	}
}

func TestBeatRewritesTheMirror(t *testing.T) {
	env, m := newMirrorEnv(t, Entry{Format: agentcheckpoints.Name, Root: ".", Prefix: "kai-7/"})
	ctx := context.Background()
	if _, err := m.Append(ctx, "kai-7/secondary_a", startEvent("Spec"), ckpt.AppendOptions{}); err != nil {
		t.Fatal(err)
	}
	at := t0.Add(20 * time.Minute)
	if err := m.Beat(ctx, "kai-7/secondary_a", ckpt.Signal{At: at}); err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	data, _ := os.ReadFile(env.path("agent_checkpoints", "secondary_a.json"))
	if err := json.Unmarshal(data, &doc); err != nil || doc["last_checkpoint"] != "2026-01-15T14:50:00Z" {
		t.Errorf("after the beat: %v\n%s", err, data)
	}
	// A beat for a checkpoint no entry selects reads nothing and writes nothing.
	if _, err := env.mem.Append(ctx, "other", startEvent("x"), ckpt.AppendOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := m.Beat(ctx, "other", ckpt.Signal{At: at}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(env.path("agent_checkpoints", "other.json")); !os.IsNotExist(err) {
		t.Errorf("unselected checkpoint mirrored: %v", err)
	}
	// A beat that fails is the caller's error, as without mirrors.
	if err := m.Beat(ctx, "kai-7/none", ckpt.Signal{At: at}); err == nil {
		t.Error("beat of a missing checkpoint succeeded")
	}
}

func TestArchiveCopiesGetTheDocumentsArchiveName(t *testing.T) {
	env, m := newMirrorEnv(t,
		Entry{Format: agentcheckpoints.Name, Root: "."},
		Entry{Format: ccc.Name, Root: "ccc", ID: "kai-7/secondary_a"},
	)
	ctx := context.Background()
	if _, err := m.Append(ctx, "kai-7/secondary_a", startEvent("Spec"), ckpt.AppendOptions{}); err != nil {
		t.Fatal(err)
	}
	os.Remove(env.path("ccc", ccc.ProgressFile))
	at := time.Unix(1768487400, 0).UTC()
	if _, _, err := ckpt.TakeOverCheckpoint(ctx, m, "kai-7/secondary_a", ckpt.Agent{ID: "Secondary-C"}, ckpt.Lifecycle{At: at}); err != nil {
		t.Fatal(err)
	}
	var arch, live map[string]any
	data, err := os.ReadFile(env.path("agent_checkpoints", "secondary_a_crashed_1768487400.json"))
	if err != nil || json.Unmarshal(data, &arch) != nil || arch["agent_id"] == "Secondary-C" {
		t.Fatalf("archive file: %v\n%s", err, data)
	}
	data, _ = os.ReadFile(env.path("agent_checkpoints", "secondary_a.json"))
	if json.Unmarshal(data, &live) != nil || live["agent_id"] != "Secondary-C" {
		t.Errorf("live file:\n%s", data)
	}
	// ccc keeps one progress file: it is the live checkpoint's, and the
	// archive copy did not overwrite it.
	data, _ = os.ReadFile(env.path("ccc", ccc.ProgressFile))
	if bytes.Contains(data, []byte("crashed")) {
		t.Errorf("the archive copy was mirrored as ccc:\n%s", data)
	}
	if env.warn.Len() != 0 {
		t.Errorf("warnings: %s", env.warn.String())
	}
}

func TestPlanSyncIsNotMirroredBackToItsPlan(t *testing.T) {
	env, m := newMirrorEnv(t, Entry{Format: "plan", Root: "."})
	snap := ckpt.Snapshot{State: ckpt.Checkpoint{Status: ckpt.StatusInProgress}, Source: plan.SourcePrefix + "plans/p/plan.md"}
	if _, err := m.Append(context.Background(), "p", ckpt.MustEvent(ckpt.EventImported, t0, ckpt.Actor{}, snap), ckpt.AppendOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(env.path("plans", "p")); !os.IsNotExist(err) {
		t.Errorf("a plan sync was mirrored back: %v", err)
	}
	snap.Source = "superpowers:conductor/tracks/p/metadata.json"
	if _, err := m.Append(context.Background(), "p", ckpt.MustEvent(ckpt.EventImported, t0, ckpt.Actor{}, snap), ckpt.AppendOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(env.path("plans", "p", "plan.md")); err != nil {
		t.Errorf("an import from elsewhere was not mirrored as plan: %v", err)
	}
}

func TestEditMirrorsConcurrently(t *testing.T) {
	dir := t.TempDir()
	var wg sync.WaitGroup
	errs := make(chan error, 16)
	for i := range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := ForStoreDir(dir).Edit(func(cfg *Config) error {
				cfg.Mirrors = append(cfg.Mirrors, Entry{Format: ccc.Name, Root: fmt.Sprintf("r%d", i)})
				return nil
			})
			errs <- err
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	cfg, err := ForStoreDir(dir).Read()
	if err != nil || len(cfg.Mirrors) != 16 {
		t.Fatalf("%d entries after 16 concurrent adds (%v)", len(cfg.Mirrors), err)
	}
}

func TestDecodeMirrors(t *testing.T) {
	good := `{"version":1,"mirrors":[{"format":"ccc","root":"."},{"format":"plan","root":"/abs","id":"a/b"},{"format":"sitebuilder","root":"x","prefix":"T"}]}`
	cfg, err := Decode([]byte(good))
	if err != nil || len(cfg.Mirrors) != 3 || cfg.Mirrors[1].ID != "a/b" {
		t.Fatalf("%+v %v", cfg, err)
	}
	for _, bad := range []string{
		``, `[]`, `{"version":2,"mirrors":[]}`, `{"version":1,"mirrors":[],"extra":1}`,
		`{"version":1,"mirrors":[{"format":"nope","root":"."}]}`,
		`{"version":1,"mirrors":[{"format":"ccc","root":""}]}`,
		`{"version":1,"mirrors":[{"format":"ccc","root":".","id":"a","prefix":"b"}]}`,
		`{"version":1,"mirrors":[{"format":"ccc","root":".","id":"../x"}]}`,
	} {
		if _, err := Decode([]byte(bad)); err == nil {
			t.Errorf("%q accepted", bad)
		} else if ckpt.ErrorCode(err) != ckpt.CodeInvalid {
			t.Errorf("%q: code %s", bad, ckpt.ErrorCode(err))
		}
	}
}

func FuzzDecodeMirrors(f *testing.F) {
	f.Add([]byte(`{"version":1,"mirrors":[{"format":"ccc","root":"."}]}`))
	f.Add([]byte(`{"version":1,"mirrors":[{"format":"plan","root":"/a","id":"x/y"},{"format":"superpowers","root":"r","prefix":"p"}]}`))
	f.Add([]byte(`{"version":1,"mirrors":null}`))
	f.Add([]byte(`{`))
	f.Fuzz(func(t *testing.T, data []byte) {
		cfg, err := Decode(data)
		if err != nil {
			return
		}
		// What was accepted writes back and reads the same.
		out, err := json.Marshal(cfg)
		if err != nil {
			t.Fatal(err)
		}
		again, err := Decode(out)
		if err != nil || len(again.Mirrors) != len(cfg.Mirrors) {
			t.Fatalf("re-read of %s: %v", out, err)
		}
		for i, m := range cfg.Mirrors {
			if again.Mirrors[i] != m {
				t.Fatalf("entry %d: %+v, re-read %+v", i, m, again.Mirrors[i])
			}
			if m.ID != "" && ckpt.ValidateID(m.ID) != nil {
				t.Fatalf("invalid ID %q accepted", m.ID)
			}
		}
	})
}

const renderedStatus = "# Orchestration Status\n\n**Last Updated**: 2025-12-08T14:30:25Z\n**Overall Progress**: 25% (0/1 tasks complete)\n\n---\n\n## Active Checkpoints\n\n| Agent | Task | Progress | Last Update | Status |\n|-------|------|----------|-------------|--------|\n| migration | T060 | 25% | just now | in_progress |\n"

func TestMergeStatusSections(t *testing.T) {
	table := "## Active Checkpoints\n\n| Agent | Task | Progress | Last Update | Status |\n|-------|------|----------|-------------|--------|\n| migration | T060 | 25% | just now | in_progress |\n"
	cases := []struct{ name, existing, want string }{
		{"empty", "", table},
		{"appended after the orchestrator's sections",
			"# Orchestration Status\n\n## Stream Progress\n\n| a |\n",
			"# Orchestration Status\n\n## Stream Progress\n\n| a |\n\n---\n\n" + table},
		{"replaced in place, other sections kept",
			"# S\n\n## Active Checkpoints\n\n| old |\n\n---\n\n## Metrics\n\nm\n",
			"# S\n\n" + table + "\n---\n\n## Metrics\n\nm\n"},
		{"a stale Partially Complete section goes",
			"# S\n\n## Active Checkpoints\n\n| old |\n\n## Partially Complete\n\n- T1: x\n\n## Notes\nn\n",
			"# S\n\n" + table + "\n## Notes\nn\n"},
		{"a heading in a code fence is text",
			"# S\n\n```\n## Active Checkpoints\n```\n",
			"# S\n\n```\n## Active Checkpoints\n```\n\n---\n\n" + table},
		{"an unclosed code fence is closed first",
			"# S\n\n````go\n## x\n```\n",
			"# S\n\n````go\n## x\n```\n````\n\n---\n\n" + table},
		{"the header's time and overall progress follow the table",
			"# Orchestration Status\n\n**Last Updated**: 2025-12-01T00:00:00Z\n**Overall Progress**: 0% (0/1 tasks complete)\n**Owner**: ops\n\n```\n**Last Updated**: in a fence\n```\n\n## Active Checkpoints\n\n| old |\n",
			"# Orchestration Status\n\n**Last Updated**: 2025-12-08T14:30:25Z\n**Overall Progress**: 25% (0/1 tasks complete)\n**Owner**: ops\n\n```\n**Last Updated**: in a fence\n```\n\n" + table},
		{"CRLF kept",
			"# S\r\n\r\n## Active Checkpoints\r\n\r\n| old |\r\n\r\n## Metrics\r\n",
			"# S\r\n\r\n" + strings.ReplaceAll(table, "\n", "\r\n") + "\r\n## Metrics\r\n"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := mergeStatusSections(tc.existing, renderedStatus)
			if got != tc.want {
				t.Errorf("got:\n%q\nwant:\n%q", got, tc.want)
			}
			if again := mergeStatusSections(got, renderedStatus); again != got {
				t.Errorf("a second merge changed the file:\n%q", again)
			}
		})
	}
}

func FuzzMergeStatusSections(f *testing.F) {
	f.Add("# S\n\n## Active Checkpoints\n\n| old |\n\n---\n\n## Metrics\n")
	f.Add("# S\r\n## Partially Complete\r\n- x\r\n```\r\n## Active Checkpoints\r\n")
	f.Add("")
	f.Add("## active checkpoints\n---\n## Active Checkpoints\n")
	f.Fuzz(func(t *testing.T, existing string) {
		got := mergeStatusSections(existing, renderedStatus)
		if !strings.Contains(strings.ReplaceAll(got, "\r\n", "\n"), "| migration | T060 | 25% | just now | in_progress |") {
			t.Fatalf("the table is missing from:\n%q", got)
		}
		if again := mergeStatusSections(got, renderedStatus); again != got {
			t.Fatalf("not idempotent:\n%q\nthen\n%q", got, again)
		}
		// Lines that are not ckpt's sections survive.
		for _, l := range strings.Split(existing, "\n") {
			l = strings.TrimRight(l, "\r")
			if strings.HasPrefix(l, "# ") && !strings.Contains(got, l) {
				t.Fatalf("title line %q lost:\n%q", l, got)
			}
		}
	})
}

func TestOutboxAgentAndStoredRoot(t *testing.T) {
	for c, want := range map[*ckpt.Checkpoint]string{
		{ID: "T060", Agent: ckpt.Agent{ID: "migration"}}:  "migration",
		{ID: "T060", Agent: ckpt.Agent{Name: "Riley M."}}: "riley-m",
		{ID: "kai/T061"}: "t061",
		{ID: "x", Agent: ckpt.Agent{ID: "../../etc"}}: "etc",
		{ID: "--", Agent: ckpt.Agent{ID: "/"}}:        "agent",
	} {
		if got := outboxAgent(c); got != want {
			t.Errorf("outboxAgent(%+v) = %q, want %q", c, got, want)
		}
	}
	store := "/p/.ckpt"
	for root, want := range map[string]string{"/p": ".", "/p/docs/x": "docs/x", "/elsewhere": "/elsewhere", "/p/../q": "/p/../q"} {
		if got := ForStoreDir(store).StoredRoot(root); got != want {
			t.Errorf("storedRoot(%q) = %q, want %q", root, got, want)
		}
	}
	e := Entry{Root: "docs/x"}
	if got := ForStoreDir(store).RootDir(e); got != "/p/docs/x" {
		t.Errorf("rootDir %q", got)
	}
}

// BenchmarkMirroredAppend measures what a mirror adds to a durable update
// on a real filestore: none (a store without mirrors is not wrapped), and
// one mirror of each kind that rewrites its file on every change.
func BenchmarkMirroredAppend(b *testing.B) {
	for _, format := range []string{"", ccc.Name, agentcheckpoints.Name, superpowers.Name, sitebuilder.Name} {
		name := format
		if name == "" {
			name = "no-mirror"
		}
		b.Run(name, func(b *testing.B) {
			project := b.TempDir()
			dir := filepath.Join(project, filestore.StoreDirName)
			st, err := filestore.Init(dir, filestore.Options{})
			if err != nil {
				b.Fatal(err)
			}
			if format != "" {
				if _, err := ForStoreDir(dir).Edit(func(cfg *Config) error {
					cfg.Mirrors = []Entry{{Format: format, Root: "."}}
					return nil
				}); err != nil {
					b.Fatal(err)
				}
			}
			var warn bytes.Buffer
			ms := Wrap(st, ForStoreDir(dir), Options{Now: time.Now, Warn: func(msg string) { warn.WriteString(msg) }})
			defer ms.Close()
			ctx := context.Background()
			if _, err := ms.Append(ctx, "T060", startEvent("Bench", "a", "b"), ckpt.AppendOptions{}); err != nil {
				b.Fatal(err)
			}
			b.ResetTimer()
			for i := 0; b.Loop(); i++ {
				e := ckpt.MustEvent(ckpt.EventNote, time.Now(), ckpt.Actor{}, ckpt.Note{Text: fmt.Sprintf("note %d", i)})
				if _, err := ms.Append(ctx, "T060", e, ckpt.AppendOptions{}); err != nil {
					b.Fatal(err)
				}
			}
			b.StopTimer()
			if warn.Len() != 0 {
				b.Fatalf("warnings: %s", warn.String())
			}
		})
	}
}

// BenchmarkOpenWithoutMirrors is what every command pays for mirroring in
// a store that has none: looking for mirrors.json.
func BenchmarkOpenWithoutMirrors(b *testing.B) {
	dir := b.TempDir()
	st := memstore.New()
	for b.Loop() {
		if Wrap(st, ForStoreDir(dir), Options{}) != ckpt.Store(st) {
			b.Fatal("wrapped")
		}
	}
}
