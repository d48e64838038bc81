package web

import (
	"net/http"
	"strings"
	"testing"
)

// TestSignInCookiesAreSecureBehindATLSProxy: a dashboard behind a proxy
// that ends TLS (X-Forwarded-Proto: https) marks its sign-in and CSRF
// cookies Secure, so a browser never sends the token over plain HTTP; a
// plain-HTTP visitor's cookies stay usable.
func TestSignInCookiesAreSecureBehindATLSProxy(t *testing.T) {
	f := newFixture(t)
	for _, proto := range []string{"https", ""} {
		hdr := map[string]string{}
		if proto != "" {
			hdr["X-Forwarded-Proto"] = proto
		}
		res := f.post(f.client(""), "/login", "application/x-www-form-urlencoded", "token=admin-secret&next=/", hdr)
		cookies := res.Header.Values("Set-Cookie")
		if res.StatusCode != http.StatusSeeOther || len(cookies) != 2 {
			t.Fatalf("sign-in (X-Forwarded-Proto %q): %s, cookies %q", proto, res.Status, cookies)
		}
		for _, c := range cookies {
			if secure := strings.Contains(c, "; Secure"); secure != (proto == "https") {
				t.Errorf("X-Forwarded-Proto %q: cookie %q, want Secure %v", proto, c, proto == "https")
			}
		}
	}
}
