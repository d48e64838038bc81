package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"net/url"
	"strings"

	"github.com/ckpt-dev/ckpt"
	"github.com/ckpt-dev/ckpt/internal/process"
	"github.com/ckpt-dev/ckpt/internal/render"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// The resource URIs. A checkpoint ID is one URI segment, so the '/' in an
// ID is written %2F: ckpt://checkpoint/kai-7%2Fsecondary-a. StateURI and
// PromptURI build them.
const (
	uriPrefix      = "ckpt://checkpoint/"
	promptSuffix   = "/prompt"
	stateTemplate  = "ckpt://checkpoint/{id}"
	promptTemplate = "ckpt://checkpoint/{id}/prompt"
)

// StateURI is the URI of checkpoint id's state resource.
func StateURI(id string) string { return uriPrefix + url.PathEscape(id) }

// PromptURI is the URI of checkpoint id's continuation prompt resource.
func PromptURI(id string) string { return StateURI(id) + promptSuffix }

func (s *server) addResources(srv *sdk.Server) {
	srv.AddResourceTemplate(&sdk.ResourceTemplate{
		Name:        "checkpoint",
		Title:       "Checkpoint state",
		Description: "A checkpoint's state as JSON, as ckpt show --json prints it. The ID is one segment: write its '/' as %2F.",
		MIMEType:    "application/json",
		URITemplate: stateTemplate,
	}, s.readResource)
	srv.AddResourceTemplate(&sdk.ResourceTemplate{
		Name:        "checkpoint-prompt",
		Title:       "Continuation prompt",
		Description: "A checkpoint's continuation prompt (Markdown): what a new session needs to pick the work up. Reading it starts no session; ckpt_resume does.",
		MIMEType:    "text/markdown",
		URITemplate: promptTemplate,
	}, s.readResource)
}

// readResource serves both templates: the URI says which.
func (s *server) readResource(ctx context.Context, req *sdk.ReadResourceRequest) (*sdk.ReadResourceResult, error) {
	uri := req.Params.URI
	rest, ok := strings.CutPrefix(uri, uriPrefix)
	if !ok {
		return nil, sdk.ResourceNotFoundError(uri)
	}
	rest, prompt := strings.CutSuffix(rest, promptSuffix)
	id, err := url.PathUnescape(rest)
	if err == nil {
		err = ckpt.ValidateID(id)
	}
	if err != nil {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "resource " + uri + ": " + err.Error() + " (write the '/' of an ID as %2F)"}
	}
	c, err := s.store.Get(ctx, id, 0)
	if err != nil {
		if errors.Is(err, ckpt.ErrNotFound) {
			return nil, sdk.ResourceNotFoundError(uri)
		}
		return nil, err
	}
	if prompt {
		return &sdk.ReadResourceResult{Contents: []*sdk.ResourceContents{{URI: uri, MIMEType: "text/markdown", Text: render.NewPrompt(c).Markdown()}}}, nil
	}
	// The one show view: the state with its presence, as ckpt show --json.
	b, err := json.MarshalIndent(render.NewShown(c, true, s.now(), s.opts.Thresholds, process.Alive), "", "  ")
	if err != nil {
		return nil, err
	}
	return &sdk.ReadResourceResult{Contents: []*sdk.ResourceContents{{URI: uri, MIMEType: "application/json", Text: string(b)}}}, nil
}
