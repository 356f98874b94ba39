package ingest_test

import (
	"context"
	"maps"
	"strings"
	"testing"

	"github.com/simdex/simdex/extract"
	"github.com/simdex/simdex/index"
	"github.com/simdex/simdex/index/sqlite"
	"github.com/simdex/simdex/ingest"
)

// forged is origin metadata an uploader sends to set simdex's own fields.
func forged(thread string) map[string]string {
	return map[string]string{
		"custodian":                    "kim",
		index.MetaDeletedAtSource:      "2020-01-01T00:00:00Z",
		index.MetaDeletedAtSourceEvent: "forged",
		index.MetaThreadID:             thread,
		index.MetaDate:                 "2099-01-01T00:00:00Z",
	}
}

// An upload whose origin metadata names a real thread, a later date and
// a deletion at source, its text holding the real message's whole: it
// stays out of the thread, which keeps the real message inclusive, and
// its metadata is its Origin, apart from simdex's own fields (issue 47).
func TestOriginMetadataJoinsNoThread(t *testing.T) {
	eng := newEngine(t, true)
	st := eng.Store.(*sqlite.Store)
	ctx := context.Background()
	body := strings.Repeat("The board approves the sale of the Leiden warehouse to the tenant at the agreed price. ", 6)
	real := "From: Ann <ann@example.com>\r\nTo: Bo <bo@example.com>\r\nSubject: Warehouse\r\nMessage-ID: <w1@example.com>\r\n" +
		"Date: Tue, 03 Mar 2026 10:00:00 +0000\r\n\r\n" + body + "\r\n"
	if _, err := eng.Ingester.Ingest(ctx, ingest.Object{Key: "real.eml", Name: "real.eml", Body: strings.NewReader(real)}); err != nil {
		t.Fatal(err)
	}
	thread := stored(t, st, "real.eml").Meta[index.MetaThreadID]
	if thread == "" {
		t.Fatal("the real message has no thread")
	}
	upload := ingest.Object{Key: "upload.txt", Name: "upload.txt", Meta: forged(thread), Body: strings.NewReader(body + " And more besides.")}
	if _, err := eng.Ingester.Ingest(ctx, upload); err != nil {
		t.Fatal(err)
	}
	up := stored(t, st, "upload.txt")
	for _, k := range []string{index.MetaThreadID, index.MetaDate, index.MetaDeletedAtSource, index.MetaDeletedAtSourceEvent, "custodian"} {
		if v, ok := up.Meta[k]; ok {
			t.Errorf("upload's meta[%q] = %q: the origin's metadata became simdex's", k, v)
		}
	}
	if !maps.Equal(up.Origin, forged(thread)) {
		t.Errorf("upload's origin metadata %v, want %v", up.Origin, forged(thread))
	}
	th, err := eng.Index.Thread(ctx, thread)
	if err != nil {
		t.Fatal(err)
	}
	if len(th.Messages) != 1 || th.Messages[0].Record.Key != "real.eml" || !th.Messages[0].Inclusive {
		t.Fatalf("thread %+v: want the real message alone, inclusive", th.Messages)
	}
}

// HTML <meta> elements named as simdex's own fields, ingested: none
// becomes that field (issue 47).
func TestHTMLMetaIsNotSimdexs(t *testing.T) {
	ing, st := newIngester(t)
	page := `<html><head><title>Notice</title>
<meta name="deleted_at_source" content="2020-01-01T00:00:00Z">
<meta name="deleted_at_source_event" content="forged">
<meta name="thread_id" content="0123456789abcdef">
<meta name="date" content="2099-01-01T00:00:00Z">
<meta name="text_words" content="1">
<meta name="description" content="a notice to tenants">
</head><body><p>The lift on the east side is out of service until Friday for its yearly inspection.</p></body></html>`
	if _, err := ing.Ingest(context.Background(), ingest.Object{Key: "notice.html", Name: "notice.html", Body: strings.NewReader(page)}); err != nil {
		t.Fatal(err)
	}
	r := stored(t, st, "notice.html")
	for _, k := range []string{index.MetaDeletedAtSource, index.MetaDeletedAtSourceEvent, index.MetaThreadID, index.MetaDate} {
		if v, ok := r.Meta[k]; ok {
			t.Errorf("meta[%q] = %q: an HTML <meta> became simdex's field", k, v)
		}
	}
	if r.Meta[index.MetaWords] == "1" { // the index counts the text's words itself
		t.Errorf("meta[%q] = 1: an HTML <meta> became simdex's field", index.MetaWords)
	}
	if r.Meta["description"] != "a notice to tenants" {
		t.Errorf("meta %v: want the description kept", r.Meta)
	}
}

// An extracted property under one of simdex's own names that extraction
// does not set for that field is kept renamed; those it does set (the
// thread, the draft mark, the folder, References) fill their fields.
func TestExtractedReservedNamesRenamed(t *testing.T) {
	m := ingest.Metadata(extract.Metadata{Extra: map[string]string{
		index.MetaDeletedAtSource: "2020-01-01T00:00:00Z", index.MetaWords: "1", index.MetaDate: "tomorrow",
		extract.ExtraThreadID: "t1", extract.ExtraDraft: "true", extract.ExtraFolder: "Drafts", "keywords": "k",
	}})
	want := map[string]string{
		index.MetaRenamedPrefix + index.MetaDeletedAtSource: "2020-01-01T00:00:00Z",
		index.MetaRenamedPrefix + index.MetaWords:           "1",
		index.MetaRenamedPrefix + index.MetaDate:            "tomorrow",
		index.MetaThreadID:                                  "t1", index.MetaDraft: "true", index.MetaFolder: "Drafts", "keywords": "k",
	}
	if !maps.Equal(m, want) {
		t.Errorf("metadata %v, want %v", m, want)
	}
}
