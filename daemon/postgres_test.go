package daemon

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"

	"github.com/simdex/simdex/auth"
	indexpg "github.com/simdex/simdex/index/postgres"
	"github.com/simdex/simdex/internal/pgdb"
	"github.com/simdex/simdex/internal/pgtest"
)

// postgresConfig is r's configuration with every store in the database
// dsn names, through a DSN file as a deployment mounts it.
func (r *rig) postgresConfig(t *testing.T, dsn string) Config {
	t.Helper()
	cfg := r.config(t, t.TempDir())
	path := filepath.Join(t.TempDir(), "dsn")
	if err := os.WriteFile(path, []byte(dsn+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg.Store.Driver = DriverPostgres
	cfg.Store.Postgres.DSNFile = path
	return cfg
}

// TestPostgresDriverIndexesAndDeletes: the daemon on the postgres driver
// indexes uploads, finds near-copies and applies deletes, as on SQLite.
func TestPostgresDriverIndexesAndDeletes(t *testing.T) {
	r := newRig(t)
	pg := pgtest.Start(t)
	d := startDaemon(t, r.postgresConfig(t, pg.NewDatabase(t)), r.env)
	addr := d.Addr().String()
	text := strings.Repeat("This agreement is made between the parties named below. ", 40)
	keys := []string{"contracts/master agreement.txt", "contracts/master agreement (copy).txt"}
	for _, k := range keys {
		r.put(t, k, text+k)
	}
	for _, k := range keys {
		waitFor(t, 30*time.Second, "indexing of "+k, func() bool { return len(versionsOf(t, addr, "s3:records/records/"+k)) == 1 })
	}
	docs := versionsOf(t, addr, "s3:records/records/"+keys[0])
	var sim struct {
		Matches []struct{ Name string } `json:"matches"`
	}
	getJSON(t, addr, fmt.Sprintf("/api/v1/documents/%d/similar", docs[0].ID), &sim)
	if len(sim.Matches) != 1 || sim.Matches[0].Name != keys[1] {
		t.Fatalf("similar = %+v", sim.Matches)
	}
	if m := metrics(t, addr); !strings.Contains(m, `simdex_lease_held{lease="notifier/dispatch"} 1`) {
		t.Errorf("this only replica does not hold the dispatch lease:\n%s", m)
	}
	if err := r.mc.RemoveObject(context.Background(), r.bucket, keys[1], minio.RemoveObjectOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 30*time.Second, "removal", func() bool {
		getJSON(t, addr, fmt.Sprintf("/api/v1/documents/%d/similar", docs[0].ID), &sim)
		return len(sim.Matches) == 0
	})
}

// TestPostgresWrongPasswordNamesTheKey: a DSN whose password the server
// refuses stops the start with one line naming the key, as a
// configuration error, without the password.
func TestPostgresWrongPasswordNamesTheKey(t *testing.T) {
	r := newRig(t)
	pg := pgtest.Start(t)
	dsn := strings.Replace(pg.NewDatabase(t), ":"+pg.Password()+"@", ":not-the-password@", 1)
	cfg := r.postgresConfig(t, dsn)
	for _, kv := range r.env {
		k, v, _ := strings.Cut(kv, "=")
		t.Setenv(k, v)
	}
	d, err := New(cfg, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	err = d.Run(context.Background())
	if !errors.Is(err, ErrConfig) || !strings.Contains(err.Error(), "store.postgres.dsn_file "+cfg.Store.Postgres.DSNFile) {
		t.Fatalf("got %v; want a configuration error naming store.postgres.dsn_file", err)
	}
	if msg := err.Error(); strings.Contains(msg, "not-the-password") || strings.Contains(msg, "\n") {
		t.Fatalf("error shows the password or spans lines: %q", msg)
	}
}

// TestPostgresRestartedMidIngestLosesNothing: PostgreSQL killed while
// uploads flow and restarted: the events that failed meanwhile are
// delivered again, and every object is indexed exactly once.
func TestPostgresRestartedMidIngestLosesNothing(t *testing.T) {
	r := newRig(t)
	pg := pgtest.Start(t)
	cfg := r.postgresConfig(t, pg.NewDatabase(t))
	cfg.Connectors.S3[0].AckWait = 5 * time.Second
	d := startDaemon(t, cfg, r.env)
	addr := d.Addr().String()
	const n = 300
	var wg sync.WaitGroup
	keys := make(chan int)
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range keys {
				r.put(t, fmt.Sprintf("pg/doc-%03d.txt", i), fmt.Sprintf("document %d. %s", i, strings.Repeat(fmt.Sprintf("words of %d ", i), 30)))
			}
		}()
	}
	for i := range n {
		if i == n/3 {
			pg.Kill()
		}
		if i == n/2 {
			pg.Restart(t)
		}
		keys <- i
	}
	close(keys)
	wg.Wait()
	waitFor(t, 3*time.Minute, "all objects indexed", func() bool {
		var st struct {
			Documents int64 `json:"documents"`
		}
		return getJSON(t, addr, "/api/v1/stats", &st) == 200 && st.Documents >= n
	})
	for i := range n {
		key := fmt.Sprintf("s3:records/records/pg/doc-%03d.txt", i)
		if v := versionsOf(t, addr, key); len(v) != 1 {
			t.Fatalf("%s indexed %d times", key, len(v))
		}
	}
}

// TestTokenCommandsOnPostgres: `simdex token create` and `revoke` work
// without the daemon on the postgres driver, connecting on their own, and
// audit into the shared policy store.
func TestTokenCommandsOnPostgres(t *testing.T) {
	pg := pgtest.Start(t)
	cfg := DefaultConfig()
	cfg.DataDir = t.TempDir()
	path := filepath.Join(t.TempDir(), "dsn")
	if err := os.WriteFile(path, []byte(pg.NewDatabase(t)), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg.Store.Driver, cfg.Store.Postgres.DSNFile = DriverPostgres, path
	ctx := context.Background()
	secret, tok, err := CreateToken(ctx, cfg, "ops", auth.CreateRequest{Role: auth.RoleReviewer, Matters: []string{"M-1"},
		Name: "Fleet Reviewer", Description: "fleet reviewer"})
	if err != nil || secret == "" {
		t.Fatalf("create: %q, %v", secret, err)
	}
	if err := RevokeToken(ctx, cfg, "ops", tok.ID, "test over"); err != nil {
		t.Fatalf("revoke: %v", err)
	}
	if entries, err := os.ReadDir(cfg.DataDir); err != nil || len(entries) != 0 {
		t.Fatalf("the commands wrote into the data directory: %v, %v", entries, err)
	}
}

// Round trips to PostgreSQL one uploaded document costs the daemon, with
// the duplicate-upload search on, as docs/scaling.md states them: the
// key lock (2), the idempotency check (1), the index's Put (at most 5;
// several documents often share one), the near-copy search (8) and the
// policy's ingest commit (4): 20, and a few for the replica's periodic
// work (lease pings, catching up with other replicas) while the batch
// runs. A near-copy adds its duplicate-upload flag, audit entry and
// alert, the alert's delivery (the dispatcher, woken by each alert, may
// claim twice), and reading the near-copies it found. Measured: 13–16
// round trips a document, 28–30 a near-copy.
const (
	perDocRoundTrips  = 24
	perCopyRoundTrips = 36
)

// TestPostgresRoundTripsPerDocument: what an upload costs PostgreSQL in
// round trips is fixed, whatever the size of the index: within
// perDocRoundTrips into an index of 40 documents and of 280, and within
// perCopyRoundTrips for a near-copy of an indexed document. A batch
// that costs more fails with the statements it ran.
func TestPostgresRoundTripsPerDocument(t *testing.T) {
	r := newRig(t)
	pg := pgtest.Start(t)
	cfg := r.postgresConfig(t, pg.NewDatabase(t))
	cfg.Connectors.S3[0].Reconcile = "" // a pass over the bucket is not an upload's cost
	trips := &pgtest.RoundTrips{}
	d := startDaemonWith(t, cfg, r.env, slog.LevelInfo, func(d *Daemon) {
		d.pgOpts = []pgdb.Option{pgdb.WithTracer(trips)}
	})
	addr := d.Addr().String()
	indexed := 0
	batch := func(prefix string, first, n int, bound float64) float64 {
		t.Helper()
		// Documents of benchDocs with one number are near-copies whatever
		// their prefix.
		keys, bodies := benchDocs(t, prefix, first+n)
		keys, bodies = keys[first:], bodies[first:]
		before, bySQL := trips.N(), trips.BySQL()
		for i, k := range keys {
			r.put(t, k, string(bodies[i]))
		}
		indexed += n
		// Indexed, and done with: an event's policy check and settlement
		// follow its commit to the index.
		deadline := time.Now().Add(5 * time.Minute)
		for metricValue(t, addr, "simdex_events_indexed_total") < float64(indexed) || metricValue(t, addr, "simdex_events_in_flight") > 0 {
			if time.Now().After(deadline) {
				t.Fatalf("%s: %d documents not indexed within 5 minutes", prefix, indexed)
			}
			time.Sleep(100 * time.Millisecond)
		}
		per := float64(trips.N()-before) / float64(n)
		if per > bound {
			t.Errorf("%s: %.1f round trips per document, want at most %v; the batch's statements:\n%s",
				prefix, per, bound, pgtest.Diff(bySQL, trips.BySQL()))
		}
		return per
	}
	small := batch("small", 0, 40, perDocRoundTrips)
	batch("grow", 40, 200, perDocRoundTrips)
	large := batch("large", 240, 40, perDocRoundTrips)
	copies := batch("copies", 0, 40, perCopyRoundTrips) // a near-copy of each of the first 40
	t.Logf("round trips per document: %.1f into 40 documents, %.1f into 280, %.1f for near-copies", small, large, copies)
}

// TestPostgresIndexKeepsItsScheme: an index in PostgreSQL built before a
// default sketch parameter changed (32-bit MinHash slots) is opened with
// the scheme it records, not refused, and keeps answering; a new database
// takes the new default.
func TestPostgresIndexKeepsItsScheme(t *testing.T) {
	ctx := context.Background()
	r := newRig(t)
	pg := pgtest.Start(t)
	dsn := pg.NewDatabase(t)
	pool, err := pgdb.Open(ctx, dsn, 2)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	if got, err := indexpg.RecordedScheme(ctx, pool); err != nil || got != 0 {
		t.Fatalf("scheme of an empty database: %d, %v; want 0", got, err)
	}
	cfg := r.postgresConfig(t, dsn)
	old := cfg.Index.Options
	old.Sketch.MinHashBits = 32
	if old.Scheme() == cfg.Index.Options.Scheme() {
		t.Fatal("the default MinHash width is 32 bits: nothing to test")
	}
	st, err := indexpg.New(ctx, pool, indexpg.Options{Scheme: old.Scheme()})
	if err != nil {
		t.Fatal(err)
	}
	st.Close()
	if got, err := indexpg.RecordedScheme(ctx, pool); err != nil || got != old.Scheme() {
		t.Fatalf("recorded scheme %d, %v; want %d", got, err, old.Scheme())
	}
	d := startDaemon(t, cfg, r.env)
	key := "contracts/kept scheme.txt"
	r.put(t, key, strings.Repeat("An index keeps the scheme it was built with. ", 30))
	waitFor(t, 30*time.Second, "indexing", func() bool {
		return len(versionsOf(t, d.Addr().String(), "s3:records/records/"+key)) == 1
	})
	if got, err := indexpg.RecordedScheme(ctx, pool); err != nil || got != old.Scheme() {
		t.Fatalf("scheme after the daemon ran: %d, %v; want %d", got, err, old.Scheme())
	}
}
