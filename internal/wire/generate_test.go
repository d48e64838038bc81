package wire_test

import (
	"bytes"
	"flag"
	"os"
	"testing"

	"github.com/ckpt-dev/ckpt/internal/wire"
	"github.com/ckpt-dev/ckpt/internal/wire/wiregen"
)

var update = flag.Bool("update", false, "rewrite codec_gen.go (go generate ./internal/wire)")

// TestGeneratedCodeIsCurrent: codec_gen.go is what wiregen writes for
// wire.Roots now, so a field added to a domain type (or retagged) cannot
// ship with a stale codec. Run `go generate ./internal/wire` to update it.
func TestGeneratedCodeIsCurrent(t *testing.T) {
	src, err := wiregen.Source(wire.Roots...)
	if err != nil {
		t.Fatal(err)
	}
	if *update {
		if err := os.WriteFile("codec_gen.go", src, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	have, err := os.ReadFile("codec_gen.go")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(have, src) {
		t.Fatal("internal/wire/codec_gen.go is stale (a domain type changed): run `go generate ./internal/wire` and commit the result")
	}
}
