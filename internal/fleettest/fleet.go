package fleettest

import (
	"context"
	"fmt"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	natsjs "github.com/nats-io/nats.go/jetstream"
	"go.yaml.in/yaml/v3"

	"github.com/simdex/simdex/internal/miniotest"
	"github.com/simdex/simdex/internal/pgtest"
)

// Driver names the store backend of the replicas (store.driver).
type Driver string

// The store drivers.
const (
	SQLite   Driver = "sqlite"   // each replica its own files in its data directory
	Postgres Driver = "postgres" // one database for the fleet
)

// Bucket is the versioned bucket the fleet indexes; Connector is the
// name of its S3 connector, so its documents' keys start with
// "s3:records/records/".
const (
	Bucket    = "records"
	Connector = "records"
)

// Options configure a Fleet.
type Options struct {
	// Replicas is how many `simdex serve` processes run (default 1).
	Replicas int
	// Driver is their store (default SQLite).
	Driver Driver
	// NATSNodes is the size of the NATS cluster (default 3).
	NATSNodes int
	// Reconcile is the S3 connector's reconciliation schedule; "" runs
	// none.
	Reconcile string
	// Configure, when set, edits each replica's configuration (the YAML
	// document as maps) before it is written.
	Configure func(replica int, cfg map[string]any)
}

// Fleet is a running fleet: NATS cluster, MinIO, PostgreSQL (with the
// postgres driver) and the replicas.
type Fleet struct {
	Bins     Binaries
	NATS     *Cluster
	MinIO    *miniotest.Server
	PG       *pgtest.Server // nil with the SQLite driver
	Replicas []*Replica

	opts    Options
	secrets map[string]string // configuration key → file holding the secret
	// minioQueue is MinIO's queue directory for its NATS target: with it,
	// a synchronous event is stored there and published later, so an
	// event is pending until its file is gone.
	minioQueue string
}

// Start builds the binaries, starts every service and the replicas, one
// after the other (the first creates the admin token a shared token store
// gives the others), and returns once every replica is ready.
func Start(t testing.TB, opts Options) *Fleet {
	t.Helper()
	opts.Replicas = max(opts.Replicas, 1)
	opts.NATSNodes = max(opts.NATSNodes, 3)
	if opts.Driver == "" {
		opts.Driver = SQLite
	}
	f := &Fleet{Bins: Build(t), opts: opts}
	f.NATS = StartCluster(t, f.Bins, opts.NATSNodes)
	f.NATS.CreateStreams(t)
	// MinIO's NATS target takes one address: the first node's; its
	// client learns the others from the cluster and moves to one when
	// that node dies. Events it could not publish meanwhile wait in its
	// queue directory (docs/deploy.md, section 5).
	f.minioQueue = t.TempDir()
	f.MinIO = miniotest.Start(t, miniotest.Options{NATSAddress: f.NATS.Nodes[0].ClientURL(),
		NATSSubject: EventSubject, JetStream: true, SyncEvents: true, NATSQueueDir: f.minioQueue})
	f.MinIO.MakeBucket(t, Bucket, true, false)
	f.MinIO.EnableNotifications(t, Bucket)
	dir := t.TempDir()
	f.secrets = map[string]string{"nats": f.NATS.Password, "access": f.MinIO.AccessKey(), "secret": f.MinIO.SecretKey()}
	if opts.Driver == Postgres {
		f.PG = pgtest.Start(t)
		f.secrets["dsn"] = f.PG.NewDatabase(t)
	}
	for k, v := range f.secrets {
		path := filepath.Join(dir, k)
		if err := os.WriteFile(path, []byte(v+"\n"), 0o600); err != nil {
			t.Fatalf("fleettest: write secret %s: %v", path, err)
		}
		f.secrets[k] = path
	}
	for i := range opts.Replicas {
		f.Replicas = append(f.Replicas, f.startReplica(t, i, filepath.Join(dir, "replica-"+strconv.Itoa(i))))
	}
	return f
}

// startReplica writes replica i's configuration in dir and starts it.
func (f *Fleet) startReplica(t testing.TB, i int, dir string) *Replica {
	t.Helper()
	r := &Replica{Index: i, DataDir: filepath.Join(dir, "data"), ConfigPath: filepath.Join(dir, "config.yaml"),
		Addr: "127.0.0.1:" + strconv.Itoa(freePort(t)), fleet: f, client: &http.Client{Timeout: time.Minute}}
	cfg := f.config(r)
	if f.opts.Configure != nil {
		f.opts.Configure(i, cfg)
	}
	b, err := yaml.Marshal(cfg)
	if err != nil {
		t.Fatalf("fleettest: encode configuration: %v", err)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatalf("fleettest: %v", err)
	}
	if err := os.WriteFile(r.ConfigPath, b, 0o600); err != nil {
		t.Fatalf("fleettest: write %s: %v", r.ConfigPath, err)
	}
	r.proc = proc{name: "replica " + strconv.Itoa(i), path: f.Bins.Simdex,
		args: []string{"serve", "--config", r.ConfigPath}, env: []string{"PATH=" + os.Getenv("PATH"), "HOME=" + dir, "GOTRACEBACK=all"},
		logPath: filepath.Join(dir, "simdex.log")}
	// Killed, not stopped, at the end: a graceful stop of a large index
	// took half a minute, and the test's data is thrown away.
	t.Cleanup(func() {
		r.Kill()
		if t.Failed() {
			r.dumpLog(t)
		}
	})
	r.Restart(t)
	return r
}

// config is replica r's configuration: the NATS cluster with credentials
// (its nodes in an order of its own), the bucket's S3 connector on the
// event stream, no watched folder, and with the postgres driver the
// shared database. Secrets are in files it names.
func (f *Fleet) config(r *Replica) map[string]any {
	urls := strings.Split(f.NATS.URL(), ",")
	k := r.Index % len(urls)
	urls = append(urls[k:], urls[:k]...)
	s3 := map[string]any{
		"name": Connector, "endpoint": f.MinIO.Endpoint(), "bucket": Bucket, "mode": "jetstream",
		"stream": EventStream, "subject": EventSubject,
		"access_key_file": f.secrets["access"], "secret_key_file": f.secrets["secret"],
		"backfill": true, "reconcile": f.opts.Reconcile,
		// A killed replica's unsettled events go to another after this.
		"ack_wait": "15s",
	}
	cfg := map[string]any{
		"data_dir": r.DataDir,
		"log":      map[string]any{"level": "info", "format": "json"},
		"http":     map[string]any{"addr": r.Addr},
		"nats":     map[string]any{"url": strings.Join(urls, ","), "user": NATSUser, "password_file": f.secrets["nats"], "stream_replicas": 3},
		"index":    map[string]any{"durability": "normal"},
		"pipeline": map[string]any{"shutdown_timeout": "10s"},
		"connectors": map[string]any{
			"fs": map[string]any{"dirs": []string{}}, "nats": []any{}, "s3": []any{s3},
		},
		// Duplicate-upload flags depend on upload order, and one missed
		// in a crash is never raised later (docs/daemon.md); the nightly
		// sweep runs only when a test asks.
		"policy": map[string]any{
			"duplicates": map[string]any{"enabled": false},
			"schedules":  map[string]any{"evaluate": "", "republish": "@every 30s"},
		},
		// A delivery claimed by a replica that is then killed waits for
		// its claim to lapse (2 minutes by default) before another sends
		// it: shorter here, so the test waits seconds, not minutes.
		"notifier": map[string]any{"retry": map[string]any{"lease": "15s"}},
	}
	if f.opts.Driver == Postgres {
		cfg["replicas"] = f.opts.Replicas
		cfg["store"] = map[string]any{"driver": string(Postgres), "postgres": map[string]any{"dsn_file": f.secrets["dsn"]}}
	}
	return cfg
}

// Pending returns how many of the bucket's events the replicas' shared
// durable consumer has not yet had acknowledged: not delivered, or
// delivered and under way.
func (f *Fleet) Pending(ctx context.Context, js natsjs.JetStream) (uint64, error) {
	c, err := js.Consumer(ctx, EventStream, "simdex-"+Connector)
	if err != nil {
		return 0, fmt.Errorf("consumer of %s: %w", EventStream, err)
	}
	info := c.CachedInfo()
	return info.NumPending + uint64(max(info.NumAckPending, 0)), nil
}

// queuedEvents counts the files in MinIO's queue directory dir: the
// events it stored and has not published yet (-1 when it cannot be read,
// which keeps the caller waiting).
func queuedEvents(dir string) int {
	n := 0
	err := filepath.WalkDir(dir, func(_ string, e fs.DirEntry, err error) error {
		if err == nil && e.Type().IsRegular() {
			n++
		}
		return err
	})
	if err != nil {
		return -1
	}
	return n
}

// WaitDrained waits until MinIO has published every bucket event it
// queued, every one has been acknowledged, and no replica has an event
// under way.
func (f *Fleet) WaitDrained(t testing.TB, limit time.Duration) {
	t.Helper()
	js, err := natsjs.New(f.NATS.Conn(t))
	if err != nil {
		t.Fatalf("fleettest: jetstream: %v", err)
	}
	err = poll(limit, nil, func() error {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if q := queuedEvents(f.minioQueue); q > 0 {
			return fmt.Errorf("%d events in MinIO's queue", q)
		}
		n, err := f.Pending(ctx, js)
		if err != nil {
			return err
		}
		if n > 0 {
			return fmt.Errorf("%d events pending", n)
		}
		for _, r := range f.Replicas {
			v, err := r.Metric("simdex_events_in_flight")
			if err != nil {
				return err
			}
			if v > 0 {
				return fmt.Errorf("replica %d: %v events in flight", r.Index, v)
			}
		}
		return nil
	})
	if err != nil {
		for _, r := range f.Replicas {
			if v, merr := r.Metric("simdex_events_in_flight"); merr == nil && v > 0 {
				r.dumpStacks(t)
			}
		}
		t.Fatalf("fleettest: events not drained: %v", err)
	}
}
