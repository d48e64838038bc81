package ckpt

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// MaxIDLen is the longest checkpoint ID accepted, in bytes.
const MaxIDLen = 200

// ValidateID reports whether id is a valid checkpoint ID: one or more
// '/'-separated segments of [A-Za-z0-9._-], none empty, "." or "..", at most
// MaxIDLen bytes in all. A valid ID can be used as a relative path inside a
// store and can never name anything outside it.
//
// The error wraps ErrInvalid and says what to change.
func ValidateID(id string) error {
	if id == "" {
		return fmt.Errorf("%w: checkpoint ID is empty: give an ID such as kai-7/secondary-a", ErrInvalid)
	}
	if len(id) > MaxIDLen {
		return fmt.Errorf("%w: checkpoint ID is %d bytes long; the limit is %d", ErrInvalid, len(id), MaxIDLen)
	}
	// Segment by segment without a split: every index line and journal
	// line a listing reads is checked here.
	for rest, more := id, true; more; {
		var seg string
		seg, rest, more = strings.Cut(rest, "/")
		switch seg {
		case "":
			return fmt.Errorf("%w: checkpoint ID %q has an empty segment: no leading, trailing or double '/'", ErrInvalid, id)
		case ".", "..":
			return fmt.Errorf("%w: checkpoint ID %q has a %q segment: IDs cannot refer to directories", ErrInvalid, id, seg)
		}
		for i := 0; i < len(seg); i++ {
			if !idByte(seg[i]) {
				return fmt.Errorf("%w: checkpoint ID %q has %s: use only letters, digits, '.', '_', '-' and '/' (ASCII)", ErrInvalid, id, nameChar(seg[i:]))
			}
		}
	}
	return nil
}

func idByte(b byte) bool {
	return b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z' || b >= '0' && b <= '9' || b == '.' || b == '_' || b == '-'
}

// nameChar names the character that s starts with as it is, whatever its
// length in bytes: "the character 'é' (U+00E9)", or the byte when s does
// not start with valid UTF-8.
func nameChar(s string) string {
	r, size := utf8.DecodeRuneInString(s)
	if r == utf8.RuneError && size <= 1 {
		return fmt.Sprintf("the byte 0x%02x, which is not UTF-8", s[0])
	}
	return fmt.Sprintf("the character %q (U+%04X)", r, r)
}

// PathPrefix returns prefix as a path prefix of IDs: "team-a" and
// "team-a/" both become "team-a/", so that a grant for team-a never
// reaches team-ab/… or team-a-evil/…; "" stays "" (every ID).
func PathPrefix(prefix string) string {
	if prefix == "" || strings.HasSuffix(prefix, "/") {
		return prefix
	}
	return prefix + "/"
}

// UnderPrefix reports whether checkpoint id lies under the path prefix
// prefix (see PathPrefix); every ID lies under "".
func UnderPrefix(id, prefix string) bool {
	return strings.HasPrefix(id, PathPrefix(prefix))
}

// NarrowPrefix returns the ID prefix to list with when a listing asks for
// IDs starting with asked and the reader may see only those under the
// path prefix limit: the narrower of the two, or ok false when no ID can
// satisfy both.
func NarrowPrefix(asked, limit string) (prefix string, ok bool) {
	limit = PathPrefix(limit)
	switch {
	case strings.HasPrefix(asked, limit):
		return asked, true
	case strings.HasPrefix(limit, asked):
		return limit, true
	}
	return "", false
}
