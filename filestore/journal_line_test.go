package filestore

import (
	"bytes"
	"encoding/json"
	"testing"
	"time"

	"github.com/ckpt-dev/ckpt"
)

// FuzzJournalEntry: appendEntry writes exactly json.Marshal's line for any
// journal entry.
func FuzzJournalEntry(f *testing.F) {
	f.Add("kai-7/secondary-a", "update", "9fc29e3872bc615683990b097d81033e", int64(3), int64(720), int64(1768487400), int64(5), 0, true)
	f.Add("a<b>", "x\"y", "\xff", int64(0), int64(0), int64(-62135596800), int64(0), 3600, false)
	f.Add("", "", "", int64(-1), int64(-5), int64(253402300800), int64(1), 30, true)
	f.Fuzz(func(t *testing.T, id, typ, sum string, rev, size, sec, nsec int64, offset int, withSummary bool) {
		at := time.Unix(sec, nsec).In(time.FixedZone("z", offset))
		e := jentry{Kind: ckpt.ChangeEvent, ID: id, Rev: rev, Type: ckpt.EventType(typ), At: at, Sum: sum, Size: size}
		if withSummary {
			c := ckpt.Checkpoint{ID: id, Rev: rev, Title: typ, Status: ckpt.StatusInProgress, StartedAt: at, UpdatedAt: at,
				Heartbeat: ckpt.Heartbeat{Interval: ckpt.Duration(nsec)}}
			s := c.Summary()
			e.Summary = &s
		}
		want, werr := json.Marshal(&e)
		got, gerr := appendEntry([]byte("prefix"), &e)
		if (werr == nil) != (gerr == nil) {
			t.Fatalf("json.Marshal error %v, appendEntry error %v", werr, gerr)
		}
		if werr == nil && !bytes.Equal(got, append([]byte("prefix"), want...)) {
			t.Fatalf("appendEntry wrote\n%s\njson.Marshal writes\n%s", got[6:], want)
		}
	})
}
