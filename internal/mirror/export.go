package mirror

import (
	"fmt"
	"os"
	"path/filepath"

	ckpt "github.com/ckpt-dev/ckpt"
	"github.com/ckpt-dev/ckpt/internal/atomicfile"
)

// Export renders c as format's file (`ckpt export`). With a path it also
// writes the file there durably: missing directories made, then a
// temporary file, fsync and rename, so a reader never sees half a file.
func Export(format string, c *ckpt.Checkpoint, path string) ([]byte, error) {
	f, err := NewFormat(format)
	if err != nil {
		return nil, err
	}
	data, err := f.Export(c)
	if err != nil {
		return nil, fmt.Errorf("exporting %s as %s: %w", c.ID, format, err)
	}
	if path == "" {
		return data, nil
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, fmt.Errorf("writing %s: %w", path, err)
	}
	if err := atomicfile.WriteFile(path, data, 0o644); err != nil {
		return nil, fmt.Errorf("writing %s: %w", path, err)
	}
	return data, nil
}
