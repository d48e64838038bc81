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
