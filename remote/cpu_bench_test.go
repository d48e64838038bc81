package remote_test

import (
	"syscall"
	"testing"
	"time"
)

// processCPU returns the processor time (user and system) this process
// has used so far.
func processCPU(b testing.TB) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// pgCPU returns the processor time the test cluster's PostgreSQL has used
// so far (0 when it cannot be read).
func pgCPU(b testing.TB) time.Duration {
	d, err := cluster.CPU()
	if err != nil {
		b.Logf("PostgreSQL's CPU: %v", err)
		return 0
	}
	return d
}
