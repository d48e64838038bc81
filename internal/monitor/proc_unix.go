//go:build unix

package monitor

import (
	"os/exec"
	"syscall"
)

// ownProcessGroup makes cmd the leader of a new process group and makes
// its cancellation kill the whole group (SIGKILL to -pgid), not only the
// shell: a hung action's children go with it.
func ownProcessGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error {
		return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
}
