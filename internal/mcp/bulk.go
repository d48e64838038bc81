package mcp

import (
	"context"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/ckpt-dev/ckpt/internal/bulk"
	"github.com/ckpt-dev/ckpt/internal/process"
)

// BulkInput are ckpt_bulk's arguments: the action, the filters (at least
// one, or all) and what the action needs.
type BulkInput struct {
	Action   string   `json:"action" jsonschema:"tell, note, done, abandon, archive or unblock"`
	Prefix   string   `json:"prefix,omitempty" jsonschema:"only IDs under this prefix, e.g. kai-7/"`
	Status   string   `json:"status,omitempty" jsonschema:"only these statuses, comma-separated"`
	Presence string   `json:"presence,omitempty" jsonschema:"only these presence words, comma-separated: working, waiting, blocked, dead, stale, failed, done, …"`
	OfAgent  string   `json:"of_agent,omitempty" jsonschema:"only checkpoints of this agent (ID or name)"`
	Parent   string   `json:"parent,omitempty" jsonschema:"only children of this checkpoint"`
	Label    string   `json:"label,omitempty" jsonschema:"only checkpoints with this label"`
	Match    string   `json:"match,omitempty" jsonschema:"only checkpoints with this text in the ID, title, agent or current step"`
	All      bool     `json:"all,omitempty" jsonschema:"every checkpoint, when no other filter is given"`
	Text     string   `json:"text,omitempty" jsonschema:"the message (tell), the note (note) or the reason (abandon, archive)"`
	IDs      []string `json:"ids,omitempty" jsonschema:"act only on these (a dry run's), each if the filters still pick it"`
	DryRun   bool     `json:"dry_run,omitempty" jsonschema:"say what would happen to each, change nothing"`
	Agent    string   `json:"agent,omitempty" jsonschema:"the agent taking the action, recorded in the history (the sender of a tell)"`
}

func (s *server) addBulkTool(srv *sdk.Server) {
	add(srv, s, &sdk.Tool{Name: "ckpt_bulk", Description: "Take one action on every checkpoint the filters pick: tell each agent a message (an orchestrator briefing all its workers), add a note, mark done, mark abandoned, archive ended work, or clear blockers. dry_run first says what would happen to each; the result reports each checkpoint (done, skipped and why, forbidden, failed)."}, s.bulk)
}

func (s *server) bulk(ctx context.Context, req *sdk.CallToolRequest, in BulkInput) (*sdk.CallToolResult, bulk.Result, error) {
	r := bulk.Request{Action: bulk.Action(in.Action), Text: in.Text, IDs: in.IDs, DryRun: in.DryRun,
		Select: bulk.Selector{Prefix: in.Prefix, Status: in.Status, Presence: in.Presence, Agent: in.OfAgent, Parent: in.Parent, Label: in.Label, Text: in.Match, All: in.All}}
	res, err := bulk.Run(ctx, bulk.Env{Store: s.store, Now: s.now(), Actor: s.actor(req, in.Agent), Thresholds: s.opts.Thresholds, Alive: process.Alive}, r)
	return nil, res, err
}
