package s3_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	natsgo "github.com/nats-io/nats.go"

	"github.com/simdex/simdex/connectors"
	"github.com/simdex/simdex/connectors/jetstream"
	"github.com/simdex/simdex/connectors/s3"
)

// offlineClient is a client for pure decoding tests; it never connects.
func offlineClient(t testing.TB, mod func(*s3.Config)) *s3.Client {
	t.Helper()
	cfg := s3.Config{Endpoint: "127.0.0.1:1", AccessKey: "k", SecretKey: "s", Bucket: "docs"}
	if mod != nil {
		mod(&cfg)
	}
	c, err := s3.NewClient(cfg)
	if err != nil {
		t.Fatalf("NewClient: %v", err)
	}
	return c
}

// rec builds one record as MinIO's NATS target writes it.
type rec struct {
	name, bucket, key, etag, version, time string
	size                                   int64
	meta                                   map[string]string
}

func (r rec) json() map[string]any {
	obj := map[string]any{"key": r.key, "sequencer": "18EA766D870EFA89"}
	if r.etag != "" {
		obj["eTag"] = r.etag
	}
	if r.size != 0 {
		obj["size"] = r.size
	}
	if r.version != "" {
		obj["versionId"] = r.version
	}
	if r.meta != nil {
		obj["userMetadata"] = r.meta
	}
	tm := r.time
	if tm == "" {
		tm = "2026-11-22T20:00:14.252Z"
	}
	return map[string]any{
		"eventVersion": "2.0", "eventSource": "minio:s3", "eventTime": tm, "eventName": r.name,
		"s3": map[string]any{"bucket": map[string]any{"name": r.bucket}, "object": obj},
	}
}

// natsBody wraps records as MinIO's NATS target does.
func natsBody(recs ...rec) []byte {
	rs := make([]map[string]any, len(recs))
	for i, r := range recs {
		rs[i] = r.json()
	}
	name, key := "", ""
	if len(recs) > 0 {
		name = recs[0].name
		k, _ := url.QueryUnescape(recs[0].key)
		key = recs[0].bucket + "/" + k
	}
	b, err := json.Marshal(map[string]any{"EventName": name, "Key": key, "Records": rs})
	if err != nil {
		panic(err)
	}
	return b
}

func put1(key string) rec {
	return rec{name: "s3:ObjectCreated:Put", bucket: "docs", key: url.QueryEscape(key), etag: "5d41402abc4b2a76b9719d911017c592", size: 5}
}

func TestDecodeRecords(t *testing.T) {
	c := offlineClient(t, nil)
	withMeta := put1("dir/a b+c%d é.txt")
	withMeta.etag = `"5d41402abc4b2a76b9719d911017c592"`
	withMeta.version = "fff55cac-dfcf-4b41-8a9e-380ffb61ad13"
	withMeta.meta = map[string]string{"X-Amz-Meta-Author": "Ada", "x-amz-meta-Case-Id": "C-17", "content-type": "text/plain", "Cache-Control": "no-cache"}
	evs, err := c.DecodeRecords(context.Background(), natsBody(withMeta))
	if err != nil || len(evs) != 1 {
		t.Fatalf("DecodeRecords = %v, %v", evs, err)
	}
	ev := evs[0]
	wantTime := time.Date(2026, 11, 22, 20, 0, 14, 252e6, time.UTC)
	if ev.Source != "s3:docs" || ev.Kind != connectors.Created || ev.Bucket != "docs" || ev.Key != "dir/a b+c%d é.txt" ||
		ev.VersionID != withMeta.version || ev.ETag != "5d41402abc4b2a76b9719d911017c592" || ev.Size != 5 ||
		!ev.Time.Equal(wantTime) || ev.Sequencer != "18EA766D870EFA89" || ev.Open == nil || ev.Done != nil {
		t.Errorf("event = %+v", ev)
	}
	if ev.ContentType != "text/plain" || len(ev.Metadata) != 2 || ev.Metadata["author"] != "Ada" || ev.Metadata["case-id"] != "C-17" {
		t.Errorf("content type %q, metadata %v", ev.ContentType, ev.Metadata)
	}

	// Every handled name, with and without the "s3:" prefix (AWS).
	for _, tc := range []struct {
		name string
		kind connectors.Kind
	}{
		{"s3:ObjectCreated:Put", connectors.Created},
		{"s3:ObjectCreated:Post", connectors.Created},
		{"s3:ObjectCreated:Copy", connectors.Created},
		{"s3:ObjectCreated:CompleteMultipartUpload", connectors.Created},
		{"ObjectCreated:Put", connectors.Created},
		{"s3:ObjectRemoved:Delete", connectors.Removed},
		{"s3:ObjectRemoved:DeleteMarkerCreated", connectors.Removed},
		{"ObjectRemoved:Delete", connectors.Removed},
	} {
		r := put1("k.txt")
		r.name = tc.name
		r.version = "null"
		if tc.kind == connectors.Removed {
			r.etag, r.size = "", 0
		}
		evs, err := c.DecodeRecords(context.Background(), natsBody(r))
		if err != nil || len(evs) != 1 || evs[0].Kind != tc.kind {
			t.Errorf("%s: %v, %v", tc.name, evs, err)
			continue
		}
		if evs[0].VersionID != "" {
			t.Errorf("%s: version %q, want \"\" for \"null\"", tc.name, evs[0].VersionID)
		}
		if tc.kind == connectors.Removed && (evs[0].Open != nil || evs[0].ETag != "" || evs[0].Size != -1) {
			t.Errorf("%s: removed event %+v", tc.name, evs[0])
		}
	}

	// A bare S3 notification, several records in order.
	bare, _ := json.Marshal(map[string]any{"Records": []any{put1("one").json(), put1("two").json()}})
	evs, err = c.DecodeRecords(context.Background(), bare)
	if err != nil || len(evs) != 2 || evs[0].Key != "one" || evs[1].Key != "two" {
		t.Errorf("bare records: %v, %v", evs, err)
	}

	// An empty record list decodes to nothing.
	if evs, err := c.DecodeRecords(context.Background(), []byte(`{"Records": []}`)); err != nil || len(evs) != 0 {
		t.Errorf("empty Records: %v, %v", evs, err)
	}
}

func TestDecodeRecordsSkips(t *testing.T) {
	c := offlineClient(t, func(cfg *s3.Config) { cfg.Prefix = "in/" })
	other := put1("in/x")
	other.bucket = "elsewhere"
	outside := put1("out/x")
	for _, tc := range []struct {
		what string
		r    rec
	}{
		{"another bucket", other},
		{"outside the prefix", outside},
	} {
		evs, err := c.DecodeRecords(context.Background(), natsBody(tc.r))
		if err != nil || len(evs) != 0 {
			t.Errorf("%s: %v, %v", tc.what, evs, err)
		}
	}
	for _, name := range []string{
		"s3:ObjectCreated:PutTagging", "s3:ObjectCreated:DeleteTagging", "s3:ObjectCreated:PutRetention",
		"s3:ObjectCreated:PutLegalHold", "s3:ObjectRemoved:NoOP", "s3:ObjectAccessed:Get", "s3:ObjectAccessed:Head",
		"s3:LifecycleDelMarkerExpiration:Delete", "s3:ObjectTransition:Complete", "s3:ObjectRestore:Completed",
		"s3:Replication:OperationFailedReplication", "s3:Scanner:ManyVersions", "s3:BucketCreated:*", "s3:Weird:New",
		"ObjectCreated:*",
	} {
		r := put1("in/x")
		r.name = name
		evs, err := c.DecodeRecords(context.Background(), natsBody(r))
		if err != nil || len(evs) != 0 {
			t.Errorf("%s: %v, %v, want ignored", name, evs, err)
		}
	}
	// A message mixing a handled record with skipped ones keeps the
	// handled one.
	evs, err := c.DecodeRecords(context.Background(), natsBody(other, put1("in/keep"), outside))
	if err != nil || len(evs) != 1 || evs[0].Key != "in/keep" {
		t.Errorf("mixed message: %v, %v", evs, err)
	}
}

func TestDecodeRecordsInvalid(t *testing.T) {
	c := offlineClient(t, nil)
	mod := func(f func(*rec)) []byte {
		r := put1("k.txt")
		f(&r)
		return natsBody(r)
	}
	for _, tc := range []struct {
		what string
		data []byte
	}{
		{"empty", nil},
		{"not JSON", []byte("this is not json")},
		{"truncated", natsBody(put1("k"))[:40]},
		{"JSON null", []byte("null")},
		{"JSON array", []byte(`[{"Records": []}]`)},
		{"no Records", []byte(`{"EventName": "s3:ObjectCreated:Put", "Key": "docs/k"}`)},
		{"Records not a list", []byte(`{"Records": {"eventName": "s3:ObjectCreated:Put"}}`)},
		{"record not an object", []byte(`{"Records": [42]}`)},
		{"size not a number", []byte(`{"Records": [{"eventName": "s3:ObjectCreated:Put", "s3": {"bucket": {"name": "docs"}, "object": {"key": "k", "size": "5"}}}]}`)},
		{"size fractional", []byte(`{"Records": [{"eventName": "s3:ObjectCreated:Put", "s3": {"bucket": {"name": "docs"}, "object": {"key": "k", "size": 1.5}}}]}`)},
		{"no eventName", mod(func(r *rec) { r.name = "" })},
		{"no bucket", mod(func(r *rec) { r.bucket = "" })},
		{"empty key", mod(func(r *rec) { r.key = "" })},
		{"bad escape", mod(func(r *rec) { r.key = "bad%zzescape" })},
		{"key not UTF-8", mod(func(r *rec) { r.key = "caf%E9" })},
		{"key too long", mod(func(r *rec) { r.key = strings.Repeat("k", 1025) })},
		{"bad eventTime", mod(func(r *rec) { r.time = "yesterday" })},
		{"negative size", mod(func(r *rec) { r.size = -5 })},
		{"created without eTag", mod(func(r *rec) { r.etag = "" })},
		{"one bad record among good ones", natsBody(put1("a"), rec{name: "s3:ObjectCreated:Put", bucket: "docs", key: "%%"}, put1("b"))},
	} {
		t.Run(tc.what, func(t *testing.T) {
			evs, err := c.DecodeRecords(context.Background(), tc.data)
			if err == nil {
				t.Fatalf("no error; events %+v", evs)
			}
			wantKind(t, tc.what, err, connectors.Invalid, connectors.ErrInvalid)
			if evs != nil {
				t.Errorf("events %v returned with the error", evs)
			}
		})
	}
}

// TestDecoderAdapter checks the jetstream.Decoder adapter.
func TestDecoderAdapter(t *testing.T) {
	c := offlineClient(t, nil)
	var d jetstream.Decoder = s3.Decoder{Client: c}
	evs, err := d.Decode(context.Background(), jetstream.Message{Subject: "minio.events", Header: natsgo.Header{}, Data: natsBody(put1("x y"))})
	if err != nil || len(evs) != 1 || evs[0].Key != "x y" {
		t.Errorf("Decode = %v, %v", evs, err)
	}
	_, err = d.Decode(context.Background(), jetstream.Message{Data: []byte("{")})
	if !errors.Is(err, connectors.ErrInvalid) {
		t.Errorf("Decode of garbage = %v, want ErrInvalid", err)
	}
}

// TestOversizeFromEvent: an event announcing an object over the limit is
// refused at Open without fetching (the client's endpoint is unreachable).
func TestOversizeFromEvent(t *testing.T) {
	c := offlineClient(t, func(cfg *s3.Config) { cfg.MaxObjectSize = 4 })
	evs, err := c.DecodeRecords(context.Background(), natsBody(put1("big.txt")))
	if err != nil || len(evs) != 1 {
		t.Fatalf("DecodeRecords = %v, %v", evs, err)
	}
	_, err = evs[0].Open(context.Background())
	wantKind(t, "open an oversize object", err, connectors.Permanent, s3.ErrTooLarge)
}

func TestConfigValidation(t *testing.T) {
	good := s3.Config{Endpoint: "127.0.0.1:9000", AccessKey: "k", SecretKey: "sekrit", Bucket: "docs"}
	c, err := s3.NewClient(good)
	if err != nil {
		t.Fatalf("good config: %v", err)
	}
	if got := c.Config(); got.Name != "s3:docs" || got.Mode != s3.ModeJetStream || got.MaxRetries != s3.DefaultMaxRetries || got.SettleTimeout != s3.DefaultSettleTimeout {
		t.Errorf("defaults: %+v", got)
	}
	if strings.Contains(good.String(), "sekrit") || strings.Contains(fmt.Sprint(good), "sekrit") {
		t.Errorf("String leaks the secret: %s", good)
	}
	for _, tc := range []struct {
		field string
		mod   func(*s3.Config)
	}{
		{"Endpoint", func(c *s3.Config) { c.Endpoint = "" }},
		{"Endpoint", func(c *s3.Config) { c.Endpoint = "http://127.0.0.1:9000" }},
		{"Endpoint", func(c *s3.Config) { c.Endpoint = "127.0.0.1:9000/path" }},
		{"AccessKey", func(c *s3.Config) { c.AccessKey = "" }},
		{"SecretKey", func(c *s3.Config) { c.SecretKey = "" }},
		{"Bucket", func(c *s3.Config) { c.Bucket = "" }},
		{"Bucket", func(c *s3.Config) { c.Bucket = "Not_A_Bucket" }},
		{"Mode", func(c *s3.Config) { c.Mode = "poll" }},
		{"MaxObjectSize", func(c *s3.Config) { c.MaxObjectSize = -1 }},
		{"MaxRetries", func(c *s3.Config) { c.MaxRetries = -2 }},
	} {
		cfg := good
		tc.mod(&cfg)
		_, err := s3.NewClient(cfg)
		if !errors.Is(err, s3.ErrInvalidConfig) || !strings.Contains(err.Error(), tc.field+":") {
			t.Errorf("%s: NewClient error %v, want ErrInvalidConfig naming the field", tc.field, err)
		}
	}
}

func FuzzDecodeRecords(f *testing.F) {
	f.Add(natsBody(put1("dir/a b+c%d é.txt")))
	f.Add(natsBody(rec{name: "s3:ObjectRemoved:DeleteMarkerCreated", bucket: "docs", key: "k", version: "v1"}))
	f.Add(natsBody(put1("a"), put1("b")))
	f.Add([]byte(`{"Records": []}`))
	f.Add([]byte(`{"Records": [{"eventName": "s3:ObjectCreated:Put", "s3": {"bucket": {"name": "docs"}, "object": {"key": "%"}}}]}`))
	f.Add([]byte("null"))
	c := offlineClient(f, nil)
	f.Fuzz(func(t *testing.T, data []byte) {
		evs, err := c.DecodeRecords(context.Background(), data)
		if err != nil {
			if !errors.Is(err, connectors.ErrInvalid) || evs != nil {
				t.Fatalf("error %v (events %v), want Invalid and no events", err, evs)
			}
			return
		}
		for _, ev := range evs {
			if ev.Bucket != "docs" || ev.Source != "s3:docs" || ev.Key == "" || !utf8.ValidString(ev.Key) || len(ev.Key) > 1024 {
				t.Fatalf("bad event %+v", ev)
			}
			if ev.VersionID == "null" || ev.Time.IsZero() {
				t.Fatalf("bad version %q or time %v", ev.VersionID, ev.Time)
			}
			switch ev.Kind {
			case connectors.Created:
				if ev.ETag == "" || ev.Open == nil || ev.Size < 0 {
					t.Fatalf("bad created event %+v", ev)
				}
			case connectors.Removed:
				if ev.ETag != "" || ev.Open != nil {
					t.Fatalf("bad removed event %+v", ev)
				}
			default:
				t.Fatalf("kind %v", ev.Kind)
			}
		}
	})
}

func BenchmarkDecodeRecords(b *testing.B) {
	c := offlineClient(b, nil)
	r := put1("contracts/2026/ACME master services agreement (signed).pdf")
	r.version = "fff55cac-dfcf-4b41-8a9e-380ffb61ad13"
	r.meta = map[string]string{"X-Amz-Meta-Author": "Ada", "content-type": "application/pdf"}
	data := natsBody(r)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		evs, err := c.DecodeRecords(context.Background(), data)
		if err != nil || len(evs) != 1 {
			b.Fatalf("DecodeRecords = %v, %v", evs, err)
		}
	}
}
