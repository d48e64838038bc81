//go:build !linux

package filestore

// thisBoot returns "" where the boot has no ID the store can read: the
// journal is then reconciled only by ckpt repair and by its writers'
// pending markers.
func thisBoot() string { return "" }
