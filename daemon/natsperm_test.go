package daemon

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	natsjs "github.com/nats-io/nats.go/jetstream"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	natsconn "github.com/simdex/simdex/connectors/nats"
	"github.com/simdex/simdex/internal/miniotest"
	"github.com/simdex/simdex/internal/natstest"
)

// documentedNATSMarker precedes, in docs/deploy.md, the nats-server
// configuration whose permissions TestDocumentedNATSPermissions checks.
const documentedNATSMarker = "<!-- nats-server configuration: checked by TestDocumentedNATSPermissions -->"

// TestDocumentedNATSPermissions runs the daemon against a NATS server
// whose users are exactly docs/deploy.md's: with them, events are
// acknowledged (none redelivered), the backfill marker is written and a
// dead letter recorded, and nothing is refused; with the acknowledgement
// permission taken away, the refusal shows in /readyz, the log and the
// metric (issue 47, item 6).
func TestDocumentedNATSPermissions(t *testing.T) {
	t.Run("as documented", func(t *testing.T) {
		env := startPermissionsEnv(t, "")
		env.publishDocs(t)
		env.waitIndexed(t, "s3:records/records/seed.txt", "nats:docs/memo")
		waitFor(t, 30*time.Second, "the backfill marker", func() bool { return env.marked(t) })
		waitFor(t, 30*time.Second, "every message acknowledged and a dead letter", func() bool {
			info := env.consumer(t)
			return info.NumAckPending == 0 && info.NumPending == 0 && env.deadLetters(t) == 1
		})
		if info := env.consumer(t); info.NumRedelivered != 0 {
			t.Errorf("%d messages redelivered, want none", info.NumRedelivered)
		}
		if code, failing := readyz(t, env.url+"/readyz"); code != http.StatusOK {
			t.Errorf("/readyz answered %d naming %v, want 200", code, failing)
		}
		if n := metricValue(t, env.addr, `simdex_nats_async_errors_total{kind="permission"}`); n != 0 {
			t.Errorf("%v permission violations counted, want none", n)
		}
		if strings.Contains(env.logs.String(), "Permissions Violation") {
			t.Errorf("a permission was refused:\n%s", env.logs.String())
		}
	})
	t.Run("without $JS.ACK.>", func(t *testing.T) {
		env := startPermissionsEnv(t, "$JS.ACK.>")
		env.publishDocs(t)
		waitFor(t, 30*time.Second, "/readyz naming nats permissions", func() bool {
			code, failing := readyz(t, env.url+"/readyz")
			return code == http.StatusServiceUnavailable && slices.Contains(failing, "nats permissions")
		})
		if logs := env.logs.String(); !strings.Contains(logs, "NATS refused the daemon a permission") || !strings.Contains(logs, `$JS.ACK.SIMDEX_DOCS`) {
			t.Errorf("the log does not name the refused acknowledgement:\n%s", logs)
		}
		if n := metricValue(t, env.addr, `simdex_nats_async_errors_total{kind="permission"}`); n < 1 {
			t.Errorf("%v permission violations counted, want at least 1", n)
		}
	})
}

// permissionsEnv is a daemon on a NATS server with the documented users.
type permissionsEnv struct {
	nc         *nats.Conn // as the daemon's user
	addr, url  string
	logs       *logTap
	bucketName string
}

// startPermissionsEnv starts NATS with docs/deploy.md's users, less the
// publish permission drop ("" none), MinIO with one object, and a daemon
// backfilling it in listen mode and consuming simdex.docs.>.
func startPermissionsEnv(t *testing.T, drop string) *permissionsEnv {
	t.Helper()
	const password = "documented-permissions"
	t.Setenv(DefaultNATSPasswordEnv, password)
	t.Setenv("MINIO_NATS_PASSWORD", "unused-here")
	users := documentedNATSUsers(t)
	for _, u := range users {
		if u.Username == "simdex" && drop != "" {
			allow := u.Permissions.Publish.Allow
			if !slices.Contains(allow, drop) {
				t.Fatalf("the documented permissions have no %q to take away: %v", drop, allow)
			}
			u.Permissions.Publish.Allow = slices.DeleteFunc(slices.Clone(allow), func(s string) bool { return s == drop })
		}
	}
	ns := natstest.StartWith(t, func(o *server.Options) { o.Users = users })
	ms := miniotest.Start(t, miniotest.Options{})
	env := &permissionsEnv{bucketName: "records", logs: &logTap{t: t}}
	ms.MakeBucket(t, env.bucketName, true, false)
	r := &rig{ns: ns, minio: ms, mc: ms.Client(t), bucket: env.bucketName}
	r.put(t, "seed.txt", "a document the first start backfills")

	cfg := DefaultConfig()
	cfg.DataDir = t.TempDir()
	cfg.HTTP.Addr = "127.0.0.1:0"
	cfg.NATS.URL, cfg.NATS.User = ns.URL(), "simdex"
	cfg.Connectors.FS.Dirs = nil
	cfg.Index.Durability = "normal"
	cfg.Connectors.S3 = []S3SourceConfig{{
		Name: "records", Endpoint: ms.Endpoint(), Bucket: env.bucketName, Mode: "listen",
		AccessKeyEnv: "TEST_S3_ACCESS", SecretKeyEnv: "TEST_S3_SECRET", Backfill: true, Reconcile: "@every 1h",
	}}
	d := startDaemonWith(t, cfg, []string{"TEST_S3_ACCESS=" + ms.AccessKey(), "TEST_S3_SECRET=" + ms.SecretKey()}, slog.LevelInfo,
		func(d *Daemon) {
			d.logger = slog.New(slog.NewTextHandler(env.logs, &slog.HandlerOptions{Level: slog.LevelInfo}))
		})
	env.addr = d.Addr().String()
	env.url = "http://" + env.addr
	nc, err := nats.Connect(ns.URL(), nats.UserInfo("simdex", password))
	if err != nil {
		t.Fatalf("connect as simdex: %v", err)
	}
	t.Cleanup(nc.Close)
	env.nc = nc
	return env
}

// documentedNATSUsers returns the users of docs/deploy.md's nats-server
// configuration, its variables read from the environment.
func documentedNATSUsers(t *testing.T) []*server.User {
	t.Helper()
	doc, err := os.ReadFile(filepath.Join("..", "docs", "deploy.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, after, ok := strings.Cut(string(doc), documentedNATSMarker+"\n```conf\n")
	block, _, closed := strings.Cut(after, "```")
	if !ok || !closed {
		t.Fatalf("docs/deploy.md has no conf block after %q", documentedNATSMarker)
	}
	path := filepath.Join(t.TempDir(), "nats.conf")
	if err := os.WriteFile(path, []byte(block), 0o600); err != nil {
		t.Fatal(err)
	}
	opts, err := server.ProcessConfigFile(path)
	if err != nil {
		t.Fatalf("docs/deploy.md's nats-server configuration: %v", err)
	}
	if len(opts.Users) == 0 {
		t.Fatal("docs/deploy.md's nats-server configuration has no users")
	}
	return opts.Users
}

// publishDocs publishes a document and a reference to an unconfigured
// bucket (dead-lettered) as the daemon's user, each acknowledged by the
// stream: the daemon creates the stream as its connector starts, and a
// message published before that reaches no stream.
func (e *permissionsEnv) publishDocs(t *testing.T) {
	t.Helper()
	msg := nats.NewMsg("simdex.docs.memo")
	msg.Header.Set(natsconn.HeaderID, "memo")
	msg.Header.Set(natsconn.HeaderName, "memo.txt")
	msg.Data = []byte("a memo published to NATS, acknowledged once indexed")
	bad := nats.NewMsg("simdex.docs.elsewhere")
	bad.Header.Set(natsconn.HeaderID, "elsewhere")
	bad.Header.Set(natsconn.HeaderRef, natsconn.FormatRef("no-such-bucket", "x.txt", ""))
	publishToStream(t, e.nc, msg)
	publishToStream(t, e.nc, bad)
}

// publishToStream publishes m through JetStream until a stream takes it:
// the daemon creates its documents' stream as its connector starts, and a
// message published before that reaches no stream and is lost. The
// message id makes a retry stored once.
func publishToStream(t *testing.T, nc *nats.Conn, m *nats.Msg) {
	t.Helper()
	js, err := natsjs.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	m.Header.Set(nats.MsgIdHdr, m.Header.Get(natsconn.HeaderID))
	waitFor(t, 30*time.Second, "a stream to take "+m.Subject, func() bool {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		_, err := js.PublishMsg(ctx, m)
		return err == nil
	})
}

func (e *permissionsEnv) waitIndexed(t *testing.T, keys ...string) {
	t.Helper()
	for _, k := range keys {
		waitFor(t, 30*time.Second, "indexing of "+k, func() bool { return len(versionsOf(t, e.addr, k)) == 1 })
	}
}

func (e *permissionsEnv) js(t *testing.T) natsjs.JetStream {
	t.Helper()
	js, err := natsjs.New(e.nc)
	if err != nil {
		t.Fatal(err)
	}
	return js
}

// marked reports whether the backfill marker of the bucket is written.
func (e *permissionsEnv) marked(t *testing.T) bool {
	t.Helper()
	kv, err := e.js(t).KeyValue(context.Background(), stateBucket)
	if err != nil {
		return false
	}
	_, err = kv.Get(context.Background(), "backfill."+sanitiseKey("s3:"+e.bucketName))
	return err == nil
}

// consumer returns the state of the documents' durable consumer.
func (e *permissionsEnv) consumer(t *testing.T) *natsjs.ConsumerInfo {
	t.Helper()
	c, err := e.js(t).Consumer(context.Background(), "SIMDEX_DOCS", "simdex")
	if err != nil {
		t.Fatalf("consumer: %v", err)
	}
	return c.CachedInfo()
}

// deadLetters returns how many messages the dead-letter stream holds.
func (e *permissionsEnv) deadLetters(t *testing.T) uint64 {
	t.Helper()
	s, err := e.js(t).Stream(context.Background(), "DEADLETTER")
	if err != nil {
		return 0
	}
	return s.CachedInfo().State.Msgs
}

// logTap keeps what the daemon logs and passes it on to the test's log.
type logTap struct {
	t   testing.TB
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *logTap) Write(p []byte) (int, error) {
	l.mu.Lock()
	l.buf.Write(p)
	l.mu.Unlock()
	l.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

func (l *logTap) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

// TestNATSPermissionWindow: a refused permission fails the readiness
// check for natsDeniedWindow after the last refusal, then no longer;
// other asynchronous errors never do.
func TestNATSPermissionWindow(t *testing.T) {
	now := time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)
	e, err := newNATSErrors(prometheus.NewRegistry(), slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	e.now = func() time.Time { return now }
	e.handle(nil, nil, nats.ErrSlowConsumer)
	if err := e.check(context.Background()); err != nil {
		t.Fatalf("after a slow consumer: %v, want ready", err)
	}
	e.handle(nil, nil, fmt.Errorf("%w: Permissions Violation for Publish to \"$JS.ACK.X\"", nats.ErrPermissionViolation))
	now = now.Add(natsDeniedWindow)
	if err := e.check(context.Background()); !errors.Is(err, nats.ErrPermissionViolation) {
		t.Fatalf("within the window: %v, want the violation", err)
	}
	now = now.Add(time.Second)
	if err := e.check(context.Background()); err != nil {
		t.Fatalf("after the window: %v, want ready", err)
	}
	if n := testutil.ToFloat64(e.count.WithLabelValues("permission")); n != 1 {
		t.Errorf("permission count %v, want 1", n)
	}
}
