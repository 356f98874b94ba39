package notifier

import (
	"bytes"
	"cmp"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"crypto/tls"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"mime/quotedprintable"
	"net"
	"net/http"
	"net/mail"
	"net/smtp"
	"net/textproto"
	"strconv"
	"strings"
	"time"
)

// Publisher publishes NATS messages; *nats.Conn satisfies it.
type Publisher interface {
	Publish(subject string, data []byte) error
	FlushTimeout(timeout time.Duration) error
}

func newSender(ch ChannelConfig, pub Publisher) (Sender, error) {
	timeout := ch.Timeout
	if timeout == 0 {
		timeout = 10 * time.Second
	}
	switch ch.Type {
	case TypeNATS:
		if pub == nil {
			return nil, errors.New("no NATS connection for a nats channel")
		}
		return &natsSender{pub: pub, subject: cmp.Or(ch.Subject, DefaultNATSSubject), timeout: timeout}, nil
	case TypeWebhook:
		w := &webhookSender{url: ch.URL, slack: ch.Format == "slack", hc: &http.Client{Timeout: timeout}}
		if !w.slack {
			key, err := osSecret(ch.SecretEnv, ch.SecretFile)
			if err != nil {
				return nil, err
			}
			w.key = []byte(key)
		}
		return w, nil
	case TypeEmail:
		e := &emailSender{cfg: ch.SMTP, timeout: timeout}
		if ch.SMTP.UsernameEnv != "" || ch.SMTP.UsernameFile != "" {
			u, err := osSecret(ch.SMTP.UsernameEnv, ch.SMTP.UsernameFile)
			if err != nil {
				return nil, err
			}
			p, err := osSecret(ch.SMTP.PasswordEnv, ch.SMTP.PasswordFile)
			if err != nil {
				return nil, err
			}
			e.user, e.pass = u, p
		}
		return e, nil
	}
	return nil, fmt.Errorf("%w: channel type %q", ErrInvalidConfig, ch.Type)
}

// natsSender publishes each alert as JSON on <subject>.<kind> and waits
// for the server to have it.
type natsSender struct {
	pub     Publisher
	subject string
	timeout time.Duration
}

func (s *natsSender) Send(_ context.Context, alerts []Alert) error {
	for _, a := range alerts {
		b, err := json.Marshal(a)
		if err != nil {
			return fmt.Errorf("%w: encode alert %s: %w", ErrPermanent, a.ID, err)
		}
		if err := s.pub.Publish(s.subject+"."+a.Kind, b); err != nil {
			return fmt.Errorf("publish alert %s: %w", a.ID, err)
		}
	}
	if err := s.pub.FlushTimeout(s.timeout); err != nil {
		return fmt.Errorf("flush alerts to NATS: %w", err)
	}
	return nil
}

// Webhook headers. The signature is HMAC-SHA256 over
// "<timestamp>.<body>" with the channel's secret, hex encoded, so that a
// receiver can reject forged and replayed calls.
const (
	HeaderSignature = "X-Simdex-Signature" // "sha256=<hex>"
	HeaderTimestamp = "X-Simdex-Timestamp" // Unix seconds
	HeaderAlert     = "X-Simdex-Alert"     // the alert id, for deduplication
	HeaderKind      = "X-Simdex-Kind"
)

// Sign returns the signature header value for body sent at ts.
func Sign(key []byte, ts int64, body []byte) string {
	m := hmac.New(sha256.New, key)
	m.Write([]byte(strconv.FormatInt(ts, 10)))
	m.Write([]byte("."))
	m.Write(body)
	return "sha256=" + hex.EncodeToString(m.Sum(nil))
}

// Verify checks a webhook call's signature in constant time, refusing
// timestamps more than skew away from now.
func Verify(key []byte, header http.Header, body []byte, now time.Time, skew time.Duration) error {
	ts, err := strconv.ParseInt(header.Get(HeaderTimestamp), 10, 64)
	if err != nil {
		return fmt.Errorf("webhook timestamp %q: %w", header.Get(HeaderTimestamp), err)
	}
	if d := now.Sub(time.Unix(ts, 0)); d > skew || d < -skew {
		return fmt.Errorf("webhook timestamp %d is %v away from now", ts, d)
	}
	if !hmac.Equal([]byte(header.Get(HeaderSignature)), []byte(Sign(key, ts, body))) {
		return errors.New("webhook signature does not match")
	}
	return nil
}

type webhookSender struct {
	url   string
	slack bool
	key   []byte
	hc    *http.Client
	now   func() time.Time
}

func (s *webhookSender) Send(ctx context.Context, alerts []Alert) error {
	for _, a := range alerts {
		var body []byte
		var err error
		if s.slack {
			body, err = json.Marshal(map[string]string{"text": a.text()})
		} else {
			body, err = json.Marshal(a)
		}
		if err != nil {
			return fmt.Errorf("%w: encode alert %s: %w", ErrPermanent, a.ID, err)
		}
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.url, bytes.NewReader(body))
		if err != nil {
			return fmt.Errorf("%w: webhook request: %w", ErrPermanent, err)
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("User-Agent", "simdex-notifier")
		req.Header.Set(HeaderAlert, a.ID)
		req.Header.Set(HeaderKind, a.Kind)
		if !s.slack {
			now := time.Now
			if s.now != nil {
				now = s.now
			}
			ts := now().Unix()
			req.Header.Set(HeaderTimestamp, strconv.FormatInt(ts, 10))
			req.Header.Set(HeaderSignature, Sign(s.key, ts, body))
		}
		resp, err := s.hc.Do(req)
		if err != nil {
			return fmt.Errorf("webhook %s: %w", s.url, err)
		}
		snippet, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		resp.Body.Close()
		switch c := resp.StatusCode; {
		case c >= 200 && c < 300:
		case c == http.StatusRequestTimeout || c == http.StatusTooManyRequests || c >= 500:
			return fmt.Errorf("webhook %s answered %s: %s", s.url, resp.Status, bytes.TrimSpace(snippet))
		default: // the receiver refuses the call itself: retrying will not help
			return fmt.Errorf("%w: webhook %s answered %s: %s", ErrPermanent, s.url, resp.Status, bytes.TrimSpace(snippet))
		}
	}
	return nil
}

// emailSender sends one message per call: one alert, or a digest.
type emailSender struct {
	cfg        SMTPConfig
	user, pass string
	timeout    time.Duration
	tlsConfig  *tls.Config // tests trust their own certificate here
}

func (s *emailSender) Send(ctx context.Context, alerts []Alert) error {
	if len(alerts) == 0 {
		return nil
	}
	msg, err := s.message(alerts)
	if err != nil {
		return fmt.Errorf("%w: %w", ErrPermanent, err)
	}
	d := net.Dialer{Timeout: s.timeout}
	conn, err := d.DialContext(ctx, "tcp", s.cfg.Addr)
	if err != nil {
		return fmt.Errorf("smtp %s: %w", s.cfg.Addr, err)
	}
	_ = conn.SetDeadline(time.Now().Add(s.timeout))
	host, _, _ := net.SplitHostPort(s.cfg.Addr)
	c, err := smtp.NewClient(conn, host)
	if err != nil {
		conn.Close()
		return fmt.Errorf("smtp %s: %w", s.cfg.Addr, err)
	}
	defer c.Close()
	if ok, _ := c.Extension("STARTTLS"); ok {
		tc := s.tlsConfig
		if tc == nil {
			tc = &tls.Config{ServerName: host, MinVersion: tls.VersionTLS12}
		}
		if err := c.StartTLS(tc); err != nil {
			return fmt.Errorf("smtp %s: STARTTLS: %w", s.cfg.Addr, err)
		}
	} else if !s.cfg.InsecureNoTLS {
		return fmt.Errorf("smtp %s does not offer STARTTLS (set insecure_no_tls to send in clear text)", s.cfg.Addr)
	}
	if s.user != "" {
		if err := c.Auth(smtp.PlainAuth("", s.user, s.pass, host)); err != nil {
			return fmt.Errorf("%w: smtp %s: authenticate: %w", ErrPermanent, s.cfg.Addr, err)
		}
	}
	from, _ := mail.ParseAddress(s.cfg.From) // parsed by message already
	if err := c.Mail(from.Address); err != nil {
		return smtpErr(s.cfg.Addr, "MAIL FROM", err)
	}
	for _, t := range s.cfg.To {
		to, _ := mail.ParseAddress(t)
		if err := c.Rcpt(to.Address); err != nil {
			return smtpErr(s.cfg.Addr, "RCPT TO "+to.Address, err)
		}
	}
	w, err := c.Data()
	if err != nil {
		return smtpErr(s.cfg.Addr, "DATA", err)
	}
	if _, err := w.Write(msg); err != nil {
		return fmt.Errorf("smtp %s: write message: %w", s.cfg.Addr, err)
	}
	if err := w.Close(); err != nil {
		return smtpErr(s.cfg.Addr, "end of DATA", err)
	}
	return c.Quit()
}

// smtpErr makes 5xx replies permanent and everything else retryable.
func smtpErr(addr, op string, err error) error {
	var te *textproto.Error
	if errors.As(err, &te) && te.Code >= 500 {
		return fmt.Errorf("%w: smtp %s: %s: %w", ErrPermanent, addr, op, err)
	}
	return fmt.Errorf("smtp %s: %s: %w", addr, op, err)
}

// message builds an RFC 5322 message with a quoted-printable UTF-8 body.
func (s *emailSender) message(alerts []Alert) ([]byte, error) {
	from, err := mail.ParseAddress(s.cfg.From)
	if err != nil {
		return nil, fmt.Errorf("from address %q: %w", s.cfg.From, err)
	}
	var to []string
	for _, t := range s.cfg.To {
		a, err := mail.ParseAddress(t)
		if err != nil {
			return nil, fmt.Errorf("recipient %q: %w", t, err)
		}
		to = append(to, a.String())
	}
	subject := "[simdex] " + alerts[0].Summary
	if len(alerts) > 1 {
		subject = fmt.Sprintf("[simdex] %d alerts", len(alerts))
	}
	var b bytes.Buffer
	fmt.Fprintf(&b, "From: %s\r\n", from.String())
	fmt.Fprintf(&b, "To: %s\r\n", strings.Join(to, ", "))
	fmt.Fprintf(&b, "Subject: %s\r\n", mime.QEncoding.Encode("utf-8", subject))
	fmt.Fprintf(&b, "Date: %s\r\n", time.Now().UTC().Format(time.RFC1123Z))
	fmt.Fprintf(&b, "Message-ID: <%s.%d@simdex>\r\n", strings.ReplaceAll(alerts[0].ID, " ", "_"), len(alerts))
	b.WriteString("MIME-Version: 1.0\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Transfer-Encoding: quoted-printable\r\n")
	fmt.Fprintf(&b, "X-Simdex-Alerts: %s\r\n\r\n", strings.Join(ids(alerts), " "))
	qp := quotedprintable.NewWriter(&b)
	for i, a := range alerts {
		if i > 0 {
			qp.Write([]byte("\r\n"))
		}
		qp.Write([]byte(strings.ReplaceAll(a.text(), "\n", "\r\n")))
	}
	if err := qp.Close(); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

func ids(alerts []Alert) []string {
	out := make([]string, len(alerts))
	for i, a := range alerts {
		out[i] = a.ID
	}
	return out
}
