package pgstore

import (
	"context"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// The wake-ups are not sent by the writing transactions: a transaction
// that NOTIFYs holds a database-wide lock from its NOTIFY through its
// commit, WAL flush included, which would serialise every append's
// commit (no group commit: measured at a tenth of the throughput).
// Instead, once committed, a writer sends one NOTIFY for however many
// commits came since the last: a statement of its own, whose transaction
// writes nothing but its commit record and so commits without waiting for
// the WAL flush (PostgreSQL flushes at commit only a transaction that
// wrote WAL), a lost wake-up costing readers at most their poll.
//
// The fast path sends it on the connection it appended on, after its
// appends are answered and before it gives the connection back: a
// notifier of its own would take a second connection whenever the writer
// was using the first, and a second connection is a second PostgreSQL
// backend (about 7 ms of the server's CPU to start and end, in every
// process that appends more than once).
//
// A Watch holds a shared session advisory lock, listenLock (two keys:
// 'ckpn', 0; leases use the class 'ckpt'), on its listening connection for
// as long as it listens; PostgreSQL drops it with the session, so a
// crashed reader holds nothing. The wake-up statement tries the same lock
// exclusively for its transaction: granted, nobody listens and it sends
// nothing (a transaction without an xid, a WAL record or the
// database-wide notify lock); refused, it NOTIFYs. A Store that found
// nobody listening sends nothing for notifyQuiet: a reader that starts
// meanwhile hears of its changes by its poll (feedPoll), as of a lost
// wake-up.
const (
	listenLockSQL   = "SELECT pg_advisory_lock_shared(1668051054, 0)"
	listenUnlockSQL = "SELECT pg_advisory_unlock_shared(1668051054, 0)"
	notifySQL       = "SELECT count(pg_notify('" + notifyChannel + "', '')) FROM (SELECT WHERE NOT pg_try_advisory_xact_lock(1668051054, 0)) AS listening"
)

// notifyEvery is the least time between two of a Store's wake-ups. A
// commit after a quiet interval is told at once; under a load of appends
// one wake-up stands for all of those in its interval, so that a Store
// sends at most ten a second however fast it appends. Each NOTIFY is a
// transaction: at 10 ms, one Store per writer at 16 and 64 writers sent
// 0.7 per append and the notifiers took about 40% of the server's CPU per
// append (BenchmarkPeer); a reader learns of a busy Store's changes at
// most this much later (and polls each second anyway).
const notifyEvery = 100 * time.Millisecond

// notifyQuiet is how long a Store that found nobody listening sends no
// wake-ups; at most feedPoll, which bounds what a new reader waits.
const notifyQuiet = feedPoll

// notices is a Store's wake-up state.
type notices struct {
	mu         sync.Mutex
	last       time.Time // when the last wake-up statement was sent
	quietUntil time.Time // nobody listened: send nothing before then
	pending    bool      // commits since the last one
}

// notifyGrace is how much later than a writer the notifier sends a
// wake-up that is due: a writer still appending sends it on its own
// connection meanwhile, and the notifier, which takes a pooled one, would
// open a second connection while the writer holds the first.
const notifyGrace = notifyEvery / 2

// take says whether a wake-up is to be sent now for the commits so far
// (and marks it sent), grace after it is due; if not, whether one is
// still pending, and how long until it may be sent.
func (n *notices) take(now time.Time, grace time.Duration) (send bool, wait time.Duration) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if !n.pending || now.Before(n.quietUntil) {
		n.pending = false // nobody listens: they poll
		return false, -1
	}
	if wait = n.last.Add(notifyEvery + grace).Sub(now); wait > 0 {
		return false, wait
	}
	n.last, n.pending = now, false
	return true, 0
}

// committedOn is the fast path's wake-up after its appends committed and
// were answered, on the connection it appended on: sent there at once
// when due, else left to the notifier.
func (s *Store) committedOn(ctx context.Context, conn *pgxpool.Conn) {
	s.notices.mu.Lock()
	s.notices.pending = true
	s.notices.mu.Unlock()
	send, wait := s.notices.take(time.Now(), 0)
	switch {
	case send:
		s.sendNotify(ctx, conn)
	case wait > 0:
		s.wake()
	}
}

// wake records commits for a wake-up and kicks the notifier, which sends
// it on a pooled connection (the locking path, Delete and Beat, which
// have given theirs back, call it); it never blocks.
func (s *Store) wake() {
	s.notices.mu.Lock()
	s.notices.pending = true
	s.notices.mu.Unlock()
	select {
	case s.kick <- struct{}{}:
	default:
	}
}

// sendNotify runs notifySQL on conn, one simple-protocol message. A lost
// wake-up only delays readers until their next poll.
func (s *Store) sendNotify(ctx context.Context, conn *pgxpool.Conn) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	var sent int64
	err := conn.QueryRow(ctx, notifySQL, pgx.QueryExecModeSimpleProtocol).Scan(&sent)
	s.notifyChecks.Add(1)
	s.notifies.Add(sent)
	if err == nil && sent == 0 {
		s.notices.mu.Lock()
		s.notices.quietUntil = time.Now().Add(notifyQuiet)
		s.notices.mu.Unlock()
	}
}

// notifier sends the wake-ups the writers left pending, each notifyGrace
// after it is due, until kick is closed; Close makes it send the last one
// at once.
func (s *Store) notifier() {
	defer close(s.notifierDone)
	for range s.kick {
		for {
			grace := notifyGrace
			select {
			case <-s.closing:
				grace = 0
			default:
			}
			send, wait := s.notices.take(time.Now(), grace)
			if send {
				ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
				_ = s.withConn(ctx, func(conn *pgxpool.Conn) error {
					s.sendNotify(ctx, conn)
					return nil
				})
				cancel()
			}
			if wait <= 0 {
				break
			}
			select {
			case <-time.After(wait):
			case <-s.closing:
				s.notices.mu.Lock()
				s.notices.last = time.Time{} // due now
				s.notices.mu.Unlock()
			}
		}
	}
}
