package main

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/simdex/simdex/index"
)

// The streamed report must be exactly what encoding/json makes of it, once
// compacted: same keys, same escaping, same numbers.
func TestReportJSONMatchesEncodingJSON(t *testing.T) {
	names := []string{"a.txt", `quo"te\back`, "<html>&amp;", "bad\xffutf8", "line\u2028sep", "tab\tnew\nline", "日本語.txt"}
	reports := []*report{
		{Errors: []fileError{}, Identical: [][]string{}, Families: []familyJSON{}},
		{
			Files: 7, Documents: 9,
			Errors:    []fileError{{Path: names[1], Error: "empty text"}, {Path: names[3], Error: "<binary>"}},
			Identical: [][]string{{names[0], names[2]}, {names[4], names[5], names[6]}},
			Families:  []familyJSON{{Pivot: names[6], Members: []string{names[6], names[3]}, Links: 3, AvgResemblance: 0.667}},
		},
	}
	var pairs []pairJSON
	for i, a := range names {
		for j, b := range names {
			x := float64(i*len(names)+j) / 49
			pairs = append(pairs, pairJSON{A: a, B: b, Resemblance: round(x), ContainmentAB: round(1 - x),
				ContainmentBA: 0.001, BytesInCommon: int64(i) << 33, Hamming: j, Exact: i == j})
		}
	}
	pairs = append(pairs, pairJSON{A: "x", B: "y", Resemblance: 1, ContainmentAB: 0, ContainmentBA: 0.5})
	setPairs(reports[1], pairs)
	if got := reports[1].pairList(); !slices.Equal(got, pairs) {
		t.Errorf("pairs kept as\n%+v\nwant\n%+v", got, pairs)
	}
	for i, rep := range reports {
		streamedAsEncoded(t, fmt.Sprint("report ", i), rep)
	}
}

// setPairs gives rep the pairs ps, numbering their names.
func setPairs(rep *report, ps []pairJSON) {
	num := map[string]int32{}
	number := func(name string) int32 {
		n, ok := num[name]
		if !ok {
			n = int32(len(rep.names))
			num[name] = n
			rep.names = append(rep.names, name)
		}
		return n
	}
	for _, p := range ps {
		s := index.Scores{Resemblance: p.Resemblance, BytesInCommon: p.BytesInCommon, Hamming: p.Hamming, Exact: p.Exact}
		rep.pairs = append(rep.pairs, newReportPair(number(p.A), number(p.B), &s, p.ContainmentAB, p.ContainmentBA))
	}
}

// streamedAsEncoded fails unless rep.writeJSON writes what encoding/json
// makes of rep and its pairList, once compacted; it returns what
// writeJSON wrote.
func streamedAsEncoded(t *testing.T, what string, rep *report) []byte {
	t.Helper()
	var got bytes.Buffer
	if err := rep.writeJSON(&got); err != nil {
		t.Fatal(err)
	}
	want, err := json.Marshal(struct {
		*report
		Pairs []pairJSON `json:"pairs"`
	}{rep, rep.pairList()})
	if err != nil {
		t.Fatal(err)
	}
	var compact bytes.Buffer
	if err := json.Compact(&compact, got.Bytes()); err != nil {
		t.Fatalf("%s is not JSON: %v\n%s", what, err, got.Bytes())
	}
	if !bytes.Equal(compact.Bytes(), want) {
		t.Errorf("%s:\nstreamed %s\nencoding/json %s", what, compact.Bytes(), want)
	}
	return got.Bytes()
}

// A failing writer fails the report; the error is returned, not lost.
func TestReportJSONWriteError(t *testing.T) {
	rep := &report{Errors: []fileError{}, Identical: [][]string{}, Families: []familyJSON{}, names: []string{"a", "b"}}
	for i := 0; i < 10000; i++ {
		rep.pairs = append(rep.pairs, reportPair{a: 0, b: 1})
	}
	if err := rep.writeJSON(failingWriter{}); !errors.Is(err, errFull) {
		t.Fatalf("writing to a failing writer: %v, want %v", err, errFull)
	}
}

type failingWriter struct{}

func (failingWriter) Write([]byte) (int, error) { return 0, errFull }

var errFull = errors.New("disk full")

// The report lists identical sets and same-size families in name order,
// whatever ids the files were committed under.
func TestReportOrderIsByName(t *testing.T) {
	docs := map[index.DocID]*index.Record{}
	scanned := map[index.DocID]string{}
	for id, n := range map[index.DocID]string{1: "z1", 2: "z2", 3: "a1", 4: "a2", 5: "m1", 6: "m2", 7: "b1", 8: "b2"} {
		docs[id] = &index.Record{ID: id, Doc: index.Doc{Name: n}}
		scanned[id] = n
	}
	an := &index.Analysis{
		Documents: docs,
		Identical: [][]index.DocID{{1, 2}, {3, 4}},
		Families: []index.Family{
			{Pivot: 5, Members: []index.DocID{5, 6, 1}},
			{Pivot: 1, Members: []index.DocID{1, 2}},
			{Pivot: 7, Members: []index.DocID{7, 8}},
		},
	}
	rep := buildReport(an, scanned, len(scanned))
	var got []string
	for _, set := range rep.Identical {
		got = append(got, set[0])
	}
	for _, f := range rep.Families {
		got = append(got, f.Pivot)
	}
	if want := []string{"a1", "z1", "m1", "b1", "z1"}; !slices.Equal(got, want) {
		t.Errorf("identical sets, then family pivots: got %v, want %v", got, want)
	}
}

// The report's pairs are sized exactly: documents indexed earlier count
// only where they pair with one of this scan's.
func TestReportPairsSizedExactly(t *testing.T) {
	docs := map[index.DocID]*index.Record{}
	for id := index.DocID(1); id <= 8; id++ {
		docs[id] = &index.Record{ID: id, Doc: index.Doc{Name: fmt.Sprint("d", id)}}
	}
	scanned := map[index.DocID]string{1: "d1", 5: "d5"}
	an := &index.Analysis{
		Documents: docs,
		Identical: [][]index.DocID{{1, 2, 3}, {6, 7}},
		ByContent: map[index.ContentID][]index.DocID{10: {1, 2, 3}, 11: {4}, 12: {5}, 13: {6, 7}, 14: {8}},
		Pairs: []index.Pair{
			{A: 10, B: 11}, // 3 pairs, all with d1, d2 or d3: 1 involves d1
			{A: 11, B: 12}, // d4 ~ d5: involved
			{A: 13, B: 14}, // none scanned
		},
	}
	rep := buildReport(an, scanned, len(scanned))
	if len(rep.pairs) != 3+1+1 || cap(rep.pairs) != len(rep.pairs) {
		t.Errorf("%d pairs in room for %d, want 5 in room for 5", len(rep.pairs), cap(rep.pairs))
	}
}

// benchAnalysis is an analysis the size of a 50,000-file scan's: 50,000
// documents (a twentieth of them second copies), each content paired with
// 70 others.
func benchAnalysis() (*index.Analysis, map[index.DocID]string) {
	const docs, perContent = 50000, 70
	rnd := rand.New(rand.NewPCG(1, 2))
	an := &index.Analysis{Documents: map[index.DocID]*index.Record{}, ByContent: map[index.ContentID][]index.DocID{}}
	scanned := map[index.DocID]string{}
	var contents []index.ContentID
	for id := index.DocID(1); id <= docs; id++ {
		name := fmt.Sprintf("corpus/%03d/%x-version-%d.txt", rnd.IntN(1000), rnd.Uint64(), id)
		an.Documents[id] = &index.Record{ID: id, Doc: index.Doc{Name: name}, TextSize: 7000}
		scanned[id] = name
		c := index.ContentID(id)
		if id%20 == 0 {
			c = index.ContentID(id - 1)
		} else {
			contents = append(contents, c)
		}
		an.ByContent[c] = append(an.ByContent[c], id)
	}
	for c, ids := range an.ByContent {
		if len(ids) > 1 {
			an.Identical = append(an.Identical, ids)
		}
		_ = c
	}
	for i, a := range contents {
		for k := 1; k <= perContent/2 && i+k < len(contents); k++ {
			b := contents[(i+k*rnd.IntN(50))%len(contents)]
			if b <= a {
				continue
			}
			an.Pairs = append(an.Pairs, index.Pair{A: a, B: b, Scores: index.Scores{
				Resemblance: rnd.Float64(), ContainmentAB: rnd.Float64(), ContainmentBA: rnd.Float64(), BytesInCommon: rnd.Int64N(7000), Hamming: rnd.IntN(20)}})
		}
	}
	return an, scanned
}

// BenchmarkReport builds and writes the JSON report of a 50,000-file
// scan's analysis.
func BenchmarkReport(b *testing.B) {
	an, scanned := benchAnalysis()
	b.Run("build", func(b *testing.B) {
		for b.Loop() {
			buildReport(an, scanned, len(scanned))
		}
	})
	rep := buildReport(an, scanned, len(scanned))
	b.Logf("%d pairs", len(rep.pairs))
	b.Run("write", func(b *testing.B) {
		for b.Loop() {
			if err := rep.writeJSON(io.Discard); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// appendMilli writes what strconv's shortest form writes of every score
// kept in thousandths, and milli keeps what round rounds to.
func TestAppendMilliMatchesStrconv(t *testing.T) {
	for k := 0; k <= math.MaxUint16; k++ {
		x := fromMilli(uint16(k))
		if got, want := string(appendMilli(nil, uint16(k))), strconv.FormatFloat(x, 'f', -1, 64); got != want {
			t.Fatalf("appendMilli(%d) = %s, want %s", k, got, want)
		}
	}
	for k := 0; k <= 2000000; k++ {
		x := float64(k) / 2000000
		if got, want := fromMilli(milli(x)), round(x); got != want {
			t.Fatalf("score %v kept as %v, want %v", x, got, want)
		}
	}
	for _, x := range []float64{-0.25, math.NaN(), math.Inf(-1)} {
		if milli(x) != 0 {
			t.Errorf("milli(%v) = %d, want 0", x, milli(x))
		}
	}
	if milli(math.Inf(1)) != math.MaxUint16 || milli(1e9) != math.MaxUint16 {
		t.Errorf("milli of huge scores = %d, %d, want %d", milli(math.Inf(1)), milli(1e9), math.MaxUint16)
	}
}

// A report built from an analysis, its names numbered, writes the JSON
// that encoding/json makes of it, with ids dense (looked up in slices) or
// sparse (in maps), and its pairs sorted by name.
func TestBuiltReportJSON(t *testing.T) {
	names := []string{"b.txt", `quo"te\back`, "a/<html>&amp;", "bad\xffutf8", "z/日本語.txt", "a/b", "a"}
	build := func(base index.DocID) *report {
		an := &index.Analysis{Documents: map[index.DocID]*index.Record{}, ByContent: map[index.ContentID][]index.DocID{}}
		scanned := map[index.DocID]string{}
		for i, n := range names {
			id := base + index.DocID(i)
			an.Documents[id] = &index.Record{ID: id, Doc: index.Doc{Key: "fs:old/" + n, Name: n}, TextSize: int64(100 * i)}
			if i != 3 {
				scanned[id] = n
			}
			c := index.ContentID(base) + index.ContentID(min(i, 5)) // the last two are identical
			an.ByContent[c] = append(an.ByContent[c], id)
		}
		an.Identical = [][]index.DocID{an.ByContent[index.ContentID(base)+5]}
		for i := 0; i < 5; i++ {
			for j := i + 1; j < 6; j++ {
				an.Pairs = append(an.Pairs, index.Pair{A: index.ContentID(base) + index.ContentID(i), B: index.ContentID(base) + index.ContentID(j),
					Scores: index.Scores{Resemblance: float64(i) / 7, ContainmentAB: float64(j) / 9, ContainmentBA: 0.5, BytesInCommon: int64(i + j), Hamming: j}})
			}
		}
		return buildReport(an, scanned, len(names))
	}
	var outs [][]byte
	for _, base := range []index.DocID{1, 1 << 40} {
		rep := build(base)
		got := streamedAsEncoded(t, fmt.Sprint("ids from ", base), rep)
		pairs := rep.pairList()
		if !slices.IsSortedFunc(pairs, func(a, b pairJSON) int {
			return cmp.Or(strings.Compare(a.A, b.A), strings.Compare(a.B, b.B))
		}) {
			t.Errorf("ids from %d: pairs not in name order: %+v", base, pairs)
		}
		for _, p := range pairs {
			if p.A > p.B {
				t.Errorf("pair %s ~ %s: names out of order", p.A, p.B)
			}
		}
		// The document indexed before the scan is named by its key.
		older := 0
		for _, p := range pairs {
			if p.A == "fs:old/"+names[3] || p.B == "fs:old/"+names[3] {
				older++
			}
		}
		if older != 6 {
			t.Errorf("ids from %d: %d pairs name the older document by its key, want 6", base, older)
		}
		if len(pairs) != 15+5+1 { // content 5 is two documents
			t.Errorf("ids from %d: %d pairs, want 21", base, len(pairs))
		}
		outs = append(outs, got)
	}
	if !bytes.Equal(outs[0], outs[1]) {
		t.Errorf("dense and sparse ids give different reports:\n%s\n%s", outs[0], outs[1])
	}
}

// A report of several blocks of pairs, rendered on several cores, is
// still exactly what encoding/json makes of it; a writer that fails in the
// middle of the pairs stops the rendering with its error.
func TestReportPairsRenderedInBlocks(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(4))
	names := []string{"a.txt", `quo"te`, "日本語.txt", "d/e.txt"}
	var pairs []pairJSON
	for i := range 3*pairBlock + 5 {
		pairs = append(pairs, pairJSON{A: names[i%4], B: names[(i+1)%4], Resemblance: round(float64(i%1000) / 1000),
			ContainmentAB: round(float64(i%7) / 7), ContainmentBA: 1, BytesInCommon: int64(i), Hamming: i % 64, Exact: i%3 == 0})
	}
	rep := &report{Files: 4, Documents: 4, Errors: []fileError{}, Identical: [][]string{}, Families: []familyJSON{}}
	setPairs(rep, pairs)
	streamedAsEncoded(t, "report of several blocks", rep)

	w := &failAfter{n: 3 << 20}
	if err := rep.writeJSON(w); !errors.Is(err, errFull) {
		t.Fatalf("writing to a writer that fails after %d bytes: %v, want %v", 3<<20, err, errFull)
	}
}

// failAfter accepts n bytes, then fails.
type failAfter struct{ n int }

func (w *failAfter) Write(b []byte) (int, error) {
	if len(b) > w.n {
		return 0, errFull
	}
	w.n -= len(b)
	return len(b), nil
}

// pairList returns the report's pairs as it prints them.
func (r *report) pairList() []pairJSON {
	out := make([]pairJSON, len(r.pairs))
	for i := range r.pairs {
		out[i] = r.pairs[i].json(r.names)
	}
	return out
}
