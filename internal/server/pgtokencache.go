package server

import (
	"context"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
)

// pgTokensChannel is the channel a revocation is announced on; its
// payload is the token's ID.
const pgTokensChannel = "ckpt_tokens"

// pgTokenMaxAge bounds how long a token found is kept even while the
// listener is up: a token deleted behind ckpt's back (by hand, in SQL)
// announces nothing, and is refused at most this long after.
const pgTokenMaxAge = 5 * time.Second

// pgTokenCache keeps the tokens a PGTokens looked up, used only while its
// listener is listening for revocations, so a token is never served after
// the notification of its revocation arrived. gen counts the events that
// invalidate a lookup under way (a notification, the listener's start or
// loss): a token read from the database before one of them is not kept.
type pgTokenCache struct {
	mu   sync.Mutex
	live bool
	gen  uint64
	m    map[string]pgCached
}

type pgCached struct {
	t  Token
	at time.Time
}

// maxPGCached bounds the tokens kept; past it the cache starts over.
const maxPGCached = 4096

func (c *pgTokenCache) get(id string) (Token, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.m[id]
	if !c.live || !ok || time.Since(e.at) >= pgTokenMaxAge {
		return Token{}, false
	}
	return e.t, true
}

func (c *pgTokenCache) generation() uint64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.gen
}

// put keeps t, read from the database at generation gen, unless
// something invalidated it since or nothing listens.
func (c *pgTokenCache) put(t Token, gen uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.live || c.gen != gen {
		return
	}
	if c.m == nil || len(c.m) >= maxPGCached {
		c.m = map[string]pgCached{}
	}
	c.m[t.ID] = pgCached{t: t, at: time.Now()}
}

// forget drops token id (revoked).
func (c *pgTokenCache) forget(id string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.m, id)
	c.gen++
}

// reset drops everything and sets whether the listener listens.
func (c *pgTokenCache) reset(live bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.m, c.live = nil, live
	c.gen++
}

// listen keeps a connection of its own listening on pgTokensChannel until
// ctx ends, forgetting each token announced; while it is down (the
// database restarting, a failover) the cache is off.
func (p *PGTokens) listen(ctx context.Context) {
	defer close(p.done)
	for ctx.Err() == nil {
		conn, err := pgx.ConnectConfig(ctx, p.pool.Config().ConnConfig.Copy())
		if err == nil {
			if _, err = conn.Exec(ctx, "LISTEN "+pgTokensChannel); err == nil {
				p.cache.reset(true)
				for {
					n, werr := conn.WaitForNotification(ctx)
					if werr != nil {
						break
					}
					p.cache.forget(n.Payload)
				}
			}
			p.cache.reset(false)
			cctx, cancel := context.WithTimeout(context.Background(), time.Second)
			_ = conn.Close(cctx)
			cancel()
		}
		select {
		case <-ctx.Done():
		case <-time.After(time.Second):
		}
	}
}
