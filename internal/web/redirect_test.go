package web

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// offSite reports whether a browser would leave the site following
// Location loc: it drops tabs and line breaks and reads a backslash as a
// slash before resolving the URL.
func offSite(loc string) bool {
	cleaned := strings.Map(func(r rune) rune {
		switch r {
		case '\t', '\n', '\r':
			return -1
		case '\\':
			return '/'
		}
		return r
	}, strings.TrimLeft(loc, "\x00 \x1f"))
	u, err := url.Parse(cleaned)
	return err != nil || u.Host != "" || u.Scheme != "" || strings.HasPrefix(cleaned, "//")
}

// Sign-in sends the visitor on to next only when next is a path on this
// site: none of the variants that lead a browser elsewhere.
func TestSignInNextStaysOnSite(t *testing.T) {
	f := newFixture(t)
	for _, next := range []string{
		"/%09/evil.example", "/\t/evil.example", "/\\evil.example", "/%5Cevil.example", "%5C%5Cevil.example",
		"//evil.example", "/\\/evil.example", "/\r\n/evil.example", "https://evil.example/", "/%0A/evil.example",
		"\\\\evil.example", " //evil.example", "/%E2%80%8B/evil.example",
	} {
		// The form carries next as the page got it: decoded once.
		raw, _ := url.QueryUnescape(next)
		c := f.client("")
		res := f.post(c, "/login", "application/x-www-form-urlencoded", "token=admin-secret&next="+url.QueryEscape(raw), nil)
		loc := res.Header.Get("Location")
		if res.StatusCode != http.StatusSeeOther || offSite(loc) {
			t.Errorf("sign-in with next=%q: %s to %q, which leaves the site", next, res.Status, loc)
		}
	}
	res := f.post(f.client(""), "/login", "application/x-www-form-urlencoded", "token=admin-secret&next="+url.QueryEscape("/c/kai/a?x=1"), nil)
	if loc := res.Header.Get("Location"); loc != "/c/kai/a?x=1" {
		t.Errorf("a path on this site led to %q", loc)
	}
}

// FuzzLocalPath: whatever next is, the path sign-in redirects to keeps
// the browser on this site.
func FuzzLocalPath(f *testing.F) {
	for _, s := range []string{"/", "/c/a", "/\t/evil", "//x", "/\\x", "http://x", "/%09/x", "/\u200b/x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, next string) {
		if p := localPath(next); offSite(p) || !strings.HasPrefix(p, "/") {
			t.Fatalf("localPath(%q) = %q leaves the site", next, p)
		}
	})
}
