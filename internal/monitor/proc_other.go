//go:build !unix

package monitor

import "os/exec"

// ownProcessGroup leaves cmd as it is where process groups are not
// offered: cancellation kills the command alone.
func ownProcessGroup(*exec.Cmd) {}
