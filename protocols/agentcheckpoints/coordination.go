package agentcheckpoints

import (
	"encoding/json"
	"time"

	ckpt "github.com/ckpt-dev/ckpt"
	"github.com/ckpt-dev/ckpt/internal/jsondoc"
)

// Coordination is what a file's coordination_state records beside the
// checkpoint, the coordination the document's Primary and agents do
// around it: when the agent's inbox was last checked (ckpt: when its
// messages were last delivered into its context) and when EPIC_README.md
// was last updated about it (ckpt: its escalation line). The store does
// not hold them; a mirror carries them from the file it rewrites. A zero
// time writes nothing: the field is left out of a file ckpt started, and
// kept as it was in a file ckpt imported.
type Coordination struct {
	InboxCheck       time.Time
	EpicReadmeUpdate time.Time
}

// ReadCoordination reads the coordination times of an agent checkpoint
// file; a time missing or unreadable is zero.
func ReadCoordination(data []byte) Coordination {
	var f struct {
		State struct {
			InboxCheck string `json:"last_inbox_check"`
			EpicUpdate string `json:"last_epic_readme_update"`
		} `json:"coordination_state"`
	}
	if json.Unmarshal(data, &f) != nil {
		return Coordination{}
	}
	var co Coordination
	if t, _, ok := jsondoc.ParseTime(f.State.InboxCheck); ok {
		co.InboxCheck = t
	}
	if t, _, ok := jsondoc.ParseTime(f.State.EpicUpdate); ok {
		co.EpicReadmeUpdate = t
	}
	return co
}

// ExportCoordinated is Export with co's times in coordination_state, and
// unread_messages the count of c's messages not yet delivered, whenever
// ckpt wrote the block or delivered the messages.
func (f *Format) ExportCoordinated(c *ckpt.Checkpoint, co Coordination) ([]byte, error) {
	data, err := f.Export(c)
	if err != nil || co == (Coordination{}) {
		return data, err
	}
	doc, err := jsondoc.ParseObject(data)
	if err != nil {
		return nil, err
	}
	block, ok := jsondoc.AsObject(doc.Get("coordination_state"))
	if !ok {
		block = jsondoc.NewObject()
	}
	// The document's order: last_inbox_check, unread_messages,
	// last_epic_readme_update, last_status_update.
	out := jsondoc.NewObject()
	put := func(k string, t time.Time) {
		if !t.IsZero() {
			out.Put(k, jsondoc.FormatTime(t))
		} else if block.Has(k) {
			out.Set(k, block.Get(k))
		}
	}
	put("last_inbox_check", co.InboxCheck)
	if !co.InboxCheck.IsZero() {
		out.Put("unread_messages", len(c.Messages))
	} else if block.Has("unread_messages") {
		out.Set("unread_messages", block.Get("unread_messages"))
	}
	put("last_epic_readme_update", co.EpicReadmeUpdate)
	for _, k := range block.Keys() {
		if !out.Has(k) {
			out.Set(k, block.Get(k))
		}
	}
	doc.Set("coordination_state", out.Raw())
	return doc.Indented(), nil
}
