package export

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/simdex/simdex/extract"
	"github.com/simdex/simdex/index"
	"github.com/simdex/simdex/index/sqlite"
	"github.com/simdex/simdex/ingest"
	"github.com/simdex/simdex/internal/corpustest"
)

// corpus reads a document of the committed fixtures (testdata/corpora).
func corpus(t testing.TB, rel string) string {
	t.Helper()
	return string(corpustest.Read(t, rel))
}

// fixture is an index holding near-copies, an e-mail with an attachment,
// a document stored with an extraction error and one with hostile names.
type fixture struct {
	ix  *index.Index
	ids map[string]index.DocID // by key
}

const hostile = "evil þ\u0014name\r\nline two\xff\xfe®"

func newFixture(t *testing.T) *fixture {
	t.Helper()
	ctx := context.Background()
	opts := index.DefaultOptions()
	st, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "index.db"), sqlite.Options{Scheme: opts.Scheme(), Durability: sqlite.Normal})
	if err != nil {
		t.Fatal(err)
	}
	ix, err := index.New(ctx, st, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ix.Close()
		st.Close()
	})
	ex, err := extract.New(extract.Options{Limits: extract.DefaultLimits()})
	if err != nil {
		t.Fatal(err)
	}
	ing := ingest.New(ex, ix)
	f := &fixture{ix: ix, ids: map[string]index.DocID{}}
	put := func(key, body string, meta map[string]string) {
		t.Helper()
		out, err := ing.Ingest(ctx, ingest.Object{Key: key, Name: key, Source: "test", Meta: meta, Body: strings.NewReader(body)})
		if err != nil {
			t.Fatal(err)
		}
		for i, in := range out.Inputs {
			f.ids[in.Doc.Key] = out.Results[i].ID
		}
	}
	gpl := corpus(t, "spdx/text/GPL-2.0-only.txt")
	put("fs:gpl-2.0-only.txt", gpl, nil)
	// GPL-2.0+ has GPL-2.0-only's words, in order (only indentation and
	// punctuation differ): a sentence of its own keeps it a near-copy.
	put("fs:gpl-2.0+.txt", corpus(t, "spdx/text/GPL-2.0+.txt")+"\nThis program is distributed under version 2 or any later version.\n", nil)
	put("fs:gpl-edited.txt", strings.Replace(gpl, "Free Software Foundation", "Free Software Fellowship", 3), nil)
	put("fs:bsd-3.txt", corpus(t, "spdx/text/BSD-3-Clause.txt"), nil)
	put("fs:bsd-3-clear.txt", corpus(t, "spdx/text/BSD-3-Clause-Clear.txt"), nil)
	put("fs:apache.txt", corpus(t, "spdx/text/Apache-2.0.txt"), nil)
	put("fs:"+hostile, "a short note about þ and ® and nothing else at all", map[string]string{"subject": hostile})
	put("mail:message.eml", mailWithAttachment(gpl), nil)
	// A document stored with an extraction error.
	res, err := ix.Add(ctx, []index.Input{{Doc: index.Doc{Key: "fs:broken.pdf", Name: "broken.pdf", Source: "test", Error: "encrypted"}, Parent: -1}})
	if err != nil {
		t.Fatal(err)
	}
	f.ids["fs:broken.pdf"] = res[0].ID
	return f
}

func mailWithAttachment(attachment string) string {
	var b strings.Builder
	b.WriteString("From: Alice <alice@example.com>\r\n")
	b.WriteString("To: Bob <bob@example.com>, Carol <carol@example.com>\r\n")
	b.WriteString("Cc: Dave <dave@example.com>\r\n")
	b.WriteString("Subject: The licence, as discussed\r\n")
	b.WriteString("Date: Tue, 03 Mar 2026 10:00:00 +0000\r\n")
	b.WriteString("Message-ID: <1234@example.com>\r\n")
	b.WriteString("MIME-Version: 1.0\r\n")
	b.WriteString("Content-Type: multipart/mixed; boundary=\"XYZ\"\r\n\r\n")
	b.WriteString("--XYZ\r\nContent-Type: text/plain; charset=utf-8\r\n\r\n")
	b.WriteString("Bob, here is the licence we talked about on the phone yesterday. Regards, Alice\r\n")
	b.WriteString("--XYZ\r\nContent-Type: text/plain; name=\"licence.txt\"\r\n")
	b.WriteString("Content-Disposition: attachment; filename=\"licence.txt\"\r\n")
	b.WriteString("Content-Transfer-Encoding: base64\r\n\r\n")
	enc := base64.StdEncoding.EncodeToString([]byte(attachment))
	for len(enc) > 76 {
		b.WriteString(enc[:76] + "\r\n")
		enc = enc[76:]
	}
	b.WriteString(enc + "\r\n--XYZ--\r\n")
	return b.String()
}

// export writes the fixture in format f.
func (f *fixture) export(t *testing.T, format Format, include Filter) []byte {
	t.Helper()
	var buf bytes.Buffer
	n, err := Export(context.Background(), f.ix, &buf, Options{Format: format, Include: include})
	if err != nil {
		t.Fatal(err)
	}
	if include == nil && n != len(f.ids) {
		t.Errorf("%s: %d rows, want %d", format, n, len(f.ids))
	}
	return buf.Bytes()
}

// parseDAT is a minimal Concordance reader: records end with CRLF, fields
// are split on the separator and unquoted, doubled quotes undoubled and
// the newline character turned back into a line feed.
func parseDAT(t testing.TB, data []byte, o DATOptions) [][]string {
	t.Helper()
	o = o.withDefaults()
	s := string(data)
	if !o.OmitBOM {
		var ok bool
		if s, ok = strings.CutPrefix(s, "\uFEFF"); !ok {
			t.Fatal("dat: no byte-order mark")
		}
	}
	if !strings.HasSuffix(s, "\r\n") {
		t.Fatal("dat: last record does not end with CRLF")
	}
	q := string(o.Quote)
	var out [][]string
	for _, line := range strings.Split(strings.TrimSuffix(s, "\r\n"), "\r\n") {
		if strings.ContainsAny(line, "\r\n") {
			t.Fatalf("dat: bare line break in record %q", line)
		}
		var rec []string
		for _, field := range strings.Split(line, string(o.Separator)) {
			if len(field) < 2*len(q) || !strings.HasPrefix(field, q) || !strings.HasSuffix(field, q) {
				t.Fatalf("dat: field %q is not quoted", field)
			}
			inner := field[len(q) : len(field)-len(q)]
			if strings.Count(inner, q)%2 != 0 {
				t.Fatalf("dat: field %q has an undoubled quote", field)
			}
			inner = strings.ReplaceAll(inner, q+q, q)
			rec = append(rec, strings.ReplaceAll(inner, string(o.Newline), "\n"))
		}
		out = append(out, rec)
	}
	return out
}

// byColumn turns records with a header into maps keyed by DOCID.
func byColumn(t *testing.T, recs [][]string) map[string]map[string]string {
	t.Helper()
	if len(recs) == 0 || !slices.Equal(recs[0], Columns) {
		t.Fatalf("header %q, want %q", recs[0], Columns)
	}
	out := map[string]map[string]string{}
	for _, r := range recs[1:] {
		if len(r) != len(Columns) {
			t.Fatalf("record has %d fields, want %d: %q", len(r), len(Columns), r)
		}
		m := map[string]string{}
		for i, c := range Columns {
			m[c] = r[i]
		}
		if _, dup := out[m["DOCID"]]; dup {
			t.Fatalf("DOCID %s twice", m["DOCID"])
		}
		out[m["DOCID"]] = m
	}
	return out
}

func TestExportFormatsAgree(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()

	// CSV parses back with encoding/csv.
	csvRecs, err := csv.NewReader(bytes.NewReader(f.export(t, CSV, nil))).ReadAll()
	if err != nil {
		t.Fatalf("csv does not parse: %v", err)
	}
	fromCSV := byColumn(t, csvRecs)

	// DAT parses back and uses the þ quote.
	dat := f.export(t, DAT, nil)
	if !bytes.Contains(dat, []byte("þ")) || !bytes.Contains(dat, []byte("\u0014")) {
		t.Fatal("dat lacks the þ quote or the U+0014 separator")
	}
	fromDAT := byColumn(t, parseDAT(t, dat, DATOptions{}))

	// Every JSONL line is one valid JSON object.
	fromJSON := map[string]map[string]any{}
	sc := bufio.NewScanner(bytes.NewReader(f.export(t, JSONL, nil)))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var m map[string]any
		if !json.Valid(sc.Bytes()) {
			t.Fatalf("invalid JSON line %q", sc.Text())
		}
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatal(err)
		}
		fromJSON[fmt.Sprint(m["DOCID"])] = m
	}

	if len(fromCSV) != len(f.ids) || len(fromDAT) != len(f.ids) || len(fromJSON) != len(f.ids) {
		t.Fatalf("rows: csv %d, dat %d, jsonl %d; want %d each", len(fromCSV), len(fromDAT), len(fromJSON), len(f.ids))
	}
	// Ordered by DOCID.
	var order []int
	for _, r := range csvRecs[1:] {
		var v int
		fmt.Sscan(r[0], &v)
		order = append(order, v)
	}
	if !slices.IsSorted(order) {
		t.Errorf("rows not ordered by DOCID: %v", order)
	}
	// CSV and DAT carry the same values, but for what DAT must replace.
	for id, c := range fromCSV {
		d := fromDAT[id]
		for _, col := range Columns {
			want := strings.ReplaceAll(strings.ReplaceAll(c[col], "\r\n", "\n"), "\u0014", "\uFFFD")
			want = strings.ReplaceAll(want, "®", "\n")
			if d[col] != want {
				t.Errorf("doc %s %s: dat %q, csv %q", id, col, d[col], c[col])
			}
		}
		j := fromJSON[id]
		for _, col := range []string{"Key", "Name", "ND_FamilyID", "ND_PivotID", "ExactDupGroup", "Subject"} {
			got := ""
			if v, ok := j[col]; ok {
				got = fmt.Sprint(v)
			}
			// encoding/csv reads CRLF inside quotes as LF.
			if strings.ReplaceAll(got, "\r\n", "\n") != c[col] {
				t.Errorf("doc %s %s: jsonl %q, csv %q", id, col, got, c[col])
			}
		}
		if c["ND_FamilyID"] != "" {
			sim, _ := j["ND_Similarity"].(float64)
			if fmt.Sprintf("%.1f", sim) != c["ND_Similarity"] {
				t.Errorf("doc %s similarity: jsonl %v, csv %s", id, sim, c["ND_Similarity"])
			}
		}
	}

	// Near-duplicate fields against the analysis.
	an, err := f.ix.Analyse(ctx, index.DefaultThresholds())
	if err != nil {
		t.Fatal(err)
	}
	row := func(key string) map[string]string {
		t.Helper()
		id, ok := f.ids[key]
		if !ok {
			t.Fatalf("no document %s", key)
		}
		return fromCSV[fmt.Sprint(id)]
	}
	gpl, plus, edited := row("fs:gpl-2.0-only.txt"), row("fs:gpl-2.0+.txt"), row("fs:gpl-edited.txt")
	var attachment map[string]string
	for k := range f.ids {
		if strings.HasPrefix(k, "mail:message.eml"+ingest.ChildSeparator) {
			attachment = row(k)
		}
	}
	if attachment == nil {
		t.Fatal("the e-mail's attachment was not indexed")
	}
	famID := gpl["ND_FamilyID"]
	if famID == "" {
		t.Fatal("GPL-2.0-only is in no family")
	}
	for _, r := range []map[string]string{plus, edited, attachment} {
		if r["ND_FamilyID"] != famID || r["ND_PivotID"] != gpl["ND_PivotID"] {
			t.Errorf("doc %s (%s): family %s pivot %s, want %s %s", r["DOCID"], r["Key"], r["ND_FamilyID"], r["ND_PivotID"], famID, gpl["ND_PivotID"])
		}
	}
	var fam *index.Family
	for i := range an.Families {
		if slices.Contains(an.Families[i].Members, f.ids["fs:gpl-2.0-only.txt"]) {
			fam = &an.Families[i]
		}
	}
	if want := fmt.Sprint(slices.Min(fam.Members)); famID != want {
		t.Errorf("family id %s, want the smallest member %s", famID, want)
	}
	pivots := 0
	for _, m := range fam.Members {
		r := fromCSV[fmt.Sprint(m)]
		if r["ND_IsPivot"] == "yes" {
			pivots++
			if r["DOCID"] != fmt.Sprint(fam.Pivot) || r["ND_Similarity"] != "100.0" {
				t.Errorf("pivot row %v", r)
			}
		} else if r["ND_IsPivot"] != "no" {
			t.Errorf("doc %s ND_IsPivot %q", r["DOCID"], r["ND_IsPivot"])
		}
		var sim float64
		fmt.Sscan(r["ND_Similarity"], &sim)
		if sim < 50 || sim > 100 {
			t.Errorf("doc %s (%s) similarity %s to the pivot", r["DOCID"], r["Key"], r["ND_Similarity"])
		}
	}
	if pivots != 1 {
		t.Errorf("%d pivots in the GPL family", pivots)
	}
	// The attachment has the same text as GPL-2.0-only: one exact group
	// named after the smaller id, and the pivot's similarity when one is.
	if gpl["ExactDupGroup"] == "" || gpl["ExactDupGroup"] != attachment["ExactDupGroup"] || gpl["ExactDupGroup"] != gpl["DOCID"] {
		t.Errorf("exact groups: gpl %q, attachment %q", gpl["ExactDupGroup"], attachment["ExactDupGroup"])
	}
	if gpl["ND_Similarity"] != attachment["ND_Similarity"] {
		t.Errorf("identical texts score %s and %s", gpl["ND_Similarity"], attachment["ND_Similarity"])
	}
	if plus["ExactDupGroup"] != "" {
		t.Errorf("GPL-2.0+ in exact group %s", plus["ExactDupGroup"])
	}
	// The e-mail and its attachment.
	mail := row("mail:message.eml")
	if mail["From"] == "" || !strings.Contains(mail["To"], "bob@example.com") || !strings.Contains(mail["Cc"], "dave@example.com") ||
		mail["Subject"] != "The licence, as discussed" || mail["MessageID"] != "<1234@example.com>" || mail["Date"] != "2026-03-03T10:00:00Z" {
		t.Errorf("mail metadata: %v", mail)
	}
	if attachment["ParentDocID"] != mail["DOCID"] || attachment["TopLevelDocID"] != mail["DOCID"] || mail["TopLevelDocID"] != mail["DOCID"] || mail["ParentDocID"] != "" {
		t.Errorf("attachment parent %s top %s, mail %s", attachment["ParentDocID"], attachment["TopLevelDocID"], mail["DOCID"])
	}
	if !strings.Contains(attachment["AttachmentPath"], "licence.txt") {
		t.Errorf("attachment path %q", attachment["AttachmentPath"])
	}
	if want := fmt.Sprintf("%x", sha256.Sum256([]byte(corpus(t, "spdx/text/GPL-2.0-only.txt")))); gpl["Native_SHA_256"] != want {
		t.Errorf("native sha %s, want %s", gpl["Native_SHA_256"], want)
	}
	// Documents in no family keep empty ND fields.
	for _, key := range []string{"fs:apache.txt", "fs:broken.pdf", "mail:message.eml"} {
		r := row(key)
		for _, col := range []string{"ND_FamilyID", "ND_PivotID", "ND_IsPivot", "ND_Similarity", "ND_Containment"} {
			if r[col] != "" {
				t.Errorf("%s: %s = %q, want empty", key, col, r[col])
			}
		}
	}
	if r := row("fs:broken.pdf"); r["ExtractionError"] != "encrypted" {
		t.Errorf("extraction error %q", r["ExtractionError"])
	}
	// The hostile name survived every format without breaking a row.
	h := row("fs:" + hostile)
	if want := strings.ReplaceAll(replaceInvalid(hostile), "\r\n", "\n"); h["Name"] != "fs:"+want {
		t.Errorf("hostile name %q, want %q", h["Name"], want)
	}
	// Its origin's "subject" is the origin's metadata, not the e-mail
	// subject, and comes back whole from its JSON.
	var origin map[string]string
	if err := json.Unmarshal([]byte(h["OriginMetadata"]), &origin); err != nil || h["Subject"] != "" || origin["subject"] != replaceInvalid(hostile) {
		t.Errorf("hostile origin metadata %q (%v), subject %q; want the subject in OriginMetadata alone", h["OriginMetadata"], err, h["Subject"])
	}
}

func TestExportFilter(t *testing.T) {
	f := newFixture(t)
	keep := f.ids["fs:gpl-2.0+.txt"]
	recs, err := csv.NewReader(bytes.NewReader(f.export(t, CSV, OnlyDocs(keep)))).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 2 || recs[1][0] != fmt.Sprint(keep) || recs[1][15] == "" {
		t.Fatalf("filtered export: %q", recs)
	}
	recs, err = csv.NewReader(bytes.NewReader(f.export(t, CSV, func(*index.Record) bool { return false }))).ReadAll()
	if err != nil || len(recs) != 1 {
		t.Fatalf("empty export: %q, %v", recs, err)
	}
}

// noSimilar hides Similar so that members are scored from their sketches.
type noSimilar struct{ *index.Index }

func (noSimilar) Similar(context.Context, index.DocID, index.Thresholds) ([]index.Match, error) {
	return nil, nil
}

// TestScoresWithoutPairs drops the member–pivot pairs from the analysis:
// the Similar query, then the sketches, must give the same similarity.
func TestScoresWithoutPairs(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	th := index.DefaultThresholds()
	an, err := f.ix.Analyse(ctx, th)
	if err != nil {
		t.Fatal(err)
	}
	collect := func(eng Engine, an *index.Analysis) map[index.DocID]Row {
		out := map[index.DocID]Row{}
		if err := Rows(ctx, eng, an, th, nil, func(r *Row) error { out[r.DocID] = *r; return nil }); err != nil {
			t.Fatal(err)
		}
		return out
	}
	want := collect(f.ix, an)
	pivots := map[index.ContentID]bool{}
	for _, fam := range an.Families {
		pivots[an.Documents[fam.Pivot].Content] = true
	}
	stripped := *an
	stripped.Pairs = nil
	for _, p := range an.Pairs {
		if !pivots[p.A] && !pivots[p.B] {
			stripped.Pairs = append(stripped.Pairs, p)
		}
	}
	if len(stripped.Pairs) == len(an.Pairs) {
		t.Fatal("no pair to strip")
	}
	for name, eng := range map[string]Engine{"similar": f.ix, "sketches": noSimilar{f.ix}} {
		got := collect(eng, &stripped)
		checked := 0
		for id, w := range want {
			g := got[id]
			if g.InFamily != w.InFamily || g.NDFamilyID != w.NDFamilyID || g.NDPivotID != w.NDPivotID {
				t.Errorf("%s: doc %d family fields differ", name, id)
			}
			if !w.InFamily {
				continue
			}
			checked++
			if math.Abs(g.NDSimilarity-w.NDSimilarity) > 0.05 {
				t.Errorf("%s: doc %d similarity %.1f, with pairs %.1f", name, id, g.NDSimilarity, w.NDSimilarity)
			}
			if name == "similar" && math.Abs(g.NDContainment-w.NDContainment) > 0.05 {
				t.Errorf("%s: doc %d containment %.1f, with pairs %.1f", name, id, g.NDContainment, w.NDContainment)
			}
		}
		if checked < 4 {
			t.Errorf("%s: only %d family members checked", name, checked)
		}
	}
}

// crafty is a row whose every text field holds something hostile.
func crafty(s string) *Row {
	return &Row{
		DocID: 7, Key: s, Name: s, Source: s, VersionID: s, AttachmentPath: s, MediaType: s, ExtractionError: s,
		InFamily: true, NDFamilyID: 1, NDPivotID: 1, NDSimilarity: 87.25, NDContainment: 99.99,
		From: s, To: s, Cc: s, Date: s, Subject: s, MessageID: s, DeletedAtSourceEvent: s,
		EmailThreadID: s, DeletedAtSource: s, OriginMetadata: map[string]string{"note": s},
		IndexedAt: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC),
	}
}

func writeRows(t testing.TB, f Format, o DATOptions, rows ...*Row) []byte {
	t.Helper()
	var buf bytes.Buffer
	w, err := NewWriter(&buf, f, o)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rows {
		if err := w.Write(r); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func TestEscaping(t *testing.T) {
	cases := map[string]string{
		"plain":      "plain text",
		"separator":  "a\u0014b",
		"quote":      "Þór þ þþ",
		"newlines":   "one\r\ntwo\nthree\rfour",
		"invalid":    "bad \xff\xfe bytes \xc3",
		"comma":      `a,"b",c`,
		"registered": "Word®",
		"empty":      "",
	}
	for name, s := range cases {
		t.Run(name, func(t *testing.T) {
			valid := replaceInvalid(s)
			recs, err := csv.NewReader(bytes.NewReader(writeRows(t, CSV, DATOptions{}, crafty(s)))).ReadAll()
			if err != nil || len(recs) != 2 || len(recs[1]) != len(Columns) {
				t.Fatalf("csv: %q, %v", recs, err)
			}
			// encoding/csv reads \r\n inside quotes as \n.
			if want := strings.ReplaceAll(valid, "\r\n", "\n"); recs[1][2] != want {
				t.Errorf("csv name %q, want %q", recs[1][2], want)
			}
			if recs[1][18] != "87.3" || recs[1][19] != "100.0" {
				t.Errorf("csv percentages %q %q", recs[1][18], recs[1][19])
			}

			line := writeRows(t, JSONL, DATOptions{}, crafty(s))
			if bytes.Count(line, []byte("\n")) != 1 || !json.Valid(line) {
				t.Fatalf("jsonl line %q", line)
			}
			var m map[string]any
			json.Unmarshal(line, &m)
			if s != "" && m["Name"] != valid {
				t.Errorf("jsonl name %q, want %q", m["Name"], valid)
			}

			for _, o := range []DATOptions{{}, {Separator: '|', Quote: '^', Newline: '~', OmitBOM: true}} {
				recs := parseDAT(t, writeRows(t, DAT, o, crafty(s)), o)
				if len(recs) != 2 || len(recs[1]) != len(Columns) {
					t.Fatalf("dat %+v: %q", o, recs)
				}
				if want := datExpect(s, o); recs[1][2] != want {
					t.Errorf("dat %+v name %q, want %q", o, recs[1][2], want)
				}
			}
		})
	}
}

// datExpect is what a DAT reader gets back for s.
func datExpect(s string, o DATOptions) string {
	o = o.withDefaults()
	var b strings.Builder
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == '\r' && strings.HasPrefix(s[i:], "\r\n"):
			size = 2
			b.WriteByte('\n')
		case r == '\r' || r == '\n' || r == o.Newline:
			b.WriteByte('\n')
		case r == o.Separator:
			b.WriteRune(utf8.RuneError)
		default:
			b.WriteRune(r)
		}
		i += size
	}
	return b.String()
}

func TestDATOptionsValidate(t *testing.T) {
	for _, o := range []DATOptions{{Separator: 'þ'}, {Quote: '\n'}, {Newline: utf8.RuneError}, {Separator: -1}} {
		if _, err := NewWriter(io.Discard, DAT, o); err == nil {
			t.Errorf("%+v accepted", o)
		}
	}
	if _, err := ParseFormat("xml"); !errors.Is(err, ErrFormat) {
		t.Errorf("ParseFormat(xml): %v", err)
	}
	for _, f := range Formats {
		if g, err := ParseFormat(strings.ToUpper(string(f))); err != nil || g != f {
			t.Errorf("ParseFormat(%s) = %s, %v", f, g, err)
		}
	}
}

// failWriter fails after n bytes.
type failWriter struct{ n int }

var errDisk = errors.New("disk full")

func (w *failWriter) Write(p []byte) (int, error) {
	if len(p) > w.n {
		return 0, errDisk
	}
	w.n -= len(p)
	return len(p), nil
}

func TestWriteErrorsWrapped(t *testing.T) {
	f := newFixture(t)
	for _, format := range Formats {
		_, err := Export(context.Background(), f.ix, &failWriter{n: 10}, Options{Format: format})
		if !errors.Is(err, errDisk) || !strings.Contains(err.Error(), "export "+string(format)) {
			t.Errorf("%s: %v", format, err)
		}
	}
}

func FuzzDATField(f *testing.F) {
	for _, s := range []string{"", "x", "þ", "þþ", "\u0014", "\r\n", "\r", "\n\r", "®", "\xff", "\xc3\xbe", "a\u0014þ\r\n\xffb"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, o := range []DATOptions{{}, {Separator: ',', Quote: '"', Newline: '\u2028', OmitBOM: true}} {
			recs := parseDAT(t, writeRows(t, DAT, o, crafty(s)), o)
			if len(recs) != 2 || len(recs[1]) != len(Columns) {
				t.Fatalf("%q broke the record: %q", s, recs)
			}
			if want := datExpect(neutralise(s, o.withDefaults().Newline), o); recs[1][1] != want {
				t.Fatalf("%q read back as %q, want %q", s, recs[1][1], want)
			}
			var field strings.Builder
			escapeDAT(&field, s, o.withDefaults())
			if got := field.String(); !utf8.ValidString(got) {
				t.Fatalf("%q escaped to invalid UTF-8 %q", s, got)
			}
		}
	})
}

// BenchmarkWriter measures the writers alone over 100k synthetic rows.
func BenchmarkWriter(b *testing.B) {
	const n = 100_000
	rows := make([]Row, 1000)
	for i := range rows {
		rows[i] = Row{
			DocID: index.DocID(i + 1), Key: fmt.Sprintf("s3:contracts/2026/%06d.pdf", i), Name: fmt.Sprintf("%06d.pdf", i),
			Source: "s3:contracts", VersionID: "3HL4kqtJlcpXroDTDmJ+rmSpXd3dIbrHY", TopLevelDocID: index.DocID(i + 1),
			AttachmentPath: fmt.Sprintf("%06d.pdf", i), MediaType: "application/pdf", NativeSHA256: sha256.Sum256([]byte{byte(i)}),
			NativeSize: 123456, TextSize: 23456, IndexedAt: time.Now(), InFamily: i%3 == 0, NDFamilyID: 1, NDPivotID: 4,
			NDSimilarity: 93.4, NDContainment: 97, Subject: "Re: contract þ draft\nsecond line",
		}
	}
	for _, f := range Formats {
		b.Run(string(f), func(b *testing.B) {
			for b.Loop() {
				w, err := NewWriter(io.Discard, f, DATOptions{})
				if err != nil {
					b.Fatal(err)
				}
				for i := range n {
					if err := w.Write(&rows[i%len(rows)]); err != nil {
						b.Fatal(err)
					}
				}
				if err := w.Flush(); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(n*b.N)/b.Elapsed().Seconds(), "rows/s")
		})
	}
}
