package process

import (
	"errors"
	"io/fs"
	"os"
	"strconv"
)

func readStat(pid int) (stat, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return stat{}, err
	}
	return parseStat(string(b))
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
