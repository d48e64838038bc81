package cmdutil

import (
	"os/user"
	"strings"
	"testing"
)

func TestPasswdName(t *testing.T) {
	const passwd = `# comment: kai:x:1000:1000::/home/kai:/bin/sh
root:x:0:0:root:/root:/bin/bash

+nis:x:1000:1000::/:
short:x:1000:1000
badgid:x:1000:g::/home/b:/bin/sh
   kai:x:1000:1000:Kai,Room 7:/home/kai:/usr/bin/zsh   
later:x:1000:1000::/home/later:/bin/sh
`
	for _, c := range []struct{ uid, want string }{
		{"0", "root"},
		{"1000", "kai"}, // the first well-formed line with the UID
		{"100", ""},     // a prefix of a UID is not the UID
		{"", ""},
	} {
		if got := passwdName(strings.NewReader(passwd), c.uid); got != c.want {
			t.Errorf("passwdName(uid %q) = %q, want %q", c.uid, got, c.want)
		}
	}
	long := strings.Repeat("x", maxPasswdLine+1) + "\nkai:x:1000:1000::/:\n"
	if got := passwdName(strings.NewReader(long), "1000"); got != "" {
		t.Errorf("after an overlong line: %q, want \"\" (os/user then reads on)", got)
	}
}

// TestAccountNameIsOSUsers: the fast path names the account os/user names.
func TestAccountNameIsOSUsers(t *testing.T) {
	u, err := user.Current()
	if err != nil {
		t.Skipf("os/user cannot name this account: %v", err)
	}
	if got := accountName(); got != u.Username {
		t.Fatalf("accountName() = %q, os/user says %q", got, u.Username)
	}
}

// FuzzPasswdName holds passwdName to os/user's reading of the same file
// where os/user's rules apply: whatever it returns comes from a line whose
// UID field is uid, with a name os/user would accept.
func FuzzPasswdName(f *testing.F) {
	f.Add("root:x:0:0:root:/root:/bin/bash\n", "0")
	f.Add("a:x:1:1::/:\n#b:x:2:2::/:\n+c:x:3:3::/:\n", "1")
	f.Add("a:x:1:z::/:\na:x:1:1:::::::\n", "1")
	f.Fuzz(func(t *testing.T, passwd, uid string) {
		name := passwdName(strings.NewReader(passwd), uid)
		if name == "" {
			return
		}
		found := false
		for _, line := range strings.Split(passwd, "\n") {
			f := strings.SplitN(strings.TrimSpace(line), ":", 7)
			if len(f) == 7 && f[0] == name && f[2] == uid && isNumber([]byte(f[3])) {
				found = true
				break
			}
		}
		if !found {
			t.Fatalf("passwdName(%q, %q) = %q: no line names it with that UID", passwd, uid, name)
		}
		if strings.ContainsAny(name, ":\n") || name[0] == '+' || name[0] == '-' {
			t.Fatalf("passwdName returned %q", name)
		}
	})
}
