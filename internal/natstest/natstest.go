// Package natstest runs a real, in-process NATS server with JetStream for
// tests: random port on 127.0.0.1, file storage in t.TempDir(), shut down by
// t.Cleanup. It never skips: a server that cannot start fails the test.
package natstest

import (
	"net"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
)

// readyTimeout bounds how long Start and Restart wait for the server to
// accept connections.
const readyTimeout = 10 * time.Second

// Server is a running in-process NATS server with JetStream.
type Server struct {
	mu   sync.Mutex
	opts server.Options
	srv  *server.Server
}

// Start starts a NATS server with JetStream on a random port of 127.0.0.1,
// storing streams under t.TempDir(). The server is shut down when the test
// ends. Start calls t.Fatal if the server cannot start.
func Start(t testing.TB) *Server {
	t.Helper()
	return StartWith(t, nil)
}

// StartWith is Start with configure applied to the server's options before
// it starts (authentication, TLS); configure may be nil. A server that
// requires credentials gives Conn none: connect with nats.Connect and the
// credentials the test chose.
func StartWith(t testing.TB, configure func(*server.Options)) *Server {
	t.Helper()
	s := &Server{opts: server.Options{
		Host:      "127.0.0.1",
		Port:      -1,
		JetStream: true,
		StoreDir:  t.TempDir(),
		NoLog:     true,
		NoSigs:    true,
	}}
	if configure != nil {
		configure(&s.opts)
	}
	s.start(t)
	// Pin the port so that Restart comes back on the same address and
	// clients reconnect to it.
	s.opts.Port = s.srv.Addr().(*net.TCPAddr).Port
	t.Cleanup(s.Shutdown)
	return s
}

func (s *Server) start(t testing.TB) {
	t.Helper()
	opts := s.opts // NewServer keeps and mutates the options it is given.
	srv, err := server.NewServer(&opts)
	if err != nil {
		t.Fatalf("natstest: create NATS server: %v", err)
	}
	go srv.Start()
	if !srv.ReadyForConnections(readyTimeout) {
		srv.Shutdown()
		t.Fatalf("natstest: NATS server not ready for connections after %s", readyTimeout)
	}
	if !srv.JetStreamEnabled() {
		srv.Shutdown()
		t.Fatal("natstest: JetStream not enabled on the test server")
	}
	s.mu.Lock()
	s.srv = srv
	s.mu.Unlock()
}

// URL returns the client URL, such as "nats://127.0.0.1:41234".
func (s *Server) URL() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.srv.ClientURL()
}

// Conn connects to the server and closes the connection when the test
// ends. The connection reconnects forever, quickly, so that it survives
// Restart.
func (s *Server) Conn(t testing.TB) *nats.Conn {
	t.Helper()
	nc, err := nats.Connect(s.URL(),
		nats.MaxReconnects(-1),
		nats.ReconnectWait(20*time.Millisecond),
		nats.ReconnectJitter(0, 0),
	)
	if err != nil {
		t.Fatalf("natstest: connect to %s: %v", s.URL(), err)
	}
	t.Cleanup(nc.Close)
	return nc
}

// Restart stops the server and starts it again on the same port with the
// same store directory, as an operator restart or a crash would. Streams,
// consumers and unacknowledged messages survive it.
func (s *Server) Restart(t testing.TB) {
	t.Helper()
	s.Shutdown()
	s.start(t)
}

// Shutdown stops the server and waits until it has stopped. It is safe to
// call more than once; clients see a disconnect.
func (s *Server) Shutdown() {
	s.mu.Lock()
	srv := s.srv
	s.mu.Unlock()
	if srv == nil {
		return
	}
	srv.Shutdown()
	srv.WaitForShutdown()
}

// NumClients returns the number of clients connected to the server.
func (s *Server) NumClients() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.srv.NumClients()
}
