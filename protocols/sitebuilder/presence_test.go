package sitebuilder

import (
	"testing"

	"github.com/ckpt-dev/ckpt/protocols/internal/adaptertest"
)

// TestExportCarriesPresence: progress/checkpoints/<agent>-<task>.json
// carries ckpt's presence in its heartbeat, as heartbeat.presence.
func TestExportCarriesPresence(t *testing.T) {
	adaptertest.PresenceExported(t, New(), "heartbeat")
}
