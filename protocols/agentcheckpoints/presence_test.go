package agentcheckpoints

import (
	"testing"

	"github.com/ckpt-dev/ckpt/protocols/internal/adaptertest"
)

// TestExportCarriesPresence: agent_checkpoints/<agent>.json carries ckpt's
// presence beside the seed's status, as "presence".
func TestExportCarriesPresence(t *testing.T) { adaptertest.PresenceExported(t, New()) }
