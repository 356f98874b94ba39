package mailthread

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"
)

// Header is what threading reads of a message's headers.
type Header struct {
	// MessageID, InReplyTo and References are the raw header values.
	MessageID, InReplyTo, References string
	// Subject is the raw (decoded) subject.
	Subject string
}

// maxIDs bounds how many message ids IDs returns: a References header
// longer than that keeps its first (the thread's root) and its last ones.
const maxIDs = 64

// IDs returns the message ids of a Message-ID, In-Reply-To or References
// value, without their angle brackets, in order. Ids written without
// brackets (as some web mailers do) are accepted when the value holds no
// bracketed id.
func IDs(v string) []string {
	var out []string
	rest := v
	for {
		i := strings.IndexByte(rest, '<')
		if i < 0 {
			break
		}
		j := strings.IndexByte(rest[i:], '>')
		if j < 0 {
			break
		}
		if id := strings.TrimSpace(rest[i+1 : i+j]); id != "" {
			out = append(out, id)
		}
		rest = rest[i+j+1:]
	}
	if len(out) == 0 {
		for _, f := range strings.Fields(v) {
			if strings.Contains(f, "@") {
				out = append(out, strings.Trim(f, "<>,;\"'"))
			}
		}
	}
	if len(out) > maxIDs {
		out = append(out[:1], out[len(out)-maxIDs+1:]...)
	}
	return out
}

// KeyOf returns the thread key named by a message id: the key of a thread
// whose root message has that id. Keys are 16 hexadecimal digits.
func KeyOf(messageID string) string {
	return hashKey("id\x00" + messageID)
}

func hashKey(s string) string {
	h := sha256.Sum256([]byte(s))
	return hex.EncodeToString(h[:8])
}

// Key returns the thread key the headers alone give: that of the root of
// References, else of In-Reply-To, else of the message's own Message-ID,
// else of its cleaned subject (Subject, case folded). It is "" when the
// message has none of them. Messages of one thread whose headers are
// complete get the same key; Resolve joins the others.
func Key(h Header) string {
	for _, v := range []string{h.References, h.InReplyTo, h.MessageID} {
		if ids := IDs(v); len(ids) > 0 {
			return KeyOf(ids[0])
		}
	}
	if s := strings.ToLower(Subject(h.Subject)); s != "" {
		return hashKey("subject\x00" + s)
	}
	return ""
}

// Finder looks up stored messages for Resolve. The index implements it
// (index.Index.ThreadOfMessage and ThreadOfQuote).
type Finder interface {
	// ThreadOfMessage returns the thread key stored with the message
	// whose Message-ID is id (without brackets), or "" when there is none.
	ThreadOfMessage(ctx context.Context, id string) (string, error)
	// ThreadOfQuote returns the thread key of a stored message whose text
	// holds most of quoted, the text a message quotes, or "" when there is
	// none.
	ThreadOfQuote(ctx context.Context, quoted string) (string, error)
}

// minQuoteWords is the fewest words quoted text needs for Resolve to look
// its message up: shorter quotes ("Thanks!") would find unrelated ones.
const minQuoteWords = 8

// Resolve returns the thread key of a message about to be stored: the key
// of the nearest stored message its In-Reply-To and References name (the
// parent first), else, when it names none, the key of a stored message
// holding the text it quotes (for messages whose client stripped those
// headers), else Key(h).
func Resolve(ctx context.Context, f Finder, h Header, body string) (string, error) {
	ids := append(IDs(h.References), IDs(h.InReplyTo)...)
	for i := len(ids) - 1; i >= 0; i-- {
		k, err := f.ThreadOfMessage(ctx, ids[i])
		if err != nil {
			return "", fmt.Errorf("thread of message %s: %w", ids[i], err)
		}
		if k != "" {
			return k, nil
		}
	}
	if len(ids) == 0 {
		quoted := QuotedText(Parse(body), 1)
		if Words(quoted) >= minQuoteWords {
			k, err := f.ThreadOfQuote(ctx, quoted)
			if err != nil {
				return "", fmt.Errorf("thread of quoted text: %w", err)
			}
			if k != "" {
				return k, nil
			}
		}
	}
	return Key(h), nil
}

// Words counts the words of s: maximal runs of letters and digits, the
// way the evaluation's truth counts them.
func Words(s string) int {
	n, in := 0, false
	for _, r := range s {
		w := isWordRune(r)
		if w && !in {
			n++
		}
		in = w
	}
	return n
}
