package remote

import (
	"context"
	"net/http"
	"net/url"

	"github.com/ckpt-dev/ckpt"
	"github.com/ckpt-dev/ckpt/httpapi"
)

// lifecycle runs a lifecycle verb on the server, next to the data. A call
// without a key gets one, so a retry is exactly-once.
func (s *Store) lifecycle(ctx context.Context, verb, id string, in httpapi.Lifecycle) (httpapi.LifecycleResult, error) {
	var out httpapi.LifecycleResult
	path, err := idPath(httpapi.PathLifecycle+verb+"/", id)
	if err != nil {
		return out, err
	}
	if in.Key == "" {
		in.Key = NewKey()
	}
	_, err = s.do(ctx, call{method: http.MethodPost, path: path, body: in, out: &out})
	return out, err
}

func wireLifecycle(l ckpt.Lifecycle) httpapi.Lifecycle {
	return httpapi.Lifecycle{At: l.At, Actor: l.Actor, SessionID: l.SessionID, Key: l.Key, Reason: l.Reason}
}

// Resume is ckpt.ResumeCheckpoint run by the server.
func (s *Store) Resume(ctx context.Context, id string, l ckpt.Lifecycle, agent *ckpt.Agent, force bool) (*ckpt.Checkpoint, error) {
	in := wireLifecycle(l)
	in.Agent, in.Force = agent, force
	out, err := s.lifecycle(ctx, httpapi.VerbResume, id, in)
	return out.State, err
}

// TakeOver is ckpt.TakeOverCheckpoint run by the server.
func (s *Store) TakeOver(ctx context.Context, id string, to ckpt.Agent, l ckpt.Lifecycle) (*ckpt.Checkpoint, string, error) {
	in := wireLifecycle(l)
	in.To = to
	out, err := s.lifecycle(ctx, httpapi.VerbTakeover, id, in)
	return out.State, out.ArchivedAs, err
}

// Restart is ckpt.RestartCheckpoint run by the server.
func (s *Store) Restart(ctx context.Context, id string, l ckpt.Lifecycle) (*ckpt.Checkpoint, string, error) {
	out, err := s.lifecycle(ctx, httpapi.VerbRestart, id, wireLifecycle(l))
	return out.State, out.ArchivedAs, err
}

// Restore is ckpt.RestoreCheckpoint run by the server.
func (s *Store) Restore(ctx context.Context, id string, rev int64, l ckpt.Lifecycle) (*ckpt.Checkpoint, error) {
	in := wireLifecycle(l)
	in.Rev = rev
	out, err := s.lifecycle(ctx, httpapi.VerbRestore, id, in)
	return out.State, err
}

// CreateToken asks the server for a new token (admin). The answer's Token
// is the bearer string, shown only now.
func (s *Store) CreateToken(ctx context.Context, t httpapi.TokenInfo) (httpapi.TokenInfo, error) {
	var out httpapi.TokenInfo
	_, err := s.do(ctx, call{method: http.MethodPost, path: httpapi.PathTokens, body: t, out: &out})
	return out, err
}

// Tokens lists the server's tokens (admin).
func (s *Store) Tokens(ctx context.Context) ([]httpapi.TokenInfo, error) {
	var out struct {
		Tokens []httpapi.TokenInfo `json:"tokens"`
	}
	_, err := s.do(ctx, call{method: http.MethodGet, path: httpapi.PathTokens, out: &out})
	return out.Tokens, err
}

// RevokeToken revokes token id (admin).
func (s *Store) RevokeToken(ctx context.Context, id string) error {
	_, err := s.do(ctx, call{method: http.MethodDelete, path: httpapi.PathTokens + "/" + url.PathEscape(id)})
	return err
}
