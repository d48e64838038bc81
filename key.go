package ckpt

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"time"
)

// NewKey returns a fresh idempotency key for events that ckpt itself
// retries (the keeper's hand-offs, the spool's deliveries): prefix, the
// time in milliseconds (12 hex digits) and 64 random bits (16 hex digits).
// Keys made later sort later, so a store's index of a checkpoint's keys
// (pgstore's ckpt_keys) grows at its end: random keys spread each insert
// over all of a long-lived checkpoint's index pages, which made the index
// a quarter larger and a keyed append's WAL up to three times larger
// after a database checkpoint (docs/design.md, "Idempotency keys in time
// order").
func NewKey(prefix string) string {
	var b [8]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic(fmt.Sprintf("ckpt: reading random bytes: %v", err)) // crypto/rand does not fail on Linux
	}
	return fmt.Sprintf("%s%012x%s", prefix, uint64(time.Now().UnixMilli())&(1<<48-1), hex.EncodeToString(b[:]))
}

// MadeKey reports whether key has the form NewKey gives: a prefix (maybe
// empty), then 28 lowercase hex digits. An append may send such a key
// with KeyNew, and a store may then leave it out of its index of keys;
// a store's check uses MadeKey to tell such a key from a given one the
// index lost. A key a user gives in this form is checked as a made one.
func MadeKey(key string) bool {
	const digits = 28
	if len(key) < digits {
		return false
	}
	for _, c := range []byte(key[len(key)-digits:]) {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}
