package s3_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"
	natsgo "github.com/nats-io/nats.go"
	natsjs "github.com/nats-io/nats.go/jetstream"
	"go.uber.org/goleak"

	"github.com/simdex/simdex/connectors"
	"github.com/simdex/simdex/connectors/s3"
	"github.com/simdex/simdex/internal/miniotest"
	"github.com/simdex/simdex/internal/natstest"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m,
		// Idle keep-alive connections of minio-go's per-client transports.
		goleak.IgnoreTopFunction("net/http.(*persistConn).readLoop"),
		goleak.IgnoreTopFunction("net/http.(*persistConn).writeLoop"),
	)
}

// The JetStream stream MinIO's NATS target publishes to in these tests.
const (
	eventStream  = "MINIO"
	eventSubject = "minio.events"
)

// testTimeout bounds each step that talks to a server.
const testTimeout = 30 * time.Second

func testContext(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	t.Cleanup(cancel)
	return ctx
}

// natsEnv is a NATS server with the event stream, and a MinIO server
// publishing every event of the buckets it is told about to it.
type natsEnv struct {
	ns *natstest.Server
	nc *natsgo.Conn
	js natsjs.JetStream
	ms *miniotest.Server
}

// startNATSEnv starts NATS with JetStream, creates the event stream and
// starts MinIO with its NATS target on, synchronous events and JetStream
// publishing.
func startNATSEnv(t testing.TB) *natsEnv {
	t.Helper()
	ns := natstest.Start(t)
	nc := ns.Conn(t)
	js, err := natsjs.New(nc)
	if err != nil {
		t.Fatalf("jetstream: %v", err)
	}
	if _, err := js.CreateStream(testContext(t), natsjs.StreamConfig{
		Name: eventStream, Subjects: []string{eventSubject}, Storage: natsjs.FileStorage,
	}); err != nil {
		t.Fatalf("create stream %s: %v", eventStream, err)
	}
	ms := miniotest.Start(t, miniotest.Options{
		NATSAddress: ns.URL(), NATSSubject: eventSubject, JetStream: true, SyncEvents: true,
	})
	return &natsEnv{ns: ns, nc: nc, js: js, ms: ms}
}

// bucket makes a bucket whose events go to the stream.
func (e *natsEnv) bucket(t testing.TB, name string, versioned, objectLock bool) {
	t.Helper()
	e.ms.MakeBucket(t, name, versioned, objectLock)
	e.ms.EnableNotifications(t, name)
}

// messages returns the data of every message in the event stream from
// sequence from on, waiting until there are at least n.
func (e *natsEnv) messages(t testing.TB, from uint64, n int) [][]byte {
	t.Helper()
	ctx := testContext(t)
	cons, err := e.js.OrderedConsumer(ctx, eventStream, natsjs.OrderedConsumerConfig{
		DeliverPolicy: natsjs.DeliverByStartSequencePolicy, OptStartSeq: from,
	})
	if err != nil {
		t.Fatalf("ordered consumer: %v", err)
	}
	var out [][]byte
	for len(out) < n {
		m, err := cons.Next(natsjs.FetchMaxWait(testTimeout))
		if err != nil {
			t.Fatalf("got %d of %d event messages: %v", len(out), n, err)
		}
		out = append(out, m.Data())
	}
	return out
}

// newClient returns a connector client for bucket on ms.
func newClient(t testing.TB, ms *miniotest.Server, bucket string, mod func(*s3.Config)) *s3.Client {
	t.Helper()
	cfg := s3.Config{
		Endpoint:  ms.Endpoint(),
		AccessKey: ms.AccessKey(),
		SecretKey: ms.SecretKey(),
		Bucket:    bucket,
	}
	if mod != nil {
		mod(&cfg)
	}
	c, err := s3.NewClient(cfg)
	if err != nil {
		t.Fatalf("NewClient: %v", err)
	}
	return c
}

// put uploads body under key and returns the upload's description.
func put(t testing.TB, mc *minio.Client, bucket, key string, body []byte, opts minio.PutObjectOptions) minio.UploadInfo {
	t.Helper()
	ui, err := mc.PutObject(testContext(t), bucket, key, bytes.NewReader(body), int64(len(body)), opts)
	if err != nil {
		t.Fatalf("put %s/%s: %v", bucket, key, err)
	}
	return ui
}

// remove deletes key (a delete marker on versioned buckets) or one version.
func remove(t testing.TB, mc *minio.Client, bucket, key, versionID string) {
	t.Helper()
	if err := mc.RemoveObject(testContext(t), bucket, key, minio.RemoveObjectOptions{VersionID: versionID}); err != nil {
		t.Fatalf("remove %s/%s@%s: %v", bucket, key, versionID, err)
	}
}

// read opens ev and returns its body.
func read(t testing.TB, ev connectors.Event) []byte {
	t.Helper()
	if ev.Open == nil {
		t.Fatalf("event %s %q has no Open", ev.Kind, ev.Key)
	}
	rc, err := ev.Open(testContext(t))
	if err != nil {
		t.Fatalf("open %q@%s: %v", ev.Key, ev.VersionID, err)
	}
	defer func() { _ = rc.Close() }()
	b, err := io.ReadAll(rc)
	if err != nil {
		t.Fatalf("read %q@%s: %v", ev.Key, ev.VersionID, err)
	}
	return b
}

// openErr opens ev, reads it whole, and returns the error, if any.
func openErr(t testing.TB, ev connectors.Event) error {
	t.Helper()
	rc, err := ev.Open(testContext(t))
	if err != nil {
		return err
	}
	defer func() { _ = rc.Close() }()
	_, err = io.Copy(io.Discard, rc)
	return err
}

// wantKind checks that err is a *connectors.Error of kind and matches
// every sentinel in is.
func wantKind(t testing.TB, what string, err error, kind connectors.ErrorKind, is ...error) {
	t.Helper()
	var ce *connectors.Error
	if !errors.As(err, &ce) {
		t.Fatalf("%s: error %v (%T) is not a *connectors.Error", what, err, err)
	}
	if ce.Kind != kind {
		t.Errorf("%s: kind %s, want %s (%v)", what, ce.Kind, kind, err)
	}
	for _, s := range is {
		if !errors.Is(err, s) {
			t.Errorf("%s: %v does not match %v", what, err, s)
		}
	}
}

// idemKey builds the idempotency key the connector must give a version.
func idemKey(source, bucket, key, version, etag string) string {
	return strings.Join([]string{source, bucket, key, version, etag}, "\x00")
}

// collect receives events until n have come, settling each with nil.
func collect(t testing.TB, ch <-chan connectors.Event, n int) []connectors.Event {
	t.Helper()
	var evs []connectors.Event
	for len(evs) < n {
		select {
		case ev := <-ch:
			ev.Settle(context.Background(), nil)
			evs = append(evs, ev)
		case <-time.After(testTimeout):
			t.Fatalf("got %d of %d events", len(evs), n)
		}
	}
	return evs
}

// startMinIO starts MinIO without a notification target.
func startMinIO(t testing.TB) *miniotest.Server {
	t.Helper()
	return miniotest.Start(t, miniotest.Options{})
}
