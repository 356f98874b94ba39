// Package storetest is the conformance suite every policy.Store passes:
// the embedded SQLite store and the PostgreSQL store that replicas share.
// Besides what one process asks of a store, it races writers from two
// handles on the same state, as two replicas would: on one hold, one
// flag, one ingest commit and the audit chain.
package storetest

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/simdex/simdex/index"
	"github.com/simdex/simdex/policy"
)

// Open returns a fresh, empty store and a function that opens another
// handle on the same state, as a second replica would (its own pool or
// connection). Both close their handles when the test ends.
type Open func(t *testing.T) (policy.Store, func(t *testing.T) policy.Store)

// Run runs the suite against the stores open returns.
func Run(t *testing.T, open Open) {
	for _, tc := range []struct {
		name string
		fn   func(*testing.T, Open)
	}{
		{"Rules", testRules},
		{"Holds", testHolds},
		{"HeldDocs", testHeldDocs},
		{"Flags", testFlags},
		{"Transition", testTransition},
		{"Ingest", testIngest},
		{"Runs", testRuns},
		{"Audit", testAudit},
		{"HoldChanges", testHoldChanges},
		{"Placements", testPlacements},
		{"Text", testText},
		{"RaceHold", testRaceHold},
		{"RaceFlag", testRaceFlag},
		{"RaceIngest", testRaceIngest},
		{"RaceAudit", testRaceAudit},
	} {
		t.Run(tc.name, func(t *testing.T) { tc.fn(t, open) })
	}
}

var epoch = time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)

func store(t *testing.T, open Open) policy.Store {
	st, _ := open(t)
	return st
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func wantErr(t *testing.T, err, target error) {
	t.Helper()
	if !errors.Is(err, target) {
		t.Fatalf("err = %v, want %v", err, target)
	}
}

// object is the object of test document id.
func object(id index.DocID) policy.Object {
	key := fmt.Sprintf("s3:main/records/doc%d.txt", id)
	return policy.Object{Source: "s3:main", Bucket: "records", Key: fmt.Sprintf("doc%d.txt", id), VersionID: "v1", IndexKey: key}
}

func ref(id index.DocID) policy.DocRef {
	return policy.DocRef{ID: id, Name: fmt.Sprintf("doc%d.txt", id), Source: "s3:main", Key: object(id).IndexKey, Version: "v1"}
}

func heldDoc(matter string, id index.DocID, seed bool) policy.HeldDoc {
	return policy.HeldDoc{Matter: matter, Document: ref(id), Object: object(id), Content: index.ContentID(id + 1000), Seed: seed, Placed: epoch}
}

func hold(matter string, seeds ...index.DocID) policy.Hold {
	return policy.Hold{Matter: matter, Name: "Matter " + matter, Reason: "litigation", Owner: "legal", Seeds: seeds,
		Scope: index.Scope{Resemblance: 0.5, Containment: 0.6}, Mode: "record", Status: policy.HoldActive, Created: epoch, CreatedBy: "alice"}
}

func entry(action, object string) policy.AuditEntry {
	return policy.AuditEntry{Time: epoch, Actor: "alice", Action: action, Object: object, Reason: "test", Details: []byte(`{"n":1}`)}
}

func createHold(t *testing.T, st policy.Store, matter string, seeds ...index.DocID) {
	t.Helper()
	var docs []policy.HeldDoc
	for _, id := range seeds {
		docs = append(docs, heldDoc(matter, id, true))
	}
	must(t, st.CreateHold(context.Background(), hold(matter, seeds...), docs, entry(policy.AuditHoldCreate, "hold:"+matter)))
}

func flag(kind policy.FlagKind, id index.DocID, rule, matter string) policy.Flag {
	return policy.Flag{Kind: kind, Document: ref(id), Object: object(id), Rule: rule, Matter: matter,
		Evidence: policy.Evidence{Role: "seed", Note: "test"}}
}

// verify checks the audit chain and returns its length.
func verify(t *testing.T, st policy.Store) int64 {
	t.Helper()
	cp, err := policy.Verify(context.Background(), st, policy.Checkpoint{})
	if err != nil {
		t.Fatalf("audit verify: %v", err)
	}
	return cp.Seq
}

// race runs fn(i) for i in [0, n) at once and returns their errors.
func race(n int, fn func(i int) error) []error {
	errs := make([]error, n)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			errs[i] = fn(i)
		}()
	}
	close(start)
	wg.Wait()
	return errs
}

// count returns how many errs are nil and fails on any not matching one
// of the allowed errors.
func count(t *testing.T, errs []error, allowed ...error) int {
	t.Helper()
	n := 0
	for _, err := range errs {
		if err == nil {
			n++
			continue
		}
		ok := false
		for _, a := range allowed {
			ok = ok || errors.Is(err, a)
		}
		if !ok {
			t.Errorf("unexpected error: %v", err)
		}
	}
	return n
}
