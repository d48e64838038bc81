package server

import (
	"context"
	"errors"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

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
