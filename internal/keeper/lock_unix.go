//go:build unix

package keeper

import (
	"errors"
	"os"
	"strconv"
	"syscall"
)

// lock takes the keeper's lock file without waiting (ErrRunning when
// another process holds it) and writes this process's ID into it; the
// returned function lets it go.
func lock(path string) (func(), error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, ErrRunning
		}
		return nil, err
	}
	if err := f.Truncate(0); err == nil {
		_, _ = f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	}
	return func() { f.Close() }, nil
}

// Supported reports whether this system runs keepers.
const Supported = isLinux
