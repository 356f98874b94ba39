package postgres_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/simdex/simdex/internal/pgtest"
	"github.com/simdex/simdex/notifier/outboxtest"
)

// answerLoser is a TCP proxy to PostgreSQL that, when armed, lets a
// statement reach the server and commit, but loses its answer: it drops
// the first reply that carries marker and cuts the connection, then
// refuses connections until it is disarmed.
type answerLoser struct {
	ln     net.Listener
	target string
	marker []byte
	armed  atomic.Bool
	refuse atomic.Bool
	wg     sync.WaitGroup
}

func newAnswerLoser(t *testing.T, target, marker string) *answerLoser {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &answerLoser{ln: ln, target: target, marker: []byte(marker)}
	p.wg.Add(1)
	go p.serve()
	t.Cleanup(func() { ln.Close(); p.wg.Wait() })
	return p
}

func (p *answerLoser) serve() {
	defer p.wg.Done()
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		if p.refuse.Load() {
			c.Close()
			continue
		}
		s, err := net.Dial("tcp", p.target)
		if err != nil {
			c.Close()
			continue
		}
		p.wg.Add(2)
		go func() { defer p.wg.Done(); _, _ = io.Copy(s, c); s.Close() }()
		go func() { defer p.wg.Done(); p.answer(c, s) }()
	}
}

// answer copies the server's replies to the client, losing the first
// one with the marker while armed.
func (p *answerLoser) answer(c, s net.Conn) {
	defer c.Close()
	buf := make([]byte, 64<<10)
	for {
		n, err := s.Read(buf)
		if n > 0 {
			if p.armed.Load() && bytes.Contains(buf[:n], p.marker) {
				p.armed.Store(false)
				p.refuse.Store(true)
				s.Close()
				return
			}
			if _, werr := c.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}

// TestLostClaimIsTakenBack: a claim that commits while its answer is lost
// with the connection, as when PostgreSQL restarts at that instant, is
// repeated by the next Claim, which takes its deliveries back at once
// rather than leaving them leased, and unsent, until the lease ends.
func TestLostClaimIsTakenBack(t *testing.T) {
	ctx := context.Background()
	srv := pgtest.Start(t)
	p := newAnswerLoser(t, fmt.Sprintf("127.0.0.1:%d", srv.Port()), "lost-alert-")
	dsn := strings.Replace(srv.DatabaseDSN("postgres"), fmt.Sprintf(":%d/", srv.Port()), fmt.Sprintf(":%d/", p.ln.Addr().(*net.TCPAddr).Port), 1)
	ob := opener(dsn)(t)
	now := time.Now()
	for i := range 5 {
		if err := ob.Enqueue(ctx, outboxtest.Alert(fmt.Sprintf("lost-alert-%d", i)), map[string]time.Time{"hook": now}); err != nil {
			t.Fatal(err)
		}
	}
	p.armed.Store(true)
	if cs, err := ob.Claim(ctx, now, 2*time.Minute, 100); err == nil {
		t.Fatalf("the claim whose answer was lost returned %d deliveries and no error", len(cs))
	}
	if p.armed.Load() {
		t.Fatal("the claim never reached the server")
	}
	p.refuse.Store(false)
	cs, err := ob.Claim(ctx, now, 2*time.Minute, 100)
	if err != nil {
		t.Fatal(err)
	}
	if len(cs) != 5 {
		t.Fatalf("the next claim took %d deliveries back, want the 5 the lost claim leased", len(cs))
	}
	// The token is spent: a further claim takes nothing within the lease.
	if cs, err := ob.Claim(ctx, now, 2*time.Minute, 100); err != nil || len(cs) != 0 {
		t.Fatalf("a further claim took %d deliveries, %v; want none within the lease", len(cs), err)
	}
}
