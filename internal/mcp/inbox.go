package mcp

import (
	"context"
	"strings"

	"github.com/ckpt-dev/ckpt/internal/process"
	"github.com/ckpt-dev/ckpt/internal/request"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/ckpt-dev/ckpt"
)

// TellInput are ckpt_tell's arguments.
type TellInput struct {
	ID   string `json:"id" jsonschema:"the checkpoint whose agent gets the message, e.g. kai-7/worker-2"`
	Text string `json:"text" jsonschema:"the message (at most 4096 bytes): delivered once into that agent's context at its next hook, as a message from you"`
	WriteArgs
}

// InboxInput are ckpt_inbox's arguments.
type InboxInput struct {
	Prefix string `json:"prefix,omitempty" jsonschema:"only IDs that start with this, e.g. kai-7/"`
	Parent string `json:"parent,omitempty" jsonschema:"only checkpoints with this parent"`
}

// InboxOutput is ckpt_inbox's result.
type InboxOutput struct {
	Count   int               `json:"count" jsonschema:"how many checkpoints need a person"`
	Items   []ckpt.InboxEntry `json:"items" jsonschema:"the checkpoints that need a person, most urgent first: waiting, blocked, dead, stale, failed (oldest first within each), each with its state, reason, since and age_seconds, and messages (told, not yet delivered)"`
	Damaged []string          `json:"damaged,omitempty" jsonschema:"checkpoints that could not be read: run ckpt check, then ckpt repair"`
}

func (s *server) addInboxTools(srv *sdk.Server) {
	add(srv, s, &sdk.Tool{Name: "ckpt_tell", Description: "Send a message to the agent working on a checkpoint (an orchestrator briefing its workers, an answer to a waiting agent). It is recorded in the history and delivered once into that agent's context at its next hook, framed as a message from you; until then ckpt_show lists it under messages."}, s.tell)
	add(srv, s, &sdk.Tool{Name: "ckpt_inbox", Description: "List what needs a person, most urgent first: agents waiting for an answer, blocked work, dead or stale agents, failed work, each with its reason and age. Answer one with ckpt_tell."}, s.inbox)
}

func (s *server) tell(ctx context.Context, req *sdk.CallToolRequest, in TellInput) (*sdk.CallToolResult, StateOutput, error) {
	return s.write(ctx, req, in.ID, in.Agent, request.Tell{Text: in.Text}, in.IfRev, in.Key)
}

func (s *server) inbox(ctx context.Context, _ *sdk.CallToolRequest, in InboxInput) (*sdk.CallToolResult, InboxOutput, error) {
	prefix := in.Prefix
	if s.opts.Prefix != "" && !strings.HasPrefix(prefix, s.opts.Prefix) {
		prefix = s.opts.Prefix
	}
	box, err := ckpt.InboxFrom(ctx, s.store, ckpt.Filter{Prefix: prefix, Parent: in.Parent}, s.now(), s.opts.Thresholds, process.Alive)
	if err != nil {
		return nil, InboxOutput{}, err
	}
	return nil, InboxOutput{Count: len(box.Entries), Items: box.Entries, Damaged: box.Damaged}, nil
}
