package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/simdex/simdex/index"
)

// The streamed report must be exactly what encoding/json makes of it, once
// compacted: same keys, same escaping, same numbers.
func TestReportJSONMatchesEncodingJSON(t *testing.T) {
	names := []string{"a.txt", `quo"te\back`, "<html>&amp;", "bad\xffutf8", "line\u2028sep", "tab\tnew\nline", "日本語.txt"}
	reports := []*report{
		{Errors: []fileError{}, Identical: [][]string{}, Families: []familyJSON{}, Pairs: []pairJSON{}},
		{
			Files: 7, Documents: 9,
			Errors:    []fileError{{Path: names[1], Error: "empty text"}, {Path: names[3], Error: "<binary>"}},
			Identical: [][]string{{names[0], names[2]}, {names[4], names[5], names[6]}},
			Families:  []familyJSON{{Pivot: names[6], Members: []string{names[6], names[3]}, Links: 3, AvgResemblance: 0.667}},
		},
	}
	for i, a := range names {
		for j, b := range names {
			x := float64(i*len(names)+j) / 49
			reports[1].Pairs = append(reports[1].Pairs, pairJSON{A: a, B: b, Resemblance: round(x), ContainmentAB: round(1 - x),
				ContainmentBA: 0.001, BytesInCommon: int64(i * 1 << 33), Hamming: j, Exact: i == j})
		}
	}
	reports[1].Pairs = append(reports[1].Pairs, pairJSON{A: "x", B: "y", Resemblance: 1, ContainmentAB: 0, ContainmentBA: 0.5})
	for i, rep := range reports {
		var got bytes.Buffer
		if err := rep.writeJSON(&got); err != nil {
			t.Fatal(err)
		}
		want, err := json.Marshal(rep)
		if err != nil {
			t.Fatal(err)
		}
		var compact bytes.Buffer
		if err := json.Compact(&compact, got.Bytes()); err != nil {
			t.Fatalf("report %d is not JSON: %v\n%s", i, err, got.Bytes())
		}
		if !bytes.Equal(compact.Bytes(), want) {
			t.Errorf("report %d:\nstreamed %s\nencoding/json %s", i, compact.Bytes(), want)
		}
	}
}

// A failing writer fails the report; the error is returned, not lost.
func TestReportJSONWriteError(t *testing.T) {
	rep := &report{Errors: []fileError{}, Identical: [][]string{}, Families: []familyJSON{}}
	for i := 0; i < 10000; i++ {
		rep.Pairs = append(rep.Pairs, pairJSON{A: "a", B: "b"})
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
	if len(rep.Pairs) != 3+1+1 || cap(rep.Pairs) != len(rep.Pairs) {
		t.Errorf("%d pairs in room for %d, want 5 in room for 5", len(rep.Pairs), cap(rep.Pairs))
	}
}
