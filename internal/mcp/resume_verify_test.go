package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	ckpt "github.com/ckpt-dev/ckpt"
	"github.com/ckpt-dev/ckpt/memstore"
)

// chainStore verifies chains: damaged names the checkpoints whose history
// fails.
type chainStore struct {
	ckpt.Store
	damaged map[string]bool
}

func (s chainStore) Verify(_ context.Context, id string) error {
	if s.damaged[id] {
		return fmt.Errorf("%w: checkpoint %s: history damaged at byte 9", ckpt.ErrCorrupt, id)
	}
	return nil
}

// TestResumeVerifiesTheWholeChain: ckpt_resume verifies the history first;
// damage starts no session, and the result is an error whose prompt opens
// with the damage; a sound history resumes as usual.
func TestResumeVerifiesTheWholeChain(t *testing.T) {
	st := chainStore{Store: memstore.New(), damaged: map[string]bool{}}
	f := connectTo(t, st)
	ok[StateOutput](t, f, "ckpt_start", map[string]any{"id": "w", "title": "Convert the PDFs"})
	sound := ok[ResumeOutput](t, f, "ckpt_resume", map[string]any{"id": "w"})
	if sound.Damaged != "" || strings.Contains(sound.Prompt, "damaged") || sound.Session != 2 {
		t.Fatalf("sound resume: %+v", sound)
	}

	st.damaged["w"] = true
	res := f.call(t, "ckpt_resume", map[string]any{"id": "w"})
	if !res.IsError {
		t.Fatal("resuming a damaged checkpoint is not an error")
	}
	if got := text(res); !strings.HasPrefix(got, "**Warning: the history of w is damaged** (store damaged: checkpoint w: history damaged at byte 9)") ||
		!strings.Contains(got, "`ckpt check`") || !strings.Contains(got, "# Resume: Convert the PDFs") {
		t.Errorf("damaged resume's prompt:\n%s", got)
	}
	var out ResumeOutput
	b, _ := json.Marshal(res.StructuredContent)
	if err := json.Unmarshal(b, &out); err != nil || !strings.Contains(out.Damaged, "history damaged at byte 9") {
		t.Errorf("structured result %s: %v", b, err)
	}
	if c := f.get(t, "w"); c.Session.Number != 2 {
		t.Errorf("a damaged resume started session %d", c.Session.Number)
	}
}
