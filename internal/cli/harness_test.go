package cli

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	ckpt "github.com/ckpt-dev/ckpt"
	"github.com/ckpt-dev/ckpt/internal/clitest"
	"github.com/ckpt-dev/ckpt/internal/cmdutil"
)

// t0 is the clock of every test unless a test moves it.
var t0 = clitest.T0

// newHarness runs whole ckpt command lines (runOn) against one memstore.
func newHarness(t *testing.T) *clitest.Harness {
	t.Helper()
	return clitest.New(t, runOn)
}

// decodeCheckpoint parses one checkpoint from JSON output.
func decodeCheckpoint(t *testing.T, s string) *ckpt.Checkpoint {
	t.Helper()
	var c ckpt.Checkpoint
	if err := json.Unmarshal([]byte(s), &c); err != nil {
		t.Fatalf("output is not a checkpoint in JSON: %v\n%s", err, s)
	}
	return &c
}

// testWriter returns write options over store with buffers for output.
func testWriter(store ckpt.Store, out, errOut *bytes.Buffer) writeOptions {
	return writeOptions{
		common: common{
			IO:    cmdutil.IOStreams{In: strings.NewReader(""), Out: out, ErrOut: errOut},
			Now:   func() time.Time { return t0 },
			Store: func() (ckpt.Store, error) { return store, nil },
		},
		Actor: ckpt.Actor{Agent: "Secondary-A", Session: "s1"},
	}
}
