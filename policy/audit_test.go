package policy_test

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/simdex/simdex/policy"
)

// auditEnv returns an environment whose audit log has n entries and the
// checkpoint at its head.
func auditEnv(t *testing.T, n int) (*env, policy.Checkpoint) {
	t.Helper()
	en := newEnv(t, policy.DefaultConfig())
	for i := range n {
		if err := en.st.Append(ctx, policy.AuditEntry{Time: epoch.Add(time.Duration(i) * time.Second), Actor: "alice",
			Action: policy.AuditFlagApprove, Object: fmt.Sprintf("flag:%d", i), Reason: "ok", Details: []byte(`{"n":1}`)}); err != nil {
			t.Fatal(err)
		}
	}
	cp, err := en.e.VerifyAudit(ctx, policy.Checkpoint{})
	if err != nil {
		t.Fatal(err)
	}
	if cp.Seq != int64(n) || cp.Hash == "" {
		t.Fatalf("checkpoint %+v", cp)
	}
	return en, cp
}

func TestAuditTamperDetection(t *testing.T) {
	for _, tc := range []struct {
		name   string
		tamper string
		// withCheckpoint: detected only against the checkpoint.
		withCheckpoint bool
	}{
		{"edit reason", `UPDATE audit SET reason = 'forged' WHERE seq = 3`, false},
		{"edit actor", `UPDATE audit SET actor = 'mallory' WHERE seq = 5`, false},
		{"edit details", `UPDATE audit SET details = '{"n":2}' WHERE seq = 2`, false},
		{"edit time", `UPDATE audit SET time = time + 1 WHERE seq = 4`, false},
		{"reorder", `UPDATE audit SET seq = -1 WHERE seq = 2; UPDATE audit SET seq = 2 WHERE seq = 3; UPDATE audit SET seq = 3 WHERE seq = -1`, false},
		{"delete middle", `DELETE FROM audit WHERE seq = 3`, false},
		{"delete first", `DELETE FROM audit WHERE seq = 1`, false},
		{"truncate", `DELETE FROM audit WHERE seq > 4`, true},
		{"truncate everything", `DELETE FROM audit`, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			en, cp := auditEnv(t, 6)
			if _, err := en.sq.DB().Exec(tc.tamper); err != nil {
				t.Fatal(err)
			}
			_, err := en.e.VerifyAudit(ctx, cp)
			if !errors.Is(err, policy.ErrAuditTampered) {
				t.Errorf("against checkpoint: err = %v, want ErrAuditTampered", err)
			}
			_, err = en.e.VerifyAudit(ctx, policy.Checkpoint{})
			if tc.withCheckpoint && err != nil {
				t.Errorf("without checkpoint: err = %v, want a consistent prefix", err)
			}
			if !tc.withCheckpoint && !errors.Is(err, policy.ErrAuditTampered) {
				t.Errorf("without checkpoint: err = %v, want ErrAuditTampered", err)
			}
		})
	}
}

// TestAuditRewriteDetected: an attacker who edits an entry and recomputes
// every later hash leaves a consistent chain, but not the checkpoint's.
func TestAuditRewriteDetected(t *testing.T) {
	en, cp := auditEnv(t, 5)
	var entries []policy.AuditEntry
	if err := en.st.Audit(ctx, 1, func(e policy.AuditEntry) error { entries = append(entries, e); return nil }); err != nil {
		t.Fatal(err)
	}
	prev := ""
	for i := range entries {
		if i == 1 {
			entries[i].Reason = "forged"
		}
		entries[i].Prev = prev
		entries[i].Hash = policy.ChainHash(prev, entries[i])
		prev = entries[i].Hash
		if _, err := en.sq.DB().Exec(`UPDATE audit SET reason = ?, prev = ?, hash = ? WHERE seq = ?`,
			entries[i].Reason, entries[i].Prev, entries[i].Hash, entries[i].Seq); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := en.e.VerifyAudit(ctx, policy.Checkpoint{}); err != nil {
		t.Fatalf("rewritten chain is consistent in itself: %v", err)
	}
	if _, err := en.e.VerifyAudit(ctx, cp); !errors.Is(err, policy.ErrAuditTampered) {
		t.Errorf("against checkpoint: %v", err)
	}
}

// TestDecisionsAudited: holds, flags, approvals and deletions each leave
// an entry with who, what and why, and the chain verifies.
func TestDecisionsAudited(t *testing.T) {
	tx := texts(t)
	en := newEnv(t, retentionConfig())
	f := dueFlag(t, en, "old.txt", tx["EPL-2.0"])
	if _, err := en.e.Approve(ctx, f.ID, "carol", "past retention"); err != nil {
		t.Fatal(err)
	}
	if _, err := en.e.Execute(ctx, f.ID, "carol"); err != nil {
		t.Fatal(err)
	}
	seed := en.add(doc{bucket: "legal", key: "x.txt", text: tx["MPL-2.0"]})
	if _, _, err := en.e.CreateHold(ctx, policy.HoldSpec{Matter: "M", Reason: "suit", Seeds: seed, Scope: policy.DefaultScope()}, "alice"); err != nil {
		t.Fatal(err)
	}
	if _, err := en.e.ReleaseHold(ctx, "M", "settled", "alice"); err != nil {
		t.Fatal(err)
	}
	actions := map[string]policy.AuditEntry{}
	if err := en.st.Audit(ctx, 1, func(e policy.AuditEntry) error { actions[e.Action] = e; return nil }); err != nil {
		t.Fatal(err)
	}
	for _, a := range []string{policy.AuditRun, policy.AuditFlagRaise, policy.AuditFlagApprove, policy.AuditDeleteClaim,
		policy.AuditFlagDispose, policy.AuditHoldCreate, policy.AuditEnforceHold, policy.AuditHoldRelease} {
		e, ok := actions[a]
		if !ok || e.Actor == "" || e.Object == "" || e.Time.IsZero() {
			t.Errorf("%s: %+v", a, e)
		}
	}
	if e := actions[policy.AuditHoldRelease]; e.Reason != "settled" || e.Actor != "alice" {
		t.Errorf("release entry %+v", e)
	}
	// The disposal is proven: what, under which rule and approval, when
	// and by whom.
	ds, err := en.e.Disposals(ctx, policy.DisposalFilter{})
	if err != nil || len(ds) != 1 {
		t.Fatalf("disposals: %+v, %v", ds, err)
	}
	sum := sha256.Sum256([]byte(tx["EPL-2.0"]))
	if d := ds[0]; d.Flag != f.ID || d.Rule != f.Rule || d.Approver != "carol" || d.Approved.IsZero() || d.Actor != "carol" ||
		d.Object != f.Object || d.SHA256 != hex.EncodeToString(sum[:]) || d.Size != int64(len(tx["EPL-2.0"])) {
		t.Errorf("disposal %+v", d)
	}
	if ds, _ := en.e.Disposals(ctx, policy.DisposalFilter{Rule: "other"}); len(ds) != 0 {
		t.Errorf("disposals of another rule: %+v", ds)
	}
	if _, err := en.e.VerifyAudit(ctx, policy.Checkpoint{}); err != nil {
		t.Fatal(err)
	}
}
