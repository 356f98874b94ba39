package notifier

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"errors"
	"io"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	gosmtp "github.com/emersion/go-smtp"
	"github.com/nats-io/nats.go"

	"github.com/simdex/simdex/internal/natstest"
)

// memOutbox is an in-memory Outbox for the unit tests of routing and
// retries; notifier/outboxtest checks the real outboxes (notifier/sqlite,
// notifier/postgres) against the same contract.
type memOutbox struct {
	mu     sync.Mutex
	alerts map[string]Alert
	ds     []*Delivery
	pruned []time.Time // the cuts Prune was called with
}

func newMemOutbox() *memOutbox { return &memOutbox{alerts: map[string]Alert{}} }

func (m *memOutbox) Enqueue(_ context.Context, a Alert, due map[string]time.Time) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.alerts[a.ID]; !ok {
		m.alerts[a.ID] = a
	}
	for ch, at := range due {
		dup := false
		for _, d := range m.ds {
			dup = dup || (d.AlertID == a.ID && d.Channel == ch)
		}
		if !dup {
			m.ds = append(m.ds, &Delivery{ID: int64(len(m.ds) + 1), AlertID: a.ID, Channel: ch, Status: StatusPending, NextAttempt: at, Created: at})
		}
	}
	return nil
}

func (m *memOutbox) Claim(_ context.Context, now time.Time, lease time.Duration, limit int) ([]Claimed, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []Claimed
	for _, d := range m.ds {
		if d.Status == StatusPending && !d.NextAttempt.After(now) && len(out) < limit {
			out = append(out, Claimed{Delivery: *d, Alert: m.alerts[d.AlertID]})
			d.NextAttempt = now.Add(lease)
		}
	}
	return out, nil
}

func (m *memOutbox) each(ids []int64, f func(*Delivery)) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, id := range ids {
		if id < 1 || int(id) > len(m.ds) {
			return ErrNotFound
		}
		f(m.ds[id-1])
	}
	return nil
}

func (m *memOutbox) Delivered(_ context.Context, ids []int64, at time.Time) error {
	return m.each(ids, func(d *Delivery) { d.Status, d.DeliveredAt = StatusDelivered, at; d.Attempts++ })
}

func (m *memOutbox) Retry(_ context.Context, ids []int64, reason string, next time.Time, final bool) error {
	return m.each(ids, func(d *Delivery) {
		d.Attempts++
		d.LastError, d.NextAttempt = reason, next
		if final {
			d.Status = StatusFailed
		}
	})
}

func (m *memOutbox) Requeue(_ context.Context, ids []int64, now time.Time) error {
	return m.each(ids, func(d *Delivery) { d.Status, d.Attempts, d.NextAttempt = StatusPending, 0, now })
}

// Prune records its cuts and deletes nothing: the stores' conformance
// suite (outboxtest) tests what pruning deletes.
func (m *memOutbox) Prune(_ context.Context, before time.Time, _ int) (int, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.pruned = append(m.pruned, before)
	return 0, nil
}

func (m *memOutbox) List(_ context.Context, status string, _ int) ([]Delivery, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []Delivery
	for _, d := range m.ds {
		if status == "" || d.Status == status {
			out = append(out, *d)
		}
	}
	return out, nil
}

// clock is a settable test clock.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

func testAlert(id string) Alert {
	return Alert{ID: id, Kind: KindHoldMatch, Matter: "acme-v-globex", Document: 42, Name: "contracts/msa v7.pdf",
		Source: "s3:contracts", Summary: "near-copy of a held document", Evidence: json.RawMessage(`{"resemblance":0.91}`),
		Created: time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)}
}

func webhookConfig(url string) Config {
	cfg := testConfig()
	cfg.Channels = []ChannelConfig{{Name: "legal", Type: TypeWebhook, URL: url, SecretEnv: "TEST_WEBHOOK_SECRET"}}
	cfg.Routes = []Route{{Channels: []string{"legal"}}}
	return cfg
}

// TestWebhookSignedAndRetried: a receiver that fails twice gets the alert
// on the third attempt, after the backoff; every call is signed.
func TestWebhookSignedAndRetried(t *testing.T) {
	t.Setenv("TEST_WEBHOOK_SECRET", "s3cret")
	var calls atomic.Int32
	var bad atomic.Value
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if err := Verify([]byte("s3cret"), r.Header, body, time.Now(), time.Minute); err != nil {
			bad.Store(err.Error())
		}
		if calls.Add(1) <= 2 {
			http.Error(w, "busy", http.StatusServiceUnavailable)
			return
		}
		var a Alert
		if err := json.Unmarshal(body, &a); err != nil || a.ID != "flag-1" || r.Header.Get(HeaderAlert) != "flag-1" {
			bad.Store("body " + string(body))
		}
	}))
	defer srv.Close()
	clk := &clock{t: time.Now()}
	ob := newMemOutbox()
	n, err := New(Options{Config: webhookConfig(srv.URL), Outbox: ob, Now: clk.now})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := n.Notify(ctx, testAlert("flag-1")); err != nil {
		t.Fatal(err)
	}
	if err := n.Notify(ctx, testAlert("flag-1")); err != nil { // re-evaluation: no second delivery
		t.Fatal(err)
	}
	for i, step := range []time.Duration{0, 5 * time.Second, 10 * time.Second} {
		clk.add(step)
		if _, err := n.Dispatch(ctx); err != nil {
			t.Fatal(err)
		}
		if got := int(calls.Load()); got != i+1 {
			t.Fatalf("after step %d: %d calls, want %d (backoff not honoured?)", i, got, i+1)
		}
	}
	if v := bad.Load(); v != nil {
		t.Fatal(v)
	}
	ds, _ := n.Deliveries(ctx, "", 0)
	if len(ds) != 1 || ds[0].Status != StatusDelivered || ds[0].Attempts != 3 {
		t.Fatalf("deliveries %+v", ds)
	}
}

// TestWebhookRefusalIsFinalAndVisible: a 400 is not retried; the delivery
// is failed with the receiver's answer, and an operator can requeue it.
func TestWebhookRefusalIsFinalAndVisible(t *testing.T) {
	t.Setenv("TEST_WEBHOOK_SECRET", "s3cret")
	var refuse atomic.Bool
	refuse.Store(true)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if refuse.Load() {
			http.Error(w, "unknown hook", http.StatusBadRequest)
		}
	}))
	defer srv.Close()
	ob := newMemOutbox()
	n, err := New(Options{Config: webhookConfig(srv.URL), Outbox: ob})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	n.Notify(ctx, testAlert("flag-2"))
	n.Dispatch(ctx)
	failed, _ := n.Deliveries(ctx, StatusFailed, 0)
	if len(failed) != 1 || !strings.Contains(failed[0].LastError, "400") || !strings.Contains(failed[0].LastError, "unknown hook") {
		t.Fatalf("failed deliveries %+v", failed)
	}
	refuse.Store(false)
	if err := n.Requeue(ctx, failed[0].ID); err != nil {
		t.Fatal(err)
	}
	if sent, _ := n.Dispatch(ctx); sent != 1 {
		t.Fatalf("requeued delivery not sent")
	}
}

// TestGivesUpAfterMaxAttempts keeps the delivery as failed, never drops it.
func TestGivesUpAfterMaxAttempts(t *testing.T) {
	t.Setenv("TEST_WEBHOOK_SECRET", "s3cret")
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusBadGateway)
	}))
	defer srv.Close()
	cfg := webhookConfig(srv.URL)
	cfg.Retry.MaxAttempts = 3
	clk := &clock{t: time.Now()}
	n, err := New(Options{Config: cfg, Outbox: newMemOutbox(), Now: clk.now})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	n.Notify(ctx, testAlert("flag-3"))
	for range 5 {
		n.Dispatch(ctx)
		clk.add(time.Hour)
	}
	ds, _ := n.Deliveries(ctx, "", 0)
	if len(ds) != 1 || ds[0].Status != StatusFailed || ds[0].Attempts != 3 {
		t.Fatalf("deliveries %+v", ds)
	}
}

func TestSlackFormat(t *testing.T) {
	got := make(chan map[string]any, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var m map[string]any
		json.NewDecoder(r.Body).Decode(&m)
		got <- m
	}))
	defer srv.Close()
	cfg := testConfig()
	cfg.Channels = []ChannelConfig{{Name: "slack", Type: TypeWebhook, URL: srv.URL, Format: "slack"}}
	cfg.Routes = []Route{{Kinds: []string{KindHoldMatch}, Channels: []string{"slack"}}}
	n, err := New(Options{Config: cfg, Outbox: newMemOutbox()})
	if err != nil {
		t.Fatal(err)
	}
	n.Notify(context.Background(), testAlert("flag-4"))
	n.Dispatch(context.Background())
	m := <-got
	text, _ := m["text"].(string)
	if !strings.Contains(text, "acme-v-globex") || !strings.Contains(text, "contracts/msa v7.pdf") {
		t.Fatalf("slack body %v", m)
	}
}

func TestRouting(t *testing.T) {
	cfg := testConfig()
	cfg.Channels = []ChannelConfig{{Name: "a", Type: TypeNATS}, {Name: "b", Type: TypeNATS}, {Name: "c", Type: TypeNATS}}
	cfg.Routes = []Route{
		{Kinds: []string{KindHoldMatch}, Matters: []string{"acme-v-globex"}, Channels: []string{"a"}},
		{Kinds: []string{KindDuplicateUpload}, Channels: []string{"b"}},
		{Rules: []string{"hr-7y"}, Channels: []string{"c", "a"}},
	}
	n, err := New(Options{Config: cfg, Outbox: newMemOutbox(), Publisher: nopPublisher{}})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		a    Alert
		want string
	}{
		{Alert{Kind: KindHoldMatch, Matter: "acme-v-globex"}, "a"},
		{Alert{Kind: KindHoldMatch, Matter: "other"}, ""},
		{Alert{Kind: KindDuplicateUpload}, "b"},
		{Alert{Kind: KindDispositionDue, Rule: "hr-7y"}, "a,c"},
	} {
		if got := strings.Join(n.Channels(c.a), ","); got != c.want {
			t.Errorf("%+v routed to %q, want %q", c.a, got, c.want)
		}
	}
}

type nopPublisher struct{}

func (nopPublisher) Publish(string, []byte) error     { return nil }
func (nopPublisher) FlushTimeout(time.Duration) error { return nil }

func TestBadConfigAndAlerts(t *testing.T) {
	env := func(k string) string { return map[string]string{"SET": "x"}[k] }
	read := func(p string) ([]byte, error) { return nil, errors.New("no such file") }
	for _, c := range []struct {
		name string
		cfg  func(*Config)
		want string
	}{
		{"unknown type", func(c *Config) { c.Channels = []ChannelConfig{{Name: "x", Type: "pager"}} }, "channels[0].type"},
		{"duplicate name", func(c *Config) {
			c.Channels = []ChannelConfig{{Name: "x", Type: TypeNATS}, {Name: "x", Type: TypeNATS}}
		}, "channels[1].name"},
		{"bad url", func(c *Config) {
			c.Channels = []ChannelConfig{{Name: "x", Type: TypeWebhook, URL: "ftp://h", SecretEnv: "SET"}}
		}, "channels[0].url"},
		{"empty secret", func(c *Config) {
			c.Channels = []ChannelConfig{{Name: "x", Type: TypeWebhook, URL: "https://h", SecretEnv: "UNSET"}}
		}, "UNSET is empty or unset"},
		{"missing secret file", func(c *Config) {
			c.Channels = []ChannelConfig{{Name: "x", Type: TypeWebhook, URL: "https://h", SecretFile: "/nope"}}
		}, "no such file"},
		{"email without recipients", func(c *Config) {
			c.Channels = []ChannelConfig{{Name: "x", Type: TypeEmail, SMTP: SMTPConfig{Addr: "h:25", From: "a@b.org"}}}
		}, "smtp.to"},
		{"route to unknown channel", func(c *Config) { c.Routes = []Route{{Channels: []string{"nope"}}} }, "routes[0].channels"},
		{"route with unknown kind", func(c *Config) {
			c.Channels = []ChannelConfig{{Name: "x", Type: TypeNATS}}
			c.Routes = []Route{{Kinds: []string{"hold"}, Channels: []string{"x"}}}
		}, "routes[0].kinds"},
		{"bad retry", func(c *Config) { c.Retry.MaxAttempts = 0 }, "notifier.retry"},
	} {
		cfg := testConfig()
		c.cfg(&cfg)
		err := cfg.Validate(env, read)
		if !errors.Is(err, ErrInvalidConfig) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want ErrInvalidConfig naming %q", c.name, err, c.want)
		}
	}
	n, err := New(Options{Config: testConfig(), Outbox: newMemOutbox()})
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range []Alert{{Kind: KindHoldMatch}, {ID: "x", Kind: "a.b"}, {ID: "x", Kind: KindHoldMatch, Evidence: json.RawMessage("{")}} {
		if err := n.Notify(context.Background(), a); !errors.Is(err, ErrInvalidAlert) {
			t.Errorf("Notify(%+v) = %v, want ErrInvalidAlert", a, err)
		}
	}
}

// smtpServer is a real SMTP server (emersion/go-smtp) offering STARTTLS
// with a throw-away certificate.
type smtpServer struct {
	addr string
	tls  *tls.Config // the client side: trusts the server's certificate
	mu   sync.Mutex
	msgs []string
	rcpt [][]string
}

type smtpSession struct {
	s    *smtpServer
	to   []string
	conn *gosmtp.Conn
}

func (s *smtpSession) Reset()        { s.to = nil }
func (s *smtpSession) Logout() error { return nil }
func (s *smtpSession) Mail(string, *gosmtp.MailOptions) error {
	if _, isTLS := s.conn.TLSConnectionState(); !isTLS {
		return &gosmtp.SMTPError{Code: 530, Message: "STARTTLS first"}
	}
	return nil
}
func (s *smtpSession) Rcpt(to string, _ *gosmtp.RcptOptions) error {
	if strings.HasPrefix(to, "nobody@") {
		return &gosmtp.SMTPError{Code: 550, Message: "no such user"}
	}
	s.to = append(s.to, to)
	return nil
}
func (s *smtpSession) Data(r io.Reader) error {
	b, err := io.ReadAll(r)
	if err != nil {
		return err
	}
	s.s.mu.Lock()
	s.s.msgs = append(s.s.msgs, string(b))
	s.s.rcpt = append(s.s.rcpt, s.to)
	s.s.mu.Unlock()
	return nil
}

type smtpBackend struct{ s *smtpServer }

func (b smtpBackend) NewSession(c *gosmtp.Conn) (gosmtp.Session, error) {
	return &smtpSession{s: b.s, conn: c}, nil
}

func startSMTP(t *testing.T) *smtpServer {
	t.Helper()
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "127.0.0.1"},
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, _ := x509.ParseCertificate(der)
	pool := x509.NewCertPool()
	pool.AddCert(cert)
	s := &smtpServer{tls: &tls.Config{RootCAs: pool, ServerName: "127.0.0.1"}}
	srv := gosmtp.NewServer(smtpBackend{s})
	srv.Domain = "localhost"
	srv.TLSConfig = &tls.Config{Certificates: []tls.Certificate{{Certificate: [][]byte{der}, PrivateKey: key}}}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s.addr = ln.Addr().String()
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	return s
}

func emailNotifier(t *testing.T, s *smtpServer, digest time.Duration, to []string, clk *clock) *Notifier {
	t.Helper()
	cfg := testConfig()
	ch := ChannelConfig{Name: "mail", Type: TypeEmail, SMTP: SMTPConfig{Addr: s.addr, From: "simdex <simdex@example.org>", To: to, Digest: digest}}
	cfg.Channels = []ChannelConfig{ch}
	cfg.Routes = []Route{{Channels: []string{"mail"}}}
	n, err := New(Options{Config: cfg, Outbox: newMemOutbox(), Now: clk.now,
		Senders: map[string]Sender{"mail": &emailSender{cfg: ch.SMTP, timeout: 5 * time.Second, tlsConfig: s.tls}}})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// TestEmailImmediateAndDigest sends through a real SMTP server over
// STARTTLS: one message per alert, or one digest per period.
func TestEmailImmediateAndDigest(t *testing.T) {
	s := startSMTP(t)
	ctx := context.Background()
	clk := &clock{t: time.Date(2026, 11, 22, 10, 15, 0, 0, time.UTC)}
	n := emailNotifier(t, s, 0, []string{"legal@example.org"}, clk)
	n.Notify(ctx, testAlert("flag-5"))
	if sent, err := n.Dispatch(ctx); sent != 1 || err != nil {
		t.Fatalf("immediate: sent %d, %v", sent, err)
	}
	d := emailNotifier(t, s, time.Hour, []string{"legal@example.org", "records@example.org"}, clk)
	d.Notify(ctx, testAlert("flag-6"))
	d.Notify(ctx, testAlert("flag-7"))
	if sent, _ := d.Dispatch(ctx); sent != 0 {
		t.Fatalf("digest sent before the end of its period")
	}
	clk.add(46 * time.Minute) // past 11:00
	if sent, err := d.Dispatch(ctx); sent != 2 || err != nil {
		t.Fatalf("digest: sent %d, %v", sent, err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.msgs) != 2 {
		t.Fatalf("%d messages, want 2", len(s.msgs))
	}
	if !strings.Contains(s.msgs[0], "Subject: [simdex] near-copy of a held document") || !strings.Contains(s.msgs[0], "acme-v-globex") {
		t.Errorf("message:\n%s", s.msgs[0])
	}
	if !strings.Contains(s.msgs[1], "2 alerts") || !strings.Contains(s.msgs[1], "flag-6 flag-7") || len(s.rcpt[1]) != 2 {
		t.Errorf("digest to %v:\n%s", s.rcpt[1], s.msgs[1])
	}
}

// TestEmailRefusedRecipientIsFinal: a 550 is permanent.
func TestEmailRefusedRecipientIsFinal(t *testing.T) {
	s := startSMTP(t)
	ctx := context.Background()
	n := emailNotifier(t, s, 0, []string{"nobody@example.org"}, &clock{t: time.Now()})
	n.Notify(ctx, testAlert("flag-8"))
	n.Dispatch(ctx)
	ds, _ := n.Deliveries(ctx, StatusFailed, 0)
	if len(ds) != 1 || !strings.Contains(ds[0].LastError, "550") {
		t.Fatalf("deliveries %+v", ds)
	}
}

// testConfig is DefaultConfig without the built-in flags subject, so that
// a test sees only the channels it configures.
func testConfig() Config {
	cfg := DefaultConfig()
	cfg.FlagsSubject = ""
	return cfg
}

// TestFlagsSubject: with the default configuration every alert reaches a
// real NATS server on simdex.flags.<kind>, through the outbox, and a NATS
// outage delays the publication rather than losing it.
func TestFlagsSubject(t *testing.T) {
	ns := natstest.Start(t)
	sub := ns.Conn(t)
	got := make(chan *nats.Msg, 4)
	if _, err := sub.ChanSubscribe("simdex.flags.>", got); err != nil {
		t.Fatal(err)
	}
	sub.Flush()
	pub := ns.Conn(t)
	ob := newMemOutbox()
	var clk atomic.Int64
	clk.Store(time.Date(2026, 11, 23, 9, 0, 0, 0, time.UTC).UnixNano())
	now := func() time.Time { return time.Unix(0, clk.Load()).UTC() }
	n, err := New(Options{Config: DefaultConfig(), Outbox: ob, Publisher: pub, Now: now})
	if err != nil {
		t.Fatal(err)
	}
	if ch := n.Channels(testAlert("x")); len(ch) != 1 || ch[0] != FlagsChannel {
		t.Fatalf("default routes: %v, want the flags channel only", ch)
	}
	ctx := context.Background()
	if err := n.Notify(ctx, testAlert("flag-9")); err != nil {
		t.Fatal(err)
	}
	if sent, err := n.Dispatch(ctx); err != nil || sent != 1 {
		t.Fatalf("dispatch: sent %d, %v", sent, err)
	}
	select {
	case m := <-got:
		var a Alert
		if m.Subject != "simdex.flags."+KindHoldMatch || json.Unmarshal(m.Data, &a) != nil || a.ID != "flag-9" {
			t.Fatalf("got %s %s", m.Subject, m.Data)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("no message on simdex.flags.hold-match")
	}

	// NATS down: the publication fails, stays in the outbox and goes out
	// after the backoff once the server is back.
	ns.Shutdown()
	if err := n.Notify(ctx, testAlert("flag-10")); err != nil {
		t.Fatal(err)
	}
	if sent, _ := n.Dispatch(ctx); sent != 0 {
		t.Fatalf("sent %d with NATS down", sent)
	}
	if ds, _ := n.Deliveries(ctx, "", 10); len(ds) != 2 {
		t.Fatalf("outbox holds %d deliveries, want 2", len(ds))
	}
	ns.Restart(t)
	// Core NATS keeps nothing for a subscriber that is not there: wait
	// until the subscriber's reconnection has re-registered its
	// subscription (a flush round trip after reconnecting), or a
	// publication that wins the race is lost and the test flakes.
	for deadline := time.Now().Add(10 * time.Second); !sub.IsConnected() || sub.Flush() != nil; {
		if time.Now().After(deadline) {
			t.Fatal("the subscriber did not reconnect")
		}
		time.Sleep(20 * time.Millisecond)
	}
	clk.Add(int64(time.Minute))
	deadline := time.Now().Add(10 * time.Second)
	for {
		if sent, _ := n.Dispatch(ctx); sent == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the delayed publication was never sent")
		}
		clk.Add(int64(time.Minute))
		time.Sleep(100 * time.Millisecond)
	}
	select {
	case m := <-got:
		if !strings.Contains(string(m.Data), "flag-10") {
			t.Fatalf("got %s", m.Data)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("flag-10 never arrived after the outage")
	}

	// A flags channel name taken by a configured channel is refused.
	cfg := DefaultConfig()
	cfg.Channels = []ChannelConfig{{Name: FlagsChannel, Type: TypeNATS}}
	if err := cfg.Validate(os.Getenv, os.ReadFile); !errors.Is(err, ErrInvalidConfig) || !strings.Contains(err.Error(), "channels[0].name") {
		t.Fatalf("reserved name: %v", err)
	}
	cfg = DefaultConfig()
	cfg.FlagsSubject = "simdex.*"
	if err := cfg.Validate(os.Getenv, os.ReadFile); !errors.Is(err, ErrInvalidConfig) || !strings.Contains(err.Error(), "flags_subject") {
		t.Fatalf("bad subject: %v", err)
	}
}

// TestPruneKeepsDeliveredForKeepDelivered: the cut is KeepDelivered before
// the notifier's clock, and 0 keeps delivered alerts forever.
func TestPruneKeepsDeliveredForKeepDelivered(t *testing.T) {
	clk := &clock{t: time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)}
	for _, keep := range []time.Duration{0, 72 * time.Hour} {
		cfg := DefaultConfig()
		cfg.KeepDelivered = keep
		cfg.FlagsSubject = "" // no NATS here
		ob := newMemOutbox()
		n, err := New(Options{Config: cfg, Outbox: ob, Now: clk.now})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := n.Prune(context.Background()); err != nil {
			t.Fatal(err)
		}
		switch {
		case keep == 0 && len(ob.pruned) != 0:
			t.Errorf("keep_delivered 0 pruned before %v", ob.pruned)
		case keep > 0 && (len(ob.pruned) != 1 || !ob.pruned[0].Equal(clk.t.Add(-keep))):
			t.Errorf("keep_delivered %s pruned before %v, want %v", keep, ob.pruned, clk.t.Add(-keep))
		}
	}
	cfg := DefaultConfig()
	cfg.KeepDelivered = -time.Hour
	if err := cfg.Validate(os.Getenv, os.ReadFile); err == nil || !strings.Contains(err.Error(), "keep_delivered") {
		t.Errorf("negative keep_delivered: %v", err)
	}
}
