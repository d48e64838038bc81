//go:build unix

package agenttest

import (
	"os/exec"
	"syscall"
)

// setProcessGroup puts the client in its own process group, and makes
// cancelling its context kill the whole group: the client's hooks and
// shell commands too, so none outlives the test.
func setProcessGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
}

// KillGroup kills the process group cmd leads (the client, its hooks and
// its shell commands) with SIGKILL.
func KillGroup(cmd *exec.Cmd) {
	if cmd.Process != nil {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
}

// groupAlive reports whether any process of the group pgid is left.
func groupAlive(pgid int) bool {
	return syscall.Kill(-pgid, 0) == nil
}
