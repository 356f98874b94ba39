package postgres

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/simdex/simdex/internal/pgtest"
	"github.com/simdex/simdex/policy"
)

var epoch = time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)

// ingestInput is one document's ingest commit: a held near-copy, its two
// flags and one enforcement audit entry.
func ingestInput() ([]policy.HeldDoc, []policy.Flag, []policy.AuditEntry) {
	obj := policy.Object{Source: "s3:main", Bucket: "b", Key: "k7", VersionID: "v1", IndexKey: "s3:main/b/k7"}
	doc := policy.DocRef{ID: 7, Name: "k7", Source: "s3:main", Key: obj.IndexKey, Version: "v1"}
	held := []policy.HeldDoc{{Matter: "M-1", Document: doc, Object: obj, Content: 70, Placed: epoch}}
	flags := []policy.Flag{{Kind: policy.KindHoldMatch, Document: doc, Object: obj, Matter: "M-1"},
		{Kind: policy.KindDuplicateUpload, Document: doc, Object: obj}}
	audit := []policy.AuditEntry{{Time: epoch, Actor: "ingest", Action: policy.AuditEnforceHold, Object: obj.IndexKey, Reason: "M-1"}}
	return held, flags, audit
}

// prepare creates hold M-1 in st.
func prepare(t *testing.T, st *Store) {
	t.Helper()
	h := policy.Hold{Matter: "M-1", Status: policy.HoldActive, Created: epoch}
	if err := st.CreateHold(context.Background(), h, nil, policy.AuditEntry{Time: epoch, Actor: "alice", Action: policy.AuditHoldCreate, Object: "hold:M-1"}); err != nil {
		t.Fatal(err)
	}
}

// checkOnce checks that the commit's flags, held document and audit
// entries are each stored once and that the chain verifies.
func checkOnce(t *testing.T, st *Store, added []policy.Flag) {
	t.Helper()
	ctx := context.Background()
	if len(added) != 2 {
		t.Errorf("the commit returned %d flags, want 2", len(added))
	}
	if fs, err := st.Flags(ctx, policy.FlagFilter{}); err != nil || len(fs) != 2 {
		t.Errorf("%d flags stored (%v), want 2", len(fs), err)
	}
	if h, err := st.Hold(ctx, "M-1"); err != nil || h.Held != 1 {
		t.Errorf("hold holds %d documents (%v), want 1", h.Held, err)
	}
	cp, err := policy.Verify(ctx, st, policy.Checkpoint{})
	if err != nil {
		t.Fatal(err)
	}
	if cp.Seq != 4 {
		t.Errorf("audit has %d entries, want 4 (hold, two flags, enforcement)", cp.Seq)
	}
}

// terminate ends the session of pid from another connection and waits
// until it has ended.
func terminate(ctx context.Context, st *Store, pid uint32) error {
	var ok bool
	if err := st.pool.QueryRow(ctx, `SELECT pg_terminate_backend($1, 10000)`, int(pid)).Scan(&ok); err != nil || !ok {
		return fmt.Errorf("terminate backend %d: %v, %w", pid, ok, err)
	}
	return nil
}

// TestLostConnectionBeforeCommit: the session is killed just before
// COMMIT, so nothing committed; the key is not found and the commit runs
// again, once.
func TestLostConnectionBeforeCommit(t *testing.T) {
	ctx := context.Background()
	st := openDSN(t, pgtest.DSN(t))
	prepare(t, st)
	var calls atomic.Int32
	st.beforeCommit = func(ctx context.Context, tx pgx.Tx) error {
		if calls.Add(1) > 1 {
			return nil
		}
		return terminate(ctx, st, tx.Conn().PgConn().PID())
	}
	held, flags, audit := ingestInput()
	_, added, err := st.AddHeldAndFlags(ctx, held, flags, audit, "ingest", epoch)
	if err != nil {
		t.Fatal(err)
	}
	if calls.Load() != 2 {
		t.Errorf("%d attempts, want 2", calls.Load())
	}
	checkOnce(t, st, added)
}

// TestLostConnectionDuringCommit: the session is killed while COMMIT is
// done but not yet answered. The server is told to wait for a standby
// that does not exist before it answers a COMMIT (synchronous
// replication, for this transaction only), and the session is terminated
// while it waits: PostgreSQL keeps the commit ("already committed
// locally") and the client gets an error. The store finds the commit by
// its key and does not commit again.
func TestLostConnectionDuringCommit(t *testing.T) {
	ctx := context.Background()
	srv := pgtest.Start(t)
	dsn := srv.NewDatabase(t)
	admin, err := pgx.Connect(ctx, srv.DatabaseDSN("postgres")+"&synchronous_commit=local")
	if err != nil {
		t.Fatal(err)
	}
	st := openDSN(t, dsn+"&synchronous_commit=local")
	prepare(t, st)
	for _, q := range []string{`ALTER SYSTEM SET synchronous_standby_names = 'nobody'`, `SELECT pg_reload_conf()`} {
		if _, err := admin.Exec(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	// pg_reload_conf only signals the postmaster: wait until it has read
	// the file (a new session sees the setting), by when it has signalled
	// every backend, which read it before their next statement.
	waitForSetting(t, srv.DatabaseDSN("postgres"), "synchronous_standby_names", "nobody")
	t.Cleanup(func() {
		_, _ = admin.Exec(ctx, `ALTER SYSTEM RESET synchronous_standby_names`)
		_, _ = admin.Exec(ctx, `SELECT pg_reload_conf()`)
		admin.Close(ctx)
	})
	var calls atomic.Int32
	killed := make(chan error, 1)
	st.beforeCommit = func(ctx context.Context, tx pgx.Tx) error {
		if calls.Add(1) > 1 {
			return nil
		}
		if _, err := tx.Exec(ctx, `SET LOCAL synchronous_commit = on`); err != nil {
			return err
		}
		go func() { killed <- killWhenWaiting(ctx, st, tx.Conn().PgConn().PID()) }()
		return nil
	}
	held, flags, audit := ingestInput()
	_, added, err := st.AddHeldAndFlags(ctx, held, flags, audit, "ingest", epoch)
	if err != nil {
		t.Fatal(err)
	}
	if err := <-killed; err != nil {
		t.Fatal(err)
	}
	if calls.Load() != 1 {
		t.Errorf("%d attempts, want 1 (the first committed)", calls.Load())
	}
	checkOnce(t, st, added)
}

// killWhenWaiting terminates pid once it waits for synchronous
// replication, that is once its COMMIT is done locally.
func killWhenWaiting(ctx context.Context, st *Store, pid uint32) error {
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		var ev *string
		if err := st.pool.QueryRow(ctx, `SELECT wait_event FROM pg_stat_activity WHERE pid = $1`, int(pid)).Scan(&ev); err != nil {
			return fmt.Errorf("watch backend %d: %w", pid, err)
		}
		if ev != nil && *ev == "SyncRep" {
			return terminate(ctx, st, pid)
		}
		time.Sleep(5 * time.Millisecond)
	}
	return fmt.Errorf("backend %d never waited for a standby", pid)
}

// waitForSetting waits until a new session on dsn shows name = want.
func waitForSetting(t *testing.T, dsn, name, want string) {
	t.Helper()
	ctx := context.Background()
	deadline := time.Now().Add(30 * time.Second)
	for {
		conn, err := pgx.Connect(ctx, dsn)
		if err != nil {
			t.Fatal(err)
		}
		var got string
		err = conn.QueryRow(ctx, "SELECT current_setting($1)", name).Scan(&got)
		conn.Close(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if got == want {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s is %q after 30 s, want %q", name, got, want)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
