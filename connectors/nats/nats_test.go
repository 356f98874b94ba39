package nats_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	natsgo "github.com/nats-io/nats.go"
	natsjs "github.com/nats-io/nats.go/jetstream"
	"go.uber.org/goleak"

	"github.com/simdex/simdex/connectors"
	"github.com/simdex/simdex/connectors/connectortest"
	"github.com/simdex/simdex/connectors/jetstream"
	"github.com/simdex/simdex/connectors/nats"
	"github.com/simdex/simdex/internal/natstest"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

const (
	sourceName = "nats:docs"
	subject    = "docs.in"
)

func sourceConfig() nats.Config {
	return nats.Config{Config: jetstream.Config{
		Name:          sourceName,
		Stream:        "DOCS",
		Subjects:      []string{"docs.>"},
		CreateStream:  true,
		Durable:       "simdex",
		AckWait:       time.Second,
		Backoff:       []time.Duration{50 * time.Millisecond},
		MaxAckPending: 64,
	}}
}

// harness runs the conformance suite with document messages on a fresh
// embedded server per subtest.
type harness struct{}

func (harness) New(t *testing.T) connectortest.Origin { return newOrigin(t) }

// newOrigin starts a server and creates the DOCS stream.
func newOrigin(t testing.TB) *origin {
	srv := natstest.Start(t)
	nc := srv.Conn(t)
	js, err := natsjs.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := js.CreateStream(ctx, natsjs.StreamConfig{Name: "DOCS", Subjects: []string{"docs.>"}, Storage: natsjs.FileStorage}); err != nil {
		t.Fatalf("create stream: %v", err)
	}
	return &origin{nc: nc, js: js}
}

type origin struct {
	nc *natsgo.Conn
	js natsjs.JetStream
}

func (o *origin) Source(t *testing.T) connectors.Source {
	src, err := nats.New(o.nc, sourceConfig(), nil)
	if err != nil {
		t.Fatalf("nats.New: %v", err)
	}
	return src
}

func (o *origin) publish(t testing.TB, msg *natsgo.Msg) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := o.js.PublishMsg(ctx, msg); err != nil {
		t.Fatalf("publish: %v", err)
	}
}

func (o *origin) Put(t *testing.T, key string, body []byte, meta map[string]string) {
	msg := natsgo.NewMsg(subject)
	msg.Data = body
	msg.Header.Set(nats.HeaderID, key)
	for k, v := range meta {
		if k == connectortest.ContentTypeKey {
			msg.Header.Set(nats.HeaderContentType, v)
			continue
		}
		msg.Header.Set(nats.HeaderMetaPrefix+k, v)
	}
	o.publish(t, msg)
}

func (o *origin) Delete(t *testing.T, key string) {
	msg := natsgo.NewMsg(subject)
	msg.Header.Set(nats.HeaderID, key)
	msg.Header.Set(nats.HeaderOp, nats.OpDelete)
	o.publish(t, msg)
}

// Garbage publishes a document with no Simdex-Id.
func (o *origin) Garbage(t *testing.T) {
	msg := natsgo.NewMsg(subject)
	msg.Data = []byte("who am I?")
	o.publish(t, msg)
}

func (o *origin) DeadLetters(t *testing.T) int {
	dls, err := jetstream.ListDeadLetters(context.Background(), o.nc, 0)
	if err != nil {
		t.Fatalf("ListDeadLetters: %v", err)
	}
	n := 0
	for _, dl := range dls {
		if dl.Source == sourceName {
			n++
		}
	}
	return n
}

func (o *origin) Redelivers() bool              { return true }
func (o *origin) KeepsMetadata() bool           { return true }
func (o *origin) RedeliveryWait() time.Duration { return 2 * time.Second }

func TestConformance(t *testing.T) {
	connectortest.Run(t, harness{})
}

// memFetcher is an in-memory object store standing in for the S3 adapter.
type memFetcher map[string]string // "bucket/key@version" -> body

func (f memFetcher) Fetch(_ context.Context, bucket, key, version string) (io.ReadCloser, nats.ObjectInfo, error) {
	body, ok := f[bucket+"/"+key+"@"+version]
	if !ok {
		return nil, nats.ObjectInfo{}, &connectors.Error{Op: "fetch", Key: key, Kind: connectors.Permanent,
			Err: connectors.ErrObjectMissing}
	}
	return io.NopCloser(strings.NewReader(body)), nats.ObjectInfo{Size: int64(len(body)), VersionID: version}, nil
}

func message(data string, hdr ...string) jetstream.Message {
	h := natsgo.Header{}
	for i := 0; i+1 < len(hdr); i += 2 {
		h.Add(hdr[i], hdr[i+1])
	}
	return jetstream.Message{Subject: subject, Header: h, Data: []byte(data), Stream: "DOCS", Sequence: 42, Delivered: 1,
		Time: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)}
}

func decodeOne(t *testing.T, d *nats.Decoder, m jetstream.Message) connectors.Event {
	t.Helper()
	evs, err := d.Decode(context.Background(), m)
	if err != nil {
		t.Fatalf("Decode: %v", err)
	}
	if len(evs) != 1 {
		t.Fatalf("Decode returned %d events", len(evs))
	}
	return evs[0]
}

func body(t *testing.T, ev connectors.Event) string {
	t.Helper()
	rc, err := ev.Open(context.Background())
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	defer func() { _ = rc.Close() }()
	b, err := io.ReadAll(rc)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestDecodeDocument(t *testing.T) {
	d := nats.NewDecoder(sourceName, 0, nil)
	ev := decodeOne(t, d, message("hello world",
		"Simdex-Id", "contracts/2026/acme.txt",
		"Simdex-Name", "ACME contract",
		"Content-Type", "text/plain; charset=utf-8",
		"Simdex-Version", "v7",
		"Simdex-Meta-Owner", "legal",
		"simdex-meta-Case", "C-17", // header names match case-insensitively
	))
	if ev.Source != sourceName || ev.Kind != connectors.Created || ev.Key != "contracts/2026/acme.txt" || ev.Bucket != "" {
		t.Errorf("event = %+v", ev)
	}
	if ev.VersionID != "v7" || ev.Size != 11 || ev.ContentType != "text/plain; charset=utf-8" || len(ev.ETag) != 64 {
		t.Errorf("version %q size %d type %q etag %q", ev.VersionID, ev.Size, ev.ContentType, ev.ETag)
	}
	want := map[string]string{"Owner": "legal", "Case": "C-17", nats.HeaderName: "ACME contract"}
	if len(ev.Metadata) != len(want) {
		t.Errorf("Metadata = %v, want %v", ev.Metadata, want)
	}
	for k, v := range want {
		if ev.Metadata[k] != v {
			t.Errorf("Metadata[%q] = %q, want %q", k, ev.Metadata[k], v)
		}
	}
	if !ev.Time.Equal(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)) {
		t.Errorf("Time = %v", ev.Time)
	}
	for range 2 {
		if got := body(t, ev); got != "hello world" {
			t.Errorf("body = %q", got)
		}
	}
}

func TestDecodeDefaultsAndDelete(t *testing.T) {
	d := nats.NewDecoder(sourceName, 0, nil)
	ev := decodeOne(t, d, message("x", "Simdex-Id", "a"))
	if ev.VersionID != "42" || ev.Metadata != nil || ev.ContentType != "" {
		t.Errorf("defaults: %+v", ev)
	}
	del := decodeOne(t, d, message("", "Simdex-Id", "a", "Simdex-Op", "DELETE"))
	if del.Kind != connectors.Removed || del.Key != "a" || del.Open != nil || del.Size != -1 || del.ETag != "" {
		t.Errorf("delete: %+v", del)
	}
	if del.IdempotencyKey() == ev.IdempotencyKey() {
		t.Error("delete and create share an idempotency key")
	}
	delV := decodeOne(t, d, message("", "Simdex-Id", "a", "Simdex-Op", "delete", "Simdex-Version", "v1"))
	if delV.VersionID != "v1" {
		t.Errorf("delete version = %q", delV.VersionID)
	}
}

func TestDecodeReference(t *testing.T) {
	fetch := memFetcher{"inbox/dir/a file+b%.pdf@v9": "pdf bytes", "inbox/k@": "latest"}
	d := nats.NewDecoder(sourceName, 0, fetch)
	ref := nats.FormatRef("inbox", "dir/a file+b%.pdf", "v9")
	if ref != "s3://inbox/dir/a%20file+b%25.pdf?versionId=v9" {
		t.Errorf("FormatRef = %q", ref)
	}
	ev := decodeOne(t, d, message("", "Simdex-Ref", ref, "Content-Type", "application/pdf", "Simdex-Meta-Case", "C-1"))
	if ev.Bucket != "inbox" || ev.Key != "dir/a file+b%.pdf" || ev.VersionID != "v9" || ev.Size != -1 ||
		ev.ContentType != "application/pdf" || ev.Metadata["Case"] != "C-1" {
		t.Errorf("event = %+v", ev)
	}
	if got := body(t, ev); got != "pdf bytes" {
		t.Errorf("body = %q", got)
	}
	latest := decodeOne(t, d, message("", "Simdex-Ref", "s3://inbox/k", "Simdex-Id", "my-id"))
	if latest.Key != "my-id" || latest.VersionID != "42" || body(t, latest) != "latest" {
		t.Errorf("latest = %+v", latest)
	}
	missing := decodeOne(t, d, message("", "Simdex-Ref", "s3://inbox/nope"))
	_, err := missing.Open(context.Background())
	if !errors.Is(err, connectors.ErrObjectMissing) || !errors.Is(err, connectors.ErrPermanent) || !strings.Contains(err.Error(), "s3://inbox/nope") {
		t.Errorf("Open of missing object: %v", err)
	}
	del := decodeOne(t, d, message("", "Simdex-Ref", ref, "Simdex-Op", "delete"))
	if del.Kind != connectors.Removed || del.Bucket != "inbox" || del.VersionID != "v9" || del.Open != nil {
		t.Errorf("delete = %+v", del)
	}
	// A delete needs no fetcher.
	if del := decodeOne(t, nats.NewDecoder(sourceName, 0, nil), message("", "Simdex-Ref", ref, "Simdex-Op", "delete")); del.Kind != connectors.Removed {
		t.Errorf("delete without fetcher = %+v", del)
	}
}

func TestDecodeBadInput(t *testing.T) {
	cases := []struct {
		name  string
		fetch nats.Fetcher
		msg   jetstream.Message
		want  string
	}{
		{"missing id", nil, message("body"), "missing Simdex-Id"},
		{"blank id", nil, message("body", "Simdex-Id", "  "), "missing Simdex-Id"},
		{"id not utf-8", nil, message("body", "Simdex-Id", "a\xffb"), "not valid UTF-8"},
		{"id with NUL", nil, message("body", "Simdex-Id", "a\x00b"), "NUL"},
		{"id too long", nil, message("body", "Simdex-Id", strings.Repeat("k", 1025)), "limit"},
		{"version with NUL", nil, message("body", "Simdex-Id", "a", "Simdex-Version", "v\x001"), "NUL"},
		{"unknown op", nil, message("body", "Simdex-Id", "a", "Simdex-Op", "archive"), `unknown Simdex-Op "archive"`},
		{"payload too large", nil, message(strings.Repeat("x", 101), "Simdex-Id", "a"), "exceeds the 100-byte limit"},
		{"empty meta name", nil, message("b", "Simdex-Id", "a", "Simdex-Meta-", "v"), "names no metadata key"},
		{"meta forges the reference", memFetcher{}, message("b", "Simdex-Id", "a", "Simdex-Meta-Simdex-Ref", "s3://other/secret"), "connector's own"},
		{"meta forges the name", nil, message("b", "Simdex-Id", "a", "Simdex-Meta-simdex-name", "x"), "connector's own"},
		{"ref without fetcher", nil, message("", "Simdex-Ref", "s3://bucket/key"), "no object store is configured"},
		{"ref not s3", memFetcher{}, message("", "Simdex-Ref", "https://bucket/key"), "want s3://bucket/key"},
		{"ref empty", memFetcher{}, message("", "Simdex-Ref", ""), "want s3://bucket/key"},
		{"ref without key", memFetcher{}, message("", "Simdex-Ref", "s3://bucket"), "no object key"},
		{"ref with empty key", memFetcher{}, message("", "Simdex-Ref", "s3://bucket/"), "no object key"},
		{"ref bad bucket", memFetcher{}, message("", "Simdex-Ref", "s3://Bad_Bucket/key"), "bucket"},
		{"ref short bucket", memFetcher{}, message("", "Simdex-Ref", "s3://ab/key"), "3 to 63"},
		{"ref bad escape", memFetcher{}, message("", "Simdex-Ref", "s3://bucket/a%zz"), "invalid URL escape"},
		{"ref escaped NUL", memFetcher{}, message("", "Simdex-Ref", "s3://bucket/a%00"), "NUL"},
		{"ref unknown query", memFetcher{}, message("", "Simdex-Ref", "s3://bucket/key?acl=1"), `unexpected query parameter "acl"`},
		{"ref two versions", memFetcher{}, message("", "Simdex-Ref", "s3://bucket/key?versionId=1&versionId=2"), "only one versionId"},
		{"ref with payload", memFetcher{}, message("data", "Simdex-Ref", "s3://bucket/key"), "must be empty"},
		{"ref with bad id", memFetcher{}, message("", "Simdex-Ref", "s3://bucket/key", "Simdex-Id", "\xff"), "not valid UTF-8"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			d := nats.NewDecoder(sourceName, 100, tc.fetch)
			evs, err := d.Decode(context.Background(), tc.msg)
			if err == nil {
				t.Fatalf("Decode = %+v, want error", evs)
			}
			var cerr *connectors.Error
			if !errors.As(err, &cerr) || !errors.Is(err, connectors.ErrInvalid) || cerr.Source != sourceName {
				t.Errorf("error %v (%T) is not an Invalid *connectors.Error from %s", err, err, sourceName)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %q does not mention %q", err, tc.want)
			}
		})
	}
	if _, err := nats.New(&natsgo.Conn{}, nats.Config{Config: sourceConfig().Config, MaxPayload: -1}, nil); !errors.Is(err, jetstream.ErrInvalidConfig) {
		t.Errorf("negative MaxPayload: %v", err)
	}
}

// TestReferencesEndToEnd sends references through a real server: one is
// fetched, one cannot be (no fetcher) and is dead-lettered with a clear
// error, and an oversized document is dead-lettered too.
func TestReferencesEndToEnd(t *testing.T) {
	for _, withFetcher := range []bool{true, false} {
		t.Run(map[bool]string{true: "fetcher", false: "no fetcher"}[withFetcher], func(t *testing.T) {
			o := newOrigin(t)
			cfg := sourceConfig()
			cfg.MaxPayload = 1 << 10
			var fetch nats.Fetcher
			if withFetcher {
				fetch = memFetcher{"inbox/scan 1.pdf@v1": "scanned"}
			}
			src, err := nats.New(o.nc, cfg, fetch)
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithCancel(context.Background())
			out := make(chan connectors.Event, 1)
			done := make(chan error, 1)
			go func() { done <- src.Run(ctx, out) }()
			defer func() { cancel(); <-done }()

			ref := natsgo.NewMsg(subject)
			ref.Header.Set(nats.HeaderRef, nats.FormatRef("inbox", "scan 1.pdf", "v1"))
			o.publish(t, ref)
			big := natsgo.NewMsg(subject)
			big.Header.Set(nats.HeaderID, "big.txt")
			big.Data = bytes.Repeat([]byte("x"), 2<<10)
			o.publish(t, big)
			o.Put(t, "small.txt", []byte("small"), nil)

			if withFetcher {
				ev := <-out
				if ev.Bucket != "inbox" || ev.Key != "scan 1.pdf" || body(t, ev) != "scanned" {
					t.Fatalf("reference event = %+v", ev)
				}
				// The reference is kept with the document, to read it again.
				if got := ev.Metadata[nats.HeaderRef]; got != nats.FormatRef("inbox", "scan 1.pdf", "v1") {
					t.Errorf("reference event's metadata %s = %q", nats.HeaderRef, got)
				}
				ev.Done(ctx, nil)
			}
			ev := <-out
			if ev.Key != "small.txt" {
				t.Fatalf("got %q, want small.txt", ev.Key)
			}
			ev.Done(ctx, nil)
			var dls []jetstream.DeadLetter
			deadline := time.Now().Add(10 * time.Second)
			want := map[bool]int{true: 1, false: 2}[withFetcher]
			for len(dls) < want && time.Now().Before(deadline) {
				time.Sleep(20 * time.Millisecond)
				if dls, err = jetstream.ListDeadLetters(ctx, o.nc, 0); err != nil {
					t.Fatal(err)
				}
			}
			if len(dls) != want {
				t.Fatalf("dead letters = %d, want %d", len(dls), want)
			}
			var errs []string
			for _, dl := range dls {
				errs = append(errs, dl.Error)
			}
			all := strings.Join(errs, "\n")
			if !strings.Contains(all, "payload of 2048 bytes exceeds the 1024-byte limit") {
				t.Errorf("dead-letter errors %q lack the size error", all)
			}
			if !withFetcher && !strings.Contains(all, "no object store is configured") {
				t.Errorf("dead-letter errors %q lack the missing-fetcher error", all)
			}
		})
	}
}
