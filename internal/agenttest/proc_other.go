//go:build !unix

package agenttest

import (
	"os/exec"
	"time"
)

func setProcessGroup(cmd *exec.Cmd) {}

// KillGroup kills the client.
func KillGroup(cmd *exec.Cmd) {
	if cmd.Process != nil {
		_ = cmd.Process.Kill()
	}
}

func groupAlive(pgid int) bool { return false }

func killGroupAndWait(pgid int, d time.Duration) {}
