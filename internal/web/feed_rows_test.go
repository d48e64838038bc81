package web

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/ckpt-dev/ckpt"
	"github.com/ckpt-dev/ckpt/internal/feed"
)

// TestChangesCarryTheirRow: each change event carries the checkpoint's
// row as the overview shows it, so an open page refreshes the row without
// asking the server for it.
func TestChangesCarryTheirRow(t *testing.T) {
	f := newFixture(t)
	admin := f.client("admin-secret")
	f.create("kai/a", ckpt.Patch{Title: ptr("first title")})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, f.srv.URL+"/ui/api/events?from=0", nil)
	res, err := admin.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var got []changeOut
	sc := bufio.NewScanner(res.Body)
	for len(got) < 1 && sc.Scan() {
		if data, ok := strings.CutPrefix(sc.Text(), "data: "); ok && strings.Contains(data, `"cursor"`) {
			var c changeOut
			if err := json.Unmarshal([]byte(data), &c); err != nil {
				t.Fatalf("change event %s: %v", data, err)
			}
			got = append(got, c)
		}
	}
	if len(got) != 1 {
		t.Fatalf("read %d changes (%v)", len(got), sc.Err())
	}
	var row Row
	if err := json.Unmarshal(got[0].Row, &row); err != nil {
		t.Fatalf("the change of %s carries no row: %s (%v)", got[0].ID, got[0].Row, err)
	}
	if row.ID != "kai/a" || row.Rev != 1 || row.Title != "first title" || row.Presence != "working" || row.LastSeen.IsZero() {
		t.Errorf("row %+v, want kai/a at revision 1, working, with its title and last seen", row)
	}
}

// TestCoalesceKeepsTheLastChangeOfEachCheckpoint: a batch of changes is
// written as the last change of each checkpoint, in feed order, ending
// with the batch's last change.
func TestCoalesceKeepsTheLastChangeOfEachCheckpoint(t *testing.T) {
	fr := func(cursor, id string) frame {
		return frame{cursor: cursor, id: id, bytes: []byte("id: " + cursor + "\n\n")}
	}
	fs := []frame{fr("1", "a"), fr("2", "b"), fr("3", "a"), fr("4", "c"), fr("5", "b")}
	got := string(coalesce(nil, fs))
	if want := "id: 3\n\nid: 4\n\nid: 5\n\n"; got != want {
		t.Errorf("coalesce wrote %q, want %q", got, want)
	}
	if got := string(coalesce([]byte("kept: "), []frame{fr("7", "a")})); got != "kept: id: 7\n\n" {
		t.Errorf("coalesce of one change after kept bytes wrote %q", got)
	}
	// A batch larger than smallBatch takes the map; the same answer.
	var many []frame
	want := ""
	for i := range smallBatch + 8 {
		many = append(many, fr(fmt.Sprint(i), fmt.Sprint("c", i%5)))
		if i >= smallBatch+8-5 {
			want += fmt.Sprintf("id: %d\n\n", i)
		}
	}
	if got := string(coalesce(nil, many)); got != want {
		t.Errorf("coalesce of %d changes of 5 checkpoints wrote %q, want %q", len(many), got, want)
	}
}

// TestCountsAreSharedAmongPages: pages asking for the counts of one filter
// within countsMaxAge share one listing; another filter, or an older
// answer, is counted again.
func TestCountsAreSharedAmongPages(t *testing.T) {
	old := countsMaxAge
	countsMaxAge = time.Hour // no wall clock in this test
	defer func() { countsMaxAge = old }()
	var c countsCache
	computed := 0
	compute := func() (map[string]int, error) {
		computed++
		return map[string]int{"working": computed}, nil
	}
	all, mine := ckpt.Filter{}, ckpt.Filter{Prefix: "kai/"}
	for range 100 {
		if got, err := c.get(all, compute); err != nil || got["working"] != 1 {
			t.Fatalf("counts %v, %v; want the first computation's", got, err)
		}
	}
	if got, _ := c.get(mine, compute); got["working"] != 2 || computed != 2 {
		t.Errorf("another filter: counts %v after %d computations, want its own", got, computed)
	}
	countsMaxAge = 0
	if got, _ := c.get(all, compute); got["working"] != 3 {
		t.Errorf("counts older than countsMaxAge were served again: %v", got)
	}
}

// TestEncodeNeverWritesIntoSharedFrames: a page's stream reuses its
// buffer batch after batch, and a change's frame is every page's
// (feed.Item.Memo), so encode copies frames into the buffer: a batch of
// one visible change (here followed by an id-only event past a hidden
// one) must not hand out the shared frame to be appended to.
func TestEncodeNeverWritesIntoSharedFrames(t *testing.T) {
	h := &Handler{}
	p := Principal{Name: "team", ReadPrefix: true, Prefix: "team"}
	item := func(cursor, id string) *feed.Item {
		return &feed.Item{Change: ckpt.Change{Cursor: cursor, Kind: ckpt.ChangeDeleted, ID: id}}
	}
	a := item("1", "team/a")
	shared := string(h.frameOf(a).bytes)
	buf := h.encode(nil, p, []*feed.Item{a, item("2", "other/b")})
	if want := shared + "id: 2\n\n"; string(buf) != want {
		t.Fatalf("first batch %q, want %q", buf, want)
	}
	buf = h.encode(buf[:0], p, []*feed.Item{item("3", "other/c")})
	if got := string(h.frameOf(a).bytes); got != shared {
		t.Fatalf("the shared frame of change 1 became %q after the next batch, was %q", got, shared)
	}
	if string(buf) != "id: 3\n\n" {
		t.Fatalf("second batch %q", buf)
	}
}
