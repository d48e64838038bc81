package memstore_test

import (
	"testing"

	"github.com/ckpt-dev/ckpt"
	"github.com/ckpt-dev/ckpt/memstore"
	"github.com/ckpt-dev/ckpt/storetest"
)

func TestConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) ckpt.Store { return memstore.New() })
}
