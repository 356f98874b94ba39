package daemon

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/nats-io/nats.go"

	"github.com/simdex/simdex/api"
	natsconn "github.com/simdex/simdex/connectors/nats"
	"github.com/simdex/simdex/index"
)

// An upload's metadata named as simdex's own fields, through real MinIO
// and real NATS (issue 47, item 4): x-amz-meta-deleted_at_source made the
// purge remove the document within a minute, again after every
// reconciliation, while the object stayed in the bucket; Simdex-Meta-
// thread_id and a later Simdex-Meta-date put a file into a real e-mail
// thread and made the real message non-inclusive. Now the document stays
// indexed through purges, reconciliations and a restart's backfill, joins
// no thread, and its metadata is its origin's, shown apart.
func TestUploadMetadataForgesNoSimdexField(t *testing.T) {
	r := newRig(t)
	dataDir := t.TempDir()
	cfg := r.config(t, dataDir)
	cfg.Pipeline.PurgeInterval = 100 * time.Millisecond
	d := startDaemon(t, cfg, r.env)
	addr := d.Addr().String()

	body := "FORGED. " + strings.Repeat("This upload claims to have been deleted at its source long ago. ", 12)
	forged := map[string]string{index.MetaDeletedAtSource: "2020-01-01T00:00:00Z", index.MetaDeletedAtSourceEvent: "forged"}
	if _, err := r.mc.PutObject(context.Background(), r.bucket, "forged.txt", strings.NewReader(body), int64(len(body)),
		minio.PutObjectOptions{ContentType: "text/plain", UserMetadata: forged}); err != nil {
		t.Fatal(err)
	}
	const key = "s3:records/records/forged.txt"
	waitFor(t, 30*time.Second, "the upload indexed", func() bool { return len(versionsOf(t, addr, key)) == 1 })
	stays := func(what string, d time.Duration) {
		t.Helper()
		for end := time.Now().Add(d); time.Now().Before(end); time.Sleep(100 * time.Millisecond) {
			if vs := versionsOf(t, addr, key); len(vs) != 1 {
				t.Fatalf("%s: %d documents under %s, want the upload to stay indexed", what, len(vs), key)
			}
		}
	}
	stays("purges and reconciliations", 4*time.Second) // 40 purges, 2 reconciliations
	doc := versionsOf(t, addr, key)[0]
	if _, ok := doc.Meta[index.MetaDeletedAtSource]; ok || doc.Origin[index.MetaDeletedAtSource] != "2020-01-01T00:00:00Z" {
		t.Fatalf("meta %v, origin %v: want the upload's metadata in origin alone", doc.Meta, doc.Origin)
	}
	threadForgedByNATS(t, r, addr)

	stopDaemon(t, d)
	d = startDaemon(t, cfg, r.env) // backfills the bucket
	addr = d.Addr().String()
	waitFor(t, 30*time.Second, "the restarted daemon", func() bool { return len(versionsOf(t, addr, key)) == 1 })
	stays("a restart's backfill and purges", 2*time.Second)
}

// threadForgedByNATS publishes a real e-mail and a file whose Simdex-Meta-
// headers name the real message's thread and a later date, its text the
// real message's and more: the real message's thread holds it alone,
// inclusive.
func threadForgedByNATS(t *testing.T, r *rig, addr string) {
	t.Helper()
	text := strings.Repeat("The board approves the sale of the Leiden warehouse to the tenant at the agreed price. ", 6)
	real := "From: Ann <ann@example.com>\r\nTo: Bo <bo@example.com>\r\nSubject: Warehouse\r\nMessage-ID: <w1@example.com>\r\n" +
		"Date: Tue, 03 Mar 2026 10:00:00 +0000\r\n\r\n" + text + "\r\n"
	nc := r.ns.Conn(t)
	publish := func(id, data string, header map[string]string) {
		msg := nats.NewMsg("simdex.docs.mail")
		msg.Header.Set(natsconn.HeaderID, id)
		for k, v := range header {
			msg.Header.Set(k, v)
		}
		msg.Data = []byte(data)
		publishToStream(t, nc, msg)
	}
	publish("real.eml", real, nil)
	var msg api.Document
	waitFor(t, 30*time.Second, "the real message indexed", func() bool {
		vs := versionsOf(t, addr, "nats:docs/real.eml")
		if len(vs) == 1 {
			msg = vs[0]
		}
		return len(vs) == 1
	})
	thread := msg.Meta[index.MetaThreadID]
	if thread == "" {
		t.Fatalf("real message's metadata %v: no thread", msg.Meta)
	}
	publish("upload.txt", text+"And a line of its own.", map[string]string{
		natsconn.HeaderMetaPrefix + index.MetaThreadID: thread, natsconn.HeaderMetaPrefix + index.MetaDate: "2099-01-01T00:00:00Z",
	})
	waitFor(t, 30*time.Second, "the upload indexed", func() bool { return len(versionsOf(t, addr, "nats:docs/upload.txt")) == 1 })
	up := versionsOf(t, addr, "nats:docs/upload.txt")[0]
	if up.Meta[index.MetaThreadID] != "" || up.Origin[index.MetaThreadID] != thread {
		t.Errorf("upload's meta %v, origin %v: want the thread in origin alone", up.Meta, up.Origin)
	}
	var th api.ThreadResponse
	if code := getJSON(t, addr, fmt.Sprintf("/api/v1/documents/%d/thread", msg.ID), &th); code != 200 {
		t.Fatalf("thread: status %d", code)
	}
	if len(th.Messages) != 1 || th.Messages[0].Document.ID != msg.ID || !th.Messages[0].Inclusive {
		t.Fatalf("thread %+v: want the real message alone, inclusive", th.Messages)
	}
}
