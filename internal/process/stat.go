package process

import (
	"errors"
	"strconv"
	"strings"
)

// stat is what ckpt reads of /proc/PID/stat.
type stat struct {
	comm  string // the command name, at most 15 bytes
	state byte   // R, S, D, … Z for a zombie, X for dead
	ppid  int
	start string // starttime, clock ticks after boot, as written
}

var errStat = errors.New("process: malformed stat line")

// parseStat reads a /proc/PID/stat line: "PID (COMM) STATE PPID … " with
// starttime as field 22. COMM may hold spaces and parentheses, so the
// fields start after the last ')'. It walks the fields in place: a hook
// reads one or two lines per call, and splitting them would allocate
// some fifty strings for three.
func parseStat(line string) (stat, error) {
	open := strings.IndexByte(line, '(')
	end := strings.LastIndexByte(line, ')')
	if open < 0 || end < open {
		return stat{}, errStat
	}
	var state, ppid, start string
	n := 0 // fields after COMM seen
	for rest := line[end+1:]; ; n++ {
		rest = strings.TrimLeft(rest, " \t\n\v\f\r")
		if rest == "" {
			break
		}
		i := strings.IndexAny(rest, " \t\n\v\f\r")
		if i < 0 {
			i = len(rest)
		}
		switch n {
		case 0:
			state = rest[:i]
		case 1:
			ppid = rest[:i]
		case 19:
			start = rest[:i]
		}
		if n == 19 {
			n++
			break // the fields after starttime are not read
		}
		rest = rest[i:]
	}
	if n < 20 {
		return stat{}, errStat
	}
	if len(state) != 1 || state[0] < 'A' || state[0] > 'z' {
		return stat{}, errStat // the state is one letter
	}
	p, err := strconv.Atoi(ppid)
	if err != nil {
		return stat{}, errStat
	}
	if _, err := strconv.ParseUint(start, 10, 64); err != nil {
		return stat{}, errStat
	}
	return stat{comm: line[open+1 : end], state: state[0], ppid: p, start: start}, nil
}
