package jetstream

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/nats-io/nats.go"
	natsjs "github.com/nats-io/nats.go/jetstream"
)

// Headers a dead-letter record carries on top of the original message's
// headers. Its data is the original message's data.
const (
	HeaderError     = "Simdex-Error"     // why the message was dead-lettered
	HeaderSource    = "Simdex-Source"    // Config.Name of the source
	HeaderStream    = "Simdex-Stream"    // the original stream
	HeaderSubject   = "Simdex-Subject"   // the original subject
	HeaderSequence  = "Simdex-Sequence"  // the original stream sequence
	HeaderDelivered = "Simdex-Delivered" // deliveries so far
	HeaderPublished = "Simdex-Published" // when the original was stored, RFC 3339
	// HeaderOriginalPrefix prefixes the original message's Nats-* headers,
	// which would otherwise steer the dead-letter publish (Nats-Msg-Id,
	// Nats-Expected-Stream and the like).
	HeaderOriginalPrefix = "Simdex-Original-"
)

// maxErrorHeader bounds the Simdex-Error header.
const maxErrorHeader = 4096

// DeadLetter is one dead-lettered message.
type DeadLetter struct {
	Source    string      // Config.Name of the source that gave up
	Subject   string      // the original subject
	Stream    string      // the original stream
	Sequence  uint64      // the original stream sequence
	Delivered uint64      // deliveries before it was dead-lettered
	Error     string      // why
	Time      time.Time   // when it was dead-lettered
	Published time.Time   // when the original was stored; zero if unknown
	Header    nats.Header // the original headers
	Data      []byte      // the original data
	// DeadLetterSequence is the record's sequence in the DEADLETTER stream.
	DeadLetterSequence uint64
}

// deadLetter records f in the dead-letter stream and then terminates it;
// if the record cannot be written, f is handed back instead.
func (s *Source) deadLetter(ctx context.Context, f *inflight, cause error) {
	msg := nats.NewMsg(s.cfg.DeadLetterSubject)
	msg.Data = f.m.Data
	for k, vs := range f.m.Header {
		if len(k) >= 5 && strings.EqualFold(k[:5], "Nats-") {
			k = HeaderOriginalPrefix + k
		}
		msg.Header[k] = append([]string(nil), vs...)
	}
	msg.Header.Set(HeaderError, headerValue(cause.Error()))
	msg.Header.Set(HeaderSource, s.cfg.Name)
	msg.Header.Set(HeaderStream, f.m.Stream)
	msg.Header.Set(HeaderSubject, f.m.Subject)
	msg.Header.Set(HeaderSequence, strconv.FormatUint(f.m.Sequence, 10))
	msg.Header.Set(HeaderDelivered, strconv.FormatUint(f.m.Delivered, 10))
	msg.Header.Set(HeaderPublished, f.m.Time.UTC().Format(time.RFC3339Nano))
	// The id makes a repeated dead-lettering of the same delivery (say,
	// after a lost Term) a no-op within the stream's duplicate window.
	id := fmt.Sprintf("%s/%s/%d", f.m.Stream, s.cfg.Durable, f.m.Sequence)
	rctx, cancel := context.WithTimeout(ctx, s.cfg.ReplyTimeout)
	_, err := s.js.PublishMsg(rctx, msg, natsjs.WithMsgID(id))
	cancel()
	if err != nil {
		s.log.Error("publish dead letter; handing the message back instead", "subject", f.m.Subject, "seq", f.m.Sequence,
			"dead_letter_subject", s.cfg.DeadLetterSubject, "cause", cause, "err", err)
		s.nak(f, s.cfg.backoff(f.m.Delivered), cause)
		return
	}
	s.cfg.Metrics.add(deadLettered, s.cfg.Name, 1)
	s.log.Warn("message dead-lettered", "subject", f.m.Subject, "seq", f.m.Sequence, "delivered", f.m.Delivered,
		"dead_letter_subject", s.cfg.DeadLetterSubject, "err", cause)
	if err := f.msg.Term(); err != nil {
		s.log.Warn("terminate dead-lettered message; it will be redelivered and dead-lettered again", "subject", f.m.Subject, "seq", f.m.Sequence, "err", err)
	}
}

// headerValue makes s fit in a NATS header value: one line of valid
// UTF-8, at most maxErrorHeader bytes.
func headerValue(s string) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	s = strings.NewReplacer("\r\n", "; ", "\n", "; ", "\r", "; ").Replace(s)
	if len(s) > maxErrorHeader {
		cut := maxErrorHeader
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		s = s[:cut] + "…"
	}
	return s
}

// ListDeadLetters returns up to limit dead-lettered records (all of them if
// limit <= 0), oldest first. It returns none if the DEADLETTER stream does
// not exist yet.
func ListDeadLetters(ctx context.Context, nc *nats.Conn, limit int) ([]DeadLetter, error) {
	js, err := natsjs.New(nc)
	if err != nil {
		return nil, fmt.Errorf("jetstream context: %w", err)
	}
	stream, err := js.Stream(ctx, DeadLetterStream)
	if errors.Is(err, natsjs.ErrStreamNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("look up stream %s: %w", DeadLetterStream, err)
	}
	state := stream.CachedInfo().State
	var out []DeadLetter
	for seq := state.FirstSeq; state.Msgs > 0 && (limit <= 0 || len(out) < limit); {
		raw, err := stream.GetMsg(ctx, seq, natsjs.WithGetMsgSubject(">"))
		if errors.Is(err, natsjs.ErrMsgNotFound) {
			break
		}
		if err != nil {
			return out, fmt.Errorf("read %s message at or after %d: %w", DeadLetterStream, seq, err)
		}
		out = append(out, parseDeadLetter(raw))
		seq = raw.Sequence + 1
	}
	return out, nil
}

// parseDeadLetter turns a stored record back into a DeadLetter. Records
// written by other tools parse too; missing fields stay zero.
func parseDeadLetter(raw *natsjs.RawStreamMsg) DeadLetter {
	h := raw.Header
	d := DeadLetter{
		Source:             h.Get(HeaderSource),
		Subject:            h.Get(HeaderSubject),
		Stream:             h.Get(HeaderStream),
		Error:              h.Get(HeaderError),
		Time:               raw.Time,
		Data:               raw.Data,
		DeadLetterSequence: raw.Sequence,
		Header:             nats.Header{},
	}
	d.Sequence, _ = strconv.ParseUint(h.Get(HeaderSequence), 10, 64)
	d.Delivered, _ = strconv.ParseUint(h.Get(HeaderDelivered), 10, 64)
	d.Published, _ = time.Parse(time.RFC3339Nano, h.Get(HeaderPublished))
	for k, vs := range h {
		switch {
		case k == HeaderError, k == HeaderSource, k == HeaderSubject, k == HeaderStream,
			k == HeaderSequence, k == HeaderDelivered, k == HeaderPublished:
			continue
		case len(k) >= 5 && strings.EqualFold(k[:5], "Nats-"):
			continue // the record's own, such as Nats-Msg-Id
		case strings.HasPrefix(k, HeaderOriginalPrefix):
			k = strings.TrimPrefix(k, HeaderOriginalPrefix)
		}
		d.Header[k] = vs
	}
	return d
}
