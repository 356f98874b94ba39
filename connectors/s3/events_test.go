package s3_test

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/minio/minio-go/v7"

	"github.com/simdex/simdex/connectors"
	"github.com/simdex/simdex/connectors/s3"
)

// awkwardKeys need escaping on their way through MinIO's NATS target.
var awkwardKeys = []string{
	"with space.txt",
	"plus+sign.txt",
	"percent%20literal.txt",
	"100%.txt",
	"dir/sub dir/deep/file.txt",
	"unicodé/naïve résumé.txt",
	"日本語/文書.txt",
	"question?mark&amp=.txt",
}

// want is an expected event.
type want struct {
	kind    connectors.Kind
	key     string
	version string
	etag    string
	body    []byte // for Created events: what Open must return
	gone    bool   // the version was deleted later: Open must fail
}

// TestJetStreamEvents drives a real MinIO publishing to a real JetStream
// stream and decodes the raw messages.
func TestJetStreamEvents(t *testing.T) {
	env := startNATSEnv(t)
	const vb, ub = "versioned", "plain"
	env.bucket(t, vb, true, false)
	env.bucket(t, ub, false, false)
	mc := env.ms.Client(t)
	vc := newClient(t, env.ms, vb, nil)
	uc := newClient(t, env.ms, ub, nil)

	var wants []want
	created := func(bucket, key string, body []byte, opts minio.PutObjectOptions) minio.UploadInfo {
		ui := put(t, mc, bucket, key, body, opts)
		wants = append(wants, want{kind: connectors.Created, key: key, version: ui.VersionID, etag: ui.ETag, body: body})
		return ui
	}
	for _, k := range awkwardKeys {
		created(vb, k, []byte("body of "+k), minio.PutObjectOptions{})
	}
	v1 := created(vb, "doc.txt", []byte("version one"), minio.PutObjectOptions{
		ContentType:  "text/plain",
		UserMetadata: map[string]string{"Author": "Ada", "Case-Id": "C-17"},
	})
	v2 := created(vb, "doc.txt", []byte("version two, longer"), minio.PutObjectOptions{})
	if v1.VersionID == v2.VersionID || v1.VersionID == "" {
		t.Fatalf("version ids %q and %q", v1.VersionID, v2.VersionID)
	}

	// Multipart: 6 MiB in 5 MiB parts.
	big := bytes.Repeat([]byte("0123456789abcdef"), 6<<20/16)
	created(vb, "big/multi part.bin", big, minio.PutObjectOptions{PartSize: 5 << 20, DisableContentSha256: true})

	// Copy of doc.txt's latest version.
	cp, err := mc.CopyObject(testContext(t), minio.CopyDestOptions{Bucket: vb, Object: "copy of doc.txt"},
		minio.CopySrcOptions{Bucket: vb, Object: "doc.txt"})
	if err != nil {
		t.Fatalf("copy: %v", err)
	}
	wants = append(wants, want{kind: connectors.Created, key: "copy of doc.txt", version: cp.VersionID, etag: cp.ETag, body: []byte("version two, longer")})

	// A delete without version id makes a delete marker; the event names
	// the marker.
	remove(t, mc, vb, "copy of doc.txt", "")
	vs, err := vc.Versions(testContext(t), "copy of doc.txt")
	if err != nil || len(vs) != 2 || !vs[0].IsDeleteMarker || !vs[0].IsLatest {
		t.Fatalf("Versions after delete marker = %+v, %v", vs, err)
	}
	wants = append(wants, want{kind: connectors.Removed, key: "copy of doc.txt", version: vs[0].VersionID})

	// Deleting one version permanently.
	remove(t, mc, vb, "plus+sign.txt", wants[1].version)
	wants[1].gone = true
	wants = append(wants, want{kind: connectors.Removed, key: "plus+sign.txt", version: wants[1].version})

	// Unversioned bucket: no version ids, never "null".
	u1 := created(ub, "a b+c.txt", []byte("plain one"), minio.PutObjectOptions{})
	remove(t, mc, ub, "a b+c.txt", "")
	wants[len(wants)-1].gone = true
	wants = append(wants, want{kind: connectors.Removed, key: "a b+c.txt"})
	if u1.VersionID != "" {
		t.Fatalf("unversioned upload has version %q", u1.VersionID)
	}

	msgs := env.messages(t, 1, len(wants))
	var got []connectors.Event
	for i, data := range msgs {
		evs, err := vc.DecodeRecords(context.Background(), data)
		if err != nil {
			t.Fatalf("message %d: DecodeRecords(%s): %v", i, vb, err)
		}
		uevs, err := uc.DecodeRecords(context.Background(), data)
		if err != nil {
			t.Fatalf("message %d: DecodeRecords(%s): %v", i, ub, err)
		}
		if len(evs)+len(uevs) != 1 {
			t.Fatalf("message %d decoded to %d + %d events, want exactly one: %s", i, len(evs), len(uevs), data)
		}
		got = append(got, append(evs, uevs...)...)
	}
	for i, w := range wants {
		ev := got[i]
		bucket := vb
		if i >= len(wants)-2 {
			bucket = ub
		}
		if ev.Kind != w.kind || ev.Key != w.key || ev.VersionID != w.version || ev.Bucket != bucket {
			t.Errorf("event %d = %s %s/%q@%q, want %s %s/%q@%q", i, ev.Kind, ev.Bucket, ev.Key, ev.VersionID, w.kind, bucket, w.key, w.version)
			continue
		}
		if ev.Source != "s3:"+bucket || ev.Time.IsZero() || ev.Sequencer == "" {
			t.Errorf("event %d: source %q time %v sequencer %q", i, ev.Source, ev.Time, ev.Sequencer)
		}
		if w.kind == connectors.Removed {
			if ev.ETag != "" || ev.Open != nil || ev.Size != -1 {
				t.Errorf("removed event %d has ETag %q, Open %v, Size %d", i, ev.ETag, ev.Open != nil, ev.Size)
			}
			continue
		}
		if ev.ETag != strings.Trim(w.etag, `"`) || ev.Size != int64(len(w.body)) {
			t.Errorf("event %d %q: ETag %q size %d, want %q %d", i, w.key, ev.ETag, ev.Size, w.etag, len(w.body))
		}
		if want := idemKey("s3:"+bucket, bucket, w.key, w.version, ev.ETag); ev.IdempotencyKey() != want {
			t.Errorf("event %d: IdempotencyKey %q, want %q", i, ev.IdempotencyKey(), want)
		}
		if w.gone {
			err := openErr(t, ev)
			wantKind(t, "open a deleted version", err, connectors.Permanent, connectors.ErrObjectMissing)
			continue
		}
		// Open twice: each call reads the version from the start.
		for range 2 {
			if b := read(t, ev); !bytes.Equal(b, w.body) {
				t.Errorf("event %d %q@%s: Open returned %d bytes %.40q, want %.40q", i, w.key, w.version, len(b), b, w.body)
			}
		}
	}

	// Metadata and content type of doc.txt v1.
	for _, ev := range got {
		if ev.Key == "doc.txt" && ev.VersionID == v1.VersionID {
			if ev.ContentType != "text/plain" || ev.Metadata["author"] != "Ada" || ev.Metadata["case-id"] != "C-17" || len(ev.Metadata) != 2 {
				t.Errorf("doc.txt v1: content type %q metadata %v", ev.ContentType, ev.Metadata)
			}
		}
	}
}

// TestOpenUnversionedSuperseded: on an unversioned bucket, the event of an
// overwritten object must not open the newer object.
func TestOpenUnversionedSuperseded(t *testing.T) {
	env := startNATSEnv(t)
	env.bucket(t, "plain", false, false)
	mc := env.ms.Client(t)
	c := newClient(t, env.ms, "plain", nil)
	put(t, mc, "plain", "note.txt", []byte("first"), minio.PutObjectOptions{})
	put(t, mc, "plain", "note.txt", []byte("second"), minio.PutObjectOptions{})
	var evs []connectors.Event
	for _, data := range env.messages(t, 1, 2) {
		e, err := c.DecodeRecords(context.Background(), data)
		if err != nil || len(e) != 1 {
			t.Fatalf("DecodeRecords = %v, %v", e, err)
		}
		evs = append(evs, e...)
	}
	if evs[0].IdempotencyKey() == evs[1].IdempotencyKey() {
		t.Fatal("an overwrite kept the idempotency key")
	}
	err := openErr(t, evs[0])
	wantKind(t, "open the overwritten object", err, connectors.Permanent, connectors.ErrObjectMissing, s3.ErrSuperseded)
	if b := read(t, evs[1]); string(b) != "second" {
		t.Errorf("latest event opens %q", b)
	}
}
