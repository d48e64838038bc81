package ckpt

import (
	"fmt"
	"strings"
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
	for _, seg := range strings.Split(id, "/") {
		switch seg {
		case "":
			return fmt.Errorf("%w: checkpoint ID %q has an empty segment: no leading, trailing or double '/'", ErrInvalid, id)
		case ".", "..":
			return fmt.Errorf("%w: checkpoint ID %q has a %q segment: IDs cannot refer to directories", ErrInvalid, id, seg)
		}
		for i := 0; i < len(seg); i++ {
			if !idByte(seg[i]) {
				return fmt.Errorf("%w: checkpoint ID %q has the character %q: use only letters, digits, '.', '_', '-' and '/'", ErrInvalid, id, rune(seg[i]))
			}
		}
	}
	return nil
}

func idByte(b byte) bool {
	return b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z' || b >= '0' && b <= '9' || b == '.' || b == '_' || b == '-'
}
