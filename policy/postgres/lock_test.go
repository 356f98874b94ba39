package postgres

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/simdex/simdex/internal/pgtest"
	"github.com/simdex/simdex/policy"
)

// TestTransitionWaitsForPlacement: a hold-checked approval on an object
// whose placement is under way (another replica's transaction holding
// the object's lock, its held row not committed yet) waits for it, and
// then refuses: READ COMMITTED alone would have approved it beside the
// new hold.
func TestTransitionWaitsForPlacement(t *testing.T) {
	ctx := context.Background()
	st := openDSN(t, pgtest.DSN(t))
	prepare(t, st)
	_, flags, _ := ingestInput()
	added, err := st.AddFlags(ctx, flags[1:], "ingest", epoch)
	if err != nil {
		t.Fatal(err)
	}
	held, _, _ := ingestInput()
	tx, err := st.pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(ctx)
	if _, _, err := addHeld(ctx, tx, held); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := st.Transition(ctx, policy.Transition{ID: added[0].ID, From: []policy.FlagStatus{policy.StatusOpen},
			To: policy.StatusApproved, Actor: "bob", At: epoch, CheckHolds: true, ReleasedBefore: epoch,
			Audit: policy.AuditEntry{Time: epoch, Actor: "bob", Action: policy.AuditFlagApprove}})
		done <- err
	}()
	if err := waitForAdvisoryLock(ctx, st, done); err != nil {
		t.Fatal(err)
	}
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if err := <-done; !errors.Is(err, policy.ErrLegalHold) {
		t.Fatalf("approval after the placement: %v, want ErrLegalHold", err)
	}
}

// waitForAdvisoryLock returns once a session of st waits for an advisory
// lock, or an error when done reports first.
func waitForAdvisoryLock(ctx context.Context, st *Store, done <-chan error) error {
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); {
		var n int
		if err := st.pool.QueryRow(ctx, `SELECT count(*) FROM pg_stat_activity WHERE wait_event = 'advisory'`).Scan(&n); err != nil {
			return err
		}
		if n > 0 {
			return nil
		}
		select {
		case err := <-done:
			return fmt.Errorf("the approval did not wait for the placement: %w", err)
		case <-time.After(5 * time.Millisecond):
		}
	}
	return errors.New("no session waited for the object's lock")
}
