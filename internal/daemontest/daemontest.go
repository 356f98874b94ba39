// Package daemontest runs a real simdex daemon inside a test of another
// package (the CLI's, the review UI's): started with the test, ready when
// Start returns, stopped and checked when the test ends.
package daemontest

import (
	"context"
	"log/slog"
	"net/http"
	"testing"
	"time"

	"github.com/simdex/simdex/daemon"
)

// Start runs a daemon with cfg until the test ends, logging to logger (nil
// discards), and returns it once /readyz answers 200. The test fails if
// the daemon cannot start, does not stop within a minute, or stops with an
// error.
func Start(t testing.TB, cfg daemon.Config, logger *slog.Logger) *daemon.Daemon {
	t.Helper()
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	d, err := daemon.New(cfg, logger)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- d.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("daemon: %v", err)
			}
		case <-time.After(60 * time.Second):
			t.Error("daemon did not stop within 60s")
		}
	})
	deadline := time.Now().Add(60 * time.Second)
	for {
		select {
		case err := <-done:
			t.Fatalf("daemon stopped before it was ready: %v", err)
		default:
		}
		if a := d.Addr(); a != nil {
			if resp, err := http.Get("http://" + a.String() + "/readyz"); err == nil {
				resp.Body.Close()
				if resp.StatusCode == http.StatusOK {
					return d
				}
			}
		}
		if time.Now().After(deadline) {
			t.Fatal("daemon not ready within 60s")
		}
		time.Sleep(50 * time.Millisecond)
	}
}
