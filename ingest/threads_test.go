package ingest_test

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/simdex/simdex/index"
	"github.com/simdex/simdex/ingest"
)

// TestReplyWithoutHeadersJoinsItsParentsThread: a reply whose client
// stripped In-Reply-To and References, and changed the subject, is filed
// in the thread of the message its quoted text comes from, found in the
// index, not in a thread of its own.
func TestReplyWithoutHeadersJoinsItsParentsThread(t *testing.T) {
	ing, st := newIngester(t)
	ctx := context.Background()
	body := strings.Repeat("The quarterly budget for the Rotterdam office moves to the shared ledger from March onwards. ", 6)
	parent := "From: Ann <ann@example.com>\r\nTo: Bo <bo@example.com>\r\nSubject: Budget\r\nMessage-ID: <p1@example.com>\r\n\r\n" + body + "\r\n"
	quoted := "> " + strings.ReplaceAll(strings.TrimSpace(body), ". ", ".\r\n> ")
	reply := "From: Bo <bo@example.com>\r\nTo: Ann <ann@example.com>\r\nSubject: changed plans\r\n\r\nAgreed, with one change to the dates.\r\n\r\nOn Mon, Ann wrote:\r\n" + quoted + "\r\n"
	for key, eml := range map[string]string{"parent.eml": parent} {
		if _, err := ing.Ingest(ctx, ingest.Object{Key: key, Name: key, Idempotency: key, Body: strings.NewReader(eml)}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := ing.Ingest(ctx, ingest.Object{Key: "reply.eml", Name: "reply.eml", Idempotency: "reply.eml", Body: strings.NewReader(reply)}); err != nil {
		t.Fatal(err)
	}
	p, r := stored(t, st, "parent.eml"), stored(t, st, "reply.eml")
	if p.Meta[index.MetaThreadID] == "" || r.Meta[index.MetaThreadID] != p.Meta[index.MetaThreadID] {
		t.Fatalf("thread of the parent %q, of the reply %q: want one thread", p.Meta[index.MetaThreadID], r.Meta[index.MetaThreadID])
	}
}

// TestArchiveOfGoodMembersIsNoFailure: stats counted archive.zip as failed
// ("empty text": it has no text of its own) although its member was
// indexed; a container whose members were stored is no failure, while a
// member that cannot be read still is.
func TestArchiveOfGoodMembersIsNoFailure(t *testing.T) {
	ing, st := newIngester(t)
	ctx := context.Background()
	for key, members := range map[string]map[string]string{
		"archive.zip": {"memo.txt": strings.Repeat("The canteen closes early on Friday for the summer party. ", 4)},
		"broken.zip":  {"empty.txt": ""},
	} {
		if _, err := ing.Ingest(ctx, ingest.Object{Key: key, Name: key, Idempotency: key, Body: bytes.NewReader(zipOf(t, members))}); err != nil {
			t.Fatal(err)
		}
	}
	stats, err := st.Stats(ctx)
	if err != nil {
		t.Fatal(err)
	}
	// broken.zip's empty member is the one failure: the archives were
	// read, and their members stored.
	if stats.Documents != 4 || stats.Failed != 1 {
		t.Fatalf("stats %+v: want 4 documents, 1 failed (the empty member)", stats)
	}
}
