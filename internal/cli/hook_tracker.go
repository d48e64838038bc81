package cli

import (
	"context"
	"errors"

	ckpt "github.com/ckpt-dev/ckpt"
	"github.com/ckpt-dev/ckpt/filestore"
	"github.com/ckpt-dev/ckpt/internal/cmdutil"
)

// trackerStep is the hooks' final checkpoint's step 3 (autockpt.Auto's
// Tracker): ckpt links no issue tracker's HTTP client, so it runs
// `ckpt-server [--store LOC] checkpoint ID --profile auto --tracker-only
// --json --dir DIR` as a child process (not exec: the hook must still
// answer its client) and returns the report it printed. The child opens
// the store the hook opened: st's directory, else the location the command
// line or CKPT_STORE names (its environment is the hook's). It is killed
// when ctx, the hook's deadline, ends.
func trackerStep(f *cmdutil.Factory, st ckpt.Store, dir string) func(ctx context.Context, id string) ([]byte, error) {
	return func(ctx context.Context, id string) ([]byte, error) {
		path, err := findProgram(f.Env, ServerProgram)
		if errors.Is(err, errNoServer) {
			return nil, errors.New(ServerProgram + " is not installed beside ckpt: install both (CGO_ENABLED=0 go install github.com/ckpt-dev/ckpt/cmd/...@latest)")
		}
		if err != nil {
			return nil, err
		}
		if f.Env.Output == nil {
			return nil, errors.New("cannot start " + path + " from here")
		}
		args := []string{path}
		if loc := storeLocation(f, st); loc != "" {
			args = append(args, "--store", loc)
		}
		args = append(args, "checkpoint", id, "--profile", "auto", "--tracker-only", "--json", "--dir", dir)
		return f.Env.Output(ctx, path, args, nil)
	}
}

// storeLocation is where st, which a hook opened (under its wrappers: the
// hook's bound, the mirrors), is for another process: its directory, else
// the location f's command line or environment names; "" when neither
// says.
func storeLocation(f *cmdutil.Factory, st ckpt.Store) string {
	for range 8 {
		switch s := st.(type) {
		case *filestore.Store:
			return s.Dir()
		case interface{ Unwrap() ckpt.Store }:
			st = s.Unwrap()
		default:
			return f.Location()
		}
	}
	return f.Location()
}
