//go:build unix

package cmdutil

import (
	"os"
	"syscall"
)

// passwdFile opens /etc/passwd as a blocking descriptor wrapped by
// os.NewFile, which (unlike os.Open) leaves Go's network poller alone.
func passwdFile() (*os.File, error) {
	fd, err := syscall.Open("/etc/passwd", syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	return os.NewFile(uintptr(fd), "/etc/passwd"), nil
}

func getuid() int { return os.Getuid() }
