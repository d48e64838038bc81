package server

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/ckpt-dev/ckpt"
)

// FuzzIfMatch: any If-Match header is a revision >= 0 or ErrInvalid.
func FuzzIfMatch(f *testing.F) {
	for _, s := range []string{"", "*", `"7"`, `W/"7"`, "7", "-1", `"x"`, "99999999999999999999"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, v string) {
		r := &http.Request{Header: http.Header{"If-Match": {v}}}
		n, err := ifMatch(r)
		if err != nil && !errors.Is(err, ckpt.ErrInvalid) {
			t.Fatalf("ifMatch(%q): %v", v, err)
		}
		if n < 0 {
			t.Fatalf("ifMatch(%q) = %d", v, n)
		}
	})
}

// FuzzKeyOrigin: any Ckpt-Key-Origin is one of the three origins or
// refused as invalid.
func FuzzKeyOrigin(f *testing.F) {
	for _, s := range []string{"", "new", "resent", "given", "NEW", "new ", "\x00"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, v string) {
		o, err := keyOrigin(&http.Request{Header: http.Header{"Ckpt-Key-Origin": {v}}})
		switch {
		case err != nil && !errors.Is(err, ckpt.ErrInvalid):
			t.Fatalf("keyOrigin(%q): %v", v, err)
		case err == nil && o > ckpt.KeyResent:
			t.Fatalf("keyOrigin(%q) = %d", v, o)
		case err == nil && (v == "") != (o == ckpt.KeyGiven):
			t.Fatalf("keyOrigin(%q) = %d", v, o)
		}
	})
}

// FuzzAuthenticate: any bearer string is either the one real token or
// refused with ErrUnauthenticated; nothing else gets in.
func FuzzAuthenticate(f *testing.F) {
	ts, err := OpenFileTokens(filepath.Join(f.TempDir(), TokenFileName))
	if err != nil {
		f.Fatal(err)
	}
	tok, bearer, err := NewToken(ScopeRead, "", "", "", time.Now())
	if err != nil {
		f.Fatal(err)
	}
	if err := ts.Add(context.Background(), tok); err != nil {
		f.Fatal(err)
	}
	f.Add(bearer)
	f.Add("ckpt_" + tok.ID + "_")
	f.Add("ckpt__" + strings.Repeat("0", 64))
	f.Add("Bearer x")
	f.Fuzz(func(t *testing.T, b string) {
		got, err := Authenticate(context.Background(), ts, b, time.Now())
		switch {
		case b == bearer:
			if err != nil || got.ID != tok.ID {
				t.Fatalf("the real token: %v", err)
			}
		case !errors.Is(err, ckpt.ErrUnauthenticated):
			t.Fatalf("Authenticate(%q) = %+v, %v", b, got, err)
		}
	})
}

// FuzzDecodeBody: any request body decodes or is refused without panic;
// what is accepted is valid UTF-8 holding exactly one JSON value.
func FuzzDecodeBody(f *testing.F) {
	f.Add([]byte(`{"type":"note","data":{"text":"x"}}`))
	f.Add([]byte(`{"type":"note"}{"type":"note"}`))
	f.Add([]byte("{\"a\":\"\xff\"}"))
	f.Add([]byte(" \n"))
	f.Fuzz(func(t *testing.T, body []byte) {
		var v any
		if err := decodeBody(body, &v); err != nil {
			if !errors.Is(err, ckpt.ErrInvalid) {
				t.Fatalf("refused with %v, want invalid", err)
			}
			return
		}
		if !utf8.Valid(body) {
			t.Fatalf("accepted invalid UTF-8 %q", body)
		}
		if len(bytes.TrimSpace(body)) > 0 && !json.Valid(body) {
			t.Fatalf("accepted %q, which is not one JSON value", body)
		}
	})
}
