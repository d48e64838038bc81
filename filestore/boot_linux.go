package filestore

import (
	"strings"
	"sync"
	"syscall"
)

// thisBoot returns the kernel's ID of the current boot: a journal last
// reconciled under another boot may have lost its unsynced tail in a crash.
// It is read by plain system calls (os.ReadFile registers a /proc file
// with the runtime's poller: two more calls in every writing process).
var thisBoot = sync.OnceValue(func() string {
	fd, err := openFile("/proc/sys/kernel/random/boot_id", syscall.O_RDONLY)
	if err != nil {
		return ""
	}
	defer syscall.Close(fd)
	b := make([]byte, 64)
	n, err := syscall.Read(fd, b)
	if err != nil || n <= 0 {
		return ""
	}
	return strings.TrimSpace(string(b[:n]))
})
