package storetest

import (
	"sync/atomic"
	"testing"

	"github.com/simdex/simdex/index"
	"github.com/simdex/simdex/policy"
)

// BenchIngest measures the ingest commit of one document held by a hold
// and flagged once, with one audit entry beside the flag's: what the
// ingest check commits for a near-copy of a seed. Run it with -cpu to
// see writers contend on the audit head.
func BenchIngest(b *testing.B, st policy.Store) {
	if err := st.CreateHold(ctx, hold("M-1", 1), []policy.HeldDoc{heldDoc("M-1", 1, true)}, entry(policy.AuditHoldCreate, "hold:M-1")); err != nil {
		b.Fatal(err)
	}
	var next atomic.Int64
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			id := index.DocID(1000 + next.Add(1))
			_, fs, err := st.AddHeldAndFlags(ctx, []policy.HeldDoc{heldDoc("M-1", id, false)},
				[]policy.Flag{flag(policy.KindHoldMatch, id, "", "M-1")}, []policy.AuditEntry{entry(policy.AuditEnforceHold, "s3")}, "ingest", epoch)
			if err != nil || len(fs) != 1 {
				b.Fatalf("commit %d: %d flags, %v", id, len(fs), err)
			}
		}
	})
}
