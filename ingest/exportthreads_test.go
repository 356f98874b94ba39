package ingest_test

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"testing"

	"github.com/simdex/simdex/daemon"
	"github.com/simdex/simdex/export"
	"github.com/simdex/simdex/ingest"
)

// TestExportMarksInclusiveMessages: a parent and the reply that quotes it
// in full share an EmailThreadID in the load file; only the reply is
// inclusive (reviewing it covers the parent), and the parent says no.
func TestExportMarksInclusiveMessages(t *testing.T) {
	cfg := daemon.DefaultConfig()
	cfg.DataDir = t.TempDir()
	eng, err := daemon.OpenEngine(context.Background(), &cfg, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Close()
	ctx := context.Background()
	body := strings.Repeat("Shipping of the spare turbine blades is delayed until the customs papers for Antwerp arrive. ", 5)
	parent := "From: Ann <ann@example.com>\r\nTo: Bo <bo@example.com>\r\nSubject: Blades\r\nDate: Mon, 2 Mar 2026 09:00:00 +0000\r\nMessage-ID: <p2@example.com>\r\n\r\n" + body + "\r\n"
	reply := "From: Bo <bo@example.com>\r\nTo: Ann <ann@example.com>\r\nSubject: Re: Blades\r\nDate: Mon, 2 Mar 2026 11:00:00 +0000\r\nMessage-ID: <r2@example.com>\r\nIn-Reply-To: <p2@example.com>\r\nReferences: <p2@example.com>\r\n\r\nThanks, I will tell the warehouse in Ghent today.\r\n\r\nOn Mon, 2 Mar 2026, Ann wrote:\r\n> " +
		strings.ReplaceAll(strings.TrimSpace(body), ". ", ".\r\n> ") + "\r\n"
	for _, m := range []struct{ key, eml string }{{"parent.eml", parent}, {"reply.eml", reply}} {
		if _, err := eng.Ingester.Ingest(ctx, ingest.Object{Key: m.key, Name: m.key, Idempotency: m.key, Body: strings.NewReader(m.eml)}); err != nil {
			t.Fatal(err)
		}
	}
	var buf bytes.Buffer
	if _, err := export.Export(ctx, eng.Index, &buf, export.Options{Format: export.JSONL}); err != nil {
		t.Fatal(err)
	}
	rows := map[string]map[string]any{}
	for _, line := range strings.Split(strings.TrimSpace(buf.String()), "\n") {
		var r map[string]any
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			t.Fatalf("%v: %s", err, line)
		}
		rows[r["Name"].(string)] = r
	}
	p, r := rows["parent.eml"], rows["reply.eml"]
	if p["EmailThreadID"] == "" || p["EmailThreadID"] != r["EmailThreadID"] {
		t.Fatalf("thread ids %q and %q: want one thread", p["EmailThreadID"], r["EmailThreadID"])
	}
	if p["Inclusive"] != false || r["Inclusive"] != true || r["InclusiveReason"] == "" {
		t.Fatalf("parent inclusive %q, reply %q (%q): want no, yes", p["Inclusive"], r["Inclusive"], r["InclusiveReason"])
	}
}
