package claude

import (
	"strings"
	"testing"

	"github.com/ckpt-dev/ckpt"
)

func envOf(m map[string]string) func(string) string {
	return func(k string) string { return m[k] }
}

func TestSessionKeyMapping(t *testing.T) {
	sid := "9f8e7d6c-1234-4abc-8def-001122334455"
	tests := []struct {
		name     string
		in       Input
		env      map[string]string
		repoRoot string
		want     string
	}{
		{"CKPT_ID wins", Input{SessionID: sid, CWD: "/w/app"}, map[string]string{"CKPT_ID": "kai-7/secondary-a"}, "/w/app", "kai-7/secondary-a"},
		{"CKPT_ID is sanitised", Input{}, map[string]string{"CKPT_ID": " ../../etc/pass wd//x/./y "}, "", "etc/pass-wd/x/y"},
		{"CKPT_ID with backslashes", Input{}, map[string]string{"CKPT_ID": `a\b`}, "", "a/b"},
		{"CKPT_ID that sanitises to nothing falls through", Input{SessionID: sid}, map[string]string{"CKPT_ID": "../.."}, "/w/app", "app/session-" + sid},
		{"session in a repository", Input{SessionID: sid, CWD: "/w/app/sub"}, nil, "/w/app", "app/session-" + sid},
		{"session outside a repository uses cwd", Input{SessionID: sid, CWD: "/tmp/scratch"}, nil, "", "scratch/session-" + sid},
		{"session alone", Input{SessionID: sid}, nil, "", "session-" + sid},
		{"repository alone", Input{CWD: "/w/app"}, nil, "/w/my app!", "my-app"},
		{"odd session id", Input{SessionID: "a b/../c"}, nil, "/w/app", "app/session-a-b-..-c"},
		{"nothing", Input{CWD: "/w/app"}, nil, "", ""},
		{"root directory", Input{SessionID: "s1", CWD: "/"}, nil, "", "session-s1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := SessionKey(tt.in, envOf(tt.env), tt.repoRoot)
			if got != tt.want {
				t.Errorf("SessionKey = %q, want %q", got, tt.want)
			}
			if got != "" {
				if err := ckpt.ValidateID(got); err != nil {
					t.Errorf("SessionKey gave an invalid ID: %v", err)
				}
			}
		})
	}
	if got := SessionKey(Input{SessionID: "s"}, nil, ""); got != "session-s" {
		t.Errorf("nil env: %q", got)
	}
}

func TestSessionKeyBoundsLength(t *testing.T) {
	long := strings.Repeat("seg/", 100) + strings.Repeat("x", 300)
	got := SessionKey(Input{}, envOf(map[string]string{"CKPT_ID": long}), "")
	if err := ckpt.ValidateID(got); err != nil || len(got) > ckpt.MaxIDLen {
		t.Errorf("long CKPT_ID gave %q (%d bytes): %v", got, len(got), err)
	}
	got = SessionKey(Input{SessionID: strings.Repeat("s", 500)}, nil, "/w/"+strings.Repeat("r", 500))
	if err := ckpt.ValidateID(got); err != nil {
		t.Errorf("long session gave %q: %v", got, err)
	}
}

func FuzzSessionKey(f *testing.F) {
	f.Add("", "abc", "/w/app", "/w/app")
	f.Add("../x", "", "", "")
	f.Add("a//b/./c", "s/../t", "/", "/")
	f.Add("\xff\x00/é", "ü", "C:\\Users\\me", "")
	f.Fuzz(func(t *testing.T, envID, sid, cwd, root string) {
		got := SessionKey(Input{SessionID: sid, CWD: cwd}, envOf(map[string]string{"CKPT_ID": envID}), root)
		if got == "" {
			return
		}
		if err := ckpt.ValidateID(got); err != nil {
			t.Fatalf("SessionKey(%q, %q, %q, %q) = %q: %v", envID, sid, cwd, root, got, err)
		}
	})
}
