package cmdutil

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"time"
)

// outputOf runs the program at path as a child process and returns its
// standard output (see Env.Output).
func outputOf(ctx context.Context, path string, args, env []string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, path, args[1:]...)
	cmd.Env = append(os.Environ(), env...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	// A grandchild left holding the pipes does not keep the caller waiting
	// past its deadline.
	cmd.WaitDelay = time.Second
	out, err := cmd.Output()
	if err != nil {
		if line := lastLine(stderr.String()); line != "" {
			err = fmt.Errorf("%w: %s", err, line)
		}
	}
	return out, err
}

// lastLine is the last non-blank line of s, trimmed.
func lastLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		s = s[i+1:]
	}
	return strings.TrimSpace(s)
}
