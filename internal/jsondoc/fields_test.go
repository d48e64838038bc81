package jsondoc

import (
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	ckpt "github.com/ckpt-dev/ckpt"
)

// read runs one reader over {"k": value} and returns what it noted.
func read[T any](t *testing.T, value string, reader func(Fields, string) (T, bool)) (T, bool, Notes) {
	t.Helper()
	var n Notes
	v, ok := reader(Fields{Obj: mustParse(t, `{"k":`+value+`}`), Notes: &n, Path: "p."}, "k")
	return v, ok, n
}

func TestFieldsText(t *testing.T) {
	for _, tc := range []struct {
		value, want string
		ok          bool
		note        string
	}{
		{`"x"`, "x", true, ""},
		{`""`, "", true, ""},
		{`12.50`, "12.50", true, "p.k is the number 12.50 where text was expected: read as text"},
		{`true`, "true", true, "p.k is true where text was expected: read as text"},
		{`null`, "", false, ""},
		{`["x"]`, "", false, "p.k is not text: kept as is, not read"},
	} {
		got, ok, n := read(t, tc.value, Fields.Text)
		if got != tc.want || ok != tc.ok || strings.Join(n, "|") != tc.note {
			t.Errorf("Text(%s) = %q %v %q, want %q %v %q", tc.value, got, ok, n, tc.want, tc.ok, tc.note)
		}
	}
	var n Notes
	if _, ok := (Fields{Obj: NewObject(), Notes: &n}).Text("absent"); ok || len(n) != 0 {
		t.Errorf("an absent member is read or noted: %v %q", ok, n)
	}
}

func TestFieldsTexts(t *testing.T) {
	for _, tc := range []struct {
		value string
		want  []string
		ok    bool
		notes int
	}{
		{`["a","b"]`, []string{"a", "b"}, true, 0},
		{`[]`, []string{}, true, 0},
		{`"only"`, []string{"only"}, true, 1},
		{`"None"`, []string{}, true, 1},
		{`"N/A (paused)"`, []string{"N/A (paused)"}, true, 1}, // says more than "nothing"
		{`["a",null,2,{"x":1}]`, []string{"a", "2", `{"x":1}`}, true, 3},
		{`null`, nil, false, 0},
		{`7`, nil, false, 1},
	} {
		got, ok, n := read(t, tc.value, Fields.Texts)
		if !slices.Equal(got, tc.want) || (got == nil) != (tc.want == nil) || ok != tc.ok || len(n) != tc.notes {
			t.Errorf("Texts(%s) = %q %v %q, want %q %v with %d notes", tc.value, got, ok, n, tc.want, tc.ok, tc.notes)
		}
	}
}

func TestIsNone(t *testing.T) {
	for _, s := range []string{"", " ", "none", "None.", "(none)", "N/A", "na", "-", "—", "null", "NIL"} {
		if !IsNone(s) {
			t.Errorf("IsNone(%q) = false", s)
		}
	}
	for _, s := range []string{"nothing yet", "N/A (paused)", "0", "no"} {
		if IsNone(s) {
			t.Errorf("IsNone(%q) = true", s)
		}
	}
}

func TestFieldsBool(t *testing.T) {
	for _, tc := range []struct {
		value    string
		want, ok bool
		noted    bool
	}{
		{`true`, true, true, false}, {`false`, false, true, false},
		{`"Yes"`, true, true, true}, {`" n "`, false, true, true},
		{`"maybe"`, false, false, true}, {`1`, false, false, true}, {`null`, false, false, false},
	} {
		got, ok, n := read(t, tc.value, Fields.Bool)
		if got != tc.want || ok != tc.ok || (len(n) > 0) != tc.noted {
			t.Errorf("Bool(%s) = %v %v %q", tc.value, got, ok, n)
		}
	}
}

func TestFieldsNumberAndCount(t *testing.T) {
	for _, tc := range []struct {
		value string
		want  float64
		ok    bool
		noted bool
	}{
		{`65`, 65, true, false}, {`-1.5e1`, -15, true, false}, {`"65%"`, 65, true, true}, {`" 2.5 "`, 2.5, true, true},
		{`1e999`, 0, false, true}, {`"NaN"`, 0, false, true}, {`"Inf"`, 0, false, true}, {`"ten"`, 0, false, true},
		{`null`, 0, false, false}, {`[1]`, 0, false, true},
	} {
		got, ok, n := read(t, tc.value, Fields.Number)
		if got != tc.want || ok != tc.ok || (len(n) > 0) != tc.noted {
			t.Errorf("Number(%s) = %v %v %q", tc.value, got, ok, n)
		}
	}
	for _, tc := range []struct {
		value string
		want  int
		ok    bool
	}{
		{`3`, 3, true}, {`3.0`, 3, true}, {`"4"`, 4, true}, {`0`, 0, true}, {`1e9`, 1e9, true},
		{`-1`, 0, false}, {`2.5`, 0, false}, {`1e10`, 0, false},
	} {
		got, ok, _ := read(t, tc.value, Fields.Count)
		if got != tc.want || ok != tc.ok {
			t.Errorf("Count(%s) = %v %v, want %v %v", tc.value, got, ok, tc.want, tc.ok)
		}
	}
}

func TestFieldsTime(t *testing.T) {
	got, ok, n := read(t, `"2026-01-30T04:45:00+01:00"`, Fields.Time)
	if !ok || !got.Equal(time.Date(2026, 1, 30, 3, 45, 0, 0, time.UTC)) || got.Location() != time.UTC || len(n) != 0 {
		t.Errorf("RFC 3339: %v %v %q", got, ok, n)
	}
	got, ok, n = read(t, `"2026-02-06 21:50"`, Fields.Time)
	if !ok || !got.Equal(time.Date(2026, 2, 6, 21, 50, 0, 0, time.UTC)) || len(n) != 1 || !strings.Contains(n[0], "UTC assumed") {
		t.Errorf("no zone: %v %v %q", got, ok, n)
	}
	if _, ok, n = read(t, `"yesterday"`, Fields.Time); ok || len(n) != 1 || !strings.Contains(n[0], "not a time") {
		t.Errorf("not a time: %v %q", ok, n)
	}
}

func TestParseAndFormatTime(t *testing.T) {
	for _, tc := range []struct {
		in    string
		want  time.Time
		guess string
	}{
		{"2026-01-15T14:30:00Z", time.Date(2026, 1, 15, 14, 30, 0, 0, time.UTC), ""},
		{" 2026-01-15T14:30:00.250-05:00 ", time.Date(2026, 1, 15, 19, 30, 0, 250e6, time.UTC), ""},
		{"2026-01-15T14:30:00", time.Date(2026, 1, 15, 14, 30, 0, 0, time.UTC), "no time zone, UTC assumed"},
		{"2026-01-15 14:30", time.Date(2026, 1, 15, 14, 30, 0, 0, time.UTC), "no time zone, UTC assumed"},
		{"2026-01-15", time.Date(2026, 1, 15, 0, 0, 0, 0, time.UTC), "a date without a time, midnight UTC assumed"},
	} {
		got, guess, ok := ParseTime(tc.in)
		if !ok || !got.Equal(tc.want) || got.Location() != time.UTC || guess != tc.guess {
			t.Errorf("ParseTime(%q) = %v %q %v", tc.in, got, guess, ok)
		}
	}
	for _, bad := range []string{"", "15/01/2026", "2026-13-01", "now"} {
		if _, _, ok := ParseTime(bad); ok {
			t.Errorf("ParseTime(%q) ok", bad)
		}
	}
	if got := FormatTime(time.Date(2026, 1, 15, 14, 30, 0, 0, time.FixedZone("x", 3600))); got != "2026-01-15T13:30:00Z" {
		t.Errorf("FormatTime whole second: %s", got)
	}
	// The seeds write whole seconds; jq's fromdateiso8601 refuses a fraction.
	if got := FormatTime(time.Date(2026, 1, 15, 14, 30, 0, 999e6, time.UTC)); got != "2026-01-15T14:30:00Z" {
		t.Errorf("FormatTime drops the fraction: %s", got)
	}
}

// FuzzParseTime: a time read writes back as an exact RFC 3339 time that
// reads again to the same instant, to the whole second.
func FuzzParseTime(f *testing.F) {
	for _, s := range []string{"2026-01-15T14:30:00Z", "2026-01-15T14:30:00.5+05:30", "2026-01-15 14:30", "2026-01-15", "x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		tm, _, ok := ParseTime(s)
		if !ok {
			return
		}
		again, guess, ok := ParseTime(FormatTime(tm))
		if !ok || guess != "" || !again.Equal(tm.Truncate(time.Second)) {
			t.Fatalf("%q → %s → %v %q %v", s, FormatTime(tm), again, guess, ok)
		}
	})
}

// FuzzFields: no member value makes a reader panic or return what its
// contract excludes.
func FuzzFields(f *testing.F) {
	for _, v := range []string{`"x"`, `["a",null,1]`, `"65%"`, `1e999`, `"yes"`, `-3`, `"2026-01-01"`, `{"a":1}`} {
		f.Add(v)
	}
	f.Fuzz(func(t *testing.T, value string) {
		o, err := ParseObject([]byte(`{"k":` + value + `}`))
		if err != nil {
			return
		}
		var n Notes
		fs := Fields{Obj: o, Notes: &n}
		fs.Text("k")
		fs.Texts("k")
		fs.Bool("k")
		if x, ok := fs.Number("k"); ok && (math.IsInf(x, 0) || math.IsNaN(x)) {
			t.Fatalf("Number gave %v", x)
		}
		if c, ok := fs.Count("k"); ok && (c < 0 || c > 1e9) {
			t.Fatalf("Count gave %d", c)
		}
		if tm, ok := fs.Time("k"); ok && tm.Location() != time.UTC {
			t.Fatalf("Time gave a time in %v", tm.Location())
		}
	})
}

func TestNonEmptyLists(t *testing.T) {
	in := []string{"a", " ", "b", "", "a", "\t"}
	if got := NonEmpty(in); !slices.Equal(got, []string{"a", "b", "a"}) {
		t.Errorf("NonEmpty = %q", got)
	}
	if got := NonEmpty([]string{" "}); got == nil || len(got) != 0 {
		t.Errorf("NonEmpty of blanks = %#v, want an empty list", got)
	}
	if got := UniqueNonEmpty(in); !slices.Equal(got, []string{"a", "b"}) {
		t.Errorf("UniqueNonEmpty = %q", got)
	}
	if got := UniqueNonEmpty([]string{"", " "}); got != nil {
		t.Errorf("UniqueNonEmpty of blanks = %#v, want nil", got)
	}
}

func TestFieldsStatus(t *testing.T) {
	for _, tc := range []struct {
		value string
		want  ckpt.Status
		note  string
	}{
		{`"IN_PROGRESS"`, ckpt.StatusInProgress, ""},
		{`"PAUSED"`, ckpt.StatusWaiting, ""},
		{`"READY_FOR_SYNC"`, ckpt.StatusWaiting, `p.k "READY_FOR_SYNC" is not a seed 002 status: read as waiting`},
		{`null`, ckpt.StatusInProgress, "no p.k: in_progress assumed"},
		{`["done"]`, ckpt.StatusInProgress, "p.k is not text: kept as is, not read|no p.k: in_progress assumed"},
	} {
		var n Notes
		got := Fields{Obj: mustParse(t, `{"k":`+tc.value+`}`), Notes: &n, Path: "p."}.Status("k", "seed 002")
		if got != tc.want || strings.Join(n, "|") != tc.note {
			t.Errorf("Status(%s) = %s %q, want %s %q", tc.value, got, n, tc.want, tc.note)
		}
	}
	var n Notes
	if s := ReadStatus(&n, "loop_state.step_status", "complete", "seed 000"); s != ckpt.StatusDone || len(n) != 0 {
		t.Errorf("ReadStatus of a known word: %s %q", s, n)
	}
}
