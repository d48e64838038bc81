package ckpt_test

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"os"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/ckpt-dev/ckpt"
	"github.com/ckpt-dev/ckpt/internal/clonegen"
	"github.com/ckpt-dev/ckpt/memstore"
	"github.com/ckpt-dev/ckpt/storetest"
	"github.com/google/go-cmp/cmp"
)

var updateClone = flag.Bool("update-clone", false, "rewrite clone_gen.go (go generate .)")

// TestCloneCodeIsCurrent: clone_gen.go is what clonegen writes for
// Checkpoint now, so a field added to it (or to a type it holds) cannot
// ship uncopied. Run `go generate .` to update it.
func TestCloneCodeIsCurrent(t *testing.T) {
	src, err := clonegen.File(ckpt.Checkpoint{}, "ckpt")
	if err != nil {
		t.Fatal(err)
	}
	if *updateClone {
		if err := os.WriteFile("clone_gen.go", src, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	if have, err := os.ReadFile("clone_gen.go"); err != nil || !bytes.Equal(have, src) {
		t.Errorf("clone_gen.go is stale or missing (Checkpoint or a type it holds changed): run `go generate .` in the repository's root and commit the result")
	}
}

// checkClone holds orig.Clone() to the reflective deep copy and to orig,
// requires that it share no slice, map or pointer with orig, and that
// overwriting everything in the copy leaves orig as it was. It reports
// with Errorf, not Fatalf: stores call it from the suite's goroutines.
func checkClone(t testing.TB, orig *ckpt.Checkpoint) {
	t.Helper()
	want := reflectClone(orig)
	cp := orig.Clone()
	if !reflect.DeepEqual(cp, want) {
		t.Errorf("Clone differs from the reflective copy (-reflective +clone):\n%s", cmp.Diff(want, cp))
		return
	}
	if !reflect.DeepEqual(cp, orig) {
		t.Errorf("Clone differs from the original (-original +clone):\n%s", cmp.Diff(orig, cp))
		return
	}
	ours := map[uintptr]string{}
	refs(reflect.ValueOf(orig), "", ours)
	theirs := map[uintptr]string{}
	refs(reflect.ValueOf(cp), "", theirs)
	for addr, path := range theirs {
		if o, ok := ours[addr]; ok {
			t.Errorf("the copy's %s shares memory with the original's %s", path, o)
			return
		}
	}
	scribble(reflect.ValueOf(cp))
	if !reflect.DeepEqual(orig, want) {
		t.Errorf("changing the copy changed the original (-was +now):\n%s", cmp.Diff(want, orig))
	}
}

// refs records the address of every pointer target, slice backing array
// and map reachable from v, with the path to it. time.Time's location is
// left out: it is shared on purpose.
func refs(v reflect.Value, path string, out map[uintptr]string) {
	switch v.Kind() {
	case reflect.Pointer:
		if v.IsNil() {
			return
		}
		out[v.Pointer()] = path
		refs(v.Elem(), path, out)
	case reflect.Slice:
		if v.Cap() > 0 {
			out[v.Pointer()] = path
		}
		for i := range v.Len() {
			refs(v.Index(i), path+"[]", out)
		}
	case reflect.Map:
		if v.IsNil() {
			return
		}
		out[v.Pointer()] = path
		for it := v.MapRange(); it.Next(); {
			refs(it.Value(), path+"[key]", out)
		}
	case reflect.Array:
		for i := range v.Len() {
			refs(v.Index(i), path+"[]", out)
		}
	case reflect.Struct:
		if v.Type() == timeType {
			return
		}
		for i := range v.NumField() {
			refs(v.Field(i), path+"."+v.Type().Field(i).Name, out)
		}
	}
}

// fill sets every field reachable from v from the bytes of src: each
// pointer, slice and map nil, empty or holding values (a slice sometimes
// with spare capacity), so every shape the type can take is reached.
func fill(v reflect.Value, src *[]byte) {
	next := func() byte {
		if len(*src) == 0 {
			return 0
		}
		b := (*src)[0]
		*src = (*src)[1:]
		return b
	}
	switch v.Kind() {
	case reflect.Pointer:
		if next()%3 == 0 {
			return
		}
		p := reflect.New(v.Type().Elem())
		fill(p.Elem(), src)
		v.Set(p)
	case reflect.Slice, reflect.Map:
		b := next()
		if b%4 == 0 {
			return
		}
		n := int(b/4) % 4
		if v.Kind() == reflect.Slice {
			s := reflect.MakeSlice(v.Type(), n, n+int(b%2))
			for i := range n {
				fill(s.Index(i), src)
			}
			v.Set(s)
			return
		}
		m := reflect.MakeMapWithSize(v.Type(), n)
		for range n {
			k, e := reflect.New(v.Type().Key()).Elem(), reflect.New(v.Type().Elem()).Elem()
			fill(k, src)
			fill(e, src)
			m.SetMapIndex(k, e)
		}
		v.Set(m)
	case reflect.Array:
		for i := range v.Len() {
			fill(v.Index(i), src)
		}
	case reflect.Struct:
		if v.Type() == timeType {
			at := time.Unix(int64(next())<<20|int64(next()), int64(next())*1000)
			if next()%2 == 0 {
				at = at.UTC()
			}
			v.Set(reflect.ValueOf(at))
			return
		}
		for i := range v.NumField() {
			fill(v.Field(i), src)
		}
	case reflect.String:
		n := int(next() % 8)
		n = min(n, len(*src))
		v.SetString(string((*src)[:n]))
		*src = (*src)[n:]
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		v.SetInt(int64(int8(next())))
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		v.SetUint(uint64(next()))
	case reflect.Float32, reflect.Float64:
		v.SetFloat(float64(int8(next())) / 4) // never NaN, which no copy equals
	case reflect.Bool:
		v.SetBool(next()%2 == 1)
	}
}

// FuzzClone builds a checkpoint from the bytes (every pointer, slice and
// map nil, empty or full as they say) and checks its Clone.
func FuzzClone(f *testing.F) {
	f.Add([]byte{})
	f.Add(bytes.Repeat([]byte{0xff}, 64))
	f.Add(bytes.Repeat([]byte{5, 1, 7, 2, 9, 3, 0, 13}, 200))
	rich, _ := json.Marshal(richCheckpoint())
	f.Add(rich)
	f.Fuzz(func(t *testing.T, data []byte) {
		c := new(ckpt.Checkpoint)
		fill(reflect.ValueOf(c).Elem(), &data)
		checkClone(t, c)
	})
}

// cloneChecker checks the Clone of every state a store returns.
type cloneChecker struct {
	ckpt.Store
	t    testing.TB
	mu   *sync.Mutex
	seen map[ckpt.EventType]bool
}

func (s cloneChecker) Append(ctx context.Context, id string, e ckpt.Event, opts ckpt.AppendOptions) (ckpt.AppendResult, error) {
	res, err := s.Store.Append(ctx, id, e, opts)
	if err == nil {
		checkClone(s.t, res.State)
		s.mu.Lock()
		s.seen[res.Event.Type] = true
		s.mu.Unlock()
	}
	return res, err
}

func (s cloneChecker) Get(ctx context.Context, id string, rev int64) (*ckpt.Checkpoint, error) {
	c, err := s.Store.Get(ctx, id, rev)
	if err == nil {
		checkClone(s.t, c)
	}
	return c, err
}

// TestCloneOfEveryState checks the Clone of every state the conformance
// suite folds (every event type's, at every revision it reads), and of a
// state with a code state, presence and messages, which the suite does
// not write.
func TestCloneOfEveryState(t *testing.T) {
	seen := map[ckpt.EventType]bool{}
	var mu sync.Mutex
	open := func(t *testing.T) ckpt.Store {
		return cloneChecker{Store: memstore.New(), t: t, mu: &mu, seen: seen}
	}
	storetest.Run(t, open)
	s := open(t)
	ctx := context.Background()
	actor := ckpt.Actor{Agent: "a1", Session: "s1"}
	at := time.Date(2025, 3, 14, 9, 0, 0, 0, time.UTC)
	for _, e := range []ckpt.Event{
		ckpt.MustEvent(ckpt.EventCreated, at, actor, ckpt.Created{Patch: ckpt.Patch{Title: ptr("t")}}),
		ckpt.MustEvent(ckpt.EventCode, at, actor, ckpt.CodeState{Root: "/src", Branch: "main", Uncommitted: 2}),
		ckpt.MustEvent(ckpt.EventTold, at, actor, ckpt.Tell{Text: "one"}),
		ckpt.MustEvent(ckpt.EventTold, at, actor, ckpt.Tell{Text: "two"}),
		ckpt.MustEvent(ckpt.EventDelivered, at, actor, ckpt.Delivery{IDs: []string{"m3"}}),
	} {
		if _, err := s.Append(ctx, "c", e, ckpt.AppendOptions{}); err != nil {
			t.Fatalf("%s: %v", e.Type, err)
		}
	}
	if err := s.Beat(ctx, "c", ckpt.Signal{State: ckpt.PresenceWorking, Process: &ckpt.Process{Host: "h", PID: 7}}); err != nil {
		t.Fatal(err)
	}
	if c, err := s.Get(ctx, "c", 0); err != nil || c.Heartbeat.Presence == nil || c.Code == nil || len(c.Messages) != 1 {
		t.Fatalf("the state with code, presence and a message: %+v, %v", c, err)
	}
	for _, typ := range []ckpt.EventType{
		ckpt.EventCreated, ckpt.EventUpdate, ckpt.EventStatus, ckpt.EventStep, ckpt.EventDecision,
		ckpt.EventBlocker, ckpt.EventError, ckpt.EventAccept, ckpt.EventCycle, ckpt.EventResumed,
		ckpt.EventTakenOver, ckpt.EventRestarted, ckpt.EventRestored, ckpt.EventImported, ckpt.EventSynced,
		ckpt.EventArchived, ckpt.EventNote, ckpt.EventCode, ckpt.EventTold, ckpt.EventDelivered,
	} {
		if !seen[typ] {
			t.Errorf("no %s event's state was checked", typ)
		}
	}
}
