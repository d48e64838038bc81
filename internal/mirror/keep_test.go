package mirror

import (
	"context"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	ckpt "github.com/ckpt-dev/ckpt"
	"github.com/ckpt-dev/ckpt/protocols/agentcheckpoints"
)

// TestKeepFollowsTheMirrorListAsItChanges: a long-running Keep (ckpt
// serve's) picks up a mirror added while it runs, writing its files and
// escalations at once and following the changes after; keeps the mirrors
// it has when the list is damaged, saying so; and stops writing a mirror
// removed.
func TestKeepFollowsTheMirrorListAsItChanges(t *testing.T) {
	env, _ := newMirrorEnv(t)
	list := ForStoreDir(env.storeDir)
	ctx := context.Background()
	var mu sync.Mutex
	var warnings []string
	opts := Options{Now: func() time.Time { return t0 }, Warn: func(msg string) { mu.Lock(); warnings = append(warnings, msg); mu.Unlock() }}
	loaded := make(chan []Entry, 1)
	kctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		Keep(kctx, env.mem, list, opts, KeepOptions{Poll: 5 * time.Millisecond, Every: time.Hour,
			Now: func() time.Time { return t0.Add(61 * time.Minute) }, Loaded: func(e []Entry) { loaded <- e }})
	}()
	defer func() { cancel(); <-done }()
	if e := <-loaded; len(e) != 0 {
		t.Fatalf("first read: %v, want no mirrors", e)
	}

	if _, err := env.mem.Append(ctx, "kai-7/secondary_a", agentStart("kai-7/secondary_a", "Secondary-A"), ckpt.AppendOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := list.Edit(func(cfg *Config) error {
		cfg.Mirrors = append(cfg.Mirrors, Entry{Format: agentcheckpoints.Name, Root: ".", Prefix: "kai-7/"})
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if e := <-loaded; len(e) != 1 {
		t.Fatalf("after mirror add: %v, want the new mirror", e)
	}
	file := env.path(agentcheckpoints.Dir, "secondary_a.json")
	if !strings.Contains(read(t, file), `"agent_id": "Secondary-A"`) {
		t.Fatalf("the new mirror's file was not written at once:\n%s", read(t, file))
	}
	if !strings.Contains(read(t, env.path(EpicReadme)), "Secondary-A: STALE (likely crashed)") {
		t.Fatal("the new mirror's escalation was not written at once")
	}
	note := func(text string) {
		t.Helper()
		if _, err := env.mem.Append(ctx, "kai-7/secondary_a", ckpt.MustEvent(ckpt.EventUpdate, t0.Add(time.Minute), ckpt.Actor{}, ckpt.Patch{CurrentStep: &text}), ckpt.AppendOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	note("Writing spec.md")
	waitFor(t, file, `"current_step": "Writing spec.md"`)

	if err := os.WriteFile(list.File, []byte("{"), 0o644); err != nil {
		t.Fatal(err)
	}
	// The damaged list is seen at the next poll; only after that does a
	// write show the mirrors were kept (a write before it proves nothing).
	var got string
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(2 * time.Millisecond) {
		mu.Lock()
		got = strings.Join(warnings, "\n")
		mu.Unlock()
		if strings.Contains(got, "not a mirror list") {
			break
		}
	}
	if !strings.Contains(got, "not a mirror list") || !strings.Contains(got, "the mirrors read before it are kept") {
		t.Fatalf("a damaged list was not reported: %q", got)
	}
	note("Writing checklist.md")
	waitFor(t, file, `"current_step": "Writing checklist.md"`)

	if err := os.Remove(list.File); err != nil {
		t.Fatal(err)
	}
	if e := <-loaded; len(e) != 0 {
		t.Fatalf("after the list was removed: %v, want no mirrors", e)
	}
	note("Transition to S2.P3")
	time.Sleep(20 * time.Millisecond) // four polls: a follow left running would have written
	if strings.Contains(read(t, file), "Transition") {
		t.Error("a removed mirror was still written")
	}
}

// waitFor waits until the file at path holds want (Keep writes in the
// background); the bound only ends a test whose writer never comes.
func waitFor(t *testing.T, path, want string) {
	t.Helper()
	var data []byte
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(2 * time.Millisecond) {
		data, _ = os.ReadFile(path)
		if strings.Contains(string(data), want) {
			return
		}
	}
	t.Fatalf("%s never held %q:\n%s", path, want, data)
}

// TestKeepWarnsOnceWhenTheListCannotBeRead: a list file Keep cannot read
// is reported once, not at every poll.
func TestKeepWarnsOnceWhenTheListCannotBeRead(t *testing.T) {
	env, _ := newMirrorEnv(t)
	list := ForStoreDir(env.storeDir)
	if err := os.Mkdir(list.File, 0o755); err != nil { // a directory where the file should be
		t.Fatal(err)
	}
	var mu sync.Mutex
	var warnings []string
	opts := Options{Warn: func(msg string) { mu.Lock(); warnings = append(warnings, msg); mu.Unlock() }}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		Keep(ctx, env.mem, list, opts, KeepOptions{Poll: time.Millisecond, Every: time.Hour})
	}()
	count := func() int { mu.Lock(); defer mu.Unlock(); return len(warnings) }
	for count() == 0 {
		time.Sleep(time.Millisecond)
	}
	time.Sleep(20 * time.Millisecond) // twenty polls more
	cancel()
	<-done
	if n := count(); n != 1 || !strings.Contains(warnings[0], "mirror list not read") {
		t.Errorf("%d warnings, want one: %q", n, warnings)
	}
}
