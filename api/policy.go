package api

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/simdex/simdex/auth"
	"github.com/simdex/simdex/extract"
	"github.com/simdex/simdex/index"
	"github.com/simdex/simdex/ingest"
	"github.com/simdex/simdex/policy"
)

// PolicyEngine is what the API needs of the policy engine.
type PolicyEngine interface {
	CreateHold(ctx context.Context, spec policy.HoldSpec, actor string) (policy.Hold, policy.Placement, error)
	ReleaseHold(ctx context.Context, matter, reason, actor string) (policy.Hold, error)
	Hold(ctx context.Context, matter string) (policy.Hold, error)
	Holds(ctx context.Context, status policy.HoldStatus) ([]policy.Hold, error)
	Flags(ctx context.Context, f policy.FlagFilter) ([]policy.Flag, error)
	Flag(ctx context.Context, id int64) (policy.Flag, error)
	Approve(ctx context.Context, id int64, actor, reason string) (policy.Flag, error)
	Dismiss(ctx context.Context, id int64, actor, reason string) (policy.Flag, error)
	Execute(ctx context.Context, id int64, actor string) (policy.Flag, error)
	Evaluate(ctx context.Context, dryRun bool) (policy.Run, error)
	Runs(ctx context.Context, limit int) ([]policy.Run, error)
	VerifyAudit(ctx context.Context, cp policy.Checkpoint) (policy.Checkpoint, error)
	HeldDocuments(ctx context.Context, matter string) ([]index.DocID, error)
	Held(ctx context.Context, matter string) ([]policy.HeldDoc, error)
}

// ObjectIngester indexes an uploaded object (a hold's seed file).
type ObjectIngester interface {
	Ingest(ctx context.Context, obj ingest.Object) (*ingest.Outcome, error)
}

// HeaderActor names the person a client acts for (approve, release...).
// The audit log records it beside the authenticated token or certificate,
// which alone decides access.
const HeaderActor = "X-Simdex-Actor"

// SeedFile is a file sent as a hold's seed: it is indexed (source
// "hold-seed") and becomes a seed document.
type SeedFile struct {
	Name string `json:"name"`
	Data []byte `json:"data"` // base64 in JSON
}

// HoldRequest is the body of POST /api/v1/holds.
type HoldRequest struct {
	Matter      string            `json:"matter"`
	Name        string            `json:"name,omitempty"`
	Reason      string            `json:"reason,omitempty"`
	Owner       string            `json:"owner,omitempty"`
	Seeds       []index.DocID     `json:"seeds,omitempty"`
	SeedKeys    []string          `json:"seed_keys,omitempty"`
	SeedFiles   []SeedFile        `json:"seed_files,omitempty"`
	Selectors   []policy.Selector `json:"selectors,omitempty"`
	Resemblance *float64          `json:"resemblance,omitempty"`
	Containment *float64          `json:"containment,omitempty"`
	Mode        string            `json:"mode,omitempty"`
}

// HoldResponse answers POST /api/v1/holds: 201 with the hold placed,
// 200 with the hold a create with the same body made before, 202 with
// the hold stored and in force but its placement not complete (Error
// says why; it continues in the background, the hold reading placing).
type HoldResponse struct {
	Hold      policy.Hold      `json:"hold"`
	Placement policy.Placement `json:"placement"`
	Error     string           `json:"error,omitempty"`
}

// AuditVerifyResponse answers POST /api/v1/audit/verify.
type AuditVerifyResponse struct {
	Intact     bool              `json:"intact"`
	Checkpoint policy.Checkpoint `json:"checkpoint"`
	Error      string            `json:"error,omitempty"`
}

// policyStatus maps policy errors to HTTP statuses.
func policyStatus(err error) int {
	switch {
	case errors.Is(err, policy.ErrNotFound), errors.Is(err, index.ErrNotFound):
		return http.StatusNotFound
	case errors.Is(err, policy.ErrInvalidHold), errors.Is(err, policy.ErrBadSelector), errors.Is(err, policy.ErrBadThreshold),
		errors.Is(err, policy.ErrReasonRequired), errors.Is(err, policy.ErrInvalidConfig), errors.Is(err, policy.ErrInvalidText):
		return http.StatusBadRequest
	case errors.Is(err, policy.ErrHoldExists), errors.Is(err, policy.ErrHoldReleased), errors.Is(err, policy.ErrFlagState),
		errors.Is(err, policy.ErrEvaluationBusy),
		errors.Is(err, policy.ErrNotDeletable), errors.Is(err, policy.ErrLegalHold), errors.Is(err, policy.ErrAuditTampered),
		errors.Is(err, policy.ErrStale), errors.Is(err, policy.ErrGone), errors.Is(err, policy.ErrNotEnforceable):
		return http.StatusConflict
	case errors.Is(err, policy.ErrHoldUnknown):
		return http.StatusBadGateway
	}
	return http.StatusInternalServerError
}

func (a *Server) policyError(w http.ResponseWriter, op string, err error) {
	code := policyStatus(err)
	if code >= 500 {
		a.Logger.Error(op, "err", err)
	}
	writeError(w, code, err)
}

// errNoPolicy answers the routes of the policy engine while it is not running.
var errNoPolicy = errors.New("the policy engine is not running")

// answer writes v, or err as policyError does for op.
func (a *Server) answer(w http.ResponseWriter, op string, v any, err error) {
	if err != nil {
		a.policyError(w, op, err)
		return
	}
	writeJSON(w, http.StatusOK, v)
}

// needPolicy answers 503 while the policy engine is not running, else
// passes the request to h.
func (a *Server) needPolicy(h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if a.Policy == nil {
			writeError(w, http.StatusServiceUnavailable, errNoPolicy)
			return
		}
		h(w, r)
	}
}

// decodeBody decodes a JSON body of at most limit bytes into v.
func decodeBody(w http.ResponseWriter, r *http.Request, limit int64, v any) bool {
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, limit))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		writeError(w, http.StatusBadRequest, fmt.Errorf("request body: %w", err))
		return false
	}
	return true
}

func (a *Server) listHolds(w http.ResponseWriter, r *http.Request) {
	status := policy.HoldStatus(r.URL.Query().Get("status"))
	switch status {
	case "", policy.HoldActive, policy.HoldPlacing, policy.HoldReleased:
	default:
		writeError(w, http.StatusBadRequest, fmt.Errorf("status %q: want active, placing or released", status))
		return
	}
	hs, err := a.Policy.Holds(r.Context(), status)
	if err != nil {
		a.policyError(w, "list holds", err)
		return
	}
	p := principal(r)
	visible := slices.DeleteFunc(append([]policy.Hold{}, hs...), func(h policy.Hold) bool { return !p.CanSeeMatter(h.Matter) })
	writeJSON(w, http.StatusOK, map[string]any{"holds": visible})
}

func (a *Server) getHold(w http.ResponseWriter, r *http.Request) {
	if !a.matterVisible(w, r, r.PathValue("matter")) {
		return
	}
	h, err := a.Policy.Hold(r.Context(), r.PathValue("matter"))
	a.answer(w, "get hold", h, err)
}

// createHold answers POST /api/v1/holds: the hold is placed at once and
// every near-copy of its seeds flagged (and, in mode hold, locked); see
// HoldResponse for the statuses. A body the matter was created with
// before answers that hold (200), another body 409.
func (a *Server) createHold(w http.ResponseWriter, r *http.Request) {
	limit := a.MaxBody
	if limit <= 0 {
		limit = 64 << 20
	}
	// The body and the seed files decoded from it are held until the
	// hold is placed: charged to the memory budget, before decoding when
	// the body's length is known.
	mem := a.Memory.Open(false)
	defer mem.Close()
	if !chargeHold(w, r, mem, holdBodyMemory(r.ContentLength)) {
		return
	}
	var req HoldRequest
	if !decodeBody(w, r, 2*limit+1<<20, &req) { // base64 inflates by 4/3
		return
	}
	if r.ContentLength < 0 {
		var files int64
		for _, f := range req.SeedFiles {
			files += int64(len(f.Data))
		}
		if !chargeHold(w, r, mem, 2*files) {
			return
		}
	}
	spec := policy.HoldSpec{Matter: req.Matter, Name: req.Name, Reason: req.Reason, Owner: req.Owner,
		Seeds: req.Seeds, SeedKeys: req.SeedKeys, Selectors: req.Selectors, Scope: policy.DefaultScope(), Mode: req.Mode}
	if req.Resemblance != nil {
		spec.Scope.Resemblance = *req.Resemblance
	}
	if req.Containment != nil {
		spec.Scope.Containment = *req.Containment
	}
	if strings.TrimSpace(req.Matter) == "" {
		writeError(w, http.StatusBadRequest, fmt.Errorf("matter: %w: empty", policy.ErrInvalidHold))
		return
	}
	if !principal(r).CanSeeMatter(req.Matter) {
		writeError(w, http.StatusForbidden, fmt.Errorf("matter %q is not one of the caller's", req.Matter))
		return
	}
	if !a.seedsVisible(w, r, &spec) {
		return
	}
	for _, f := range req.SeedFiles {
		id, err := a.ingestSeed(r.Context(), req.Matter, f)
		switch {
		case memoryBusy(w, err):
			return
		case errors.Is(err, extract.ErrTooLarge):
			writeError(w, http.StatusRequestEntityTooLarge, err)
			return
		case err != nil:
			writeError(w, http.StatusUnprocessableEntity, err)
			return
		}
		spec.Seeds = append(spec.Seeds, id)
	}
	h, pl, err := a.Policy.CreateHold(r.Context(), spec, actor(r))
	switch {
	case errors.Is(err, policy.ErrPlacementPending):
		// The hold is stored and in force; its placement continues in
		// the background (the hold reads placing until it is complete).
		writeJSON(w, http.StatusAccepted, HoldResponse{Hold: h, Placement: pl, Error: err.Error()})
	case err != nil:
		a.policyError(w, "create hold", err)
	case pl.Created:
		writeJSON(w, http.StatusCreated, HoldResponse{Hold: h, Placement: pl})
	default: // the same create again: the hold it made
		writeJSON(w, http.StatusOK, HoldResponse{Hold: h, Placement: pl})
	}
}

// seedsVisible answers a seed the caller may not see (another matter's
// seed file) as a seed that does not exist: a document id with 404, as
// the engine answers an unknown one, a key by dropping it, as a key
// nothing is stored under matches nothing.
func (a *Server) seedsVisible(w http.ResponseWriter, r *http.Request, spec *policy.HoldSpec) bool {
	p := principal(r)
	if p.AllMatters() {
		return true
	}
	for _, id := range spec.Seeds {
		if a.Index == nil {
			break
		}
		rec, err := a.Index.Get(r.Context(), id)
		if errors.Is(err, index.ErrNotFound) || (err == nil && !keyVisible(p, rec.Key)) {
			writeError(w, http.StatusNotFound, fmt.Errorf("create hold %s: seed %d: %w", spec.Matter, id, index.ErrNotFound))
			return false
		}
		if err != nil {
			a.policyError(w, "create hold", err)
			return false
		}
	}
	spec.SeedKeys = slices.DeleteFunc(spec.SeedKeys, func(k string) bool { return !keyVisible(p, k) })
	return true
}

// holdBodyMemory is what decoding a hold's body of size bytes (-1:
// unknown, charged once decoded) holds: the JSON text and the files
// decoded from it, three quarters of its size.
func holdBodyMemory(size int64) int64 {
	return max(size, 0) * 7 / 4
}

// chargeHold charges n bytes of a hold's request to mem, answering 503
// (or 413, when they never could fit) if the budget refuses them.
func chargeHold(w http.ResponseWriter, r *http.Request, mem *extract.Account, n int64) bool {
	err := mem.Charge(r.Context(), n)
	if err != nil && !memoryBusy(w, err) {
		writeError(w, http.StatusRequestEntityTooLarge, err)
	}
	return err == nil
}

// ingestSeed indexes a seed file sent with a hold, once per content and
// matter, and returns its document id. Its extraction and indexing are
// charged to the memory budget (extract.ErrMemory when it is taken).
func (a *Server) ingestSeed(ctx context.Context, matter string, f SeedFile) (index.DocID, error) {
	if a.Ingester == nil {
		return 0, errors.New("seed files cannot be indexed here: give document ids or keys")
	}
	name := strings.TrimSpace(f.Name)
	if name == "" || len(f.Data) == 0 {
		return 0, fmt.Errorf("seed file %q: name and content are required", f.Name)
	}
	// A seed with no text could match nothing: refuse it before anything
	// is stored, rather than leave a failed document in the index.
	check := a.Memory.Open(false)
	doc, err := a.Extractor.Extract(ctx, extract.Object{Name: name, Reader: bytes.NewReader(f.Data), Memory: check})
	merr := check.Err()
	check.Close()
	if merr != nil {
		return 0, fmt.Errorf("seed file %s: %w", name, merr)
	}
	if doc == nil || !hasText(doc) {
		if err == nil {
			err = index.ErrEmpty
		}
		return 0, fmt.Errorf("seed file %s has no text to compare: %w", name, err)
	}
	sum := sha256.Sum256(f.Data)
	key := policy.SeedFilePrefix + matter + "/" + name
	mem := a.Memory.Open(false)
	defer mem.Close()
	out, err := a.Ingester.Ingest(ctx, ingest.Object{
		Key: key, VersionID: hex.EncodeToString(sum[:8]), Name: name, Source: "hold-seed",
		Idempotency: key + "\x00" + hex.EncodeToString(sum[:]), KeepVersions: true,
		// No origin can give a seed file again: its text is kept for
		// the diffs of its matches even where the index keeps none.
		KeepText: true, Body: bytes.NewReader(f.Data), Memory: mem,
	})
	if err != nil {
		return 0, fmt.Errorf("index seed file %s: %w", name, err)
	}
	if out.Err != nil {
		return 0, fmt.Errorf("seed file %s has no text to compare: %w", name, out.Err)
	}
	if len(out.Results) == 0 || out.Results[0].ID == 0 {
		return 0, fmt.Errorf("index seed file %s: nothing committed", name)
	}
	// A file sent before has the same idempotency key: the index answers
	// with the stored document's id.
	return out.Results[0].ID, nil
}

func (a *Server) releaseHold(w http.ResponseWriter, r *http.Request) {
	var req reasonBody
	if !a.matterVisible(w, r, r.PathValue("matter")) || !decodeBody(w, r, 1<<20, &req) {
		return
	}
	h, err := a.Policy.ReleaseHold(r.Context(), r.PathValue("matter"), req.Reason, actor(r))
	a.answer(w, "release hold", h, err)
}

// CheckFlagFilter refuses a kind or a status of flags that no flag has
// (empty: any), naming the ones there are: a flag list filtered by a
// misspelt status was answered with no flags, as if there were none.
func CheckFlagFilter(kind policy.FlagKind, status policy.FlagStatus) error {
	switch kind {
	case "", policy.KindDispositionDue, policy.KindHoldMatch, policy.KindDuplicateUpload, policy.KindHoldUnenforced, policy.KindHoldSourceChanged:
	default:
		return fmt.Errorf("kind %q: want %s, %s, %s, %s or %s", kind,
			policy.KindDispositionDue, policy.KindHoldMatch, policy.KindDuplicateUpload, policy.KindHoldUnenforced, policy.KindHoldSourceChanged)
	}
	if status != "" && !slices.Contains(policy.FlagStatuses, status) {
		return fmt.Errorf("status %q: want one of %s", status, statusList())
	}
	return nil
}

// statusList names every flag status, comma-separated.
func statusList() string {
	names := make([]string, len(policy.FlagStatuses))
	for i, s := range policy.FlagStatuses {
		names[i] = string(s)
	}
	return strings.Join(names, ", ")
}

// listFlags answers GET /api/v1/flags with filters kind, status, matter,
// rule, document, and pagination by after (the last id seen) and limit.
func (a *Server) listFlags(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	f := policy.FlagFilter{Kind: policy.FlagKind(q.Get("kind")), Status: policy.FlagStatus(q.Get("status")),
		Matter: q.Get("matter"), Rule: q.Get("rule")}
	if p := principal(r); !p.AllMatters() {
		if f.Matter != "" && !p.CanSeeMatter(f.Matter) {
			writeError(w, http.StatusForbidden, fmt.Errorf("matter %q is not one of the caller's", f.Matter))
			return
		}
		// Organisation-wide flags (of no matter) are for principals
		// without a matter limit only.
		f.Matters = []string{""}
		if limited(p) {
			f.Matters = p.Matters
		}
	}
	for name, dst := range map[string]*int64{"document": (*int64)(&f.Document), "after": &f.After} {
		if v := q.Get(name); v != "" {
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil || n < 0 {
				writeError(w, http.StatusBadRequest, fmt.Errorf("%s %q: want a number >= 0", name, v))
				return
			}
			*dst = n
		}
	}
	var ok bool
	if f.Limit, ok = intParam(w, r, "limit", 0, 1, 10000); !ok {
		return
	}
	if err := CheckFlagFilter(f.Kind, f.Status); err != nil {
		writeError(w, http.StatusBadRequest, err)
		return
	}
	flags, err := a.Policy.Flags(r.Context(), f)
	if err != nil {
		a.policyError(w, "list flags", err)
		return
	}
	views := make([]policy.FlagView, 0, len(flags))
	p := principal(r)
	for _, fl := range flags {
		if flagVisible(p, fl) { // the store kept the matters; seed files are left
			views = append(views, flagView(p, fl))
		}
	}
	// A full page may have a next one; the client passes next_after as after.
	next := int64(0)
	limit := f.Limit
	if limit == 0 {
		limit = 100
	}
	if len(flags) == limit {
		next = flags[len(flags)-1].ID
	}
	writeJSON(w, http.StatusOK, map[string]any{"flags": views, "next_after": next})
}

func (a *Server) getFlag(w http.ResponseWriter, r *http.Request) {
	id, ok := pathID[int64](w, r, "flag")
	if !ok {
		return
	}
	f, ok := a.visibleFlag(w, r, id)
	if !ok {
		return
	}
	writeJSON(w, http.StatusOK, flagView(principal(r), f))
}

// actOnFlag answers POST /api/v1/flags/{id}/approve, /dismiss (both with
// {"reason": ...}) and /execute (an approved deletion, carried out after
// the holds are checked again).
func (a *Server) actOnFlag(w http.ResponseWriter, r *http.Request) {
	id, ok := pathID[int64](w, r, "flag")
	if !ok {
		return
	}
	var req reasonBody
	if r.ContentLength != 0 && !decodeBody(w, r, 1<<20, &req) {
		return
	}
	action := r.PathValue("action")
	if p := principal(r); action == "execute" && !p.Can(auth.PermDeletionsExecute) {
		writeError(w, http.StatusForbidden, fmt.Errorf("role %s lacks permission %s", p.Role, auth.PermDeletionsExecute))
		return
	}
	if action == "execute" && !a.everyMatter(w, r, errExecuteScoped) {
		return
	}
	if _, ok := a.visibleFlag(w, r, id); !ok {
		return
	}
	var (
		f   policy.Flag
		err error
	)
	switch action {
	case "approve":
		f, err = a.Policy.Approve(r.Context(), id, actor(r), req.Reason)
	case "dismiss":
		f, err = a.Policy.Dismiss(r.Context(), id, actor(r), req.Reason)
	case "execute":
		f, err = a.Policy.Execute(r.Context(), id, actor(r))
	default:
		writeError(w, http.StatusNotFound, fmt.Errorf("flag action %q: want approve, dismiss or execute", action))
		return
	}
	a.answer(w, "flag "+r.PathValue("action"), flagView(principal(r), f), err)
}

// refusedElsewhere is the reason of a refused flag shown to a principal
// that does not see every matter: the refusal may name another matter's
// hold (docs/api.md, "Another matter's hold, when it blocks a deletion").
const refusedElsewhere = "the deletion was refused; a principal of every matter reads why in the audit log"

// flagView is f as p may see it.
func flagView(p auth.Principal, f policy.Flag) policy.FlagView {
	v := f.View()
	if f.Status == policy.StatusRefused && !p.AllMatters() {
		v.Reason = refusedElsewhere
	}
	return v
}

// evaluate answers POST /api/v1/policy/evaluate[?dry_run=true]: the run
// with its decisions (what is flagged, held or kept, and why).
func (a *Server) evaluate(w http.ResponseWriter, r *http.Request) {
	if !a.everyMatter(w, r, errEvaluateScoped) {
		return
	}
	dry := false
	if v := r.URL.Query().Get("dry_run"); v != "" {
		b, err := strconv.ParseBool(v)
		if err != nil {
			writeError(w, http.StatusBadRequest, fmt.Errorf("dry_run %q: want true or false", v))
			return
		}
		dry = b
	}
	run, err := a.Policy.Evaluate(r.Context(), dry)
	a.answer(w, "evaluate", run, err)
}

func (a *Server) listRuns(w http.ResponseWriter, r *http.Request) {
	limit, ok := limitParam(w, r, 20, 1, "want a count >= 1")
	if !ok {
		return
	}
	runs, err := a.Policy.Runs(r.Context(), limit)
	if err != nil {
		a.policyError(w, "list runs", err)
		return
	}
	if limited(principal(r)) {
		// A run weighs every document and raises organisation-wide
		// flags: its counts move with what a limited principal may not see.
		writeJSON(w, http.StatusOK, map[string]any{"runs": []RunSummary{}})
		return
	}
	if !principal(r).AllMatters() {
		out := make([]RunSummary, 0, len(runs))
		for _, run := range runs {
			out = append(out, summarise(run))
		}
		writeJSON(w, http.StatusOK, map[string]any{"runs": out})
		return
	}
	if runs == nil {
		runs = []policy.Run{}
	}
	writeJSON(w, http.StatusOK, map[string]any{"runs": runs})
}

// RunSummary is a recorded evaluation as a principal limited to matters
// sees it: without the counts that depend on the holds of every matter
// (due, held, hold matches, errors and the error text, which may name a
// matter). What is left is when it ran, how many documents it read and
// how many disposition flags it raised, which every reviewer sees in
// the flags anyway.
type RunSummary struct {
	ID        int64     `json:"id"`
	DryRun    bool      `json:"dry_run"`
	Started   time.Time `json:"started"`
	Ended     time.Time `json:"ended"`
	Documents int       `json:"documents"`
	Flagged   int       `json:"flagged"`
}

func summarise(r policy.Run) RunSummary {
	return RunSummary{ID: r.ID, DryRun: r.DryRun, Started: r.Started, Ended: r.Ended, Documents: r.Documents, Flagged: r.Flagged}
}

// Refusals of what weighs the holds of every matter, for a principal
// limited to matters. Each is answered whatever the request names, so
// that it tells nothing of another matter's holds.
var (
	errEvaluateScoped = errors.New("retention evaluation weighs the holds of every matter: a token limited to matters cannot run or preview it")
	errExecuteScoped  = errors.New("a deletion is checked against the holds of every matter: a token limited to matters cannot execute one")
	errVerifyScoped   = errors.New("the audit log covers every matter: a token limited to matters cannot read or verify it")
)

// everyMatter answers 403 with refusal unless the caller sees every matter.
func (a *Server) everyMatter(w http.ResponseWriter, r *http.Request, refusal error) bool {
	if principal(r).AllMatters() {
		return true
	}
	writeError(w, http.StatusForbidden, refusal)
	return false
}

// verifyAudit answers POST /api/v1/audit/verify with the caller's saved
// checkpoint ({"seq": 0} for none): 200 and the new head when the log is
// intact, 409 when it was edited, reordered or truncated.
func (a *Server) verifyAudit(w http.ResponseWriter, r *http.Request) {
	if !a.everyMatter(w, r, errVerifyScoped) {
		return
	}
	var cp policy.Checkpoint
	if r.ContentLength != 0 && !decodeBody(w, r, 1<<20, &cp) {
		return
	}
	head, err := a.Policy.VerifyAudit(r.Context(), cp)
	if err != nil {
		code := policyStatus(err)
		if code >= 500 {
			a.Logger.Error("verify audit", "err", err)
		}
		writeJSON(w, code, AuditVerifyResponse{Intact: false, Checkpoint: head, Error: err.Error()})
		return
	}
	writeJSON(w, http.StatusOK, AuditVerifyResponse{Intact: true, Checkpoint: head})
}

// matterVisible answers 404, as for a matter that does not exist, unless
// the caller may see matter: a reviewer learns nothing of other matters.
func (a *Server) matterVisible(w http.ResponseWriter, r *http.Request, matter string) bool {
	if principal(r).CanSeeMatter(matter) {
		return true
	}
	writeError(w, http.StatusNotFound, fmt.Errorf("%w: hold %q", policy.ErrNotFound, matter))
	return false
}

// visibleFlag loads flag id, answering 404 unless the caller may see it.
func (a *Server) visibleFlag(w http.ResponseWriter, r *http.Request, id int64) (policy.Flag, bool) {
	f, err := a.loadVisibleFlag(r, id)
	if err != nil {
		a.policyError(w, "get flag", err)
		return policy.Flag{}, false
	}
	return f, true
}

// loadVisibleFlag loads flag id. A flag the caller may not see fails
// exactly as one that does not exist, word for word.
func (a *Server) loadVisibleFlag(r *http.Request, id int64) (policy.Flag, error) {
	f, err := a.Policy.Flag(r.Context(), id)
	if errors.Is(err, policy.ErrNotFound) || (err == nil && !flagVisible(principal(r), f)) {
		return policy.Flag{}, fmt.Errorf("flag %d: %w", id, policy.ErrNotFound)
	}
	return f, err
}

// hasText reports whether d or a document inside it has text to compare.
func hasText(d *extract.Document) bool {
	if d.Err == nil && strings.TrimSpace(d.Text) != "" {
		return true
	}
	return slices.ContainsFunc(d.Children, hasText)
}
