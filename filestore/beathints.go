package filestore

import (
	"bytes"
	"os"
	"strconv"
	"syscall"
	"time"
)

// Beat hints: every Beat, after setting the beat file, appends
// "\n<id> <Unix ns>\n" to journal/beats (O_APPEND, one write, no lock, no
// fsync). A listing that filters on last seen (a stale report) reads the
// hints and skips the beat file of every checkpoint whose hint already
// shows it seen since; the others it stats as before. The beat file is
// written first and only moves forward, so a hint never claims a later
// beat than the file holds (but for a crash losing the file's update and
// keeping the line, which liveness, a hint, tolerates). The leading
// newline keeps a torn line from joining the next one. Past beatsMax the
// file is renamed to beats.old (the previous one goes): hints older than
// two generations are lost, which only costs their checkpoints a stat.
const (
	beatsName    = "beats"
	beatsOldName = "beats.old"
)

var beatsMax int64 = 4 << 20

func (j journal) beats() string    { return j.dir + sep + beatsName }
func (j journal) beatsOld() string { return j.dir + sep + beatsOldName }

// hintBeat appends the hint of a beat of id at at. Failures are ignored:
// a missing hint costs a stat, nothing else.
func (s *Store) hintBeat(id string, at time.Time) {
	j := s.journal()
	fd, err := openFile(j.beats(), syscall.O_WRONLY|syscall.O_APPEND|syscall.O_CREAT)
	if err != nil {
		return
	}
	line := make([]byte, 0, len(id)+24)
	line = append(append(append(line, '\n'), id...), ' ')
	line = append(strconv.AppendInt(line, at.UnixNano(), 10), '\n')
	syscall.Write(fd, line)
	var st syscall.Stat_t
	if syscall.Fstat(fd, &st) == nil && st.Size > beatsMax {
		os.Rename(j.beats(), j.beatsOld())
	}
	syscall.Close(fd)
}

// beatHints returns the latest hinted beat of each checkpoint, Unix ns.
func (j journal) beatHints() map[string]int64 {
	hints := map[string]int64{}
	for _, path := range []string{j.beatsOld(), j.beats()} {
		data, err := os.ReadFile(path)
		if err != nil {
			continue
		}
		for len(data) > 0 {
			nl := bytes.IndexByte(data, '\n')
			if nl < 0 {
				break // a torn last line
			}
			line := data[:nl]
			data = data[nl+1:]
			sp := bytes.LastIndexByte(line, ' ')
			if sp <= 0 {
				continue
			}
			at, err := strconv.ParseInt(string(line[sp+1:]), 10, 64)
			if err != nil {
				continue
			}
			if id := string(line[:sp]); at > hints[id] {
				hints[id] = at
			}
		}
	}
	return hints
}
