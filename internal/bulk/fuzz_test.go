package bulk

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/ckpt-dev/ckpt"
	"github.com/ckpt-dev/ckpt/memstore"
)

// FuzzBulkRequest: any body POST /v1/bulk or the dashboard may send is
// decoded, checked and, as a dry run, previewed without a panic; a refusal
// is ErrInvalid, a preview lists each ID once, in order, with a known
// outcome, and writes nothing.
func FuzzBulkRequest(f *testing.F) {
	for _, s := range []string{
		`{"action":"done","filter":{"prefix":"team"}}`,
		`{"action":"tell","filter":{"q":"task","presence":"working,blocked"},"text":"hi","ids":["team/a","team/a","zz"]}`,
		`{"action":"archive","filter":{"status":"done,abandoned","all":true}}`,
		`{"action":"unblock","filter":{"status":"sleeping"}}`,
		`{"action":"explode","filter":{}}`,
		`{"action":"note","filter":{"label":"x","agent":"agent-a","parent":"p"},"text":""}`,
	} {
		f.Add([]byte(s))
	}
	st := memstore.New()
	at := time.Now().Add(-time.Minute)
	for _, id := range []string{"team/a", "team/b", "other/c"} {
		c := ckpt.Created{Patch: ckpt.Patch{Title: ptr("task " + id), Agent: &ckpt.Agent{ID: "agent-a"}}}
		if _, err := st.Append(context.Background(), id, ckpt.MustEvent(ckpt.EventCreated, at, ckpt.Actor{Agent: "seed"}, c), ckpt.AppendOptions{}); err != nil {
			f.Fatal(err)
		}
	}
	head, _ := st.Head(context.Background())
	f.Fuzz(func(t *testing.T, body []byte) {
		var r Request
		if json.Unmarshal(body, &r) != nil {
			return
		}
		r.DryRun = true
		res, err := Run(context.Background(), Env{Store: st, Now: time.Now()}, r)
		if err != nil {
			if !errors.Is(err, ckpt.ErrInvalid) {
				t.Fatalf("%s: error %v, want invalid", body, err)
			}
			return
		}
		ids := make([]string, len(res.Items))
		for i, it := range res.Items {
			ids[i] = it.ID
			if !slices.Contains([]string{Will, Skipped, Forbidden}, it.Outcome) {
				t.Fatalf("%s: a dry run's outcome %q for %s", body, it.Outcome, it.ID)
			}
		}
		if !slices.IsSorted(ids) || len(slices.Compact(slices.Clone(ids))) != len(ids) {
			t.Fatalf("%s: items %v not each once in order", body, ids)
		}
		if now, _ := st.Head(context.Background()); now != head {
			t.Fatalf("%s: a dry run wrote (head %s, was %s)", body, now, head)
		}
	})
}
