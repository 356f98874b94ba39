package export

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/simdex/simdex/index"
)

// Columns are the load-file columns, in order. JSONL objects use the same
// names as keys.
var Columns = []string{
	"DOCID", "Key", "Name", "Source", "VersionID",
	"ParentDocID", "TopLevelDocID", "AttachmentPath",
	"MediaType", "Native_SHA_256", "NativeSize", "TextSize",
	"ModTime", "IndexedAt", "ExtractionError",
	"ND_FamilyID", "ND_PivotID", "ND_IsPivot", "ND_Similarity", "ND_Containment",
	"ExactDupGroup",
	"From", "To", "Cc", "Date", "Subject", "MessageID",
	"EmailThreadID", "Inclusive", "InclusiveReason",
	"DeletedAtSource", "DeletedAtSourceEvent",
	"OriginMetadata",
}

// PathSeparator joins the elements of a document's path in AttachmentPath;
// it is the separator of child keys (ingest.ChildSeparator).
const PathSeparator = "!/"

// Row is one exported document. Id fields are 0 and strings empty when the
// value does not apply.
type Row struct {
	DocID     index.DocID
	Key       string
	Name      string
	Source    string
	VersionID string
	// ParentDocID is the containing document (message, archive) or 0.
	ParentDocID index.DocID
	// TopLevelDocID is the top of the containment chain (the message an
	// attachment came with): the attachment family's id. It is the
	// document itself for a top-level document.
	TopLevelDocID index.DocID
	// AttachmentPath is the location from the top-level object, joined
	// with PathSeparator.
	AttachmentPath  string
	MediaType       string
	NativeSHA256    [32]byte
	NativeSize      int64
	TextSize        int64
	ModTime         time.Time
	IndexedAt       time.Time
	ExtractionError string

	// InFamily reports whether the near-duplicate fields below apply.
	InFamily      bool
	NDFamilyID    index.DocID
	NDPivotID     index.DocID
	NDIsPivot     bool
	NDSimilarity  float64 // percentage, 0–100
	NDContainment float64 // percentage, 0–100

	// ExactDupGroup is the smallest id of the identical-text set, or 0.
	ExactDupGroup index.DocID

	// E-mail metadata, from index.Doc.Meta.
	From, To, Cc, Date, Subject, MessageID string

	// EmailThreadID is the message's thread (index.Thread.ID), empty for a
	// document that is not an e-mail message. Inclusive says whether no
	// later message of the thread holds all of it (reviewing the inclusive
	// messages covers the thread), InclusiveReason why ("Message",
	// "Attachment", "Draft"); both apply only with an EmailThreadID.
	EmailThreadID   string
	Inclusive       bool
	InclusiveReason string

	// DeletedAtSource is when the source deleted a document that a legal
	// hold keeps in the index, and DeletedAtSourceEvent the event that
	// reported it; empty otherwise.
	DeletedAtSource, DeletedAtSourceEvent string

	// OriginMetadata is the metadata the origin delivered with the object
	// (index.Doc.Origin: S3 user metadata and tags, NATS Simdex-Meta-*
	// headers), whatever its uploader chose; a load file holds it as one
	// JSON object. Empty for a child, and for a document indexed before it
	// was kept apart (its origin metadata is then among simdex's own).
	OriginMetadata map[string]string
}

// Values returns the row's fields as strings, in Columns order.
func (r *Row) Values() []string {
	return r.AppendValues(make([]string, 0, len(Columns)))
}

// AppendValues appends the row's fields as strings, in Columns order, to
// dst and returns it.
func (r *Row) AppendValues(dst []string) []string {
	dst = append(dst,
		id(r.DocID), r.Key, r.Name, r.Source, r.VersionID,
		id(r.ParentDocID), id(r.TopLevelDocID), r.AttachmentPath,
		r.MediaType, sha(r.NativeSHA256), strconv.FormatInt(r.NativeSize, 10), strconv.FormatInt(r.TextSize, 10),
		stamp(r.ModTime), stamp(r.IndexedAt), r.ExtractionError,
	)
	if r.InFamily {
		pivot := "no"
		if r.NDIsPivot {
			pivot = "yes"
		}
		dst = append(dst, id(r.NDFamilyID), id(r.NDPivotID), pivot, percent(r.NDSimilarity), percent(r.NDContainment))
	} else {
		dst = append(dst, "", "", "", "", "")
	}
	dst = append(dst, id(r.ExactDupGroup), r.From, r.To, r.Cc, r.Date, r.Subject, r.MessageID, r.EmailThreadID)
	switch {
	case r.EmailThreadID == "":
		dst = append(dst, "", "")
	case r.Inclusive:
		dst = append(dst, "yes", r.InclusiveReason)
	default:
		dst = append(dst, "no", "")
	}
	return append(dst, r.DeletedAtSource, r.DeletedAtSourceEvent, originJSON(r.OriginMetadata))
}

// originJSON is a load file's OriginMetadata cell: the object's keys in
// order, "" when there are none. It starts with "{", which no
// spreadsheet reads as a formula, and escapes line breaks and tabs.
func originJSON(m map[string]string) string {
	if len(m) == 0 {
		return ""
	}
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.Encode(m) // strings always encode
	return strings.TrimSuffix(b.String(), "\n")
}

func id(v index.DocID) string {
	if v == 0 {
		return ""
	}
	return strconv.FormatInt(int64(v), 10)
}

func sha(h [32]byte) string {
	if h == ([32]byte{}) {
		return ""
	}
	return hex.EncodeToString(h[:])
}

func stamp(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.RFC3339)
}

// percent formats a percentage with one decimal.
func percent(p float64) string { return strconv.FormatFloat(roundPercent(p), 'f', 1, 64) }

func roundPercent(p float64) float64 { return math.Round(p*10) / 10 }

// Engine is what rows are built from: *index.Index.
type Engine interface {
	// Analyse reports identical sets, pairs and families.
	Analyse(ctx context.Context, th index.Thresholds) (*index.Analysis, error)
	// Similar returns the near-copies of a stored document.
	Similar(ctx context.Context, id index.DocID, th index.Thresholds) ([]index.Match, error)
	// Store returns the store, for the sketches of members a pivot's
	// query does not reach.
	Store() index.Store
}

// Filter selects the documents to export; nil exports every document.
type Filter func(*index.Record) bool

// OnlyDocs returns a Filter keeping the documents with the given ids (a
// legal matter's documents, say).
func OnlyDocs(ids ...index.DocID) Filter {
	set := make(map[index.DocID]struct{}, len(ids))
	for _, v := range ids {
		set[v] = struct{}{}
	}
	return func(r *index.Record) bool {
		_, ok := set[r.ID]
		return ok
	}
}

// ndInfo is one document's near-duplicate fields.
type ndInfo struct {
	family, pivot index.DocID
	sim, cont     float64
}

// Rows calls fn with the row of every document of an that include keeps
// (every document when include is nil), by ascending DOCID. eng scores
// family members whose pair with the pivot an does not hold; th are the
// thresholds an was made with. The row passed to fn is reused: fn must not
// keep it.
func Rows(ctx context.Context, eng Engine, an *index.Analysis, th index.Thresholds, include Filter, fn func(*Row) error) error {
	nd, err := nearDupFields(ctx, eng, an, th, include)
	if err != nil {
		return err
	}
	exact := make(map[index.DocID]index.DocID)
	for _, set := range an.Identical {
		g := slices.Min(set)
		for _, d := range set {
			exact[d] = g
		}
	}
	ids := make([]index.DocID, 0, len(an.Documents))
	for d, r := range an.Documents {
		if include == nil || include(r) {
			ids = append(ids, d)
		}
	}
	slices.Sort(ids)
	threads := newThreadMarks(eng)
	var row Row
	for i, d := range ids {
		if i%1024 == 0 {
			if err := ctx.Err(); err != nil {
				return fmt.Errorf("build rows: %w", err)
			}
		}
		rec := an.Documents[d]
		row = Row{
			DocID:           rec.ID,
			Key:             rec.Key,
			Name:            rec.Name,
			Source:          rec.Source,
			VersionID:       rec.VersionID,
			ParentDocID:     rec.Parent,
			TopLevelDocID:   topLevel(an, rec),
			AttachmentPath:  strings.Join(rec.Path, PathSeparator),
			MediaType:       rec.MediaType,
			NativeSHA256:    rec.RawSHA256,
			NativeSize:      rec.RawSize,
			TextSize:        rec.TextSize,
			ModTime:         rec.ModTime,
			IndexedAt:       rec.IndexedAt,
			ExtractionError: rec.Error,
			ExactDupGroup:   exact[d],
			From:            rec.Meta[index.MetaFrom],
			To:              rec.Meta[index.MetaTo],
			Cc:              rec.Meta[index.MetaCc],
			Date:            rec.Meta[index.MetaDate],
			Subject:         rec.Meta[index.MetaSubject],
			MessageID:       rec.Meta[index.MetaMessageID],

			DeletedAtSource:      rec.Meta[index.MetaDeletedAtSource],
			DeletedAtSourceEvent: rec.Meta[index.MetaDeletedAtSourceEvent],
			OriginMetadata:       rec.Origin,
		}
		if err := threads.mark(ctx, rec, &row); err != nil {
			return err
		}
		if n, ok := nd[d]; ok {
			row.InFamily = true
			row.NDFamilyID, row.NDPivotID, row.NDIsPivot = n.family, n.pivot, d == n.pivot
			row.NDSimilarity, row.NDContainment = n.sim, n.cont
		}
		if err := fn(&row); err != nil {
			return err
		}
	}
	return nil
}

// topLevel follows the parent chain of r to its top-level document.
func topLevel(an *index.Analysis, r *index.Record) index.DocID {
	top := r.ID
	for hops := 0; r.Parent != 0 && hops < 64; hops++ {
		p, ok := an.Documents[r.Parent]
		if !ok {
			return r.Parent // parent removed meanwhile: the best we know
		}
		top, r = p.ID, p
	}
	return top
}

// nearDupFields computes the ND fields of every family member that include
// keeps.
func nearDupFields(ctx context.Context, eng Engine, an *index.Analysis, th index.Thresholds, include Filter) (map[index.DocID]ndInfo, error) {
	// Pair scores by (member content, pivot content), oriented so that
	// ContainmentAB is the member's share found in the pivot.
	type key struct{ member, pivot index.ContentID }
	pairs := make(map[key]index.Scores, len(an.Pairs)*2)
	for _, p := range an.Pairs {
		pairs[key{p.A, p.B}] = p.Scores
		flipped := p.Scores
		flipped.ContainmentAB, flipped.ContainmentBA = p.ContainmentBA, p.ContainmentAB
		pairs[key{p.B, p.A}] = flipped
	}
	out := make(map[index.DocID]ndInfo)
	for fi := range an.Families {
		f := &an.Families[fi]
		pivotRec, ok := an.Documents[f.Pivot]
		if !ok || len(f.Members) == 0 {
			continue
		}
		famID := slices.Min(f.Members)
		pc := pivotRec.Content
		// Scores of each member content against the pivot content.
		scores := map[index.ContentID]index.Scores{pc: {Resemblance: 1, ContainmentAB: 1, ContainmentBA: 1, Exact: true}}
		var missing []index.ContentID
		wanted := false
		for _, d := range f.Members {
			r := an.Documents[d]
			if r == nil {
				continue
			}
			if include == nil || include(r) {
				wanted = true
			}
			if _, ok := scores[r.Content]; ok {
				continue
			}
			if s, ok := pairs[key{r.Content, pc}]; ok {
				scores[r.Content] = s
				continue
			}
			if !slices.Contains(missing, r.Content) {
				missing = append(missing, r.Content)
			}
		}
		if !wanted {
			continue
		}
		if len(missing) > 0 {
			if err := scoreMissing(ctx, eng, f.Pivot, pc, missing, scores); err != nil {
				return nil, err
			}
		}
		for _, d := range f.Members {
			r := an.Documents[d]
			if r == nil {
				continue
			}
			s := scores[r.Content]
			out[d] = ndInfo{family: famID, pivot: f.Pivot, sim: 100 * s.Resemblance, cont: 100 * s.ContainmentAB}
		}
	}
	return out, nil
}

// everything reports every scored candidate of a Similar query.
var everything = index.Thresholds{Scope: index.Scope{Resemblance: math.SmallestNonzeroFloat64, Containment: math.SmallestNonzeroFloat64}, Hamming: 64}

// scoreMissing scores the contents in missing against the pivot's content:
// one Similar query from the pivot, then the stored sketches for the
// members that query does not reach (linked to the pivot only through
// other members).
func scoreMissing(ctx context.Context, eng Engine, pivot index.DocID, pc index.ContentID, missing []index.ContentID, scores map[index.ContentID]index.Scores) error {
	matches, err := eng.Similar(ctx, pivot, everything)
	if err != nil {
		return fmt.Errorf("score family of pivot %d: %w", pivot, err)
	}
	for _, m := range matches {
		if _, ok := scores[m.Record.Content]; ok {
			continue
		}
		s := m.Scores
		// Similar compares the pivot (A) with the member (B).
		s.ContainmentAB, s.ContainmentBA = m.ContainmentBA, m.ContainmentAB
		scores[m.Record.Content] = s
	}
	var rest []index.ContentID
	for _, c := range missing {
		if _, ok := scores[c]; !ok {
			rest = append(rest, c)
		}
	}
	if len(rest) == 0 {
		return nil
	}
	fps := make(map[index.ContentID]*index.Fingerprint, len(rest)+1)
	err = eng.Store().Fingerprints(ctx, append([]index.ContentID{pc}, rest...), func(c index.ContentID, fp *index.Fingerprint) error {
		fps[c] = fp
		return nil
	})
	if err != nil {
		return fmt.Errorf("load sketches of family of pivot %d: %w", pivot, err)
	}
	p := fps[pc]
	for _, c := range rest {
		m := fps[c]
		if p == nil || m == nil {
			scores[c] = index.Scores{} // removed meanwhile
			continue
		}
		sc := index.Scores{Resemblance: m.Resemblance(p)}
		sc.ContainmentAB, sc.ContainmentBA = m.Containments(p)
		scores[c] = sc
	}
	return nil
}
