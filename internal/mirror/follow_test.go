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

// noFeed hides a store's change feed, as a store without one would be.
type noFeed struct{ ckpt.Store }

// follow runs Follow over st until the test ends, and returns a function
// that waits until checkpoint id's mirrors were written n times.
func follow(t *testing.T, env *mirrorEnv, st ckpt.Store, o FollowOptions) func(id string, n int) {
	t.Helper()
	m, err := Open(st, ForStoreDir(env.storeDir), env.options(func() time.Time { return t0 }))
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	count := map[string]int{}
	cond := sync.NewCond(&mu)
	o.Written = func(id string) {
		mu.Lock()
		count[id]++
		cond.Broadcast()
		mu.Unlock()
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- m.Follow(ctx, o) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Follow: %v", err)
		}
	})
	return func(id string, n int) {
		t.Helper()
		mu.Lock()
		defer mu.Unlock()
		for count[id] < n {
			cond.Wait()
		}
	}
}

// Changes made to the store by someone else (not through a mirroring
// store) reach the seed files: through the change feed, and by polling a
// store that has none.
func TestFollowWritesChangesMadeElsewhere(t *testing.T) {
	for _, feed := range []bool{true, false} {
		name := map[bool]string{true: "feed", false: "poll"}[feed]
		t.Run(name, func(t *testing.T) {
			env, _ := newMirrorEnv(t, Entry{Format: agentcheckpoints.Name, Root: ".", Prefix: "kai-7/"})
			ctx := context.Background()
			if _, err := env.mem.Append(ctx, "kai-7/a", startEvent("Before"), ckpt.AppendOptions{}); err != nil {
				t.Fatal(err)
			}
			var st ckpt.Store = env.mem
			if !feed {
				st = noFeed{env.mem}
			}
			wait := follow(t, env, st, FollowOptions{Poll: 10 * time.Millisecond})
			wait("kai-7/a", 1) // the first full sync
			file := env.path("agent_checkpoints", "a.json")
			if _, err := os.Stat(file); err != nil {
				t.Fatalf("after the first sync: %v", err)
			}
			stage := "After"
			e := ckpt.MustEvent(ckpt.EventUpdate, t0, ckpt.Actor{}, ckpt.Patch{Stage: &stage})
			if _, err := env.mem.Append(ctx, "kai-7/a", e, ckpt.AppendOptions{}); err != nil {
				t.Fatal(err)
			}
			if _, err := env.mem.Append(ctx, "kai-7/b", startEvent("New"), ckpt.AppendOptions{}); err != nil {
				t.Fatal(err)
			}
			if _, err := env.mem.Append(ctx, "unselected", startEvent("No"), ckpt.AppendOptions{}); err != nil {
				t.Fatal(err)
			}
			wait("kai-7/a", 2)
			wait("kai-7/b", 1)
			if data, _ := os.ReadFile(file); !strings.Contains(string(data), `"stage": "After"`) {
				t.Errorf("the change was not followed:\n%s", data)
			}
			if _, err := os.Stat(env.path("agent_checkpoints", "b.json")); err != nil {
				t.Errorf("the new checkpoint was not written: %v", err)
			}
			if _, err := os.Stat(env.path("agent_checkpoints", "unselected.json")); !os.IsNotExist(err) {
				t.Errorf("an unselected checkpoint was written: %v", err)
			}
		})
	}
}
