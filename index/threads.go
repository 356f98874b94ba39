package index

import (
	"cmp"
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/simdex/simdex/mailthread"
)

// Metadata keys threading reads, as ingest stores them.
const (
	// MetaThreadID is a message's thread key (mailthread.Key, or
	// mailthread.Resolve at ingest).
	MetaThreadID = "thread_id"
	// MetaMessageID, MetaInReplyTo and MetaReferences are the message's
	// headers.
	MetaMessageID  = "message_id"
	MetaInReplyTo  = "in_reply_to"
	MetaReferences = "references"
	// MetaDate is the message's date, RFC 3339.
	MetaDate = "date"
	// MetaDraft is "true" on an unsent message; MetaFolder names the
	// mailbox folder of a message read from a PST.
	MetaDraft  = "draft"
	MetaFolder = "folder"
)

// ErrNoThread reports a document that is not an e-mail message with a
// thread key.
var ErrNoThread = errors.New("document has no e-mail thread")

// InclusiveContainment is the containment estimate at which a later
// message is taken to hold all of an earlier one's text: the estimate
// from samples varies by a few hundredths around the true share, and the
// earlier message's subject line is not quoted with its body.
const InclusiveContainment = 0.9

// MetaFinder is a Store that finds documents by an e-mail metadata value
// (MetaThreadID or MetaMessageID) without reading every document; the
// index reads them all from a store that is not one.
type MetaFinder interface {
	// ByMeta returns the documents whose metadata key equals value, by id.
	ByMeta(ctx context.Context, key, value string) ([]*Record, error)
}

// ThreadMessage is one message of a thread with its inclusive mark.
type ThreadMessage struct {
	Record *Record
	// Inclusive is true when no later message of the thread holds all of
	// its text and attachments (Relativity's Inclusive Email): reviewing
	// the inclusive messages covers the whole thread.
	Inclusive bool
	// Reason is why it is inclusive: "Message", "Attachment", "Message;
	// Attachment" or "Draft" (Relativity's Inclusive Reason); "" when not.
	Reason string
	// ContainedIn is a later message that holds all of it, when it is not
	// inclusive.
	ContainedIn DocID
}

// Thread is the messages of one e-mail thread, in date order.
type Thread struct {
	// ID is the thread's key: that of its earliest message (Relativity's
	// Email Thread Group).
	ID       string
	Messages []ThreadMessage
}

// ThreadOf returns the thread of the stored message id, its messages
// marked inclusive or not.
func (ix *Index) ThreadOf(ctx context.Context, id DocID) (*Thread, error) {
	r, err := ix.store.Get(ctx, id)
	if err != nil {
		return nil, fmt.Errorf("thread of document %d: %w", id, err)
	}
	key := r.Meta[MetaThreadID]
	if key == "" {
		return nil, fmt.Errorf("thread of document %d: %w", id, ErrNoThread)
	}
	return ix.Thread(ctx, key)
}

// Thread returns the thread whose key is key, its messages marked
// inclusive or not. Messages stored under another key but linked to
// these by their Message-ID and In-Reply-To headers (a reply stored
// before its parent, whose client stripped References) are part of it.
// A thread holds at most mailthread.MaxThread messages compared pairwise;
// ErrNoThread means no message has the key.
func (ix *Index) Thread(ctx context.Context, key string) (*Thread, error) {
	ctx, done, err := ix.Snapshot(ctx)
	if err != nil {
		return nil, fmt.Errorf("thread %s: %w", key, err)
	}
	defer done()
	recs, err := ix.threadRecords(ctx, key)
	if err != nil {
		return nil, fmt.Errorf("thread %s: %w", key, err)
	}
	if len(recs) == 0 {
		return nil, fmt.Errorf("thread %s: %w", key, ErrNoThread)
	}
	slices.SortFunc(recs, func(a, b *Record) int {
		return cmp.Or(messageDate(a).Compare(messageDate(b)), cmp.Compare(a.ID, b.ID))
	})
	t := &Thread{ID: recs[0].Meta[MetaThreadID], Messages: make([]ThreadMessage, len(recs))}
	if err := ix.markInclusive(ctx, recs, t.Messages); err != nil {
		return nil, fmt.Errorf("thread %s: %w", key, err)
	}
	return t, nil
}

// threadRecords gathers the messages of key and of the keys linked to
// them by their headers.
func (ix *Index) threadRecords(ctx context.Context, key string) ([]*Record, error) {
	keys := []string{key}
	seenKey := map[string]bool{key: true}
	seen := map[DocID]bool{}
	var recs []*Record
	addKey := func(k string) {
		if k != "" && !seenKey[k] {
			seenKey[k] = true
			keys = append(keys, k)
		}
	}
	for len(keys) > 0 && len(recs) < mailthread.MaxThread {
		k := keys[0]
		keys = keys[1:]
		found, err := ix.byMeta(ctx, MetaThreadID, k)
		if err != nil {
			return nil, err
		}
		for _, r := range found {
			if seen[r.ID] {
				continue
			}
			seen[r.ID] = true
			recs = append(recs, r)
			for _, id := range mailthread.IDs(r.Meta[MetaMessageID]) {
				addKey(mailthread.KeyOf(id))
			}
			for _, id := range mailthread.IDs(r.Meta[MetaInReplyTo]) {
				parent, err := ix.threadOfMessage(ctx, id)
				if err != nil {
					return nil, err
				}
				addKey(parent)
			}
		}
	}
	return recs, nil
}

// markInclusive fills msgs (one per record, in order) with the records
// and their inclusive marks.
func (ix *Index) markInclusive(ctx context.Context, recs []*Record, msgs []ThreadMessage) error {
	in := make([]mailthread.Message, len(recs))
	var contents []ContentID
	for i, r := range recs {
		msgs[i].Record = r
		in[i] = mailthread.Message{Date: messageDate(r), Draft: isDraft(r)}
		kids, err := ix.store.Children(ctx, r.ID)
		if err != nil {
			return fmt.Errorf("attachments of %d: %w", r.ID, err)
		}
		for _, c := range kids {
			in[i].Attachments = append(in[i].Attachments, attachmentKey(c))
		}
		if r.Content != 0 {
			contents = append(contents, r.Content)
		}
	}
	fps := make(map[ContentID]*Fingerprint, len(contents))
	if err := ix.store.Fingerprints(ctx, contents, func(id ContentID, fp *Fingerprint) error {
		fps[id] = fp
		return nil
	}); err != nil {
		return fmt.Errorf("load fingerprints: %w", err)
	}
	ubiq := ix.newUbiquity(ctx)
	scorers := make(map[ContentID]*scorer)
	marks := mailthread.Inclusive(in, func(i, j int) bool {
		a, b := recs[i].Content, recs[j].Content
		if a == 0 || b == 0 || fps[a] == nil || fps[b] == nil {
			return false
		}
		if a == b {
			return true
		}
		sc := scorers[a]
		if sc == nil {
			sc = ix.newScorer(fps[a], ubiq)
			scorers[a] = sc
		}
		return sc.score(fps[b]).ContainmentAB >= InclusiveContainment
	})
	if ubiq.err != nil {
		return fmt.Errorf("score messages: %w", ubiq.err)
	}
	for i, m := range marks {
		msgs[i].Inclusive, msgs[i].Reason = m.Inclusive, m.Reason.String()
		if m.By >= 0 {
			msgs[i].ContainedIn = recs[m.By].ID
		}
	}
	return nil
}

// attachmentKey identifies an attachment by its text, or its bytes when
// it has no text.
func attachmentKey(r *Record) string {
	if r.Content != 0 {
		return "t" + hex.EncodeToString(r.TextSHA[:])
	}
	return "r" + hex.EncodeToString(r.RawSHA256[:])
}

// messageDate is the message's Date header, else its modification time.
func messageDate(r *Record) time.Time {
	if t, err := time.Parse(time.RFC3339, r.Meta[MetaDate]); err == nil {
		return t
	}
	return r.ModTime
}

// draftFolders are the names of the drafts folder in the languages
// Outlook writes them, lower-cased.
var draftFolders = []string{"drafts", "entwürfe", "brouillons", "borradores", "bozze", "concepten", "utkast", "rascunhos", "kladder"}

// isDraft reports whether r is an unsent message.
func isDraft(r *Record) bool {
	if r.Meta[MetaDraft] == "true" {
		return true
	}
	folder := strings.ToLower(r.Meta[MetaFolder])
	if i := strings.LastIndexAny(folder, "/\\"); i >= 0 {
		folder = folder[i+1:]
	}
	return slices.Contains(draftFolders, folder)
}

// byMeta returns the documents whose metadata key equals value: from the
// store when it is a MetaFinder, else by reading every document.
func (ix *Index) byMeta(ctx context.Context, key, value string) ([]*Record, error) {
	if f, ok := ix.store.(MetaFinder); ok {
		recs, err := f.ByMeta(ctx, key, value)
		if err != nil {
			return nil, fmt.Errorf("documents with %s %q: %w", key, value, err)
		}
		return recs, nil
	}
	var out []*Record
	err := ix.store.Documents(ctx, func(r *Record) error {
		if r.Meta[key] == value {
			out = append(out, r)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("documents with %s %q: %w", key, value, err)
	}
	return out, nil
}

// ThreadOfMessage returns the thread key stored with the message whose
// Message-ID is id (without angle brackets), or "" when none is stored.
// With ThreadOfQuote it makes the Index a mailthread.Finder, which the
// ingest path passes to mailthread.Resolve.
func (ix *Index) ThreadOfMessage(ctx context.Context, id string) (string, error) {
	return ix.threadOfMessage(ctx, id)
}

func (ix *Index) threadOfMessage(ctx context.Context, id string) (string, error) {
	for _, v := range []string{"<" + id + ">", id} {
		recs, err := ix.byMeta(ctx, MetaMessageID, v)
		if err != nil {
			return "", err
		}
		for _, r := range recs {
			if k := r.Meta[MetaThreadID]; k != "" {
				return k, nil
			}
		}
	}
	return "", nil
}

// ThreadOfQuote returns the thread key of the stored message that best
// matches quoted, the text a message quotes (one holds at least
// Thresholds.Containment of the other), or "" when there is none.
func (ix *Index) ThreadOfQuote(ctx context.Context, quoted string) (string, error) {
	fp, err := ix.Fingerprint([32]byte{}, 0, []byte(quoted))
	if errors.Is(err, ErrEmpty) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("thread of quoted text: %w", err)
	}
	th := ix.opts.Thresholds
	th.Resemblance, th.Hamming = 1, -1
	matches, err := ix.SimilarTo(ctx, fp, th)
	if err != nil {
		return "", fmt.Errorf("thread of quoted text: %w", err)
	}
	best, key := 0.0, ""
	for _, m := range matches {
		k := m.Record.Meta[MetaThreadID]
		if s := max(m.ContainmentAB, m.ContainmentBA); k != "" && s > best {
			best, key = s, k
		}
	}
	return key, nil
}

var _ mailthread.Finder = (*Index)(nil)
