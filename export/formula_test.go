package export

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/simdex/simdex/extract"
	"github.com/simdex/simdex/index"
	"github.com/simdex/simdex/index/sqlite"
	"github.com/simdex/simdex/ingest"
)

// formulas are cell values a spreadsheet would evaluate.
var formulas = map[string]string{
	"hyperlink": `=HYPERLINK("http://evil.example/x","open")+1.txt`,
	"at":        "@SUM(1+1)cmd.txt",
	"plus":      "+1+cmd|' /C calc'!A0",
	"minus":     "-2+3",
	"tab":       "\t=1+1",
	"cr":        "\r=1+1",
	"lf":        "\n=1+1",
	"nul":       "\x00=1+1",
}

// withText returns a row whose text column col holds v and whose other
// text columns hold harmless text.
func withText(t *testing.T, col, v string) *Row {
	t.Helper()
	r := crafty("harmless")
	fields := map[string]*string{
		"Key": &r.Key, "Name": &r.Name, "Source": &r.Source, "VersionID": &r.VersionID,
		"AttachmentPath": &r.AttachmentPath, "MediaType": &r.MediaType, "ExtractionError": &r.ExtractionError,
		"From": &r.From, "To": &r.To, "Cc": &r.Cc, "Date": &r.Date, "Subject": &r.Subject, "MessageID": &r.MessageID,
		"DeletedAtSourceEvent": &r.DeletedAtSourceEvent, "EmailThreadID": &r.EmailThreadID, "DeletedAtSource": &r.DeletedAtSource,
	}
	if col == "OriginMetadata" {
		r.OriginMetadata = map[string]string{v: v}
	}
	var text []string
	for i, c := range Columns {
		if isText[i] {
			text = append(text, c)
		}
	}
	if got := slices.Sorted(func(yield func(string) bool) {
		for k := range fields {
			if !yield(k) {
				return
			}
		}
	}); !slices.Equal(slices.Sorted(slices.Values(append(got, "OriginMetadata"))), slices.Sorted(slices.Values(text))) {
		t.Fatalf("the test knows text columns %q and OriginMetadata, the writers neutralise %q", got, text)
	}
	if p := fields[col]; p != nil {
		*p = v
	}
	return r
}

// writeFile writes rows in format f to a file and reads the file back.
func writeFile(t *testing.T, f Format, rows ...*Row) []byte {
	t.Helper()
	path := filepath.Join(t.TempDir(), "export."+string(f))
	if err := os.WriteFile(path, writeRows(t, f, DATOptions{}, rows...), 0o600); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// readBack parses a CSV or DAT file into records, header first.
func readBack(t *testing.T, f Format, b []byte) [][]string {
	t.Helper()
	if f == DAT {
		return parseDAT(t, b, DATOptions{})
	}
	recs, err := csv.NewReader(bytes.NewReader(b)).ReadAll()
	if err != nil {
		t.Fatalf("csv does not parse: %v", err)
	}
	return recs
}

// readAs is what a reader of format f gets back for a field holding s.
func readAs(f Format, s string) string {
	if f == DAT {
		return datExpect(s, DATOptions{})
	}
	return strings.ReplaceAll(s, "\r\n", "\n") // encoding/csv reads CRLF as LF
}

// col returns the position of a column.
func col(name string) int { return slices.Index(Columns, name) }

// Every text column of CSV and DAT files starts with a single quote when
// its value would be a formula, and is otherwise unchanged; the origin's
// metadata, a formula in its keys and values, is a JSON object, which no
// spreadsheet reads as a formula.
func TestFormulasNeutralised(t *testing.T) {
	for _, f := range []Format{CSV, DAT} {
		harmless := readBack(t, f, writeFile(t, f, crafty("harmless")))[1]
		for i, col := range Columns {
			if !isText[i] {
				continue
			}
			for name, v := range formulas {
				t.Run(string(f)+"/"+col+"/"+name, func(t *testing.T) {
					row := withText(t, col, v)
					recs := readBack(t, f, writeFile(t, f, row))
					if len(recs) != 2 || len(recs[1]) != len(Columns) {
						t.Fatalf("records %q", recs)
					}
					want := readAs(f, "'"+v)
					if col == "OriginMetadata" {
						want = readAs(f, originJSON(row.OriginMetadata))
					}
					if got := recs[1][i]; got != want || got != "" && strings.ContainsRune(formulaStarts, rune(got[0])) {
						t.Errorf("%s = %q, want %q", col, got, want)
					}
					for j, other := range recs[1] {
						if j != i && isText[j] && other != harmless[j] {
							t.Errorf("%s = %q, want %q", Columns[j], other, harmless[j])
						}
					}
				})
			}
		}
	}
}

// Text that merely contains formula characters, and the columns simdex
// writes itself (negative numbers included), are left as they are.
func TestNeutraliseLeavesOtherValues(t *testing.T) {
	for _, s := range []string{"", "a=b", "report-2026.pdf", "'=quoted already", " =1+1", "é=1"} {
		if got := neutralise(s, DefaultNewline); got != s {
			t.Errorf("neutralise(%q) = %q", s, got)
		}
	}
	r := crafty("x")
	r.NativeSize, r.TextSize = -1, -20
	for _, f := range []Format{CSV, DAT} {
		recs := readBack(t, f, writeFile(t, f, r))
		rec := recs[1]
		for i, col := range Columns {
			if col == "NativeSize" && rec[i] != "-1" || col == "TextSize" && rec[i] != "-20" {
				t.Errorf("%s: %s = %q, want the number", f, col, rec[i])
			}
		}
	}
	// JSON Lines is no spreadsheet format: values stay exact.
	line := writeRows(t, JSONL, DATOptions{}, withText(t, "Name", formulas["at"]))
	var m map[string]any
	if err := json.Unmarshal(line, &m); err != nil || m["Name"] != formulas["at"] {
		t.Errorf("jsonl name %v (%v), want %q", m["Name"], err, formulas["at"])
	}
}

// Files and keys named as formulas, ingested into a real index and
// exported to files: the Name and AttachmentPath columns, and an e-mail's
// subject and sender, come back neutralised.
func TestExportNeutralisesIngestedNames(t *testing.T) {
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
	defer st.Close()
	defer ix.Close()
	ex, err := extract.New(extract.Options{Limits: extract.DefaultLimits()})
	if err != nil {
		t.Fatal(err)
	}
	ing := ingest.New(ex, ix)
	mail := "From: =cmd|'/c calc'!A1 <x@example.com>\r\nSubject: @SUM(1+1)\r\nDate: Tue, 03 Mar 2026 10:00:00 +0000\r\n\r\nA plain body that says enough to be indexed.\r\n"
	for _, name := range []string{formulas["hyperlink"], formulas["at"], "-minus.eml"} {
		body := "some text about records retention and the schedule"
		if strings.HasSuffix(name, ".eml") {
			body = mail
		}
		if _, err := ing.Ingest(ctx, ingest.Object{Key: name, Name: name, Source: "s3:b", ModTime: time.Now(), Body: strings.NewReader(body)}); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range []Format{CSV, DAT} {
		path := filepath.Join(t.TempDir(), "export."+string(f))
		out, err := os.Create(path)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := Export(ctx, ix, out, Options{Format: f}); err != nil {
			t.Fatal(err)
		}
		if err := out.Close(); err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		recs := readBack(t, f, b)
		if len(recs) != 4 {
			t.Fatalf("%s: %d records, want a header and 3 rows", f, len(recs))
		}
		for _, rec := range recs[1:] {
			for i, col := range Columns {
				if v := rec[i]; isText[i] && v != "" && strings.ContainsRune(formulaStarts, rune(v[0])) {
					t.Errorf("%s: %s = %q starts a formula", f, col, v)
				}
			}
			if !strings.HasPrefix(rec[2], "'") || !strings.HasPrefix(rec[7], "'") {
				t.Errorf("%s: Name %q, AttachmentPath %q, want both quoted", f, rec[2], rec[7])
			}
			if rec[2] == "'-minus.eml" && (rec[col("Subject")] != "'@SUM(1+1)" || !strings.HasPrefix(rec[col("From")], "'=cmd")) {
				t.Errorf("%s: subject %q, from %q, want both quoted", f, rec[col("Subject")], rec[col("From")])
			}
		}
	}
}

// Origin metadata naming simdex's own fields with formulas, names and
// subjects starting with each formula character, and a document an older
// build stored with the origin's formulas among simdex's own metadata
// (thread key, deleted-at-source mark): exported from a real index to CSV
// and DAT, no cell of any column starts a formula. The thread key and the
// mark were trusted as simdex's own columns (issue 47).
func TestExportNeutralisesOriginMetadata(t *testing.T) {
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
	defer st.Close()
	defer ix.Close()
	ex, err := extract.New(extract.Options{Limits: extract.DefaultLimits()})
	if err != nil {
		t.Fatal(err)
	}
	ing := ingest.New(ex, ix)
	link := `=HYPERLINK("http://evil.example/x","open")`
	forged := map[string]string{index.MetaThreadID: link, index.MetaDeletedAtSource: link, index.MetaSubject: "@SUM(1+1)", link: "-2+3"}
	for i, c := range []string{"=", "+", "-", "@", "\t", "\r"} {
		name := c + "cmd" + strconv.Itoa(i) + ".eml"
		mail := "From: " + c + "x <x@example.com>\r\nSubject: " + c + "SUM(1+1)\r\nMessage-ID: <m" + strconv.Itoa(i) + "@example.com>\r\n\r\nA plain body that says enough to be indexed, number " + strconv.Itoa(i) + ".\r\n"
		if _, err := ing.Ingest(ctx, ingest.Object{Key: name, Name: name, Source: "s3:b", Meta: forged, ModTime: time.Now(), Body: strings.NewReader(mail)}); err != nil {
			t.Fatal(err)
		}
	}
	// As an older build stored an upload's metadata: among simdex's own.
	legacy := index.Input{Doc: index.Doc{Key: "old.txt", Name: "old.txt", Source: "s3:b", Meta: forged}, Text: []byte("an old upload whose metadata was forged"), Parent: -1}
	if _, err := ix.Add(ctx, []index.Input{legacy}); err != nil {
		t.Fatal(err)
	}
	for _, f := range []Format{CSV, DAT} {
		var b bytes.Buffer
		if _, err := Export(ctx, ix, &b, Options{Format: f}); err != nil {
			t.Fatal(err)
		}
		recs := readBack(t, f, b.Bytes())
		if len(recs) != 8 {
			t.Fatalf("%s: %d records, want a header and 7 rows", f, len(recs))
		}
		for _, rec := range recs[1:] {
			for i, col := range Columns {
				if v := rec[i]; v != "" && strings.ContainsRune(formulaStarts, rune(v[0])) {
					t.Errorf("%s: %s = %q starts a formula", f, col, v)
				}
			}
			if rec[col("Name")] != "'old.txt" && rec[col("Name")] != "old.txt" && (rec[col("EmailThreadID")] == "'"+link || rec[col("DeletedAtSource")] != "") {
				t.Errorf("%s: %s: thread %q, deleted at source %q: the origin's metadata became simdex's", f, rec[col("Name")], rec[col("EmailThreadID")], rec[col("DeletedAtSource")])
			}
		}
	}
}

// Whatever a text field holds, no CSV or DAT reader gets back a cell that
// starts a formula, and dropping the added quote gives the value back.
func FuzzNeutralise(f *testing.F) {
	for _, s := range formulas {
		f.Add(s)
	}
	for _, s := range []string{"", "'", "''=", "þ=", "\u0014=", "®=", "\xff="} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, format := range []Format{CSV, DAT} {
			recs := readBack(t, format, writeRows(t, format, DATOptions{}, crafty(s)))
			if len(recs) != 2 || len(recs[1]) != len(Columns) {
				t.Fatalf("%s: %q broke the record: %q", format, s, recs)
			}
			got := recs[1][col("Name")]
			if got != "" && strings.ContainsRune(formulaStarts, rune(got[0])) {
				t.Fatalf("%s: %q read back as %q, a formula", format, s, got)
			}
			if want := readAs(format, replaceInvalid(s)); got != want && got != readAs(format, "'"+replaceInvalid(s)) {
				t.Fatalf("%s: %q read back as %q, want %q with or without a quote", format, s, got, want)
			}
		}
	})
}
