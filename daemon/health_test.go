package daemon

import (
	"encoding/json"
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/simdex/simdex/internal/natstest"
)

// TestReadyzFollowsNATS: a running daemon is ready (startDaemon waits for
// 200); when its NATS server goes away /readyz answers 503 naming nats,
// and only nats. (Bringing the same server back after the daemon has seen
// it gone leaves nats-server's own goroutines behind for goleak; the
// return to 200 is TestReadyz's, in package api.)
func TestReadyzFollowsNATS(t *testing.T) {
	ns := natstest.Start(t)
	cfg := DefaultConfig()
	cfg.DataDir = t.TempDir()
	cfg.HTTP.Addr = "127.0.0.1:0"
	cfg.NATS.URL = ns.URL()
	cfg.Connectors.FS.Dirs = nil
	// No JetStream source: a server shut down while a source creates its
	// streams leaves a stream's flush goroutine behind (nats-server), which
	// goleak then reports against the whole package.
	cfg.Connectors.NATS = nil
	d := startDaemon(t, cfg, nil)
	url := "http://" + d.Addr().String() + "/readyz"

	ns.Shutdown()
	waitFor(t, 20*time.Second, "503 naming nats", func() bool {
		code, failing := readyz(t, url)
		return code == http.StatusServiceUnavailable && slices.Equal(failing, []string{"nats"})
	})
}

// readyz returns the status of GET url and the checks it names as failing.
func readyz(t *testing.T, url string) (int, []string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var body struct {
		Failing []string `json:"failing"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	return resp.StatusCode, body.Failing
}
