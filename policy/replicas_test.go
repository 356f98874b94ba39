package policy_test

import (
	"context"
	"crypto/sha256"
	"path/filepath"
	"slices"
	"testing"

	"github.com/simdex/simdex/index"
	idxsqlite "github.com/simdex/simdex/index/sqlite"
	"github.com/simdex/simdex/internal/pgdb"
	"github.com/simdex/simdex/internal/pgtest"
	"github.com/simdex/simdex/policy"
	policypg "github.com/simdex/simdex/policy/postgres"
)

// replica is one daemon's policy engine over the shared policy database
// and its own handle on the shared index store.
type replica struct {
	ix *index.Index
	e  *policy.Engine
}

// replicas returns two replicas sharing one PostgreSQL policy database
// and one index store (an SQLite file both open, as the PostgreSQL index
// would be shared).
func replicas(t *testing.T) [2]replica {
	t.Helper()
	dsn, path := pgtest.DSN(t), filepath.Join(t.TempDir(), "index.db")
	var out [2]replica
	for i := range out {
		pool, err := pgdb.Open(ctx, dsn, 4)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(pool.Close)
		st, err := policypg.New(ctx, pool)
		if err != nil {
			t.Fatal(err)
		}
		opts := index.DefaultOptions()
		ist, err := idxsqlite.Open(ctx, path, idxsqlite.Options{Scheme: opts.Scheme(), Durability: idxsqlite.Normal})
		if err != nil {
			t.Fatal(err)
		}
		ix, err := index.New(ctx, ist, opts)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { ix.Close(); ist.Close() })
		e, err := policy.New(policy.Options{Config: policy.DefaultConfig(), Store: st, Index: policy.IndexOf(ix), Now: (&clock{t: epoch}).Now, Workers: 2})
		if err != nil {
			t.Fatal(err)
		}
		out[i] = replica{ix: ix, e: e}
	}
	return out
}

// add indexes one text document through r and returns its id.
func (r replica) add(t *testing.T, key, text string) index.DocID {
	t.Helper()
	in := index.Input{Doc: index.Doc{Key: "s3:main/inbox/" + key, VersionID: "v1", Name: key, Source: "s3:main",
		ModTime: epoch, MediaType: "text/plain", KeepVersions: true},
		RawSHA256: sha256.Sum256([]byte(text)), RawSize: int64(len(text)), Text: []byte(text), Parent: -1}
	res, err := r.ix.Add(context.Background(), []index.Input{in})
	if err != nil || res[0].Err != nil {
		t.Fatalf("add %s: %v %v", key, err, res[0].Err)
	}
	return res[0].ID
}

// check runs the ingest check of id on r and returns the matters holding it.
func (r replica) check(t *testing.T, id index.DocID) []string {
	t.Helper()
	cs, err := r.e.CheckIngested(context.Background(), []index.DocID{id})
	if err != nil {
		t.Fatal(err)
	}
	if len(cs) == 0 {
		return nil
	}
	return cs[0].Matters
}

// TestHoldThroughOtherReplica: a hold created through replica B, and a
// seed B's ingest check records for a selector hold, flag near-copies
// ingested by replica A, whose hold cache catches up with the new holds
// and seeds instead of reloading every hold; a release through B makes A
// rebuild.
func TestHoldThroughOtherReplica(t *testing.T) {
	tx := texts(t)
	rs := replicas(t)
	a, b := rs[0], rs[1]
	if m := a.check(t, a.add(t, "before.txt", tx["MPL-2.0"])); m != nil {
		t.Fatalf("held before any hold: %v", m)
	}
	seed := b.add(t, "seed.txt", tx["Apache-2.0"])
	if _, _, err := b.e.CreateHold(ctx, policy.HoldSpec{Matter: "M-7", Name: "Acme", Reason: "litigation", Owner: "legal",
		Seeds: []index.DocID{seed}, Scope: policy.DefaultScope(), Mode: policy.ModeReport}, "alice"); err != nil {
		t.Fatal(err)
	}
	copyID := a.add(t, "copy.txt", edit(tx["Apache-2.0"], 5, 3))
	if m := a.check(t, copyID); !slices.Equal(m, []string{"M-7"}) {
		t.Fatalf("near-copy ingested by A: held for %v, want [M-7]", m)
	}
	fs, err := a.e.Flags(ctx, policy.FlagFilter{Kind: policy.KindHoldMatch, Document: copyID})
	if err != nil || len(fs) != 1 || fs[0].Matter != "M-7" {
		t.Fatalf("hold-match flags of the copy: %+v, %v", fs, err)
	}
	if r, c := policy.CacheRebuilds(a.e), policy.CacheCatchUps(a.e); r != 1 || c != 1 {
		t.Errorf("A rebuilt its hold cache %d times and caught up %d times, want 1 and 1", r, c)
	}
	// A seed recorded by B's ingest check (a selector hold) reaches A too.
	b.add(t, "evidence/first.txt", tx["EPL-2.0"])
	if _, _, err := b.e.CreateHold(ctx, policy.HoldSpec{Matter: "M-8", Name: "Memo", Reason: "audit", Owner: "legal",
		Selectors: []policy.Selector{{Prefix: "evidence/"}}, Scope: policy.DefaultScope(), Mode: policy.ModeReport}, "alice"); err != nil {
		t.Fatal(err)
	}
	if m := b.check(t, b.add(t, "evidence/memo.txt", tx["GPL-3.0-only"])); !slices.Equal(m, []string{"M-8"}) {
		t.Fatalf("selector seed ingested by B: held for %v, want [M-8]", m)
	}
	if m := a.check(t, a.add(t, "memo-copy.txt", edit(tx["GPL-3.0-only"], 5, 5))); !slices.Equal(m, []string{"M-8"}) {
		t.Fatalf("near-copy of B's new seed ingested by A: held for %v, want [M-8]", m)
	}
	if r, c := policy.CacheRebuilds(a.e), policy.CacheCatchUps(a.e); r != 1 || c != 2 {
		t.Errorf("A rebuilt its hold cache %d times and caught up %d times, want 1 and 2", r, c)
	}
	if _, err := b.e.ReleaseHold(ctx, "M-7", "settled", "alice"); err != nil {
		t.Fatal(err)
	}
	if m := a.check(t, a.add(t, "late.txt", edit(tx["Apache-2.0"], 5, 4))); m != nil {
		t.Fatalf("near-copy after the release: held for %v", m)
	}
	if r := policy.CacheRebuilds(a.e); r != 2 {
		t.Errorf("A rebuilt its hold cache %d times after a release, want 2", r)
	}
}

// TestEngineOnPostgres runs the engine's tests that go through the store
// with the policy state in PostgreSQL: the engine must not depend on
// which store keeps it.
func TestEngineOnPostgres(t *testing.T) {
	onPostgres = true
	defer func() { onPostgres = false }()
	for _, tc := range []struct {
		name string
		fn   func(*testing.T)
	}{
		{"DecisionsAudited", TestDecisionsAudited},
		{"RetentionWithClock", TestRetentionWithClock},
		{"MetadataBasis", TestMetadataBasis},
		{"Propagation", TestPropagation},
		{"HoldPlacementAndIngest", TestHoldPlacementAndIngest},
		{"HoldBySelectorSeedsLaterDocuments", TestHoldBySelectorSeedsLaterDocuments},
		{"SelectorSeedsFromConcurrentChecks", TestSelectorSeedsFromConcurrentChecks},
		{"TwoPhaseDeletion", TestTwoPhaseDeletion},
		{"ReleaseGrace", TestReleaseGrace},
		{"ApprovedFlagRefusedWhenHeld", TestApprovedFlagRefusedWhenHeld},
		{"TextFieldsRefused", TestTextFieldsRefused},
		{"PublishingSurvivesFailure", TestPublishingSurvivesFailure},
		{"SchedulerErrors", TestSchedulerErrors},
		{"IngestEnforcementFailureIsRetried", TestIngestEnforcementFailureIsRetried},
		{"SeedFilesStayInTheirMatter", TestSeedFilesStayInTheirMatter},
		{"IngestCommit", TestIngestCommit},
		{"RaceDeletionAgainstHold", TestRaceDeletionAgainstHold},
		{"PlacementResumesAfterFailure", TestPlacementResumesAfterFailure},
		{"PlacementCancelledResumes", TestPlacementCancelledResumes},
		{"CreateHoldRepeated", TestCreateHoldRepeated},
		{"PlacementCutDuringEnforcement", TestPlacementCutDuringEnforcement},
	} {
		t.Run(tc.name, tc.fn)
	}
}
