package process

import (
	"errors"
	"io/fs"
	"os"
	"strconv"
	"syscall"
)

// readStat reads /proc/PID/stat with three system calls (open, one read of
// the whole line, close): every hook call reads one or two, and
// os.ReadFile would add a stat, a read for the end of the file and the
// poller's fcntl and epoll calls to each.
func readStat(pid int) (stat, error) {
	path := "/proc/" + strconv.Itoa(pid) + "/stat"
	fd, err := openRetry(path)
	if err != nil {
		return stat{}, &os.PathError{Op: "open", Path: path, Err: err}
	}
	defer syscall.Close(fd)
	// The line is a few hundred bytes; 1 KiB holds it with a 15-byte comm.
	var buf [1024]byte
	n := 0
	for n < len(buf) {
		m, err := syscall.Read(fd, buf[n:])
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return stat{}, &os.PathError{Op: "read", Path: path, Err: err}
		}
		if m == 0 {
			break
		}
		n += m
		if buf[n-1] == '\n' {
			break // the whole line: no read for the end of the file
		}
	}
	return parseStat(string(buf[:n]))
}

func openRetry(path string) (int, error) {
	for {
		fd, err := syscall.Open(path, syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
		if err != syscall.EINTR {
			return fd, err
		}
	}
}

func aliveHere(pid int, start string) (alive, known bool) {
	st, err := readStat(pid)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return false, true
	case err != nil:
		return false, false
	case st.state == 'Z' || st.state == 'X':
		return false, true // killed, not yet reaped: gone all the same
	case start == "":
		return true, false // running, but a reused PID cannot be ruled out
	}
	return st.start == start, true
}
