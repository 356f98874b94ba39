package sqlite_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/simdex/simdex/internal/natstest"
	"github.com/simdex/simdex/notifier"
	"github.com/simdex/simdex/notifier/sqlite"
)

func alert(id string) notifier.Alert {
	return notifier.Alert{ID: id, Kind: notifier.KindDuplicateUpload, Document: 7, Name: "q3 report (copy).docx",
		Summary: "upload duplicates existing content", Evidence: json.RawMessage(`{"exact":true}`), Created: time.Now().UTC()}
}

// TestOutboxSurvivesRestart: alerts notified before a crash are delivered
// by the next process, exactly those, once each.
func TestOutboxSurvivesRestart(t *testing.T) {
	t.Setenv("TEST_WEBHOOK_SECRET", "k")
	var got sync.Map
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		got.Store(r.Header.Get(notifier.HeaderAlert), true)
	}))
	defer srv.Close()
	cfg := notifier.DefaultConfig()
	cfg.FlagsSubject = "" // only the channels configured here
	cfg.Channels = []notifier.ChannelConfig{{Name: "hook", Type: notifier.TypeWebhook, URL: srv.URL, SecretEnv: "TEST_WEBHOOK_SECRET"}}
	cfg.Routes = []notifier.Route{{Channels: []string{"hook"}}}
	path := filepath.Join(t.TempDir(), "outbox.db")
	ctx := context.Background()

	ob, err := sqlite.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	n, err := notifier.New(notifier.Options{Config: cfg, Outbox: ob})
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"a", "b", "c"} {
		if err := n.Notify(ctx, alert(id)); err != nil {
			t.Fatal(err)
		}
	}
	ob.Close() // the process dies before dispatching

	ob, err = sqlite.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer ob.Close()
	n, err = notifier.New(notifier.Options{Config: cfg, Outbox: ob})
	if err != nil {
		t.Fatal(err)
	}
	n.Notify(ctx, alert("a")) // re-raised after restart: no second delivery
	if sent, err := n.Dispatch(ctx); sent != 3 || err != nil {
		t.Fatalf("sent %d, %v", sent, err)
	}
	if sent, _ := n.Dispatch(ctx); sent != 0 || calls.Load() != 3 {
		t.Fatalf("second dispatch sent %d; %d calls in all", sent, calls.Load())
	}
	ds, err := n.Deliveries(ctx, notifier.StatusDelivered, 0)
	if err != nil || len(ds) != 3 {
		t.Fatalf("delivered: %+v, %v", ds, err)
	}
}

// TestClaimsAreLeases: two dispatchers sharing the outbox (two replicas)
// do not claim the same delivery.
func TestClaimsAreLeases(t *testing.T) {
	ctx := context.Background()
	ob, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "outbox.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer ob.Close()
	now := time.Now()
	for i := range 50 {
		ob.Enqueue(ctx, alert(string(rune('A'+i))), map[string]time.Time{"x": now})
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	seen := map[int64]int{}
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				cs, err := ob.Claim(ctx, now, time.Minute, 3)
				if err != nil {
					t.Error(err)
					return
				}
				if len(cs) == 0 {
					return
				}
				mu.Lock()
				for _, c := range cs {
					seen[c.ID]++
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if len(seen) != 50 {
		t.Fatalf("%d deliveries claimed, want 50", len(seen))
	}
	for id, n := range seen {
		if n != 1 {
			t.Errorf("delivery %d claimed %d times", id, n)
		}
	}
	// After the lease, an unconfirmed delivery is due again (its sender died).
	if cs, _ := ob.Claim(ctx, now.Add(2*time.Minute), time.Minute, 100); len(cs) != 50 {
		t.Fatalf("after the lease: %d due, want 50", len(cs))
	}
}

// TestNATSChannel publishes alerts on simdex.alerts.<kind> of a real NATS.
func TestNATSChannel(t *testing.T) {
	ns := natstest.Start(t)
	nc := ns.Conn(t)
	sub, err := nc.SubscribeSync("simdex.alerts.>")
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	ob, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "outbox.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer ob.Close()
	cfg := notifier.DefaultConfig()
	cfg.FlagsSubject = "" // only the channels configured here
	cfg.Channels = []notifier.ChannelConfig{{Name: "bus", Type: notifier.TypeNATS}}
	cfg.Routes = []notifier.Route{{Kinds: []string{notifier.KindDuplicateUpload}, Channels: []string{"bus"}}}
	n, err := notifier.New(notifier.Options{Config: cfg, Outbox: ob, Publisher: nc})
	if err != nil {
		t.Fatal(err)
	}
	n.Notify(ctx, alert("dup-1"))
	if sent, err := n.Dispatch(ctx); sent != 1 || err != nil {
		t.Fatalf("sent %d, %v", sent, err)
	}
	m, err := sub.NextMsg(5 * time.Second)
	if err != nil {
		t.Fatal(err)
	}
	var a notifier.Alert
	if err := json.Unmarshal(m.Data, &a); err != nil || m.Subject != "simdex.alerts.duplicate-upload" || a.ID != "dup-1" {
		t.Fatalf("got %s %s (%v)", m.Subject, m.Data, err)
	}
}

func TestMigrationRefusesNewerSchema(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "outbox.db")
	ob, err := sqlite.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	ob.Close()
	if err := sqlite.SetVersion(path, 99); err != nil {
		t.Fatal(err)
	}
	if _, err := sqlite.Open(ctx, path); err == nil {
		t.Fatal("opened an outbox with a newer schema")
	}
}
