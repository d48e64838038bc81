package server

import (
	"context"
	"sync"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
)

// pgTokensChannel is the channel a revocation is announced on; its
// payload is the token's ID.
const pgTokensChannel = "ckpt_tokens"

// pgTokenMaxAge bounds how long a token found is kept even while the
// listener is up: a token deleted behind ckpt's back (by hand, in SQL)
// announces nothing, and is refused at most this long after.
const pgTokenMaxAge = 5 * time.Second

// PGTokenTrust bounds how long a revocation made elsewhere (through
// another replica) can go unseen by a PGTokens whose listening connection
// is cut or hung, as in a network partition: the cache is trusted only
// while the listener's last probe, sent less than PGTokenTrust ago, was
// answered. PostgreSQL sends a listener every notification committed
// before a query ahead of that query's answer, so an answered probe
// proves every revocation committed before it was sent has arrived.
// Past it every Lookup asks the table, the truth.
const PGTokenTrust = time.Second

// pgTokenProbeEvery is how often the listener probes its connection;
// pgTokenProbeWait is how long it waits for an answer before it takes the
// connection for dead and makes another. A slow answer only stops the
// cache (PGTokenTrust), which is safe; a dead connection must be replaced.
const (
	pgTokenProbeEvery = 300 * time.Millisecond
	pgTokenProbeWait  = 3 * time.Second
)

// pgTokenListenerName is the listener connection's application_name, so
// that an operator (pg_stat_activity) and the tests can tell it.
const pgTokenListenerName = "ckpt token listener"

// pgTokenCache keeps the tokens a PGTokens looked up, used only while its
// listener is known to be listening for revocations (a probe answered in
// the last PGTokenTrust), so a token is never served after the
// notification of its revocation arrived, nor for long after one that
// could not arrive. gen counts the events that invalidate a lookup under
// way (a notification, the listener's start or loss): a token read from
// the database before one of them is not kept.
type pgTokenCache struct {
	mu      sync.Mutex
	live    bool
	aliveAt time.Time // when the last answered probe was sent
	gen     uint64
	m       map[string]pgCached
}

type pgCached struct {
	t  Token
	at time.Time
}

// maxPGCached bounds the tokens kept; past it the cache starts over.
const maxPGCached = 4096

// trusted reports whether the listener is known alive at now. c.mu is
// held.
func (c *pgTokenCache) trusted(now time.Time) bool {
	return c.live && now.Sub(c.aliveAt) < PGTokenTrust
}

func (c *pgTokenCache) get(id string) (Token, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	now := time.Now()
	e, ok := c.m[id]
	if !ok || !c.trusted(now) || now.Sub(e.at) >= pgTokenMaxAge {
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

// reset drops everything and sets whether the listener listens, proved
// alive by a query sent at aliveAt.
func (c *pgTokenCache) reset(live bool, aliveAt time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.m, c.live, c.aliveAt = nil, live, aliveAt
	c.gen++
}

// alive records a probe sent at sent and answered: every notification
// committed before it has been handled.
func (c *pgTokenCache) alive(sent time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.aliveAt = sent
}

// listen keeps a connection of its own listening on pgTokensChannel until
// ctx ends, forgetting each token announced and probing the connection;
// while it is down or unproved (the database restarting, a failover, a
// partition) the cache is off.
func (p *PGTokens) listen(ctx context.Context) {
	defer close(p.done)
	cfg := p.pool.Config().ConnConfig.Config.Copy()
	cfg.RuntimeParams["application_name"] = pgTokenListenerName
	// Each notification is handled as it is read, during a wait or a
	// probe alike, before the probe's answer.
	cfg.OnNotification = func(_ *pgconn.PgConn, n *pgconn.Notification) { p.cache.forget(n.Payload) }
	for ctx.Err() == nil {
		cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		conn, err := pgconn.ConnectConfig(cctx, cfg)
		cancel()
		if err == nil {
			sent := time.Now()
			if err = conn.Exec(ctx, "LISTEN "+pgTokensChannel).Close(); err == nil {
				p.cache.reset(true, sent)
				p.probe(ctx, conn, sent)
			}
			p.cache.reset(false, time.Time{})
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

// probe waits for notifications on conn and probes it every
// pgTokenProbeEvery, until the connection fails or a probe goes
// unanswered for pgTokenProbeWait (a dead peer that sends no reset, as in
// a partition), or ctx ends.
func (p *PGTokens) probe(ctx context.Context, conn *pgconn.PgConn, last time.Time) {
	for {
		next := last.Add(pgTokenProbeEvery)
		wctx, cancel := context.WithDeadline(ctx, next)
		err := conn.WaitForNotification(wctx) // handled by OnNotification
		cancel()
		if ctx.Err() != nil || err != nil && !pgconn.Timeout(err) {
			return
		}
		if time.Now().Before(next) {
			continue
		}
		sent := time.Now()
		pctx, cancel := context.WithTimeout(ctx, pgTokenProbeWait)
		err = conn.Ping(pctx)
		cancel()
		if err != nil {
			return
		}
		p.cache.alive(sent)
		last = sent
	}
}
