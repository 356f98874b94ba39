package index_test

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/simdex/simdex/index"
	"github.com/simdex/simdex/index/sqlite"
	"github.com/simdex/simdex/internal/corpustest"
)

// corpus reads a document of the committed fixtures (testdata/corpora).
func corpus(t testing.TB, rel string) string {
	t.Helper()
	return string(corpustest.Read(t, rel))
}

func openIndex(t testing.TB, path string) (*index.Index, *sqlite.Store) {
	t.Helper()
	return openIndexWith(t, path, index.DefaultOptions())
}

// openIndexWith opens an index at path with opts until the test ends.
func openIndexWith(t testing.TB, path string, opts index.Options) (*index.Index, *sqlite.Store) {
	t.Helper()
	st, err := sqlite.Open(context.Background(), path, sqlite.Options{Scheme: opts.Scheme(), Durability: sqlite.Normal})
	if err != nil {
		t.Fatal(err)
	}
	ix, err := index.New(context.Background(), st, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ix.Close()
		st.Close()
	})
	return ix, st
}

func input(key, text string) index.Input {
	return index.Input{
		Doc:       index.Doc{Key: key, Name: key, Source: "test"},
		RawSHA256: sha256.Sum256([]byte(text)),
		RawSize:   int64(len(text)),
		Text:      []byte(text),
		Parent:    -1,
	}
}

func add(t testing.TB, ix *index.Index, ins ...index.Input) []index.Result {
	t.Helper()
	res, err := ix.Add(context.Background(), ins)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// edit inserts a word at n random places (the seed study's modification).
func edit(text string, n int, seed uint64) string {
	r := rand.New(rand.NewPCG(seed, seed))
	words := strings.Fields(text)
	for i := 0; i < n; i++ {
		p := r.IntN(len(words) + 1)
		words = append(words[:p], append([]string{"inserted"}, words[p:]...)...)
	}
	return strings.Join(words, " ")
}

func byName(ms []index.Match) map[string]index.Match {
	out := map[string]index.Match{}
	for _, m := range ms {
		out[m.Record.Name] = m
	}
	return out
}

func TestAllVersionsOfThisFile(t *testing.T) {
	ctx := context.Background()
	ix, _ := openIndex(t, filepath.Join(t.TempDir(), "index.db"))
	apache := corpus(t, "spdx/text/Apache-2.0.txt")
	gpl := corpus(t, "spdx/text/GPL-3.0-only.txt")
	sections := strings.SplitAfter(apache, "\n\n")
	firstHalf := strings.Join(sections[:len(sections)/2], "")
	res := add(t, ix,
		input("original", apache),
		input("renamed copy", apache),
		input("reformatted", strings.ToUpper(strings.ReplaceAll(apache, "\n", "\n\n  "))),
		input("edited", edit(apache, 20, 1)),
		input("first half", firstHalf),
		input("unrelated", gpl),
	)
	ms, err := ix.Similar(ctx, res[0].ID, index.DefaultThresholds())
	if err != nil {
		t.Fatal(err)
	}
	got := byName(ms)
	if _, ok := got["original"]; ok {
		t.Error("the document itself is reported")
	}
	if _, ok := got["unrelated"]; ok {
		t.Errorf("unrelated document reported: %+v", got["unrelated"].Scores)
	}
	for _, name := range []string{"renamed copy", "reformatted"} {
		if m, ok := got[name]; !ok || !m.Exact || m.Resemblance != 1 {
			t.Errorf("%s: %+v, want exact", name, m)
		}
	}
	if m := got["renamed copy"]; !m.SameBytes {
		t.Error("renamed copy: same bytes not reported")
	}
	if m := got["reformatted"]; m.SameBytes {
		t.Error("reformatted: reported as the same bytes")
	}
	if m, ok := got["edited"]; !ok || m.Exact || m.Resemblance < 0.6 || m.Hamming > 12 {
		t.Errorf("edited: %+v", m)
	}
	if m, ok := got["first half"]; !ok || m.ContainmentBA < 0.9 || m.ContainmentAB > 0.7 || m.BytesInCommon < int64(len(firstHalf))/2 {
		t.Errorf("first half: %+v", m.Scores)
	}
}

func TestBadText(t *testing.T) {
	ix, _ := openIndex(t, filepath.Join(t.TempDir(), "index.db"))
	failed := input("failed", "")
	failed.Doc.Error = "extract: encrypted PDF"
	failed.RawSHA256, failed.RawSize = sha256.Sum256([]byte("%PDF-1.7 encrypted")), 18
	res := add(t, ix, input("empty", " \n\t "), input("invalid", "ok \xff\xfe bad"), failed, input("fine", "some fine text here"))
	if !errors.Is(res[0].Err, index.ErrEmpty) || res[0].ID == 0 {
		t.Errorf("empty: %+v", res[0])
	}
	if !errors.Is(res[1].Err, index.ErrInvalidText) || res[1].ID == 0 {
		t.Errorf("invalid UTF-8: %+v", res[1])
	}
	if res[2].Err == nil || res[2].Content != 0 {
		t.Errorf("failed: %+v", res[2])
	}
	if res[3].Err != nil || res[3].Content == 0 {
		t.Errorf("fine: %+v", res[3])
	}
	r, err := ix.Get(context.Background(), res[2].ID)
	if err != nil || r.Error != "extract: encrypted PDF" {
		t.Errorf("recorded error: %+v %v", r, err)
	}
	// A document without text keeps its raw hash and size, for review and
	// load files.
	if err == nil && (r.RawSHA256 != failed.RawSHA256 || r.RawSize != 18) {
		t.Errorf("failed document's raw hash and size not recorded: %x, %d", r.RawSHA256, r.RawSize)
	}
}

func TestConcurrentAddsAreIdempotent(t *testing.T) {
	ix, st := openIndex(t, filepath.Join(t.TempDir(), "index.db"))
	mit := corpus(t, "spdx/text/MIT.txt")
	var wg sync.WaitGroup
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 50; i++ {
				// Every goroutine adds the same 50 documents: each must be
				// stored exactly once.
				if _, err := ix.Add(context.Background(), []index.Input{input(fmt.Sprintf("doc-%d", i), fmt.Sprintf("%s\nCopyright %d", mit, i))}); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	stats, err := st.Stats(context.Background())
	if err != nil || stats.Documents != 50 || stats.Contents != 50 {
		t.Fatalf("stats %+v %v", stats, err)
	}
	if err := st.Check(context.Background()); err != nil {
		t.Fatal(err)
	}
}

func TestTemplateSuppression(t *testing.T) {
	ctx := context.Background()
	ix, _ := openIndex(t, filepath.Join(t.TempDir(), "index.db"))
	boiler := corpus(t, "spdx/text/Apache-2.0.txt")
	a := boiler + "\n\n" + corpus(t, "spdx/text/MIT.txt")
	b := boiler + "\n\n" + corpus(t, "spdx/text/BSD-3-Clause.txt")
	res := add(t, ix, input("a", a), input("b", b))
	th := index.DefaultThresholds()
	ms, err := ix.Similar(ctx, res[0].ID, th)
	if err != nil || len(ms) != 1 {
		t.Fatalf("before marking: %v %v", ms, err)
	}
	if _, err := ix.MarkTemplate(ctx, []index.ContentID{res[0].Content, res[1].Content}, "apache boilerplate", "licence preamble", "tester"); err != nil {
		t.Fatal(err)
	}
	ms, err = ix.Similar(ctx, res[0].ID, th)
	if err != nil {
		t.Fatal(err)
	}
	if len(ms) != 0 {
		t.Fatalf("after marking the template, still reported: %+v", ms[0].Scores)
	}
}

func TestAnalyseFamiliesAndIdenticalSets(t *testing.T) {
	ctx := context.Background()
	ix, _ := openIndex(t, filepath.Join(t.TempDir(), "index.db"))
	gpl := corpus(t, "spdx/text/GPL-3.0-only.txt")
	mit := corpus(t, "spdx/text/MIT.txt")
	res := add(t, ix,
		input("gpl", gpl), input("gpl copy", gpl), input("gpl v2", edit(gpl, 10, 2)), input("gpl v3", edit(gpl, 30, 3)),
		input("mit", mit), input("lonely", corpus(t, "spdx/text/Zlib.txt")))
	an, err := ix.Analyse(ctx, index.DefaultThresholds())
	if err != nil {
		t.Fatal(err)
	}
	if len(an.Identical) != 1 || len(an.Identical[0]) != 2 {
		t.Fatalf("identical sets %v", an.Identical)
	}
	if len(an.Families) != 1 {
		t.Fatalf("families %+v", an.Families)
	}
	f := an.Families[0]
	if len(f.Members) != 4 {
		t.Fatalf("family members %v", f.Members)
	}
	for _, m := range f.Members {
		if m == res[4].ID || m == res[5].ID {
			t.Fatalf("unrelated document %d in the family", m)
		}
	}
}

// AnalyseInvolving reports the pairs with the documents asked about, as
// Analyse does, and nothing between the others; its families are the
// components of those pairs.
func TestAnalyseInvolving(t *testing.T) {
	ctx := context.Background()
	ix, _ := openIndex(t, filepath.Join(t.TempDir(), "index.db"))
	gpl := corpus(t, "spdx/text/GPL-3.0-only.txt")
	mit := corpus(t, "spdx/text/MIT.txt")
	apache := corpus(t, "spdx/text/Apache-2.0.txt")
	res := add(t, ix,
		input("gpl", gpl), input("gpl v2", edit(gpl, 10, 2)), input("gpl v3", edit(gpl, 30, 3)),
		input("apache", apache), input("apache v2", edit(apache, 20, 4)),
		input("mit", mit), input("mit v2", edit(mit, 5, 5)))
	th := index.DefaultThresholds()
	all, err := ix.Analyse(ctx, th)
	if err != nil {
		t.Fatal(err)
	}
	// A scan that added "gpl v3" and "mit v2".
	some, err := ix.AnalyseInvolving(ctx, th, []index.DocID{res[2].ID, res[6].ID})
	if err != nil {
		t.Fatal(err)
	}
	var want []index.Pair
	for _, p := range all.Pairs {
		if p.A == res[2].Content || p.B == res[2].Content || p.A == res[6].Content || p.B == res[6].Content {
			want = append(want, p)
		}
	}
	if len(want) != 3 || len(all.Pairs) <= len(want) {
		t.Fatalf("whole index: %d pairs, %d with the new documents: the test proves little", len(all.Pairs), len(want))
	}
	if !slices.Equal(some.Pairs, want) {
		t.Errorf("pairs involving the new documents %+v, want %+v", some.Pairs, want)
	}
	var families [][]index.DocID
	for _, f := range some.Families {
		families = append(families, f.Members)
	}
	if wantFam := [][]index.DocID{{res[0].ID, res[1].ID, res[2].ID}, {res[5].ID, res[6].ID}}; !reflect.DeepEqual(families, wantFam) {
		t.Errorf("families %v, want %v", families, wantFam)
	}
	if len(some.Documents) != len(all.Documents) {
		t.Errorf("%d documents, want the index's %d", len(some.Documents), len(all.Documents))
	}
}

// TestAnalyseInvolvingLocally: reading only the postings and documents
// of the scanned documents' contents gives the pairs, families and
// identical sets that reading the whole index gives, for scans of one
// document up to half the index, with exact copies among them.
func TestAnalyseInvolvingLocally(t *testing.T) {
	ctx := context.Background()
	ix, _ := openIndex(t, filepath.Join(t.TempDir(), "index.db"))
	var ins []index.Input
	for i, rel := range []string{"spdx/text/GPL-3.0-only.txt", "spdx/text/Apache-2.0.txt", "spdx/text/MIT.txt", "spdx/text/BSD-3-Clause.txt", "spdx/text/MPL-2.0.txt"} {
		text := corpus(t, rel)
		ins = append(ins, input(rel, text), input(rel+" copy", text))
		for v := range 5 {
			ins = append(ins, input(fmt.Sprintf("%s v%d", rel, v), edit(text, 5+10*v, uint64(10*i+v))))
		}
		ins = append(ins, input(rel+" excerpt", text[len(text)/3:2*len(text)/3]))
	}
	res := add(t, ix, ins...)
	th := index.DefaultThresholds()
	r := rand.New(rand.NewPCG(5, 6))
	for _, n := range []int{1, 2, 5, 20, len(res) / 2} {
		var docs []index.DocID
		for _, k := range r.Perm(len(res))[:n] {
			docs = append(docs, res[k].ID)
		}
		whole, err := ix.AnalyseInvolvingBy(ctx, th, docs, false)
		if err != nil {
			t.Fatal(err)
		}
		local, err := ix.AnalyseInvolvingBy(ctx, th, docs, true)
		if err != nil {
			t.Fatal(err)
		}
		if len(whole.Pairs) == 0 && n > 1 {
			t.Fatalf("%d documents: no pairs, the test proves little", n)
		}
		if !reflect.DeepEqual(local.Pairs, whole.Pairs) {
			t.Errorf("%d documents: %d pairs read locally, %d from the whole index", n, len(local.Pairs), len(whole.Pairs))
		}
		if !reflect.DeepEqual(local.Families, whole.Families) {
			t.Errorf("%d documents: families differ: %+v against %+v", n, local.Families, whole.Families)
		}
		involves := func(set []index.DocID) bool {
			return slices.ContainsFunc(set, func(d index.DocID) bool { return slices.Contains(docs, d) })
		}
		var wantIdentical [][]index.DocID
		for _, set := range whole.Identical {
			if involves(set) {
				wantIdentical = append(wantIdentical, set)
			}
		}
		var gotIdentical [][]index.DocID
		for _, set := range local.Identical {
			if involves(set) {
				gotIdentical = append(gotIdentical, set)
			}
		}
		if !reflect.DeepEqual(gotIdentical, wantIdentical) {
			t.Errorf("%d documents: identical sets %v, want %v", n, gotIdentical, wantIdentical)
		}
		// Every document the report names is there.
		for _, p := range local.Pairs {
			for _, c := range []index.ContentID{p.A, p.B} {
				if len(local.ByContent[c]) != len(whole.ByContent[c]) {
					t.Fatalf("content %d: %d documents, want %d", c, len(local.ByContent[c]), len(whole.ByContent[c]))
				}
			}
		}
		for _, d := range docs {
			if local.Documents[d] == nil {
				t.Fatalf("scanned document %d missing", d)
			}
		}
		if n < len(res)/2 && len(local.Documents) >= len(whole.Documents) {
			t.Errorf("%d documents: read %d documents locally, as many as the whole index's %d", n, len(local.Documents), len(whole.Documents))
		}
	}
}

func TestReopenKeepsEverything(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "index.db")
	opts := index.DefaultOptions()
	st, err := sqlite.Open(ctx, path, sqlite.Options{Scheme: opts.Scheme()})
	if err != nil {
		t.Fatal(err)
	}
	ix, err := index.New(ctx, st, opts)
	if err != nil {
		t.Fatal(err)
	}
	gpl := corpus(t, "spdx/text/GPL-3.0-only.txt")
	res := add(t, ix, input("a", gpl))
	ix.Close()
	st.Close()
	ix2, _ := openIndex(t, path)
	fp, err := ix2.Fingerprint(sha256.Sum256(nil), 0, []byte(edit(gpl, 5, 9)))
	if err != nil {
		t.Fatal(err)
	}
	ms, err := ix2.SimilarTo(ctx, fp, index.DefaultThresholds())
	if err != nil || len(ms) != 1 || ms[0].Record.ID != res[0].ID {
		t.Fatalf("after reopen: %v %v", ms, err)
	}
}

// TestShortDocumentInsideLongOne: a licence pasted into a long file (a
// multi-licence copyright file) has a low resemblance, so no LSH band
// matches, and it rarely owns a whole chunk; the anchors must find the
// pair from either side, in queries and in the all-pairs report.
func TestShortDocumentInsideLongOne(t *testing.T) {
	ctx := context.Background()
	ix, st := openIndex(t, filepath.Join(t.TempDir(), "index.db"))
	mit := corpus(t, "spdx/text/MIT.txt")
	long := corpus(t, "spdx/text/GPL-3.0-only.txt") + "\n\nFiles: vendor/*\nLicense: MIT\n" + mit + "\n" + corpus(t, "spdx/text/Apache-2.0.txt")
	res := add(t, ix, input("MIT", mit), input("copyright", long), input("unrelated", corpus(t, "spdx/text/MPL-2.0.txt")))
	th := index.DefaultThresholds()
	ms, err := ix.Similar(ctx, res[0].ID, th)
	if err != nil {
		t.Fatal(err)
	}
	if m, ok := byName(ms)["copyright"]; !ok || m.ContainmentAB < th.Containment {
		t.Fatalf("MIT inside the copyright file not found from MIT: %+v", ms)
	}
	ms, err = ix.Similar(ctx, res[1].ID, th)
	if err != nil {
		t.Fatal(err)
	}
	if m, ok := byName(ms)["MIT"]; !ok || m.ContainmentBA < th.Containment {
		t.Fatalf("MIT not found from the copyright file: %+v", ms)
	}
	found := false
	err = ix.Pairs(ctx, th, func(p index.Pair) error {
		found = found || (p.A == res[0].Content && p.B == res[1].Content) || (p.A == res[1].Content && p.B == res[0].Content)
		return nil
	})
	if err != nil || !found {
		t.Fatalf("all-pairs report misses the contained pair (err %v)", err)
	}
	if err := st.Check(ctx); err != nil {
		t.Fatal(err)
	}
}

// TestUbiquitousChunksNeedAPopulation: chunks held by more than
// TemplateShare of all contents are boilerplate (KDD'05), but only once
// they are held by more than TemplateMinContents: in a small collection,
// three versions of one text must not be taken for a template.
func TestUbiquitousChunksNeedAPopulation(t *testing.T) {
	ctx := context.Background()
	gpl := corpus(t, "spdx/text/GPL-3.0-only.txt")
	boiler := corpus(t, "spdx/text/Apache-2.0.txt")
	open := func(minContents int) *index.Index {
		opts := index.DefaultOptions()
		opts.TemplateMinContents = minContents
		ix, _ := openIndexWith(t, filepath.Join(t.TempDir(), "index.db"), opts)
		return ix
	}

	// Five documents, three of them versions of the GPL: the excerpt is
	// found inside every version.
	ix := open(index.DefaultOptions().TemplateMinContents)
	res := add(t, ix,
		input("gpl", gpl),
		input("gpl-v2", strings.Replace(gpl, "software", "programs", 3)),
		input("gpl-v3", strings.Replace(gpl, "License", "Licence", 4)),
		input("excerpt", gpl[len(gpl)/3:len(gpl)/2]),
		input("apache", boiler))
	ms, err := ix.Similar(ctx, res[3].ID, index.DefaultThresholds())
	if err != nil {
		t.Fatal(err)
	}
	found := map[string]bool{}
	for _, m := range ms {
		found[m.Record.Key] = m.ContainmentAB >= 0.9
	}
	if !found["gpl"] || !found["gpl-v2"] || !found["gpl-v3"] || len(ms) != 3 {
		t.Fatalf("excerpt matches %v, want the three versions, contained", found)
	}

	// Six short licences sharing one long preamble: with a population
	// floor of 2, the preamble's chunks are ubiquitous and no longer count
	// as bytes in common; with the default floor they still do.
	bytesInCommon := func(ix *index.Index) int64 {
		var ins []index.Input
		for i, l := range []string{"MIT", "BSD-3-Clause", "ISC", "0BSD", "Zlib", "BSD-2-Clause"} {
			ins = append(ins, input(fmt.Sprint("doc", i), boiler+"\n\n"+corpus(t, "spdx/text/"+l+".txt")))
		}
		res := add(t, ix, ins...)
		ms, err := ix.Similar(ctx, res[0].ID, index.DefaultThresholds())
		if err != nil || len(ms) == 0 {
			t.Fatalf("similar: %v %v", ms, err)
		}
		return ms[0].BytesInCommon
	}
	if got := bytesInCommon(open(2)); got > int64(len(boiler))/4 {
		t.Errorf("floor 2: %d bytes in common, want the ubiquitous preamble left out", got)
	}
	if got := bytesInCommon(open(50)); got < int64(len(boiler))/2 {
		t.Errorf("floor 50: %d bytes in common, want the preamble counted", got)
	}
}

// TestConcurrentQueriesDoNotExhaustThePool: many near-copy searches at once
// (the API, the policy engine and the pipeline share one store) all finish.
// Scoring used to ask the store how common a chunk is from inside the
// store's own callback, holding two pooled connections per query: a few
// concurrent queries then waited on each other for ever.
func TestConcurrentQueriesDoNotExhaustThePool(t *testing.T) {
	ix, _ := openIndex(t, filepath.Join(t.TempDir(), "index.db"))
	gpl := corpus(t, "spdx/text/GPL-3.0-only.txt")
	var ins []index.Input
	for i := range 8 {
		ins = append(ins, input(fmt.Sprint("v", i), strings.Replace(gpl, "software", fmt.Sprint("software", i), i+1)))
	}
	res := add(t, ix, ins...)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	var wg sync.WaitGroup
	errs := make(chan error, 64)
	for i := range 64 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ms, err := ix.Similar(ctx, res[i%len(res)].ID, index.DefaultThresholds())
			if err == nil && len(ms) != len(res)-1 {
				err = fmt.Errorf("%d matches, want %d", len(ms), len(res)-1)
			}
			errs <- err
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
}

// TestKeepText: with KeepText the extracted text, as extracted (not
// normalised), is kept once per content for reviewers' diffs; without it
// nothing is kept.
func TestKeepText(t *testing.T) {
	ctx := context.Background()
	for _, keep := range []bool{true, false} {
		opts := index.DefaultOptions()
		opts.KeepText = keep
		ix, st := openIndexWith(t, filepath.Join(t.TempDir(), "index.db"), opts)
		text := "The  Licensor GRANTS you a licence.\n" + strings.Repeat("word ", 200)
		res := add(t, ix, input("a", text), input("b", text))
		got, err := st.Text(ctx, res[0].Content)
		switch {
		case keep && (err != nil || string(got) != text):
			t.Errorf("KeepText: Text = %d bytes, %v", len(got), err)
		case !keep && !errors.Is(err, index.ErrNoText):
			t.Errorf("without KeepText: Text err = %v", err)
		}
	}
}

// Add in two halves: Prepare writes nothing, and a Prepared that is never
// committed leaves nothing behind; Commit stores what Add would.
func TestPrepareThenCommit(t *testing.T) {
	ctx := context.Background()
	ix, st := openIndex(t, filepath.Join(t.TempDir(), "index.db"))
	mit := corpus(t, "spdx/text/MIT.txt")
	ix.Prepare(ctx, []index.Input{input("abandoned", mit+"\nabandoned")}) // never committed
	p := ix.Prepare(ctx, []index.Input{input("mit", mit), input("empty", " ")})
	if stats, err := st.Stats(ctx); err != nil || stats.Documents != 0 {
		t.Fatalf("after Prepare: stats %+v %v, want nothing stored", stats, err)
	}
	res, err := ix.Commit(ctx, p)
	if err != nil {
		t.Fatal(err)
	}
	if len(res) != 2 || res[0].ID == 0 || res[0].Err != nil || res[0].Fingerprint == nil || !errors.Is(res[1].Err, index.ErrEmpty) || res[1].ID == 0 {
		t.Fatalf("Commit: %+v", res)
	}
	if stats, err := st.Stats(ctx); err != nil || stats.Documents != 2 || stats.Contents != 1 {
		t.Errorf("after Commit: stats %+v %v, want 2 documents of 1 content", stats, err)
	}
	if err := st.Check(ctx); err != nil {
		t.Error(err)
	}
	// The committed content is found, through the SimHash table too.
	ms, err := ix.SimilarTo(ctx, res[0].Fingerprint, index.DefaultThresholds())
	if err != nil || len(ms) != 1 || ms[0].Record.ID != res[0].ID || !ms[0].Exact {
		t.Errorf("SimilarTo the committed text: %+v %v", ms, err)
	}
	// Adding the same input again is a duplicate, as with Add.
	if res, err := ix.Commit(ctx, ix.Prepare(ctx, []index.Input{input("mit", mit)})); err != nil || !res[0].Duplicate {
		t.Errorf("committed again: %+v %v, want a duplicate", res, err)
	}
}
