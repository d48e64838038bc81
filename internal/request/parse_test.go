package request

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	ckpt "github.com/ckpt-dev/ckpt"
)

func TestParseProgress(t *testing.T) {
	good := map[string]ckpt.ProgressSet{"3/10": {Done: 3, Total: 10}, " 0/0 ": {}, "10 / 10": {Done: 10, Total: 10}}
	for in, want := range good {
		if got, err := ParseProgress("--progress", in); err != nil || got != want {
			t.Errorf("ParseProgress(%q) = %v, %v", in, got, err)
		}
	}
	for _, in := range []string{"", "3", "3/", "/3", "a/b", "4/3", "-1/3", "1/-3", "1/2/3", "1.5/3"} {
		if _, err := ParseProgress("--progress", in); !errors.Is(err, ckpt.ErrInvalid) || !strings.Contains(err.Error(), "DONE/TOTAL") {
			t.Errorf("ParseProgress(%q) error %v", in, err)
		}
	}
}

func TestParseInterval(t *testing.T) {
	if d, err := ParseInterval("--interval", "1h30m"); err != nil || d.D() != 90*time.Minute {
		t.Errorf("1h30m: %v %v", d, err)
	}
	for _, in := range []string{"", "15", "0s", "-5m", "soon"} {
		if _, err := ParseInterval("--interval", in); !errors.Is(err, ckpt.ErrInvalid) || !strings.Contains(err.Error(), "15m") {
			t.Errorf("ParseInterval(%q) error %v", in, err)
		}
	}
}

func TestParseMeta(t *testing.T) {
	m, err := ParseMeta(nil, []string{"a=b=c", "gone=", "s= spaced "}, []string{`n=42`, `o={"x": [1, 2]}`, "z=null"})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"a": `"b=c"`, "gone": "null", "s": `" spaced "`, "n": "42", "o": `{"x":[1,2]}`, "z": "null"}
	for k, v := range want {
		if string(m[k]) != v {
			t.Errorf("meta[%s] = %s, want %s", k, m[k], v)
		}
	}
	if m, err := ParseMeta(nil, nil, nil); m != nil || err != nil {
		t.Errorf("no pairs: %v %v", m, err)
	}
	for _, bad := range [][2][]string{{{"novalue"}, nil}, {{"=v"}, nil}, {nil, {"k=oops"}}, {nil, {"k="}}} {
		if _, err := ParseMeta(nil, bad[0], bad[1]); !errors.Is(err, ckpt.ErrInvalid) {
			t.Errorf("ParseMeta(nil, %q, %q) error %v", bad[0], bad[1], err)
		}
	}
}

func TestParseReviewScores(t *testing.T) {
	s, err := ParseReviewScores("--review-score", []string{"code=85", "docs=", "perf=92.5"})
	if err != nil || *s["code"] != 85 || s["docs"] != nil || *s["perf"] != 92.5 {
		t.Fatalf("%v %v", s, err)
	}
	for _, bad := range []string{"code", "=3", "code=high", "code=NaN", "code=Inf"} {
		if _, err := ParseReviewScores("--review-score", []string{bad}); !errors.Is(err, ckpt.ErrInvalid) {
			t.Errorf("ParseReviewScores(%q) error %v", bad, err)
		}
	}
}

func TestParseIDTitle(t *testing.T) {
	if id, title, err := ParseIDTitle("--step", "research = Read the docs = all"); err != nil || id != "research" || title != "Read the docs = all" {
		t.Errorf("%q %q %v", id, title, err)
	}
	if id, title, err := ParseIDTitle("--step", "plan"); err != nil || id != "plan" || title != "" {
		t.Errorf("%q %q %v", id, title, err)
	}
	if _, _, err := ParseIDTitle("--step", " =x"); !errors.Is(err, ckpt.ErrInvalid) {
		t.Errorf("empty ID accepted: %v", err)
	}
}

// The fuzz tests hold the parsers of flag values to their contracts on any
// input: no panic, errors wrap ErrInvalid, and what is accepted is valid.

func FuzzParseProgress(f *testing.F) {
	for _, s := range []string{"3/10", "0/0", "4/3", "a/b", "", "/", "99999999999999999999/1", " 1 / 2 "} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		p, err := ParseProgress("--progress", s)
		if err != nil {
			if !errors.Is(err, ckpt.ErrInvalid) {
				t.Fatalf("error does not wrap ErrInvalid: %v", err)
			}
			return
		}
		if p.Done < 0 || p.Total < 0 || p.Done > p.Total {
			t.Fatalf("accepted %q as %+v", s, p)
		}
	})
}

func FuzzParseMeta(f *testing.F) {
	for _, s := range [][2]string{{"a=b", `n=1`}, {"=", "k="}, {"k=", `o={"a":[1]}`}, {"x", "y"}, {"a=b=c", `s="t"`},
		{"a=b", "d=" + strings.Repeat("[", 65) + strings.Repeat("]", 65)}, {"a=b", `s="[[[["`}} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, pair, jsonPair string) {
		m, err := ParseMeta(nil, []string{pair}, []string{jsonPair})
		if err != nil {
			if !errors.Is(err, ckpt.ErrInvalid) {
				t.Fatalf("error does not wrap ErrInvalid: %v", err)
			}
			return
		}
		for k, v := range m {
			if k == "" || !json.Valid(v) || jsonDepth(string(v)) > MaxMetaDepth {
				t.Fatalf("accepted key %q value %q", k, v)
			}
		}
	})
}

func TestParseMetaDepth(t *testing.T) {
	deep := "k=" + strings.Repeat("[", 20000) + strings.Repeat("]", 20000)
	_, err := ParseMeta(nil, nil, []string{deep})
	if !errors.Is(err, ckpt.ErrInvalid) || !strings.Contains(err.Error(), "too deeply nested") || len(err.Error()) > 400 {
		t.Fatalf("20,000 levels: %v", err)
	}
	ok := "k=" + strings.Repeat(`{"a":`, 64) + `"[[[{{{"` + strings.Repeat("}", 64)
	if _, err := ParseMeta(nil, nil, []string{ok}); err != nil {
		t.Fatalf("64 levels, brackets in a string: %v", err)
	}
}

func FuzzParseReviewScores(f *testing.F) {
	for _, s := range []string{"code=85", "docs=", "x=1e400", "=1", "a=NaN", "b=-0"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		m, err := ParseReviewScores("--review-score", []string{s})
		if err != nil {
			if !errors.Is(err, ckpt.ErrInvalid) {
				t.Fatalf("error does not wrap ErrInvalid: %v", err)
			}
			return
		}
		if _, err := json.Marshal(m); err != nil {
			t.Fatalf("accepted %q but it cannot be stored: %v", s, err)
		}
	})
}

func FuzzParseInterval(f *testing.F) {
	for _, s := range []string{"15m", "0s", "-1h", "1h30m", "9999999h", "", "5"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		d, err := ParseInterval("--interval", s)
		if err != nil {
			if !errors.Is(err, ckpt.ErrInvalid) {
				t.Fatalf("error does not wrap ErrInvalid: %v", err)
			}
			return
		}
		if d <= 0 {
			t.Fatalf("accepted %q as %v", s, d.D())
		}
	})
}

func FuzzParseIDTitle(f *testing.F) {
	for _, s := range []string{"research", "a=b", "=b", "", " a = b = c "} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		id, _, err := ParseIDTitle("--step", s)
		if err != nil {
			if !errors.Is(err, ckpt.ErrInvalid) {
				t.Fatalf("error does not wrap ErrInvalid: %v", err)
			}
			return
		}
		if strings.TrimSpace(id) == "" {
			t.Fatalf("accepted an empty ID from %q", s)
		}
	})
}

func TestParseSpan(t *testing.T) {
	good := map[string]time.Duration{"90s": 90 * time.Second, "15m": 15 * time.Minute, "1h30m": 90 * time.Minute, "2d": 48 * time.Hour, " 7d ": 7 * 24 * time.Hour}
	for in, want := range good {
		if got, err := ParseSpan("--x", in); err != nil || got != want {
			t.Errorf("ParseSpan(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "0", "0s", "-5m", "d", "1.5d", "-2d", "0d", "soon", "5", "1e9d"} {
		if _, err := ParseSpan("--x", bad); !errors.Is(err, ckpt.ErrInvalid) || !strings.Contains(err.Error(), "--x") {
			t.Errorf("ParseSpan(%q) accepted or unclear: %v", bad, err)
		}
	}
}

// FuzzParseSpan: any value gives a positive duration or an invalid-input
// error naming the value's name; never a panic.
func FuzzParseSpan(f *testing.F) {
	for _, s := range []string{"90s", "15m", "2d", "1h30m", "", "-1d", "99999999999999d", "3d4h", "1.5h", "\x00d"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		d, err := ParseSpan("--every", s)
		if err != nil {
			if !errors.Is(err, ckpt.ErrInvalid) || !strings.Contains(err.Error(), "--every") {
				t.Fatalf("ParseSpan(%q): error %v", s, err)
			}
			return
		}
		if d <= 0 {
			t.Fatalf("ParseSpan(%q) = %v, not positive", s, d)
		}
	})
}

// TestParseThresholds: every surface's warn/stale pair (the CLI's flags,
// MCP's arguments, the server's query) is read by one rule: either may be
// left to the default, both must be spans, warn comes first.
func TestParseThresholds(t *testing.T) {
	th, err := ParseThresholds(ckpt.Thresholds{}, "warn", "30m", "stale", "2d")
	if err != nil || th.Warn != 30*time.Minute || th.Stale != 48*time.Hour {
		t.Errorf("30m and 2d: %+v, %v", th, err)
	}
	if th, err := ParseThresholds(ckpt.Thresholds{}, "warn", "", "stale", " "); err != nil || th != (ckpt.Thresholds{}) {
		t.Errorf("none given: %+v, %v; want the defaults", th, err)
	}
	for _, c := range [][2]string{{"1h", "30m"}, {"1h", "1h"}, {"soon", ""}, {"", "-1m"}} {
		_, err := ParseThresholds(ckpt.Thresholds{}, "--warn", c[0], "--stale", c[1])
		if !errors.Is(err, ckpt.ErrInvalid) || !strings.Contains(err.Error(), "--") {
			t.Errorf("warn %q stale %q: %v, want an invalid-input error naming the flag", c[0], c[1], err)
		}
	}
	// Over a surface's defaults (a server's 30m/1h): a warn past the
	// default stale is refused too.
	def := ckpt.Thresholds{Warn: 30 * time.Minute, Stale: time.Hour}
	if th, err := ParseThresholds(def, "warn", "", "stale", "2h"); err != nil || th.Warn != 30*time.Minute || th.Stale != 2*time.Hour {
		t.Errorf("stale 2h over 30m/1h: %+v, %v", th, err)
	}
	if _, err := ParseThresholds(def, "warn", "90m", "stale", ""); !errors.Is(err, ckpt.ErrInvalid) {
		t.Errorf("warn 90m over a stale default of 1h: %v, want refused", err)
	}
}
