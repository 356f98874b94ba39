package daemon

import (
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/simdex/simdex/internal/dirlock"
)

// TestSecondDaemonInOneDirectoryRefused: a second `simdex serve` in the
// same data directory used to open the embedded JetStream store before
// failing on the port; it now stops at once, naming the first's pid, and
// creates nothing.
func TestSecondDaemonInOneDirectoryRefused(t *testing.T) {
	cfg := embeddedConfig(t)
	startDaemon(t, cfg, nil)
	before, err := os.ReadDir(filepath.Join(cfg.DataDir, "nats"))
	if err != nil {
		t.Fatal(err)
	}
	second := cfg
	second.HTTP.Addr = "127.0.0.1:0"
	d, err := New(second, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- d.Run(t.Context()) }()
	select {
	case err = <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("the second daemon did not stop")
	}
	if !errors.Is(err, dirlock.ErrLocked) || !strings.Contains(err.Error(), "pid") {
		t.Fatalf("second daemon: %v, want ErrLocked naming the pid", err)
	}
	after, _ := os.ReadDir(filepath.Join(cfg.DataDir, "nats"))
	if len(after) != len(before) {
		t.Fatalf("the second daemon changed the NATS store: %v then %v", before, after)
	}
}
