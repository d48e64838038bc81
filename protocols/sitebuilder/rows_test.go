package sitebuilder

import (
	"strings"
	"testing"

	ckpt "github.com/ckpt-dev/ckpt"
)

func TestIDPart(t *testing.T) {
	for in, want := range map[string]string{
		"T060": "t060", "All 10 core pages": "all-10-core-pages", "QA pass & launch prep": "qa-pass-launch-prep",
		"—": "", "../../etc": "etc", "a.b_c": "a.b_c", strings.Repeat("ab-", 40): strings.Repeat("ab-", 20)[:59],
	} {
		got := IDPart(in)
		if got != want {
			t.Errorf("IDPart(%q) = %q, want %q", in, got, want)
		}
		if got != "" && ckpt.ValidateID(got) != nil {
			t.Errorf("IDPart(%q) = %q is not a valid ID", in, got)
		}
	}
}
