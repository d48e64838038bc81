package cmdutil

import (
	"bufio"
	"bytes"
	"io"
	"os/user"
	"strconv"
)

// accountName is the login name of the account the process runs as, ""
// when the system cannot say. It reads /etc/passwd itself first, through
// a file Go's network poller never sees (passwdFile): os/user opens it with
// os.Open, which starts the poller (an epoll instance, an eventfd and a
// thread's wake-ups) in a process that has no other use for it, about 40
// µs of a `ckpt update`'s CPU where $USER is unset, as in containers
// (docs/design.md, "Issue 22, round ten"). An account /etc/passwd does not
// list (LDAP, macOS's directory services) is os/user's to find.
func accountName() string {
	if f, err := passwdFile(); err == nil {
		name := passwdName(f, strconv.Itoa(getuid()))
		f.Close()
		if name != "" {
			return name
		}
	}
	u, err := user.Current()
	if err != nil {
		return ""
	}
	return u.Username
}

// maxPasswdLine bounds the line passwdName reads: a longer one is not an
// account line it can use, and is skipped.
const maxPasswdLine = 64 << 10

// passwdName returns the login name of the first well-formed line of r, in
// passwd(5)'s format (name:password:UID:GID:GECOS:home:shell), whose UID
// field is uid; "" when none is. It accepts what os/user's own reader
// accepts: at least six colons, a UID and GID that are numbers, a name
// that is not empty and does not start with '+' or '-' (NIS entries);
// blank lines and '#' comments are skipped. Reading stops at a line longer
// than maxPasswdLine.
func passwdName(r io.Reader, uid string) string {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 4096), maxPasswdLine)
	for {
		if !sc.Scan() {
			// The end, an error or a line longer than maxPasswdLine
			// (after which a scanner reads no more): accountName then
			// asks os/user, which reads on.
			return ""
		}
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 || line[0] == '#' || bytes.Count(line, []byte{':'}) < 6 {
			continue
		}
		f := bytes.SplitN(line, []byte{':'}, 7)
		name := f[0]
		if string(f[2]) != uid || len(name) == 0 || name[0] == '+' || name[0] == '-' || !isNumber(f[3]) {
			continue
		}
		return string(name)
	}
}

// isNumber reports whether b is a decimal integer as strconv.Atoi reads it.
func isNumber(b []byte) bool {
	_, err := strconv.Atoi(string(b))
	return err == nil
}
