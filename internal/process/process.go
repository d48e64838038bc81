// Package process identifies an agent client's process and tells whether a
// recorded one is still alive, for ckpt's presence (ckpt.PresenceOf). A
// process is recorded with its host, PID and start time; on the same host a
// process is alive only when the PID exists and started at the recorded
// time, so a PID the kernel handed to another process is not taken for the
// agent. On another host nothing is known and presence falls back to the
// clock.
package process

import (
	"os"
	"sync"

	ckpt "github.com/ckpt-dev/ckpt"
)

var (
	hostOnce sync.Once
	host     string
)

// Host returns this machine's host name, "" when the system gives none.
func Host() string {
	hostOnce.Do(func() { host, _ = os.Hostname() })
	return host
}

// Alive implements ckpt.AliveFunc for this host: a process on another host
// (or with no host) is not known; on this one it is alive when its PID runs
// and, when a start time was recorded, started then. known is false where
// the system cannot say (no /proc and no signal to probe with).
func Alive(p *ckpt.Process) (alive, known bool) {
	if p == nil || p.PID <= 0 || p.Host == "" || p.Host != Host() {
		return false, false
	}
	return aliveHere(p.PID, p.Start)
}

// Of returns the process pid on this host with its start time, or nil when
// it does not exist or has ended (a zombie not yet reaped).
func Of(pid int) *ckpt.Process {
	st, err := readStat(pid)
	if err != nil || st.state == 'Z' || st.state == 'X' {
		return nil
	}
	return &ckpt.Process{Host: Host(), PID: pid, Start: st.start}
}

// wrapper reports whether a program stands between an agent client and
// the hooks it runs: a shell that runs the command line, or a launcher.
// (A switch, not a map literal: Go builds a map literal at
// initialisation, in every ckpt process.)
func wrapper(k string) bool {
	switch k {
	case "sh", "bash", "dash", "zsh", "fish", "ksh", "env", "timeout", "nice", "nohup",
		"ckpt", "xargs", "stdbuf", "time":
		return true
	}
	return false
}

// Client returns the process of the agent client that started this one:
// the nearest ancestor that is not a shell or a launcher (clients run hook
// commands through sh -c, sometimes through env or timeout). nil when the
// ancestry cannot be read (not Linux) or ends before one is found.
func Client() *ckpt.Process {
	pid := os.Getppid()
	for range 16 {
		if pid <= 1 {
			return nil
		}
		st, err := readStat(pid)
		if err != nil {
			return nil
		}
		if !wrapper(st.comm) {
			return &ckpt.Process{Host: Host(), PID: pid, Start: st.start}
		}
		pid = st.ppid
	}
	return nil
}
