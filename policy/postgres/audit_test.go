package postgres

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/simdex/simdex/internal/pgtest"
	"github.com/simdex/simdex/policy"
)

// TestAuditTamperDetection: the chain as PostgreSQL stores it (times in
// nanoseconds, details as bytes) verifies, and every edit of its rows is
// detected, as on SQLite (policy's TestAuditTamperDetection).
func TestAuditTamperDetection(t *testing.T) {
	ctx := context.Background()
	dsn := pgtest.DSN(t)
	for _, tc := range []struct {
		name, tamper   string
		withCheckpoint bool // detected only against the checkpoint
	}{
		{"edit reason", `UPDATE policy_audit SET reason = 'forged' WHERE seq = 3`, false},
		{"edit details", `UPDATE policy_audit SET details = '{"n":2}' WHERE seq = 2`, false},
		{"edit time", `UPDATE policy_audit SET time = time + 1 WHERE seq = 4`, false},
		{"reorder", `UPDATE policy_audit SET seq = -1 WHERE seq = 2; UPDATE policy_audit SET seq = 2 WHERE seq = 3; UPDATE policy_audit SET seq = 3 WHERE seq = -1`, false},
		{"delete middle", `DELETE FROM policy_audit WHERE seq = 3`, false},
		{"truncate", `DELETE FROM policy_audit WHERE seq > 4`, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st := openDSN(t, dsn)
			if _, err := st.pool.Exec(ctx, `TRUNCATE policy_audit; UPDATE policy_audit_head SET seq = 0, hash = ''`); err != nil {
				t.Fatal(err)
			}
			for i := range 6 {
				if err := st.Append(ctx, policy.AuditEntry{Time: epoch.Add(time.Duration(i) * time.Nanosecond), Actor: "alice",
					Action: policy.AuditFlagApprove, Object: fmt.Sprintf("flag:%d", i), Reason: "ok", Details: []byte(`{"n":1}`)}); err != nil {
					t.Fatal(err)
				}
			}
			cp, err := policy.Verify(ctx, st, policy.Checkpoint{})
			if err != nil || cp.Seq != 6 {
				t.Fatalf("before tampering: %+v, %v", cp, err)
			}
			for _, q := range strings.Split(tc.tamper, ";") {
				if _, err := st.pool.Exec(ctx, q); err != nil {
					t.Fatal(err)
				}
			}
			if _, err := policy.Verify(ctx, st, cp); !errors.Is(err, policy.ErrAuditTampered) {
				t.Errorf("against checkpoint: err = %v, want ErrAuditTampered", err)
			}
			_, err = policy.Verify(ctx, st, policy.Checkpoint{})
			if tc.withCheckpoint != (err == nil) {
				t.Errorf("without checkpoint: err = %v", err)
			}
		})
	}
}
