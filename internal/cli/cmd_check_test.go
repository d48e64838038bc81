package cli

import (
	"strings"
	"testing"
)

// check and repair go through the store's capabilities: a store without
// them (memstore here, a server without a check endpoint) says so clearly
// instead of failing on a type.
func TestCheckOnAStoreWithoutTheCapabilitySaysSo(t *testing.T) {
	h := newHarness(t)
	h.ok("start", "w")
	for _, verb := range []string{"check", "repair"} {
		msg := h.fails(ExitUsage, verb)
		if !strings.Contains(msg, "this store offers no "+verb) || !strings.Contains(msg, "run ckpt "+verb+" on the host") {
			t.Errorf("ckpt %s on a store without the capability: %q", verb, msg)
		}
	}
}
