package pgtest

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"path/filepath"
	"sync"
	"testing"
)

// Proxy is a TCP proxy between PostgreSQL's clients and a cluster (its
// Unix socket), for tests of what a network does to them: Stall holds
// every byte of chosen connections, both ways, as a partition does (the
// ends see nothing, no reset), Cut closes them, and Heal lets held bytes
// through again. Clients reach it by the connection string of DSN or URL.
// It reads each connection's start-up message, so a test can pick
// connections by their application_name.
type Proxy struct {
	ln     net.Listener
	target func() string // the socket file to dial

	mu      sync.Mutex
	cond    *sync.Cond
	conns   []*proxyConn
	made    []string // every connection's application_name, in order
	refuse  bool     // Stall or Cut of every connection: new ones too
	closed  bool
	stalled bool // Stall(nil): new connections stall too
}

type proxyConn struct {
	client, server net.Conn
	params         map[string]string // the start-up message's parameters
	stalled, cut   bool
	holding        int // directions holding bytes read while stalled
}

// NewProxy starts a proxy to cluster c, closed when the test ends.
func NewProxy(t testing.TB, c *Cluster) *Proxy {
	t.Helper()
	c.Need(t)
	return newProxy(t, func() string { return filepath.Join(c.sock, ".s.PGSQL.5432") })
}

// NewHAProxy starts a proxy to whichever of h's nodes is the primary when
// a connection is made.
func NewHAProxy(t testing.TB, h *HA) *Proxy {
	t.Helper()
	return newProxy(t, func() string { return filepath.Join(h.Primary().sock, ".s.PGSQL.5432") })
}

func newProxy(t testing.TB, target func() string) *Proxy {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &Proxy{ln: ln, target: target}
	p.cond = sync.NewCond(&p.mu)
	go p.accept()
	t.Cleanup(p.Close)
	return p
}

// DSN returns database db's key=value connection string through the proxy.
func (p *Proxy) DSN(db string) string {
	host, port, _ := net.SplitHostPort(p.ln.Addr().String())
	return fmt.Sprintf("host=%s port=%s user=postgres dbname=%s sslmode=disable", host, port, db)
}

// URL returns database db's postgres:// URL through the proxy.
func (p *Proxy) URL(db string) string {
	return fmt.Sprintf("postgres://postgres@%s/%s?sslmode=disable", p.ln.Addr(), db)
}

// Close stops the proxy and closes every connection.
func (p *Proxy) Close() {
	p.mu.Lock()
	p.closed = true
	for _, c := range p.conns {
		c.close()
	}
	p.cond.Broadcast()
	p.mu.Unlock()
	p.ln.Close()
}

// Conns returns the application_name of every connection made so far,
// open or not, in the order they were made ("(cancel)" for a client's
// request to cancel a query, which comes on a connection of its own).
func (p *Proxy) Conns() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.made...)
}

// Held returns how many connections hold bytes a Stall keeps from their
// other end: a query sent and not delivered, or an answer.
func (p *Proxy) Held() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	n := 0
	for _, c := range p.conns {
		if c.holding > 0 {
			n++
		}
	}
	return n
}

// Stall holds every byte of the open connections whose application_name
// match accepts (every connection, and every new one too, when match is
// nil) until Heal. It returns how many it stalled.
func (p *Proxy) Stall(match func(applicationName string) bool) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	if match == nil {
		p.stalled = true
	}
	n := 0
	for _, c := range p.conns {
		if !c.cut && (match == nil || match(c.params["application_name"])) {
			c.stalled = true
			n++
		}
	}
	return n
}

// Cut closes every open connection (the ends see the connection end) and,
// until Heal, every new one as soon as it is made.
func (p *Proxy) Cut() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.refuse = true
	for _, c := range p.conns {
		c.close()
	}
	p.conns = nil
	p.cond.Broadcast()
}

// Heal ends a Stall or a Cut: held bytes go through, new connections are
// made again.
func (p *Proxy) Heal() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.refuse, p.stalled = false, false
	for _, c := range p.conns {
		c.stalled = false
	}
	p.cond.Broadcast()
}

func (c *proxyConn) close() {
	c.cut = true
	c.client.Close()
	if c.server != nil {
		c.server.Close()
	}
}

func (p *Proxy) accept() {
	for {
		client, err := p.ln.Accept()
		if err != nil {
			return
		}
		go p.serve(client)
	}
}

// serve reads the client's start-up message, connects to the cluster and
// copies both ways.
func (p *Proxy) serve(client net.Conn) {
	p.mu.Lock()
	refuse := p.refuse || p.closed
	p.mu.Unlock()
	if refuse {
		client.Close()
		return
	}
	startup, params, err := readStartup(client)
	if err != nil {
		client.Close()
		return
	}
	server, err := net.Dial("unix", p.target())
	if err != nil {
		client.Close()
		return
	}
	c := &proxyConn{client: client, server: server, params: params}
	p.mu.Lock()
	if p.refuse || p.closed {
		p.mu.Unlock()
		c.close()
		return
	}
	c.stalled = p.stalled
	p.conns = append(p.conns, c)
	p.made = append(p.made, params["application_name"])
	p.mu.Unlock()
	go p.copy(c, server, io.MultiReader(bytes.NewReader(startup), client))
	p.copy(c, client, server)
}

// copy copies src to dst, holding what it read while c is stalled, and
// closes both ends when either fails.
func (p *Proxy) copy(c *proxyConn, dst io.Writer, src io.Reader) {
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			p.mu.Lock()
			if c.stalled && !c.cut {
				c.holding++
				for c.stalled && !c.cut {
					p.cond.Wait()
				}
				c.holding--
			}
			cut := c.cut
			p.mu.Unlock()
			if cut {
				return
			}
			if _, werr := dst.Write(buf[:n]); werr != nil {
				err = werr
			}
		}
		if err != nil {
			p.mu.Lock()
			c.close()
			p.drop(c)
			p.mu.Unlock()
			return
		}
	}
}

// drop removes c from the open connections. p.mu is held.
func (p *Proxy) drop(c *proxyConn) {
	for i, o := range p.conns {
		if o == c {
			p.conns = append(p.conns[:i], p.conns[i+1:]...)
			return
		}
	}
}

// readStartup reads a protocol 3 start-up message and returns its bytes
// and parameters. An SSL or GSS encryption request (sslmode other than
// disable) is answered "no", as a server without TLS would, and the
// start-up message that follows is read.
func readStartup(conn net.Conn) ([]byte, map[string]string, error) {
	for {
		var head [8]byte
		if _, err := io.ReadFull(conn, head[:]); err != nil {
			return nil, nil, err
		}
		size := binary.BigEndian.Uint32(head[:4])
		code := binary.BigEndian.Uint32(head[4:])
		if size == 8 && (code == 80877103 || code == 80877104) { // SSLRequest, GSSENCRequest
			if _, err := conn.Write([]byte{'N'}); err != nil {
				return nil, nil, err
			}
			continue
		}
		if size < 8 || size > 10000 {
			return nil, nil, fmt.Errorf("pgtest proxy: a start-up message of %d bytes", size)
		}
		msg := make([]byte, size)
		copy(msg, head[:])
		if _, err := io.ReadFull(conn, msg[8:]); err != nil {
			return nil, nil, err
		}
		params := map[string]string{}
		if code != 196608 { // not protocol 3.0's start-up: a CancelRequest
			params["application_name"] = "(cancel)"
			return msg, params, nil
		}
		kv := bytes.Split(bytes.TrimRight(msg[8:], "\x00"), []byte{0})
		for i := 0; i+1 < len(kv); i += 2 {
			params[string(kv[i])] = string(kv[i+1])
		}
		return msg, params, nil
	}
}
