package remote

import (
	"context"
	"net/http"
	"net/url"

	"github.com/ckpt-dev/ckpt"
	"github.com/ckpt-dev/ckpt/internal/httpapi"
)

// lifecycle runs a lifecycle verb on the server, next to the data. A call
// without a key gets one, so a retry is exactly-once (the server replays it).
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

// RunLifecycle implements ckpt.LifecycleRunner: the operation runs on the
// server, next to the data, in one keyed call (so ckpt.TakeOverCheckpoint
// and the other lifecycle functions over this store cost one round trip).
func (s *Store) RunLifecycle(ctx context.Context, op ckpt.LifecycleOp) (ckpt.LifecycleOutcome, error) {
	l := op.Lifecycle
	in := httpapi.Lifecycle{At: l.At, Actor: l.Actor, SessionID: l.SessionID, Key: l.Key, Reason: l.Reason,
		Force: l.Force || op.Force, IfRev: l.IfRev, Agent: op.Agent, To: op.To, Rev: op.Rev, Note: op.Note, QuietBefore: op.QuietBefore}
	out, err := s.lifecycle(ctx, op.Verb, op.ID, in)
	if err != nil {
		return ckpt.LifecycleOutcome{}, err
	}
	// A replay of the key this call made up is its own retry that got
	// through before: for the caller, nothing was replayed.
	replayed := out.Replayed && l.Key != ""
	res := ckpt.LifecycleOutcome{State: out.State, ArchivedAs: out.ArchivedAs, Changed: out.Changed, Replayed: replayed}
	if out.Event != nil {
		res.Event = out.Event.Store()
	}
	return res, nil
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
