package filestore

import (
	"bytes"
	"os"
	"strconv"
)

// Beat hints: a ckpt before the liveness log (livelog.go) appended
// "\n<id> <Unix ns>\n" to journal/beats at every Beat, after setting the
// beat file, renaming it to beats.old past 4 MiB. This ckpt writes none,
// but reads them: a checkpoint such a ckpt beat later than the liveness
// log shows is read from its beat file (liveView.lookup), and a short
// listing filtering on last seen skips the checkpoints they show seen
// since. A hint never claims a later beat than the file holds.
const (
	beatsName    = "beats"
	beatsOldName = "beats.old"
)

func (j journal) beats() string    { return j.dir + sep + beatsName }
func (j journal) beatsOld() string { return j.dir + sep + beatsOldName }

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
