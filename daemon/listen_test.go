package daemon

import (
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/simdex/simdex/internal/miniotest"
	"github.com/simdex/simdex/internal/natstest"
)

// TestListenStallIsFoundAndCaughtUp: a listen-mode bucket whose
// subscription stalls (the proxy drops the stream's bytes, the connection
// stays open) is reported by /readyz and the stalls metric, its
// subscription replaced, and the uploads made while it stalled are
// indexed by the catch-up reconciliation; the scheduled one is an hour
// away.
func TestListenStallIsFoundAndCaughtUp(t *testing.T) {
	ns := natstest.Start(t)
	ms := miniotest.Start(t, miniotest.Options{})
	const bucket = "records"
	ms.MakeBucket(t, bucket, true, false)
	proxy := miniotest.StartProxy(t, ms)
	r := &rig{ns: ns, minio: ms, mc: ms.Client(t), bucket: bucket}
	cfg := DefaultConfig()
	cfg.DataDir = t.TempDir()
	cfg.HTTP.Addr = "127.0.0.1:0"
	cfg.NATS.URL = ns.URL()
	cfg.Connectors.FS.Dirs = nil
	cfg.Connectors.NATS = nil
	cfg.Index.Durability = "normal"
	cfg.Connectors.S3 = []S3SourceConfig{{
		Name: "records", Endpoint: proxy.Endpoint(), Bucket: bucket, Mode: "listen",
		AccessKeyEnv: "TEST_S3_ACCESS", SecretKeyEnv: "TEST_S3_SECRET",
		Reconcile: "@every 1h", ProbeInterval: time.Second,
	}}
	d := startDaemon(t, cfg, []string{"TEST_S3_ACCESS=" + ms.AccessKey(), "TEST_S3_SECRET=" + ms.SecretKey()})
	addr := d.Addr().String()
	indexed := func(key string) bool { return len(versionsOf(t, addr, "s3:records/records/"+key)) == 1 }

	waitFor(t, 30*time.Second, "a first probe", func() bool {
		return metricValue(t, addr, `simdex_s3_listen_probe_writes_total{source="s3:records"}`) > 0
	})
	r.put(t, "before.txt", "indexed from its listen event")
	waitFor(t, 30*time.Second, "indexing of before.txt", func() bool { return indexed("before.txt") })

	if n := proxy.StallListens(); n != 1 {
		t.Fatalf("stalled %d listen streams, want 1", n)
	}
	missed := []string{"missed-1.txt", "missed-2.txt", "missed-3.txt"}
	for _, k := range missed {
		r.put(t, k, "uploaded while the listen stream stalled: "+k)
	}
	url := "http://" + addr + "/readyz"
	waitFor(t, 30*time.Second, "/readyz naming the stalled listener", func() bool {
		code, failing := readyz(t, url)
		return code == http.StatusServiceUnavailable && slices.Equal(failing, []string{"listen s3:records"})
	})
	for _, k := range missed {
		waitFor(t, 60*time.Second, "catch-up indexing of "+k, func() bool { return indexed(k) })
	}
	waitFor(t, 30*time.Second, "/readyz ready again", func() bool {
		code, _ := readyz(t, url)
		return code == http.StatusOK
	})
	if n := metricValue(t, addr, `simdex_s3_listen_stalls_total{source="s3:records"}`); n < 1 {
		t.Errorf("simdex_s3_listen_stalls_total = %v, want at least 1", n)
	}
}
