package filestore

import (
	"os"
	"strings"
	"sync"
)

// thisBoot returns the kernel's ID of the current boot: a journal last
// reconciled under another boot may have lost its unsynced tail in a crash.
var thisBoot = sync.OnceValue(func() string {
	b, err := os.ReadFile("/proc/sys/kernel/random/boot_id")
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
})
