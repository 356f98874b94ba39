package lease_test

import (
	"context"
	"errors"
	"net"
	"net/url"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/simdex/simdex/internal/lease"
	"github.com/simdex/simdex/internal/pgdb"
	"github.com/simdex/simdex/internal/pgtest"
)

// proxy forwards TCP connections to a server until frozen; then it
// forwards nothing more and closes nothing, as a network partition would.
type proxy struct {
	ln     net.Listener
	target string
	frozen atomic.Bool
	end    chan struct{}
	wg     sync.WaitGroup
}

func startProxy(t *testing.T, target string) *proxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &proxy{ln: ln, target: target, end: make(chan struct{})}
	p.wg.Go(p.accept)
	t.Cleanup(func() { close(p.end); ln.Close(); p.wg.Wait() })
	return p
}

func (p *proxy) accept() {
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		s, err := net.Dial("tcp", p.target)
		if err != nil {
			c.Close()
			continue
		}
		p.wg.Go(func() { p.pipe(s, c) })
		p.wg.Go(func() { p.pipe(c, s) })
	}
}

// pipe copies src to dst until src ends, or until the proxy is frozen;
// then it holds both open until the test ends.
func (p *proxy) pipe(dst, src net.Conn) {
	defer func() {
		if p.frozen.Load() {
			<-p.end
		}
		dst.Close()
		src.Close()
	}()
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if p.frozen.Load() {
			return
		}
		if n > 0 {
			if _, werr := dst.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}

// TestHoldTakenOverAfterPartition: the holder is cut off from the server
// without either end closing anything. The holder's failed pings cancel
// its job; the server ends its session when the pings stop arriving; the
// waiting replica takes the lease over, after the holder's job stopped.
func TestHoldTakenOverAfterPartition(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	pgDSN := pgtest.DSN(t)
	u, err := url.Parse(pgDSN)
	if err != nil {
		t.Fatal(err)
	}
	px := startProxy(t, u.Host)
	u.Host = px.ln.Addr().String()
	poolA, err := pgdb.Open(ctx, u.String(), 4)
	if err != nil {
		t.Fatal(err)
	}
	defer poolA.Close()
	opts := lease.PostgresOptions{PingInterval: 200 * time.Millisecond, PingTimeout: 500 * time.Millisecond, KeepAlive: 3 * time.Second, RetryPause: 100 * time.Millisecond}
	a, err := lease.NewPostgres(ctx, poolA, opts)
	if err != nil {
		t.Fatal(err)
	}
	_, b := replica(t, pgDSN)

	var stoppedA, startedB atomic.Int64 // unix nanoseconds
	aRunning, bRunning := make(chan struct{}), make(chan struct{})
	var causeA atomic.Value
	holdA, holdB := make(chan error, 1), make(chan error, 1)
	go func() {
		var once sync.Once
		holdA <- a.Hold(ctx, "dispatch", func(ctx context.Context) error {
			once.Do(func() { close(aRunning) })
			<-ctx.Done()
			causeA.CompareAndSwap(nil, context.Cause(ctx))
			stoppedA.CompareAndSwap(0, time.Now().UnixNano())
			return nil
		})
	}()
	<-aRunning
	go func() {
		holdB <- b.Hold(ctx, "dispatch", func(ctx context.Context) error {
			startedB.Store(time.Now().UnixNano())
			close(bRunning)
			<-ctx.Done()
			return nil
		})
	}()
	time.Sleep(300 * time.Millisecond)
	start := time.Now()
	px.frozen.Store(true)
	select {
	case <-bRunning:
	case <-time.After(15 * time.Second):
		t.Fatal("B did not take the lease over within 15 s of the partition")
	}
	t.Logf("A stopped %s after the partition, B took over %s after it",
		time.Duration(stoppedA.Load()-start.UnixNano()).Round(time.Millisecond), time.Since(start).Round(time.Millisecond))
	if cause, _ := causeA.Load().(error); !errors.Is(cause, lease.ErrLost) {
		t.Errorf("A's job ended by %v, want ErrLost", cause)
	}
	if stoppedA.Load() == 0 || stoppedA.Load() > startedB.Load() {
		t.Error("B started before A's job stopped: two holders at once")
	}
	cancel()
	for _, ch := range []chan error{holdA, holdB} {
		if err := <-ch; err != nil {
			t.Error(err)
		}
	}
}
