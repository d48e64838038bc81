//go:build unix

package cmdutil

import (
	"os"
	"os/exec"
	"syscall"
)

// startDetached starts path in the background (see Env.Start): its own
// session, so it outlives the command and no terminal's signals reach it;
// no standard streams; the root directory as its working directory; not
// waited for.
func startDetached(path string, args, env []string) error {
	cmd := exec.Command(path, args[1:]...)
	cmd.Env = append(os.Environ(), env...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	cmd.Dir = "/" // holds no project directory (or its mount) for its life
	if err := cmd.Start(); err != nil {
		return err
	}
	return cmd.Process.Release()
}
