package gitsnap

import (
	"reflect"
	"slices"
	"testing"
)

func TestParseStatusZ(t *testing.T) {
	out := []byte(" M a.txt\x00M  c d.txt\x00?? new\nline.txt\x00R  to.txt\x00from.txt\x00 D gone.txt\x00!! ignored\x00")
	got, err := parseStatusZ(out)
	if err != nil {
		t.Fatal(err)
	}
	want := []statusEntry{
		{X: ' ', Y: 'M', Path: "a.txt"},
		{X: 'M', Y: ' ', Path: "c d.txt"},
		{X: '?', Y: '?', Path: "new\nline.txt"},
		{X: 'R', Y: ' ', Path: "to.txt", Orig: "from.txt"},
		{X: ' ', Y: 'D', Path: "gone.txt"},
		{X: '!', Y: '!', Path: "ignored"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %+v\nwant %+v", got, want)
	}
	if files := inScope(got, []string{"from.txt", "ignored", "new\nline.txt"}); !slices.Equal(files, []string{"from.txt", "new\nline.txt"}) {
		t.Fatalf("inScope = %q: a rename's source counts, ignored files never do", files)
	}
}

func TestParseStatusZRejectsMalformedOutput(t *testing.T) {
	for _, out := range []string{
		" M a.txt",          // not NUL-terminated
		"M\x00",             // too short
		"XY a\x00",          // not status letters
		" Ma.txt\x00",       // no separating space
		"R  to.txt\x00",     // rename without a source
		"R  to.txt\x00\x00", // rename with an empty source
	} {
		if _, err := parseStatusZ([]byte(out)); err == nil {
			t.Errorf("parseStatusZ(%q) succeeded", out)
		}
	}
	if got, err := parseStatusZ(nil); err != nil || got != nil {
		t.Fatalf("empty output: %v, %v; want a clean tree", got, err)
	}
}

func FuzzParseStatusZ(f *testing.F) {
	f.Add([]byte(" M a.txt\x00?? b\x00"))
	f.Add([]byte("R  new\x00old\x00"))
	f.Add([]byte("C  x\x00y\x00UU z\x00"))
	f.Add([]byte("!! i\x00"))
	f.Add([]byte("M\x00"))
	f.Fuzz(func(t *testing.T, out []byte) {
		entries, err := parseStatusZ(out)
		if err != nil {
			return
		}
		for _, e := range entries {
			if e.Path == "" || !statusLetter(e.X) || !statusLetter(e.Y) {
				t.Fatalf("accepted a bad entry %+v from %q", e, out)
			}
		}
		again, err := parseStatusZ(formatStatusZ(entries))
		if err != nil || !reflect.DeepEqual(again, entries) {
			t.Fatalf("round trip: %+v, %v; want %+v", again, err, entries)
		}
	})
}
