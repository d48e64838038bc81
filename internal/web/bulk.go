package web

import (
	"encoding/json"
	"net/http"

	"github.com/ckpt-dev/ckpt"
	"github.com/ckpt-dev/ckpt/internal/bulk"
)

// bulkIn is the page's bulk request: the action, the page's filters as its
// URL spells them, the text, and after a preview the IDs it listed.
type bulkIn struct {
	Action  bulk.Action       `json:"action"`
	Filters map[string]string `json:"filters"`
	Text    string            `json:"text,omitempty"`
	IDs     []string          `json:"ids,omitempty"`
	DryRun  bool              `json:"dry_run,omitempty"`
}

// bulk: POST /ui/api/bulk: a bulk action on the checkpoints the page's
// filters pick (package bulk), through the visitor's store and scope:
// dry_run previews it ("N checkpoints will be …"), a run given the
// preview's IDs acts on those and reports each. CSRF-checked as every POST.
func (h *Handler) bulk(r *http.Request, p Principal) (any, error) {
	var in bulkIn
	dec := json.NewDecoder(http.MaxBytesReader(nil, r.Body, 512<<10))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&in); err != nil {
		return nil, badRequest("bulk: %v", err)
	}
	if !p.Write {
		return nil, &apiError{http.StatusForbidden, ckpt.CodeForbidden, p.Name + " signed in with a read-only token: bulk actions need a write token"}
	}
	f := in.Filters
	sel := bulk.Selector{Prefix: f["prefix"], Status: f["status"], Presence: f["presence"], Agent: f["agent"], Parent: f["parent"], Label: f["label"], Text: f["q"]}
	req := bulk.Request{Action: in.Action, Select: sel, Text: in.Text, IDs: in.IDs, DryRun: in.DryRun}
	// Checked as asked: the prefix a tenant's view adds is not a filter
	// the visitor chose.
	if err := req.Check(); err != nil {
		return nil, err
	}
	if p.ReadPrefix {
		prefix, ok := ckpt.NarrowPrefix(sel.Prefix, p.Prefix)
		if !ok {
			return bulk.Result{Action: in.Action, DryRun: in.DryRun, Counts: map[string]int{}, Items: []bulk.Item{}}, nil
		}
		req.Select.Prefix = prefix
	}
	env := bulk.Env{Store: h.store(p), May: p.may, Now: h.opts.Now(), Actor: p.actor(), Thresholds: h.opts.Thresholds, Alive: h.opts.Alive}
	return bulk.Run(r.Context(), env, req)
}
