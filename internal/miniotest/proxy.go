package miniotest

import (
	"bytes"
	"net"
	"sync"
	"sync/atomic"
	"testing"
)

// Proxy is a TCP proxy in front of a Server that can make the bucket
// notification (listen) streams going through it stall: the connection
// stays open and the server keeps writing, but nothing reaches the
// client, as with a load balancer or a network that black-holes a long
// request.
type Proxy struct {
	ln     net.Listener
	target string

	mu    sync.Mutex
	conns []*proxyConn
	wg    sync.WaitGroup
}

// proxyConn is one proxied connection.
type proxyConn struct {
	client, server net.Conn
	listen         atomic.Bool // a listen request went through it
	stalled        atomic.Bool // the server's bytes are dropped
}

// listenQuery marks a ListenBucketNotification request line.
var listenQuery = []byte("events=")

// StartProxy starts a proxy to s on a random port of 127.0.0.1; it closes
// with every connection when the test ends.
func StartProxy(t testing.TB, s *Server) *Proxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("miniotest: proxy: listen: %v", err)
	}
	p := &Proxy{ln: ln, target: s.Endpoint()}
	p.wg.Add(1)
	go p.accept()
	t.Cleanup(p.close)
	return p
}

// Endpoint returns the proxy's address, "127.0.0.1:port", to use instead
// of the server's.
func (p *Proxy) Endpoint() string { return p.ln.Addr().String() }

// StallListens makes every listen stream open now stall, and returns how
// many it stalled. Later connections pass.
func (p *Proxy) StallListens() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	n := 0
	for _, c := range p.conns {
		if c.listen.Load() && !c.stalled.Swap(true) {
			n++
		}
	}
	return n
}

func (p *Proxy) accept() {
	defer p.wg.Done()
	for {
		client, err := p.ln.Accept()
		if err != nil {
			return
		}
		server, err := net.Dial("tcp", p.target)
		if err != nil {
			_ = client.Close()
			continue
		}
		c := &proxyConn{client: client, server: server}
		p.mu.Lock()
		p.conns = append(p.conns, c)
		p.mu.Unlock()
		p.wg.Add(2)
		go func() { defer p.wg.Done(); c.up() }()
		go func() { defer p.wg.Done(); c.down() }()
	}
}

// up copies the client's bytes to the server, noting a listen request.
func (c *proxyConn) up() {
	defer func() { _ = c.server.Close() }()
	buf := make([]byte, 32<<10)
	for {
		n, err := c.client.Read(buf)
		if n > 0 {
			if bytes.Contains(buf[:n], listenQuery) {
				c.listen.Store(true)
			}
			if _, werr := c.server.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}

// down copies the server's bytes to the client until the connection is
// stalled, then drops them.
func (c *proxyConn) down() {
	defer func() { _ = c.client.Close() }()
	buf := make([]byte, 32<<10)
	for {
		n, err := c.server.Read(buf)
		if n > 0 && !c.stalled.Load() {
			if _, werr := c.client.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}

// close stops accepting and closes every connection.
func (p *Proxy) close() {
	_ = p.ln.Close()
	p.mu.Lock()
	for _, c := range p.conns {
		_ = c.client.Close()
		_ = c.server.Close()
	}
	p.mu.Unlock()
	p.wg.Wait()
}
