package sqlite

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/simdex/simdex/index"
)

// TestByMeta finds messages by thread key and Message-ID through the
// expression indexes of migration 9.
func TestByMeta(t *testing.T) {
	ctx := context.Background()
	s := open(t, filepath.Join(t.TempDir(), "idx.db"), 1)
	var entries []index.Entry
	for i, tid := range []string{"t1", "t2", "t1"} {
		entries = append(entries, index.Entry{Parent: -1, Doc: index.Doc{
			Key: string(rune('a' + i)), Meta: map[string]string{index.MetaThreadID: tid, index.MetaMessageID: "<m" + string(rune('0'+i)) + "@x>"},
		}})
	}
	if _, err := s.Put(ctx, entries); err != nil {
		t.Fatal(err)
	}
	recs, err := s.ByMeta(ctx, index.MetaThreadID, "t1")
	if err != nil || len(recs) != 2 || recs[0].Key != "a" || recs[1].Key != "c" {
		t.Fatalf("ByMeta(thread t1) = %v, %v", recs, err)
	}
	if recs, err := s.ByMeta(ctx, index.MetaMessageID, "<m1@x>"); err != nil || len(recs) != 1 || recs[0].Key != "b" {
		t.Fatalf("ByMeta(message m1) = %v, %v", recs, err)
	}
	if _, err := s.ByMeta(ctx, "subject", "x"); err == nil {
		t.Error("ByMeta of an unindexed key: no error")
	}
	for key, where := range metaWhere {
		var plan strings.Builder
		rows, err := s.r.QueryContext(ctx, "EXPLAIN QUERY PLAN SELECT d.id FROM documents d "+where, "x")
		if err != nil {
			t.Fatal(err)
		}
		for rows.Next() {
			var id, parent, unused int
			var detail string
			if err := rows.Scan(&id, &parent, &unused, &detail); err != nil {
				t.Fatal(err)
			}
			plan.WriteString(detail + "; ")
		}
		rows.Close()
		if !strings.Contains(plan.String(), "INDEX documents_") {
			t.Errorf("%s: plan %q does not use its index", key, plan.String())
		}
	}
}
