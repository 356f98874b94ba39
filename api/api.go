package api

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
	"github.com/simdex/simdex/ingest"
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

// ObjectMatches converts the near-copies of an object's parts, naming
// each part inside the object (an attachment, a member) in Query.
func ObjectMatches(parts []ingest.Part) []Match {
	out := []Match{}
	for _, p := range parts {
		out = append(out, Matches(p.Matches, strings.Join(p.Path, " / "))...)
	}
	return out
}

// TextRereader reads documents' extracted texts again from their
// origins, returning them only if they are the texts indexed, each object
// read once (ingest.Rereader).
type TextRereader interface {
	Texts(ctx context.Context, recs ...*index.Record) ([][]byte, error)
}

// ErrNotFound reports that what a request names (a connector) does not exist.
var ErrNotFound = errors.New("not found")

// Deps is what the API serves from, given to New by the daemon. A nil
// Policy, Records, Outbox, Backfill or DeadLetters makes its routes
// answer 503; a nil Authn, every route but the public ones.
type Deps struct {
	Index      *index.Index
	Extractor  *extract.Extractor
	Thresholds index.Thresholds
	// MaxBody bounds an uploaded file (extract.max_object_size);
	// MaxSearches, the near-copy searches that run at once.
	MaxBody     int64
	MaxSearches int
	// Memory is the process's memory budget, shared with the pipeline:
	// uploads are charged what reading, extracting and fingerprinting
	// them hold, and answered 503 when it is taken. Nil: no bound.
	Memory *extract.Budget
	// Registry is served at /metrics and holds the search gauges.
	Registry *prometheus.Registry
	Logger   *slog.Logger
	// Health lists what GET /readyz checks: the daemon has started, and
	// its stores and NATS answer. Each check gets HealthTimeout (zero:
	// DefaultHealthTimeout).
	Health        []Check
	HealthTimeout time.Duration
	// Backfill queues every object version of an S3 connector, failing
	// with ErrNotFound for a name that is none.
	Backfill func(ctx context.Context, name string) error
	// DeadLetters lists up to limit dead-lettered events, oldest first.
	DeadLetters func(ctx context.Context, limit int) ([]DeadLetter, error)
	Outbox      Deliveries
	Policy      PolicyEngine
	Records     PolicyRecords
	// Ingester indexes the seed files sent with a hold.
	Ingester ObjectIngester
	// Reread reads a document's text again from its origin where the
	// index does not keep it (index.keep_text: false); nil answers 404
	// for such a document.
	Reread TextRereader
	// Authn checks tokens; Certs maps client certificates (optional).
	Authn  auth.Authenticator
	Certs  *auth.CertMap
	Tokens TokenManager
	// UI serves the review UI at / and /ui/; nil serves none.
	UI http.Handler
}

// Server serves the HTTP endpoints over its Deps.
type Server struct {
	Deps
	// searches admits near-copy searches in turn; nil runs them at once.
	searches *searchGate
	// openAPIDoc is the OpenAPI document, built on first request: it
	// never changes while the daemon runs.
	openAPIDoc  map[string]any
	openAPIOnce sync.Once
}

// New returns the API over deps and registers its gauges in
// deps.Registry; Unregister removes them. It starts nothing.
func New(deps Deps) (*Server, error) {
	g, err := newSearchGate(deps.MaxSearches, deps.Registry)
	if err != nil {
		return nil, fmt.Errorf("register metrics: %w", err)
	}
	return &Server{Deps: deps, searches: g}, nil
}

// Unregister removes the gauges New registered.
func (a *Server) Unregister() { a.searches.unregister(a.Registry) }

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

func (a *Server) thresholds(r *http.Request) (index.Thresholds, error) {
	th := a.Thresholds
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

func (a *Server) similarByID(w http.ResponseWriter, r *http.Request) {
	id, ok := pathID[index.DocID](w, r, "document")
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
	ctx, done, err := a.Index.Snapshot(r.Context())
	if err != nil {
		a.Logger.Error("similar by id", "doc_id", id, "err", err)
		writeError(w, http.StatusInternalServerError, err)
		return
	}
	rec, ok := a.getRecord(w, r.WithContext(ctx), id)
	if !ok {
		done()
		return
	}
	ms, err := a.Index.SimilarOf(ctx, rec, th)
	done()
	switch {
	case errors.Is(err, index.ErrNotFound):
		writeError(w, http.StatusNotFound, err)
	case err != nil:
		a.Logger.Error("similar by id", "doc_id", id, "err", err)
		writeError(w, http.StatusInternalServerError, err)
	default:
		a.writeMatches(w, r, Matches(ms, ""))
	}
}

func (a *Server) similarByUpload(w http.ResponseWriter, r *http.Request) {
	th, err := a.thresholds(r)
	if err != nil {
		writeError(w, http.StatusBadRequest, err)
		return
	}
	body := http.MaxBytesReader(w, r.Body, a.MaxBody)
	mem := a.Memory.Open(false)
	defer mem.Close()
	parts, err := ingest.SimilarToObject(r.Context(), a.Index, a.Extractor, extract.Object{
		Name: uploadName(r), ContentType: r.Header.Get("Content-Type"), Reader: body, Memory: mem,
	}, th)
	var tooBig *http.MaxBytesError
	switch {
	case memoryBusy(w, err):
	case errors.As(err, &tooBig) || errors.Is(err, extract.ErrTooLarge):
		writeError(w, http.StatusRequestEntityTooLarge, err)
	case err != nil && (errors.As(err, new(*extract.Error)) || errors.Is(err, index.ErrEmpty)):
		writeError(w, http.StatusUnprocessableEntity, err)
	case err != nil:
		a.Logger.Error("similar by upload", "err", err)
		writeError(w, http.StatusInternalServerError, err)
	default:
		a.writeMatches(w, r, ObjectMatches(parts))
	}
}

// writeMatches answers with the matches the caller may see, saying
// nothing of the others.
func (a *Server) writeMatches(w http.ResponseWriter, r *http.Request, ms []Match) {
	ms, err := a.visibleMatches(r, ms)
	if err != nil {
		a.Logger.Error("similar: scope", "err", err)
		writeError(w, http.StatusInternalServerError, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"matches": ms})
}

// RetryMemoryAfter is the Retry-After of an upload refused because the
// memory budget is taken: about the time an object takes to be indexed.
const RetryMemoryAfter = 5 * time.Second

// memoryBusy answers 503 with Retry-After when err is the memory budget
// refusing a request for now (it would fit later), and reports whether
// it did. One that could never fit is left to the caller's 413.
func memoryBusy(w http.ResponseWriter, err error) bool {
	if !errors.Is(err, extract.ErrMemory) || errors.Is(err, extract.ErrTooLarge) {
		return false
	}
	w.Header().Set("Retry-After", strconv.Itoa(int(RetryMemoryAfter.Seconds())))
	writeError(w, http.StatusServiceUnavailable, err)
	return true
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

func (a *Server) backfillConnector(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("name")
	if a.Backfill == nil {
		writeError(w, http.StatusServiceUnavailable, errors.New("backfill is not available"))
		return
	}
	err := a.Backfill(r.Context(), name)
	switch {
	case errors.Is(err, ErrNotFound):
		writeError(w, http.StatusNotFound, err)
	case err != nil:
		a.Logger.Error("backfill", "connector", name, "err", err)
		writeError(w, http.StatusBadGateway, err)
	default:
		writeJSON(w, http.StatusAccepted, map[string]string{"status": "queued", "connector": name})
	}
}

// Document is a stored document version in the API's answers.
type Document struct {
	ID        index.DocID `json:"id"`
	Key       string      `json:"key"`
	VersionID string      `json:"version_id,omitempty"`
	Name      string      `json:"name"`
	Source    string      `json:"source"`
	Parent    index.DocID `json:"parent,omitempty"`
	Path      []string    `json:"path,omitempty"`
	MediaType string      `json:"media_type,omitempty"`
	// Meta is simdex's own metadata (index.Doc.Meta): what extraction
	// found, and the index's marks.
	Meta map[string]string `json:"meta,omitempty"`
	// Origin is the metadata the origin delivered with the object
	// (index.Doc.Origin: S3 user metadata and tags, NATS Simdex-Meta-*
	// headers), which its uploader chose. A document indexed before it was
	// kept apart has none here: its origin metadata is among Meta.
	Origin    map[string]string `json:"origin,omitempty"`
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
		Path: r.Path, MediaType: r.MediaType, Meta: r.Meta, Origin: r.Origin, Error: r.Error, RawSize: r.RawSize,
		TextSize: r.TextSize, Content: r.Content, IndexedAt: r.IndexedAt.UTC().Format(time.RFC3339Nano),
	}
	if !r.ModTime.IsZero() {
		d.ModTime = r.ModTime.UTC().Format(time.RFC3339Nano)
	}
	return d
}

func (a *Server) document(w http.ResponseWriter, r *http.Request) {
	if rec, ok := a.pathRecord(w, r); ok {
		writeJSON(w, http.StatusOK, NewDocument(rec))
	}
}

// documentsByKey answers GET /api/v1/documents?key=K with the stored
// versions of K (newest first).
func (a *Server) documentsByKey(w http.ResponseWriter, r *http.Request) {
	key := r.URL.Query().Get("key")
	if key == "" {
		writeError(w, http.StatusBadRequest, errors.New("query parameter key is required"))
		return
	}
	recs, err := a.Index.Store().Lookup(r.Context(), key)
	if err != nil && !errors.Is(err, index.ErrNotFound) {
		writeError(w, http.StatusInternalServerError, err)
		return
	}
	a.writeDocuments(w, r, recs)
}

func (a *Server) stats(w http.ResponseWriter, r *http.Request) {
	st, err := a.scope(r).Stats(r.Context())
	if err != nil {
		writeError(w, http.StatusInternalServerError, err)
		return
	}
	writeJSON(w, http.StatusOK, st)
}

func (a *Server) listDeadLetters(w http.ResponseWriter, r *http.Request) {
	limit, ok := limitParam(w, r, 100, 0, "want a count >= 0 (0: all)")
	if !ok {
		return
	}
	if a.DeadLetters == nil {
		writeError(w, http.StatusServiceUnavailable, errors.New("dead letters are not available"))
		return
	}
	dls, err := a.DeadLetters(r.Context(), limit)
	if err != nil {
		a.Logger.Error("list dead letters", "err", err)
		writeError(w, http.StatusBadGateway, err)
		return
	}
	if dls == nil {
		dls = []DeadLetter{}
	}
	writeJSON(w, http.StatusOK, map[string]any{"deadletters": dls})
}

// Deliveries is what the API needs of the notifier.
type Deliveries interface {
	Deliveries(ctx context.Context, status string, limit int) ([]notifier.Delivery, error)
	Requeue(ctx context.Context, ids ...int64) error
}

// listDeliveries answers GET /api/v1/deliveries?status=S&limit=N: the
// notifier's outbox, newest first, so an operator sees what was sent,
// what is being retried and what failed for good.
func (a *Server) listDeliveries(w http.ResponseWriter, r *http.Request) {
	if a.Outbox == nil {
		writeError(w, http.StatusServiceUnavailable, errors.New("the notifier is not running"))
		return
	}
	limit, ok := limitParam(w, r, 100, 1, "want a count >= 1")
	if !ok {
		return
	}
	ds, err := a.Outbox.Deliveries(r.Context(), r.URL.Query().Get("status"), limit)
	if err != nil {
		writeError(w, http.StatusBadRequest, err)
		return
	}
	if limited(principal(r)) {
		ds = nil // alerts are the organisation's: none is of one matter alone
	}
	if ds == nil {
		ds = []notifier.Delivery{}
	}
	writeJSON(w, http.StatusOK, map[string]any{"deliveries": ds})
}

// requeueDeliveries answers POST /api/v1/deliveries/requeue with body
// {"ids": [...]}: failed deliveries are retried now.
func (a *Server) requeueDeliveries(w http.ResponseWriter, r *http.Request) {
	if a.Outbox == nil {
		writeError(w, http.StatusServiceUnavailable, errors.New("the notifier is not running"))
		return
	}
	var body idsBody
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 1<<20)).Decode(&body); err != nil || len(body.IDs) == 0 {
		writeError(w, http.StatusBadRequest, errors.New(`body: want {"ids": [delivery ids]}`))
		return
	}
	if limited(principal(r)) {
		writeError(w, http.StatusNotFound, fmt.Errorf("requeue %v: %w (only failed deliveries can be retried)", body.IDs, notifier.ErrNotFound))
		return
	}
	if err := a.Outbox.Requeue(r.Context(), body.IDs...); err != nil {
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
