package filestore

import (
	"bytes"
	"encoding/json"
	"testing"
	"time"
	"unicode/utf8"

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

// FuzzSegHeader: a segment header reads as json.Unmarshal reads it, and
// encodeHeader writes json.Marshal's line.
func FuzzSegHeader(f *testing.F) {
	f.Add([]byte(`{"journal":1,"start":0}`), int64(0))
	f.Add([]byte(`{"journal":1,"start":1099511627776}`), int64(1<<40))
	f.Add([]byte(`{"journal":1,"start":007}`), int64(-1))
	f.Add([]byte(`{"journal":1,"start":-0}`), int64(9))
	f.Add([]byte(`{"start":3,"journal":2}`), int64(3))
	f.Fuzz(func(t *testing.T, data []byte, start int64) {
		var want, got segHeader
		werr := json.Unmarshal(data, &want)
		gerr := parseSegHeader(data, &got)
		if (werr == nil) != (gerr == nil) || want != got {
			t.Fatalf("parseSegHeader(%s) = %+v, %v; json.Unmarshal: %+v, %v", data, got, gerr, want, werr)
		}
		line, _ := json.Marshal(segHeader{Journal: journalVersion, Start: start})
		if h := encodeHeader(start); string(h) != string(line)+"\n" {
			t.Fatalf("encodeHeader(%d) = %q; json.Marshal writes %q", start, h, line)
		}
	})
}

// FuzzMarker: a marker is json.Marshal's bytes and reads back.
func FuzzMarker(f *testing.F) {
	f.Add("event", "kai-7/secondary-a", int64(3), "9fc29e3872bc615683990b097d81033e")
	f.Add("deleted", "a<b", int64(-1), "\xff\"")
	f.Fuzz(func(t *testing.T, kind, id string, rev int64, sum string) {
		m := marker{Kind: ckpt.ChangeKind(kind), ID: id, Rev: rev, Sum: sum}
		want, _ := json.Marshal(m)
		if got := m.appendJSON(nil); !bytes.Equal(got, want) {
			t.Fatalf("marker %+v: %s; json.Marshal writes %s", m, got, want)
		}
		if len(want) < markerSize && ckpt.ValidateID(id) == nil && utf8.ValidString(kind) && utf8.ValidString(sum) {
			if back, ok := parseMarker(m.encode()); !ok || back != m {
				t.Fatalf("marker %+v read back as %+v, %v", m, back, ok)
			}
		}
	})
}
