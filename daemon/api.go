package daemon

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"log/slog"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/simdex/simdex/auth"
	"github.com/simdex/simdex/extract"
	"github.com/simdex/simdex/index"
	"github.com/simdex/simdex/notifier"
)

// Match is one near-copy in the JSON answers of the API and the CLI.
// ContainmentAB is the share of the queried document found in the match.
type Match struct {
	ID     index.DocID `json:"id"`
	Name   string      `json:"name"`
	Key    string      `json:"key"`
	Path   []string    `json:"path,omitempty"`
	Parent index.DocID `json:"parent,omitempty"`
	Query  string      `json:"query,omitempty"`
	index.Scores
	SameBytes bool `json:"same_bytes"`
}

// Matches converts index matches; query names the part of an uploaded file
// (an attachment, an archive member) that matched, if not the file itself.
func Matches(ms []index.Match, query string) []Match {
	out := make([]Match, 0, len(ms))
	for _, m := range ms {
		out = append(out, Match{
			ID: m.Record.ID, Name: m.Record.Name, Key: m.Record.Key, Path: m.Record.Path, Parent: m.Record.Parent, Query: query,
			Scores: m.Scores.Rounded(), SameBytes: m.SameBytes,
		})
	}
	return out
}

// SimilarToObject extracts an object that is not stored and returns the
// near-copies of it and of each of its children.
func SimilarToObject(ctx context.Context, ix *index.Index, ex *extract.Extractor, obj extract.Object, th index.Thresholds) ([]Match, error) {
	doc, err := ex.Extract(ctx, obj)
	if doc == nil || (err != nil && len(doc.Children) == 0) {
		return nil, fmt.Errorf("extract %s: %w", obj.Name, err)
	}
	out := []Match{}
	compared := 0 // documents with text: none means there was nothing to compare
	var visit func(d *extract.Document, top bool) error
	visit = func(d *extract.Document, top bool) error {
		if d.Err == nil && strings.TrimSpace(d.Text) != "" {
			fp, err := ix.Fingerprint(d.SHA256, d.Size, []byte(d.Text))
			switch {
			case errors.Is(err, index.ErrEmpty):
			case err != nil:
				return fmt.Errorf("fingerprint %s: %w", strings.Join(d.Path, "/"), err)
			default:
				compared++
				ms, err := ix.SimilarTo(ctx, fp, th)
				if err != nil {
					return err
				}
				q := ""
				if !top {
					q = strings.Join(d.Path, " / ")
				}
				out = append(out, Matches(ms, q)...)
			}
		}
		for _, c := range d.Children {
			if err := visit(c, false); err != nil {
				return err
			}
		}
		return nil
	}
	if err := visit(doc, true); err != nil {
		return nil, err
	}
	if compared == 0 {
		return nil, fmt.Errorf("compare %s: %w: the file has no text to compare", obj.Name, index.ErrEmpty)
	}
	return out, nil
}

// api serves the HTTP endpoints.
type api struct {
	ix      *index.Index
	ex      *extract.Extractor
	th      index.Thresholds
	ready   func() error
	gather  prometheus.Gatherer
	maxBody int64
	logger  *slog.Logger
	// backfill queues every object version of an S3 connector.
	backfill func(ctx context.Context, name string) error
	// outbox lists and requeues alert deliveries.
	outbox deliveries
	// policy places holds, lists and settles flags, evaluates retention.
	policy policyEngine
	// ingester indexes seed files sent with a hold.
	ingester objectIngester
	// deadLetters lists up to limit dead-lettered events, oldest first.
	deadLetters func(ctx context.Context, limit int) ([]DeadLetter, error)
	// openAPIDoc is the OpenAPI document, built on first request: it
	// never changes while the daemon runs.
	openAPIDoc  map[string]any
	openAPIOnce sync.Once
	// authn checks tokens; certs maps client certificates (optional).
	authn auth.Authenticator
	certs *auth.CertMap
	// tokens manages API tokens (the tokens endpoints).
	tokens tokenManager
	// records reads the stored rules and the audit log.
	records policyRecords
	// searches admits near-copy searches in turn; nil runs them at once.
	searches *searchGate
	// ui serves the review UI at / and /ui/; nil serves none.
	ui http.Handler
}

// DeadLetter is an event that exhausted its deliveries, as the API shows it.
type DeadLetter struct {
	Source    string              `json:"source"`
	Subject   string              `json:"subject"`
	Stream    string              `json:"stream"`
	Sequence  uint64              `json:"sequence"`
	Delivered uint64              `json:"delivered"`
	Error     string              `json:"error"`
	Time      time.Time           `json:"time"`
	Published time.Time           `json:"published,omitzero"`
	Headers   map[string][]string `json:"headers,omitempty"`
	Size      int                 `json:"size"`
	// Data is the original payload, up to 64 KiB (an S3 event record, a
	// reference, or the start of a document).
	Data string `json:"data"`
}

func (a *api) thresholds(r *http.Request) (index.Thresholds, error) {
	th := a.th
	q := r.URL.Query()
	for name, dst := range map[string]*float64{"resemblance": &th.Resemblance, "containment": &th.Containment} {
		if v := q.Get(name); v != "" {
			f, err := strconv.ParseFloat(v, 64)
			if err != nil {
				return th, fmt.Errorf("query parameter %s: %w", name, err)
			}
			*dst = f
		}
	}
	return th, th.Validate()
}

func (a *api) similarByID(w http.ResponseWriter, r *http.Request) {
	id, ok := pathDocID(w, r)
	if !ok {
		return
	}
	th, err := a.thresholds(r)
	if err != nil {
		writeError(w, http.StatusBadRequest, err)
		return
	}
	// The document and its search read one state of the index, on one
	// connection, released before the answer is written.
	ctx, done, err := a.ix.Snapshot(r.Context())
	if err != nil {
		a.logger.Error("similar by id", "doc_id", id, "err", err)
		writeError(w, http.StatusInternalServerError, err)
		return
	}
	rec, ok := a.getRecord(w, r.WithContext(ctx), id)
	if !ok {
		done()
		return
	}
	ms, err := a.ix.SimilarOf(ctx, rec, th)
	done()
	switch {
	case errors.Is(err, index.ErrNotFound):
		writeError(w, http.StatusNotFound, err)
	case err != nil:
		a.logger.Error("similar by id", "doc_id", id, "err", err)
		writeError(w, http.StatusInternalServerError, err)
	default:
		writeJSON(w, http.StatusOK, map[string]any{"matches": visibleMatches(principal(r), Matches(ms, ""))})
	}
}

func (a *api) similarByUpload(w http.ResponseWriter, r *http.Request) {
	th, err := a.thresholds(r)
	if err != nil {
		writeError(w, http.StatusBadRequest, err)
		return
	}
	body := http.MaxBytesReader(w, r.Body, a.maxBody)
	ms, err := SimilarToObject(r.Context(), a.ix, a.ex, extract.Object{
		Name: uploadName(r), ContentType: r.Header.Get("Content-Type"), Reader: body,
	}, th)
	var tooBig *http.MaxBytesError
	switch {
	case errors.As(err, &tooBig) || errors.Is(err, extract.ErrTooLarge):
		writeError(w, http.StatusRequestEntityTooLarge, err)
	case err != nil && (isExtractError(err) || errors.Is(err, index.ErrEmpty)):
		writeError(w, http.StatusUnprocessableEntity, err)
	case err != nil:
		a.logger.Error("similar by upload", "err", err)
		writeError(w, http.StatusInternalServerError, err)
	default:
		writeJSON(w, http.StatusOK, map[string]any{"matches": visibleMatches(principal(r), ms)})
	}
}

func isExtractError(err error) bool {
	var xe *extract.Error
	return errors.As(err, &xe)
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	_ = enc.Encode(v)
}

func writeError(w http.ResponseWriter, code int, err error) {
	writeJSON(w, code, map[string]string{"error": err.Error()})
}

func (a *api) backfillConnector(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("name")
	if a.backfill == nil {
		writeError(w, http.StatusServiceUnavailable, errors.New("backfill is not available"))
		return
	}
	err := a.backfill(r.Context(), name)
	switch {
	case errors.Is(err, ErrNotFound):
		writeError(w, http.StatusNotFound, err)
	case err != nil:
		a.logger.Error("backfill", "connector", name, "err", err)
		writeError(w, http.StatusBadGateway, err)
	default:
		writeJSON(w, http.StatusAccepted, map[string]string{"status": "queued", "connector": name})
	}
}

// Document is a stored document version in the API's answers.
type Document struct {
	ID        index.DocID       `json:"id"`
	Key       string            `json:"key"`
	VersionID string            `json:"version_id,omitempty"`
	Name      string            `json:"name"`
	Source    string            `json:"source"`
	Parent    index.DocID       `json:"parent,omitempty"`
	Path      []string          `json:"path,omitempty"`
	MediaType string            `json:"media_type,omitempty"`
	Meta      map[string]string `json:"meta,omitempty"`
	Error     string            `json:"error,omitempty"`
	RawSize   int64             `json:"raw_size"`
	TextSize  int64             `json:"text_size"`
	Content   index.ContentID   `json:"content,omitempty"`
	ModTime   string            `json:"mod_time,omitempty"`
	IndexedAt string            `json:"indexed_at"`
}

// NewDocument converts a stored record.
func NewDocument(r *index.Record) Document {
	d := Document{
		ID: r.ID, Key: r.Key, VersionID: r.VersionID, Name: r.Name, Source: r.Source, Parent: r.Parent,
		Path: r.Path, MediaType: r.MediaType, Meta: r.Meta, Error: r.Error, RawSize: r.RawSize,
		TextSize: r.TextSize, Content: r.Content, IndexedAt: r.IndexedAt.UTC().Format(time.RFC3339Nano),
	}
	if !r.ModTime.IsZero() {
		d.ModTime = r.ModTime.UTC().Format(time.RFC3339Nano)
	}
	return d
}

func (a *api) document(w http.ResponseWriter, r *http.Request) {
	id, ok := pathDocID(w, r)
	if !ok {
		return
	}
	if rec, ok := a.getRecord(w, r, id); ok {
		writeJSON(w, http.StatusOK, NewDocument(rec))
	}
}

// documentsByKey answers GET /api/v1/documents?key=K with the stored
// versions of K (newest first).
func (a *api) documentsByKey(w http.ResponseWriter, r *http.Request) {
	key := r.URL.Query().Get("key")
	if key == "" {
		writeError(w, http.StatusBadRequest, errors.New("query parameter key is required"))
		return
	}
	recs, err := a.ix.Store().Lookup(r.Context(), key)
	if err != nil && !errors.Is(err, index.ErrNotFound) {
		writeError(w, http.StatusInternalServerError, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"documents": documents(principal(r), recs)})
}

func (a *api) stats(w http.ResponseWriter, r *http.Request) {
	st, err := a.ix.Store().Stats(r.Context())
	if err != nil {
		writeError(w, http.StatusInternalServerError, err)
		return
	}
	writeJSON(w, http.StatusOK, st)
}

func (a *api) listDeadLetters(w http.ResponseWriter, r *http.Request) {
	limit := 100
	if v := r.URL.Query().Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			writeError(w, http.StatusBadRequest, fmt.Errorf("limit %q: want a count >= 0 (0: all)", v))
			return
		}
		limit = n
	}
	if a.deadLetters == nil {
		writeError(w, http.StatusServiceUnavailable, errors.New("dead letters are not available"))
		return
	}
	dls, err := a.deadLetters(r.Context(), limit)
	if err != nil {
		a.logger.Error("list dead letters", "err", err)
		writeError(w, http.StatusBadGateway, err)
		return
	}
	if dls == nil {
		dls = []DeadLetter{}
	}
	writeJSON(w, http.StatusOK, map[string]any{"deadletters": dls})
}

// deliveries is what the API needs of the notifier.
type deliveries interface {
	Deliveries(ctx context.Context, status string, limit int) ([]notifier.Delivery, error)
	Requeue(ctx context.Context, ids ...int64) error
}

// listDeliveries answers GET /api/v1/deliveries?status=S&limit=N: the
// notifier's outbox, newest first, so an operator sees what was sent,
// what is being retried and what failed for good.
func (a *api) listDeliveries(w http.ResponseWriter, r *http.Request) {
	if a.outbox == nil {
		writeError(w, http.StatusServiceUnavailable, errors.New("the notifier is not running"))
		return
	}
	q := r.URL.Query()
	limit := 100
	if v := q.Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			writeError(w, http.StatusBadRequest, fmt.Errorf("limit %q: want a count >= 1", v))
			return
		}
		limit = n
	}
	ds, err := a.outbox.Deliveries(r.Context(), q.Get("status"), limit)
	if err != nil {
		writeError(w, http.StatusBadRequest, err)
		return
	}
	if ds == nil {
		ds = []notifier.Delivery{}
	}
	writeJSON(w, http.StatusOK, map[string]any{"deliveries": ds})
}

// requeueDeliveries answers POST /api/v1/deliveries/requeue with body
// {"ids": [...]}: failed deliveries are retried now.
func (a *api) requeueDeliveries(w http.ResponseWriter, r *http.Request) {
	if a.outbox == nil {
		writeError(w, http.StatusServiceUnavailable, errors.New("the notifier is not running"))
		return
	}
	var body struct {
		IDs []int64 `json:"ids"`
	}
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 1<<20)).Decode(&body); err != nil || len(body.IDs) == 0 {
		writeError(w, http.StatusBadRequest, errors.New(`body: want {"ids": [delivery ids]}`))
		return
	}
	if err := a.outbox.Requeue(r.Context(), body.IDs...); err != nil {
		status := http.StatusInternalServerError
		if errors.Is(err, notifier.ErrNotFound) {
			status = http.StatusNotFound
		}
		writeError(w, status, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"requeued": len(body.IDs)})
}

// HeaderName names an uploaded file, percent-encoded (browsers send only
// ASCII header values); the name query parameter wins over it.
const HeaderName = "X-Simdex-Name"

func uploadName(r *http.Request) string {
	if n := r.URL.Query().Get("name"); n != "" {
		return n
	}
	h := r.Header.Get(HeaderName)
	if n, err := url.PathUnescape(h); err == nil {
		return n
	}
	return h
}
