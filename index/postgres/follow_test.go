package postgres_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/simdex/simdex/index"
	"github.com/simdex/simdex/index/storetest"
	"github.com/simdex/simdex/internal/pgtest"
)

// words returns n words of deterministic text drawn by r.
func words(r *rand.Rand, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("w%d", r.IntN(5000))
	}
	return out
}

// TestFollow checks that a store reports what another replica committed
// since a position: its contents, and a new templates version.
func TestFollow(t *testing.T) {
	ctx := context.Background()
	dsn := pgtest.DSN(t)
	a, b := openOn(t, openPool(t, dsn)), openOn(t, openPool(t, dsn))
	start, err := a.Follow(ctx, 0)
	if err != nil || len(start.Contents) != 0 || start.Next == 0 {
		t.Fatalf("Follow(0) = %+v, %v", start, err)
	}
	e := index.Entry{Doc: index.Doc{Key: "x"}, Fingerprint: storetest.Fingerprint("x", []uint64{1 << 40}, nil), Parent: -1}
	c, err := b.Put(ctx, []index.Entry{e})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.AddTemplate(ctx, index.Template{Name: "t", Chunks: []uint64{1}}); err != nil {
		t.Fatal(err)
	}
	ch, err := a.Follow(ctx, start.Next)
	if err != nil {
		t.Fatal(err)
	}
	want := index.ContentSimHash{ID: c[0].Content, SimHash: e.Fingerprint.SimHash}
	if !slices.Contains(ch.Contents, want) || ch.Templates == start.Templates || ch.Next < start.Next {
		t.Fatalf("Follow after another's put = %+v, want %+v and a new templates version", ch, want)
	}
	again, err := a.Follow(ctx, ch.Next)
	if err != nil || slices.Contains(again.Contents, want) {
		t.Fatalf("Follow from the next position = %+v, %v: the content again", again, err)
	}
}

// TestReplicasSeeEachOther runs two Indexes on one database, as two
// replicas: a near-copy added through one is found by "all versions" on
// the other at once, and a template marked on one applies on the other.
func TestReplicasSeeEachOther(t *testing.T) {
	ctx := context.Background()
	dsn := pgtest.DSN(t)
	opts := index.DefaultOptions()
	var ix [2]*index.Index
	for i := range ix {
		var err error
		if ix[i], err = index.New(ctx, openOn(t, openPool(t, dsn)), opts); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { ix[i].Close() })
	}
	r := rand.New(rand.NewPCG(3, 4))
	text := words(r, 1500)
	edited := slices.Clone(text)
	copy(edited[700:], words(r, 20))
	add := func(key string, w []string) index.Result {
		res, err := ix[0].Add(ctx, []index.Input{{Doc: index.Doc{Key: key}, Text: []byte(strings.Join(w, " ")), Parent: -1}})
		if err != nil || res[0].Err != nil {
			t.Fatalf("add %s: %v %v", key, err, res)
		}
		return res[0]
	}
	orig, copied := add("orig", text), add("copy", edited)
	found := func() bool {
		ms, err := ix[1].Similar(ctx, copied.ID, index.DefaultThresholds())
		if err != nil {
			t.Fatal(err)
		}
		return slices.ContainsFunc(ms, func(m index.Match) bool { return m.Record.ID == orig.ID })
	}
	if !found() {
		t.Fatal("the replica that did not add them finds no near-copy")
	}
	if _, err := ix[0].MarkTemplate(ctx, []index.ContentID{orig.Content, copied.Content}, "letterhead", "test", "alice"); err != nil {
		t.Fatal(err)
	}
	if found() {
		t.Fatal("a template marked on one replica does not apply on the other")
	}
}
