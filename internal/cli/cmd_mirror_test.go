package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	ckpt "github.com/ckpt-dev/ckpt"
	"github.com/ckpt-dev/ckpt/filestore"
	"github.com/ckpt-dev/ckpt/internal/cmdutil"
	"github.com/ckpt-dev/ckpt/internal/mirror"
	"github.com/ckpt-dev/ckpt/internal/syncbuf"
)

// mirrorCmdEnv runs the mirror commands against a real filestore.
type mirrorCmdEnv struct {
	t       *testing.T
	project string
	dir     string // the .ckpt directory
	out     bytes.Buffer
	errOut  bytes.Buffer
}

func newMirrorCmdEnv(t *testing.T) *mirrorCmdEnv {
	t.Helper()
	env := &mirrorCmdEnv{t: t, project: t.TempDir()}
	env.dir = filepath.Join(env.project, filestore.StoreDirName)
	st, err := filestore.Init(env.dir, filestore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	appendAll(t, st, "track-1", startEvent("Track one", "PLAN", "EXECUTE"))
	appendAll(t, st, "other", startEvent("Other"))
	st.Close()
	return env
}

func (env *mirrorCmdEnv) options() *MirrorOptions {
	env.out.Reset()
	env.errOut.Reset()
	return &MirrorOptions{
		IO:      cmdutil.IOStreams{In: strings.NewReader(""), Out: &env.out, ErrOut: &env.errOut},
		Now:     func() time.Time { return t0 },
		WorkDir: env.project,
		OpenStore: func() (ckpt.Store, mirror.List, error) {
			st, err := filestore.Open(env.dir)
			if err != nil {
				return nil, mirror.List{}, err
			}
			return st, mirror.ForStoreDir(st.Dir()), nil
		},
	}
}

func TestMirrorCommands(t *testing.T) {
	env := newMirrorCmdEnv(t)
	ctx := context.Background()
	meta := filepath.Join(env.project, "work", "conductor", "tracks", "track-1", "metadata.json")

	o := env.options()
	o.Format, o.Root, o.ID = "superpowers", "work", "track-1"
	if err := runMirrorAdd(ctx, o); err != nil {
		t.Fatal(err)
	}
	if want := "mirroring superpowers under " + filepath.Join(env.project, "work") + " for id track-1: wrote 1 checkpoint\n"; env.out.String() != want {
		t.Errorf("add printed %q, want %q", env.out.String(), want)
	}
	if _, err := os.Stat(meta); err != nil {
		t.Fatalf("the existing checkpoint was not written: %v", err)
	}
	raw, _ := os.ReadFile(filepath.Join(env.dir, mirror.FileName))
	var cfg mirror.Config
	if err := json.Unmarshal(raw, &cfg); err != nil || len(cfg.Mirrors) != 1 || cfg.Mirrors[0] != (mirror.Entry{Format: "superpowers", Root: "work", ID: "track-1"}) {
		t.Errorf("mirrors.json (root relative to the project):\n%s", raw)
	}

	// The same mirror again: exit 5.
	o = env.options()
	o.Format, o.Root, o.ID = "superpowers", "work", "track-1"
	if err := runMirrorAdd(ctx, o); ExitCode(err) != ExitExists {
		t.Errorf("second add: %v", err)
	}

	o = env.options()
	if err := runMirrorLs(o); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(env.out.String(), "superpowers  "+filepath.Join(env.project, "work")+"  id track-1\n") {
		t.Errorf("ls:\n%s", env.out.String())
	}

	// Every write through the opened store mirrors: a step done.
	st, err := filestore.Open(env.dir)
	if err != nil {
		t.Fatal(err)
	}
	var warn bytes.Buffer
	ms := mirror.Wrap(st, mirror.ForStoreDir(env.dir), mirrorOptions(&warn, func() time.Time { return t0 }))
	appendAll(t, ms, "track-1", ckpt.MustEvent(ckpt.EventStep, t0, ckpt.Actor{}, ckpt.StepChange{ID: "PLAN", Status: ckpt.StepDone}))
	ms.Close()
	if data, _ := os.ReadFile(meta); !bytes.Contains(data, []byte(`"status": "PASSED"`)) || warn.Len() != 0 {
		t.Errorf("after a step: %s\nwarnings %q", data, warn.String())
	}

	o = env.options()
	if err := runMirrorCheck(ctx, o); err != nil || env.out.String() != "1 mirror file checked, 0 problems\n" {
		t.Errorf("check: %v %q", err, env.out.String())
	}

	// Drift: check says what differs (exit 7) and writes nothing.
	data, _ := os.ReadFile(meta)
	edited := bytes.Replace(data, []byte(`"status": "PASSED"`), []byte(`"status": "FAILED"`), 1)
	os.WriteFile(meta, edited, 0o644)
	o = env.options()
	o.JSON = true
	err = runMirrorCheck(ctx, o)
	var mm mirrorMismatchError
	if !errors.As(err, &mm) || ExitCode(err) != ExitCorrupt {
		t.Fatalf("check of a drifted file: %v", err)
	}
	var rep struct {
		Checked  int
		Problems []mirror.Problem
	}
	if json.Unmarshal(env.out.Bytes(), &rep) != nil || rep.Checked != 1 || len(rep.Problems) != 1 ||
		!strings.Contains(rep.Problems[0].What, "steps is [PLAN failed, EXECUTE pending] in the file, [PLAN done, EXECUTE pending] in the checkpoint") ||
		rep.Problems[0].Repair != "ckpt mirror sync track-1" {
		t.Errorf("report %s", env.out.String())
	}
	if now, _ := os.ReadFile(meta); !bytes.Equal(now, edited) {
		t.Error("check wrote the mirror")
	}
	// ckpt check sees the same, as a warning; repair rewrites it.
	st, _ = filestore.Open(env.dir)
	found := mirror.Findings(ctx, st, mirror.ForStoreDir(env.dir), nil)
	if len(found) != 1 || found[0].Severity != "warning" || found[0].ID != "track-1" {
		t.Errorf("check findings %+v", found)
	}
	fixed := mirror.Repair(ctx, st, mirror.ForStoreDir(env.dir), nil, mirrorOptions(&warn, nil))
	st.Close()
	if len(fixed) != 1 || !fixed[0].Fixed {
		t.Errorf("repair %+v", fixed)
	}
	if now, _ := os.ReadFile(meta); !bytes.Equal(now, data) {
		t.Errorf("repair did not rewrite the file:\n%s", now)
	}

	// sync rewrites a deleted file.
	os.Remove(meta)
	o = env.options()
	if err := runMirrorSync(ctx, o); err != nil || env.out.String() != "wrote the mirrors of 1 checkpoint\n" {
		t.Errorf("sync: %v %q", err, env.out.String())
	}
	if _, err := os.Stat(meta); err != nil {
		t.Error(err)
	}

	// rm: exactly the entry given; a second rm finds nothing (exit 3).
	o = env.options()
	o.Format, o.Root = "superpowers", "work"
	if err := runMirrorRm(o); ExitCode(err) != ExitNotFound {
		t.Errorf("rm without the selector: %v", err)
	}
	o.ID = "track-1"
	if err := runMirrorRm(o); err != nil {
		t.Fatal(err)
	}
	o = env.options()
	o.Format, o.Root, o.ID = "superpowers", "work", "track-1"
	if err := runMirrorRm(o); ExitCode(err) != ExitNotFound {
		t.Errorf("second rm: %v", err)
	}
	if cfg, _ := mirror.ForStoreDir(env.dir).Read(); len(cfg.Mirrors) != 0 {
		t.Errorf("entries left %+v", cfg.Mirrors)
	}
	if _, err := os.Stat(meta); err != nil {
		t.Errorf("rm deleted the mirrored file: %v", err)
	}
}

func TestMirrorCheckIsReadOnly(t *testing.T) {
	env := newMirrorCmdEnv(t)
	if _, err := mirror.ForStoreDir(env.dir).Edit(func(cfg *mirror.Config) error {
		cfg.Mirrors = []mirror.Entry{{Format: "agent-checkpoints", Root: "."}}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	st, _ := filestore.Open(env.dir)
	defer st.Close()
	found := mirror.Findings(context.Background(), st, mirror.ForStoreDir(env.dir), nil)
	if len(found) != 2 || !strings.HasSuffix(found[0].What, ": missing") {
		t.Errorf("findings %+v", found)
	}
	if _, err := os.Stat(filepath.Join(env.project, "agent_checkpoints")); !os.IsNotExist(err) {
		t.Errorf("check created files: %v", err)
	}
	// A damaged list is one finding, not a failure.
	os.WriteFile(filepath.Join(env.dir, mirror.FileName), []byte("{"), 0o644)
	if found := mirror.Findings(context.Background(), st, mirror.ForStoreDir(env.dir), nil); len(found) != 1 || !strings.Contains(found[0].What, "mirror list") {
		t.Errorf("damaged list: %+v", found)
	}
}

func TestExportOut(t *testing.T) {
	env := newImportEnv(t)
	appendAll(t, env.store, "kai-7/secondary_a", startEvent("Spec", "research"))
	stdout := env.export("agent-checkpoints", "kai-7/secondary_a")
	o := &ExportOptions{common: env.common(), WorkDir: env.dir, Format: "agent-checkpoints", ID: "kai-7/secondary_a", Out: "agent_checkpoints/secondary_a.json"}
	if err := runExport(context.Background(), o); err != nil {
		t.Fatal(err)
	}
	if want := "exported kai-7/secondary_a (rev 1) as agent-checkpoints to agent_checkpoints/secondary_a.json\n"; env.out.String() != want {
		t.Errorf("printed %q", env.out.String())
	}
	data, err := os.ReadFile(filepath.Join(env.dir, "agent_checkpoints", "secondary_a.json"))
	if err != nil || !bytes.Equal(data, stdout) {
		t.Errorf("--out wrote %s (%v), stdout had %s", data, err, stdout)
	}
	entries, _ := os.ReadDir(filepath.Join(env.dir, "agent_checkpoints"))
	if len(entries) != 1 {
		t.Errorf("temporary files left: %v", entries)
	}
	for _, bad := range []*ExportOptions{
		{Format: "nope", ID: "kai-7/secondary_a"},
		{Format: "ccc", ID: "../x"},
		{Format: "ccc", ID: "kai-7/secondary_a", Rev: -1},
	} {
		bad.common, bad.WorkDir = env.common(), env.dir
		if err := runExport(context.Background(), bad); ExitCode(err) != ExitUsage {
			t.Errorf("%+v: %v", bad, err)
		}
	}
	o = &ExportOptions{common: env.common(), WorkDir: env.dir, Format: "ccc", ID: "none"}
	if err := runExport(context.Background(), o); ExitCode(err) != ExitNotFound {
		t.Errorf("unknown checkpoint: %v", err)
	}
}

func startEvent(title string, steps ...string) ckpt.Event {
	cr := ckpt.Created{Patch: ckpt.Patch{Title: &title}}
	for _, s := range steps {
		cr.Steps = append(cr.Steps, ckpt.Step{ID: s})
	}
	return ckpt.MustEvent(ckpt.EventCreated, t0, ckpt.Actor{}, cr)
}

func appendAll(t *testing.T, st ckpt.Store, id string, events ...ckpt.Event) {
	t.Helper()
	for _, e := range events {
		if _, err := st.Append(context.Background(), id, e, ckpt.AppendOptions{}); err != nil {
			t.Fatalf("append %s to %s: %v", e.Type, id, err)
		}
	}
}

// ckpt mirror follow on a local store writes the mirrors of changes another
// process makes through the store without mirrors (here: a second
// filestore handle), from the store's change feed, until interrupted.
func TestMirrorFollowOnAFileStore(t *testing.T) {
	env := newMirrorCmdEnv(t)
	if _, err := mirror.ForStoreDir(env.dir).Edit(func(cfg *mirror.Config) error {
		cfg.Mirrors = []mirror.Entry{{Format: "agent-checkpoints", Root: "."}}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	o := env.options()
	o.IO.Out = &syncbuf.Buffer{}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- runMirrorFollow(ctx, o) }()
	file := filepath.Join(env.project, "agent_checkpoints", "new.json")
	waitFor := func(what string, ok func() bool) {
		t.Helper()
		for deadline := time.Now().Add(time.Minute); !ok(); time.Sleep(10 * time.Millisecond) {
			if time.Now().After(deadline) {
				cancel()
				t.Fatalf("%s: not seen; output %q", what, o.IO.Out.(*syncbuf.Buffer).String())
			}
		}
	}
	waitFor("the first full sync", func() bool {
		return strings.Contains(o.IO.Out.(*syncbuf.Buffer).String(), "wrote the mirrors of track-1")
	})
	st, err := filestore.Open(env.dir)
	if err != nil {
		t.Fatal(err)
	}
	appendAll(t, st, "new", startEvent("Made elsewhere"))
	st.Close()
	waitFor("the change made elsewhere", func() bool { _, err := os.Stat(file); return err == nil })
	cancel()
	if err := <-done; err != nil {
		t.Errorf("follow ended with %v", err)
	}
}

// With a store that is not a local directory (here an in-memory one, as a
// server or PostgreSQL store would be), the mirror list is client-local:
// $CKPT_MIRRORS, else .ckpt-mirrors.json in the working directory; every
// write through the CLI writes the mirrors (issue 8: they stopped silently).
func TestMirrorsWithAStoreThatIsNotADirectory(t *testing.T) {
	h := newHarness(t)
	dir := t.TempDir()
	h.Vars[EnvMirrors] = filepath.Join(dir, "mirrors.json")
	h.OK("mirror", "add", "agent-checkpoints", "--root", dir, "--prefix", "kai/")
	h.OK("start", "kai/a", "--agent", "A", "--stage", "S1")
	data, err := os.ReadFile(filepath.Join(dir, "agent_checkpoints", "a.json"))
	if err != nil || !strings.Contains(string(data), `"stage": "S1"`) {
		t.Fatalf("mirror not written: %v\n%s", err, data)
	}
	h.OK("update", "kai/a", "--stage", "S2")
	if data, _ := os.ReadFile(filepath.Join(dir, "agent_checkpoints", "a.json")); !strings.Contains(string(data), `"stage": "S2"`) {
		t.Errorf("the update was not mirrored:\n%s", data)
	}
	if out := h.OK("mirror", "check"); !strings.Contains(out, "1 mirror file checked, 0 problems") {
		t.Errorf("mirror check: %s", out)
	}
	var cfg struct{ Mirrors []mirror.Entry }
	raw, _ := os.ReadFile(filepath.Join(dir, "mirrors.json"))
	if json.Unmarshal(raw, &cfg) != nil || len(cfg.Mirrors) != 1 || cfg.Mirrors[0].Root != "." {
		t.Errorf("the list (roots relative to its directory):\n%s", raw)
	}
}
