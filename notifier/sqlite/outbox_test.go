package sqlite_test

import (
	"context"
	"encoding/json"
	"path/filepath"
	"testing"
	"time"

	"github.com/simdex/simdex/internal/natstest"
	"github.com/simdex/simdex/notifier"
	"github.com/simdex/simdex/notifier/outboxtest"
	"github.com/simdex/simdex/notifier/sqlite"
)

func alert(id string) notifier.Alert { return outboxtest.Alert(id) }

// TestOutbox runs the outbox suite on SQLite: each opener call opens the
// same file again, as a restarted process or a second dispatcher does.
func TestOutbox(t *testing.T) {
	outboxtest.Run(t, func(t *testing.T) outboxtest.Opener {
		path := filepath.Join(t.TempDir(), "outbox.db")
		return func(t testing.TB) outboxtest.Outbox {
			ob, err := sqlite.Open(context.Background(), path)
			if err != nil {
				t.Fatal(err)
			}
			return ob
		}
	})
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

func BenchmarkCycle(b *testing.B) {
	path := filepath.Join(b.TempDir(), "outbox.db")
	outboxtest.BenchmarkCycle(b, func(t testing.TB) outboxtest.Outbox {
		ob, err := sqlite.Open(context.Background(), path)
		if err != nil {
			t.Fatal(err)
		}
		return ob
	})
}
