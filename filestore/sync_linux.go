package filestore

import (
	"os"
	"syscall"
)

// datasync makes f's data durable with fdatasync(2): enough for an append,
// whose new size is metadata fdatasync must write, and cheaper than fsync.
func datasync(f *os.File) error {
	for {
		err := syscall.Fdatasync(int(f.Fd()))
		if err != syscall.EINTR {
			return err
		}
	}
}
