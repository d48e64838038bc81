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
// fields start after the last ')'.
func parseStat(line string) (stat, error) {
	open := strings.IndexByte(line, '(')
	end := strings.LastIndexByte(line, ')')
	if open < 0 || end < open {
		return stat{}, errStat
	}
	f := strings.Fields(line[end+1:])
	if len(f) < 20 {
		return stat{}, errStat
	}
	if len(f[0]) != 1 || f[0][0] < 'A' || f[0][0] > 'z' {
		return stat{}, errStat // the state is one letter
	}
	ppid, err := strconv.Atoi(f[1])
	if err != nil {
		return stat{}, errStat
	}
	if _, err := strconv.ParseUint(f[19], 10, 64); err != nil {
		return stat{}, errStat
	}
	return stat{comm: line[open+1 : end], state: f[0][0], ppid: ppid, start: f[19]}, nil
}
