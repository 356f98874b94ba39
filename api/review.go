package api

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/simdex/simdex/auth"
	"github.com/simdex/simdex/connectors"
	"github.com/simdex/simdex/index"
	"github.com/simdex/simdex/ingest"
	"github.com/simdex/simdex/policy"
)

// TokenManager creates, lists and revokes API tokens; *auth.Manager is one.
type TokenManager interface {
	Create(ctx context.Context, actor string, req auth.CreateRequest) (string, auth.Token, error)
	Revoke(ctx context.Context, actor, id, reason string) error
	Tokens(ctx context.Context) ([]auth.Token, error)
}

// PolicyRecords reads what the policy store keeps besides flags and holds.
type PolicyRecords interface {
	Rules(ctx context.Context) ([]policy.RetentionRule, []policy.KeepRule, error)
	Audit(ctx context.Context, from int64, fn func(policy.AuditEntry) error) error
}

// principal returns the authenticated caller of r.
func principal(r *http.Request) auth.Principal {
	p, _ := auth.FromContext(r.Context())
	return p
}

// actor names the caller in the audit log: its token or certificate, and
// the person the client says it acts for (X-Simdex-Actor), which is
// recorded but never trusted for access.
func actor(r *http.Request) string {
	who := "anonymous"
	if p, ok := auth.FromContext(r.Context()); ok {
		who = p.Actor()
	}
	onBehalf := strings.Map(func(c rune) rune {
		if unicode.IsControl(c) {
			return -1
		}
		return c
	}, strings.TrimSpace(r.Header.Get(HeaderActor)))
	if onBehalf == "" {
		return who
	}
	if len(onBehalf) > 128 {
		onBehalf = onBehalf[:128]
	}
	return who + " (" + onBehalf + ")"
}

// flagVisible reports whether p may see f: flags of no matter
// (organisation-wide: duplicate uploads, dispositions due) are for
// principals without a matter limit, a matter's only for those on it;
// neither when its document or source document is a seed file of a
// matter p cannot see.
func flagVisible(p auth.Principal, f policy.Flag) bool {
	if f.Matter == "" && limited(p) {
		return false
	}
	if f.Matter != "" && !p.CanSeeMatter(f.Matter) {
		return false
	}
	return keyVisible(p, f.Document.Key) && (f.Source == nil || keyVisible(p, f.Source.Key))
}

// Whoami is the answer of GET /api/v1/whoami.
type Whoami struct {
	// Actor is how the caller's actions are recorded
	// ("Jane Doe (token:<id>)"), Name who the caller is and TokenID the
	// token used ("" for a client certificate).
	Actor       string   `json:"actor"`
	Name        string   `json:"name"`
	TokenID     string   `json:"token_id,omitempty"`
	Role        string   `json:"role"`
	Matters     []string `json:"matters"`
	AllMatters  bool     `json:"all_matters"`
	Permissions []string `json:"permissions"`
}

func (a *Server) whoami(w http.ResponseWriter, r *http.Request) {
	p := principal(r)
	out := Whoami{Actor: p.Actor(), Name: p.DisplayName(), TokenID: p.TokenID, Role: string(p.Role), Matters: nonNilStrings(p.Matters), AllMatters: p.AllMatters(), Permissions: []string{}}
	for _, perm := range auth.Permissions {
		if p.Can(perm) && (p.AllMatters() || !allMattersOnly[perm]) {
			out.Permissions = append(out.Permissions, string(perm))
		}
	}
	writeJSON(w, http.StatusOK, out)
}

// allMattersOnly are the permissions whose calls weigh every matter's
// holds (executing a deletion, evaluating the rules): a principal limited
// to matters is refused them, so whoami does not offer them to it.
var allMattersOnly = map[auth.Permission]bool{auth.PermDeletionsExecute: true, auth.PermRulesDryRun: true}

func nonNilStrings(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// pathID parses the {id} path parameter, the id of a what (a document,
// a flag), answering 400 itself.
func pathID[T ~int64](w http.ResponseWriter, r *http.Request, what string) (T, bool) {
	id, err := strconv.ParseInt(r.PathValue("id"), 10, 64)
	if err != nil || id < 1 {
		writeError(w, http.StatusBadRequest, fmt.Errorf("%s id %q: not a number", what, r.PathValue("id")))
		return 0, false
	}
	return T(id), true
}

// keyVisible reports whether p may see the document stored under key:
// every document, except seed files uploaded for a matter p cannot see
// (they are that matter's evidence, and their key names it).
func keyVisible(p auth.Principal, key string) bool {
	matter, seed := policy.SeedFileMatter(key)
	return !seed || p.AllMatters() || p.CanSeeMatter(matter)
}

// pathRecord loads the document the {id} path parameter names, as getRecord.
func (a *Server) pathRecord(w http.ResponseWriter, r *http.Request) (*index.Record, bool) {
	id, ok := pathID[index.DocID](w, r, "document")
	if !ok {
		return nil, false
	}
	return a.getRecord(w, r, id)
}

// getRecord loads a document the caller may see, answering 404 (also for
// one it may not see) or 500 itself on failure.
func (a *Server) getRecord(w http.ResponseWriter, r *http.Request, id index.DocID) (*index.Record, bool) {
	rec, err := a.Index.Get(r.Context(), id)
	visible := false
	if err == nil {
		visible, err = a.scope(r).Visible(r.Context(), rec)
	}
	switch {
	case errors.Is(err, index.ErrNotFound) || (err == nil && !visible):
		writeError(w, http.StatusNotFound, fmt.Errorf("document %d: %w", id, index.ErrNotFound))
		return nil, false
	case err != nil:
		writeError(w, http.StatusInternalServerError, err)
		return nil, false
	}
	return rec, true
}

// writeDocuments answers with the records of recs the caller may see
// (filtering again costs nothing: the scope caches its answers).
func (a *Server) writeDocuments(w http.ResponseWriter, r *http.Request, recs []*index.Record) {
	recs, err := a.scope(r).Filter(r.Context(), recs)
	if err != nil {
		writeError(w, http.StatusInternalServerError, err)
		return
	}
	out := make([]Document, 0, len(recs))
	for _, rec := range recs {
		out = append(out, NewDocument(rec))
	}
	writeJSON(w, http.StatusOK, map[string]any{"documents": out})
}

// visibleMatches keeps the matches the caller may see.
func (a *Server) visibleMatches(r *http.Request, ms []Match) ([]Match, error) {
	s := a.scope(r)
	out := make([]Match, 0, len(ms))
	for _, m := range ms {
		if !keyVisible(s.p, m.Key) {
			continue
		}
		ok, err := s.VisibleID(r.Context(), m.ID)
		if err != nil {
			return nil, err
		}
		if ok {
			out = append(out, m)
		}
	}
	return out, nil
}

// intParam parses an optional integer query parameter within [lo, hi].
func intParam(w http.ResponseWriter, r *http.Request, name string, def, lo, hi int) (int, bool) {
	v := r.URL.Query().Get(name)
	if v == "" {
		return def, true
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < lo || n > hi {
		writeError(w, http.StatusBadRequest, fmt.Errorf("%s %q: want %d to %d", name, v, lo, hi))
		return 0, false
	}
	return n, true
}

// limitParam parses the optional limit query parameter, at least lo,
// answering 400 itself with what is wanted.
func limitParam(w http.ResponseWriter, r *http.Request, def, lo int, want string) (int, bool) {
	v := r.URL.Query().Get("limit")
	if v == "" {
		return def, true
	}
	if n, err := strconv.Atoi(v); err == nil && n >= lo {
		return n, true
	}
	writeError(w, http.StatusBadRequest, fmt.Errorf("limit %q: %s", v, want))
	return 0, false
}

// search answers GET /api/v1/search?q=TEXT: documents by name, key or id.
func (a *Server) search(w http.ResponseWriter, r *http.Request) {
	q := strings.TrimSpace(r.URL.Query().Get("q"))
	if q == "" {
		writeError(w, http.StatusBadRequest, errors.New("query parameter q is required"))
		return
	}
	limit, ok := intParam(w, r, "limit", 50, 1, 1000)
	if !ok {
		return
	}
	recs, err := a.findVisible(r, q, limit)
	if err != nil {
		writeError(w, http.StatusInternalServerError, err)
		return
	}
	a.writeDocuments(w, r, recs)
}

// maxSearchScan bounds the documents a search reads to find limit that
// a principal limited to matters may see.
const maxSearchScan = 10000

// findVisible returns up to limit documents matching q that the caller
// may see, newest first: for a principal limited to matters, whose
// documents may be few among the matches, it reads further (four times
// as many each turn, up to maxSearchScan) until it has limit.
func (a *Server) findVisible(r *http.Request, q string, limit int) ([]*index.Record, error) {
	for n := limit; ; n = min(n*4, maxSearchScan) {
		recs, err := a.Index.Store().Find(r.Context(), q, n)
		if err != nil {
			return nil, fmt.Errorf("find %q: %w", q, err)
		}
		vis, err := a.scope(r).Filter(r.Context(), recs)
		if err != nil {
			return nil, err
		}
		if len(vis) >= limit || len(recs) < n || n >= maxSearchScan {
			return vis[:min(len(vis), limit)], nil
		}
	}
}

// children answers GET /api/v1/documents/{id}/children.
func (a *Server) children(w http.ResponseWriter, r *http.Request) {
	rec, ok := a.pathRecord(w, r)
	if !ok {
		return
	}
	recs, err := a.Index.Store().Children(r.Context(), rec.ID)
	if err != nil {
		writeError(w, http.StatusInternalServerError, err)
		return
	}
	a.writeDocuments(w, r, recs)
}

// docTexts returns the texts of recs, answering the error itself: the
// texts the index keeps and, where it keeps none, the texts read again
// from the documents' origins, all in one turn (reread[i] tells which).
func (a *Server) docTexts(w http.ResponseWriter, r *http.Request, recs ...*index.Record) (texts [][]byte, reread []bool, ok bool) {
	texts, reread = make([][]byte, len(recs)), make([]bool, len(recs))
	var missing []*index.Record
	for i, rec := range recs {
		if rec.Content == 0 {
			writeError(w, http.StatusUnprocessableEntity, fmt.Errorf("document %d has no text: %s", rec.ID, rec.Error))
			return nil, nil, false
		}
		text, err := a.Index.Store().Text(r.Context(), rec.Content)
		switch {
		case errors.Is(err, index.ErrNoText) && a.Reread != nil:
			reread[i] = true
			missing = append(missing, rec)
		case errors.Is(err, index.ErrNoText):
			writeError(w, http.StatusNotFound, fmt.Errorf("document %d: %w (index.keep_text is off, or it was indexed before it was on)", rec.ID, err))
			return nil, nil, false
		case err != nil:
			writeError(w, http.StatusInternalServerError, err)
			return nil, nil, false
		}
		texts[i] = text
	}
	if len(missing) == 0 {
		return texts, reread, true
	}
	again, ok := a.rereadTexts(w, r, missing)
	if !ok {
		return nil, nil, false
	}
	for i := range recs {
		if reread[i] {
			texts[i], again = again[0], again[1:]
		}
	}
	return texts, reread, true
}

// rereadTexts reads the texts of recs again from their origins, in turn
// with the searches (it extracts whole objects), answering the error
// itself.
func (a *Server) rereadTexts(w http.ResponseWriter, r *http.Request, recs []*index.Record) ([][]byte, bool) {
	var texts [][]byte
	var err error
	if gerr := a.searches.run(r.Context(), func() { texts, err = a.Reread.Texts(r.Context(), recs...) }); gerr != nil {
		writeError(w, http.StatusServiceUnavailable, gerr)
		return nil, false
	}
	if err == nil {
		return texts, true
	}
	code := http.StatusBadGateway // the origin could not be read, or its object extracted
	switch {
	case errors.Is(err, ingest.ErrNoOrigin):
		code = http.StatusNotFound
	case errors.Is(err, connectors.ErrObjectMissing):
		code = http.StatusGone
	case errors.Is(err, ingest.ErrTextChanged):
		code = http.StatusConflict
	}
	if code == http.StatusBadGateway {
		a.Logger.Warn("read documents again from their origins", "documents", len(recs), "err", err)
	}
	writeError(w, code, fmt.Errorf("the index keeps no text (index.keep_text is off) and reading it again failed: %w", err))
	return nil, false
}

// TextFromHeader marks a text the index does not keep, read again from
// its document's origin: its value is "origin".
const TextFromHeader = "X-Simdex-Text-From"

// text answers GET /api/v1/documents/{id}/text with the extracted text.
func (a *Server) text(w http.ResponseWriter, r *http.Request) {
	rec, ok := a.pathRecord(w, r)
	if !ok {
		return
	}
	texts, reread, ok := a.docTexts(w, r, rec)
	if !ok {
		return
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	if reread[0] {
		w.Header().Set(TextFromHeader, "origin")
	}
	w.Write(texts[0])
}

// DiffResponse is the answer of GET /api/v1/diff.
type DiffResponse struct {
	A   Document `json:"a"`
	B   Document `json:"b"`
	Ops []DiffOp `json:"ops"`
	// Truncated reports texts longer than MaxDiffText, compared up to it.
	Truncated bool `json:"truncated"`
	// Reread names the sides ("a", "b") whose texts the index does not
	// keep and were read again from their origins.
	Reread []string `json:"reread,omitempty"`
}

// diff answers GET /api/v1/diff?a=ID&b=ID: what differs between two
// documents' texts, word by word.
func (a *Server) diff(w http.ResponseWriter, r *http.Request) {
	var recs [2]*index.Record
	sides := []string{"a", "b"}
	for i, name := range sides {
		v := r.URL.Query().Get(name)
		id, err := strconv.ParseInt(v, 10, 64)
		if err != nil || id < 1 {
			writeError(w, http.StatusBadRequest, fmt.Errorf("query parameter %s %q: want a document id", name, v))
			return
		}
		rec, ok := a.getRecord(w, r, index.DocID(id))
		if !ok {
			return
		}
		recs[i] = rec
	}
	texts, again, ok := a.docTexts(w, r, recs[:]...)
	if !ok {
		return
	}
	var reread []string
	for i, name := range sides {
		if again[i] {
			reread = append(reread, name)
		}
	}
	ops, truncated := DiffWords(string(texts[0]), string(texts[1]))
	writeJSON(w, http.StatusOK, DiffResponse{A: NewDocument(recs[0]), B: NewDocument(recs[1]), Ops: ops, Truncated: truncated, Reread: reread})
}

// FamilyEdge is a scored near-copy pair inside a family.
type FamilyEdge = index.FamilyEdge

// FamilyResponse is the answer of GET /api/v1/documents/{id}/family.
type FamilyResponse struct {
	// Pivot is the member most like the others, as index.BetterPivot
	// defines it for every view of a family.
	Pivot   index.DocID  `json:"pivot"`
	Members []Document   `json:"members"`
	Edges   []FamilyEdge `json:"edges"`
	// Truncated reports that the family has more members than limit.
	Truncated bool `json:"truncated"`
}

// family answers GET /api/v1/documents/{id}/family: the near-copy family
// of a document (the transitive closure of its near-copies, as union-find
// builds it for `scan`), up to limit members, with every scored pair.
func (a *Server) family(w http.ResponseWriter, r *http.Request) {
	id, ok := pathID[index.DocID](w, r, "document")
	if !ok {
		return
	}
	limit, ok := intParam(w, r, "limit", 50, 1, 500)
	if !ok {
		return
	}
	th, err := a.thresholds(r)
	if err != nil {
		writeError(w, http.StatusBadRequest, err)
		return
	}
	root, ok := a.getRecord(w, r, id)
	if !ok {
		return
	}
	s := a.scope(r)
	var serr error
	fam, err := a.Index.Family(r.Context(), root, th, limit, func(rec *index.Record) bool {
		ok, err := s.Visible(r.Context(), rec)
		serr = errors.Join(serr, err)
		return ok
	})
	if err = errors.Join(err, serr); err != nil {
		writeError(w, http.StatusInternalServerError, err)
		return
	}
	out := FamilyResponse{Pivot: fam.Pivot, Edges: fam.Edges, Truncated: fam.Truncated}
	for _, r := range fam.Members {
		out.Members = append(out.Members, NewDocument(r))
	}
	writeJSON(w, http.StatusOK, out)
}

// BulkRequest is the body of POST /api/v1/flags/bulk.
type BulkRequest struct {
	IDs    []int64 `json:"ids"`
	Action string  `json:"action"` // approve or dismiss
	Reason string  `json:"reason"`
}

// BulkResult is the outcome for one flag of a bulk action.
type BulkResult struct {
	ID     int64  `json:"id"`
	Status string `json:"status,omitempty"`
	Error  string `json:"error,omitempty"`
}

// maxBulk bounds one bulk request; a review queue page is far smaller.
const maxBulk = 1000

// bulkFlags answers POST /api/v1/flags/bulk: each flag is approved or
// dismissed on its own (and audited on its own), so one that cannot be —
// already settled, out of the caller's matters — fails alone.
func (a *Server) bulkFlags(w http.ResponseWriter, r *http.Request) {
	var req BulkRequest
	if !decodeBody(w, r, 1<<20, &req) {
		return
	}
	if req.Action != "approve" && req.Action != "dismiss" {
		writeError(w, http.StatusBadRequest, fmt.Errorf("action %q: want approve or dismiss", req.Action))
		return
	}
	if len(req.IDs) == 0 || len(req.IDs) > maxBulk {
		writeError(w, http.StatusBadRequest, fmt.Errorf("ids: want 1 to %d flag ids, got %d", maxBulk, len(req.IDs)))
		return
	}
	who := actor(r)
	results := make([]BulkResult, 0, len(req.IDs))
	for _, id := range req.IDs {
		res := BulkResult{ID: id}
		_, err := a.loadVisibleFlag(r, id)
		var f policy.Flag
		if err == nil {
			if req.Action == "approve" {
				f, err = a.Policy.Approve(r.Context(), id, who, req.Reason)
			} else {
				f, err = a.Policy.Dismiss(r.Context(), id, who, req.Reason)
			}
		}
		if err != nil {
			res.Error = err.Error()
			if policyStatus(err) >= 500 {
				a.Logger.Error("bulk "+req.Action, "flag", id, "err", err)
			}
		} else {
			res.Status = string(f.Status)
		}
		results = append(results, res)
	}
	writeJSON(w, http.StatusOK, map[string]any{"results": results})
}

// listRules answers GET /api/v1/rules.
func (a *Server) listRules(w http.ResponseWriter, r *http.Request) {
	if a.Records == nil {
		writeError(w, http.StatusServiceUnavailable, errors.New("the policy store is not open"))
		return
	}
	rules, keeps, err := a.Records.Rules(r.Context())
	if err != nil {
		a.policyError(w, "list rules", err)
		return
	}
	if rules == nil {
		rules = []policy.RetentionRule{}
	}
	if keeps == nil {
		keeps = []policy.KeepRule{}
	}
	writeJSON(w, http.StatusOK, map[string]any{"retention": rules, "keep_at_least": keeps})
}

var errPageFull = errors.New("page full")

// listAudit answers GET /api/v1/audit?after=SEQ&limit=N, oldest first. The
// log records every matter, so only a principal who sees every matter may
// read it.
func (a *Server) listAudit(w http.ResponseWriter, r *http.Request) {
	if a.Records == nil {
		writeError(w, http.StatusServiceUnavailable, errors.New("the policy store is not open"))
		return
	}
	if !a.everyMatter(w, r, errVerifyScoped) {
		return
	}
	after, ok := intParam(w, r, "after", 0, 0, math.MaxInt)
	if !ok {
		return
	}
	limit, ok := intParam(w, r, "limit", 100, 1, 10000)
	if !ok {
		return
	}
	entries := []policy.AuditEntry{}
	err := a.Records.Audit(r.Context(), int64(after)+1, func(e policy.AuditEntry) error {
		entries = append(entries, e)
		if len(entries) == limit {
			return errPageFull
		}
		return nil
	})
	if err != nil && !errors.Is(err, errPageFull) {
		a.policyError(w, "read audit log", err)
		return
	}
	next := int64(0)
	if errors.Is(err, errPageFull) {
		next = entries[len(entries)-1].Seq
	}
	writeJSON(w, http.StatusOK, map[string]any{"entries": entries, "next_after": next})
}

// listDisposals answers GET /api/v1/disposals[?rule=R][&since=RFC3339]:
// every executed deletion with its proof, oldest first, read from the
// audit log (principals of every matter only, as the log).
func (a *Server) listDisposals(w http.ResponseWriter, r *http.Request) {
	if a.Records == nil {
		writeError(w, http.StatusServiceUnavailable, errors.New("the policy store is not open"))
		return
	}
	if !a.everyMatter(w, r, errVerifyScoped) {
		return
	}
	f := policy.DisposalFilter{Rule: r.URL.Query().Get("rule")}
	if v := r.URL.Query().Get("since"); v != "" {
		t, err := time.Parse(time.RFC3339, v)
		if err != nil {
			writeError(w, http.StatusBadRequest, fmt.Errorf("since %q: want an RFC 3339 time", v))
			return
		}
		f.Since = t
	}
	ds, err := policy.ReadDisposals(r.Context(), a.Records, f)
	if err != nil {
		a.policyError(w, "list disposals", err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"disposals": ds})
}

// TokenView is a token as the API shows it: never its secret or hash.
type TokenView struct {
	ID      string    `json:"id"`
	Role    auth.Role `json:"role"`
	Matters []string  `json:"matters"`
	// Name is the person the token is for (auth.Token.DisplayName: a
	// token created before people were recorded shows its description).
	Name         string    `json:"name"`
	Email        string    `json:"email,omitempty"`
	Description  string    `json:"description,omitempty"`
	Created      time.Time `json:"created"`
	CreatedBy    string    `json:"created_by"`
	Expires      time.Time `json:"expires,omitzero"`
	Revoked      time.Time `json:"revoked,omitzero"`
	RevokedBy    string    `json:"revoked_by,omitempty"`
	RevokeReason string    `json:"revoke_reason,omitempty"`
}

// NewTokenView converts a stored token.
func NewTokenView(t auth.Token) TokenView {
	return TokenView{ID: t.ID, Role: t.Role, Matters: nonNilStrings(t.Matters), Name: t.DisplayName(), Email: t.Email,
		Description: t.Description, Created: t.Created,
		CreatedBy: t.CreatedBy, Expires: t.Expires, Revoked: t.Revoked, RevokedBy: t.RevokedBy, RevokeReason: t.RevokeReason}
}

// tokenVisible reports whether p may see and revoke t: a principal
// limited to matters manages only tokens limited to matters of its own,
// as it may only create those.
func tokenVisible(p auth.Principal, t auth.Token) bool {
	if p.AllMatters() {
		return true
	}
	if len(t.Matters) == 0 {
		return false
	}
	for _, m := range t.Matters {
		if !p.CanSeeMatter(m) {
			return false
		}
	}
	return true
}

func (a *Server) listTokens(w http.ResponseWriter, r *http.Request) {
	ts, err := a.Tokens.Tokens(r.Context())
	if err != nil {
		writeError(w, http.StatusInternalServerError, err)
		return
	}
	p := principal(r)
	out := make([]TokenView, 0, len(ts))
	for _, t := range ts {
		if tokenVisible(p, t) {
			out = append(out, NewTokenView(t))
		}
	}
	writeJSON(w, http.StatusOK, map[string]any{"tokens": out})
}

// TokenRequest is the body of POST /api/v1/tokens.
type TokenRequest struct {
	Role    string   `json:"role"`
	Matters []string `json:"matters"`
	// Name is the person the token is for (required), Email their
	// address (optional).
	Name        string `json:"name"`
	Email       string `json:"email"`
	Description string `json:"description"`
	// TTL is a Go duration ("720h"); empty never expires.
	TTL string `json:"ttl"`
}

// createToken answers POST /api/v1/tokens with the new token, shown once.
// A creator limited to matters can only give out those matters.
func (a *Server) createToken(w http.ResponseWriter, r *http.Request) {
	var req TokenRequest
	if !decodeBody(w, r, 1<<20, &req) {
		return
	}
	role, err := auth.ParseRole(req.Role)
	if err != nil {
		writeError(w, http.StatusBadRequest, err)
		return
	}
	cr := auth.CreateRequest{Role: role, Matters: req.Matters, Name: req.Name, Email: req.Email, Description: req.Description}
	if req.TTL != "" {
		if cr.TTL, err = time.ParseDuration(req.TTL); err != nil || cr.TTL <= 0 {
			writeError(w, http.StatusBadRequest, fmt.Errorf("ttl %q: want a positive duration such as 720h", req.TTL))
			return
		}
	}
	if p := principal(r); !p.AllMatters() {
		if len(req.Matters) == 0 {
			writeError(w, http.StatusForbidden, errors.New("a token limited to matters can only create tokens limited to its matters: name them"))
			return
		}
		for _, m := range req.Matters {
			if !p.CanSeeMatter(m) {
				writeError(w, http.StatusForbidden, fmt.Errorf("matter %q is not one of the caller's", m))
				return
			}
		}
	}
	secret, t, err := a.Tokens.Create(r.Context(), actor(r), cr)
	if err != nil {
		code := http.StatusInternalServerError
		if errors.Is(err, auth.ErrUnknownRole) || errors.Is(err, auth.ErrInvalidMatter) || errors.Is(err, auth.ErrInvalidText) ||
			errors.Is(err, auth.ErrInvalidPerson) || errors.Is(err, auth.ErrMatterRequired) {
			code = http.StatusBadRequest
		}
		writeError(w, code, err)
		return
	}
	writeJSON(w, http.StatusCreated, map[string]any{"token": secret, "info": NewTokenView(t)})
}

func (a *Server) revokeToken(w http.ResponseWriter, r *http.Request) {
	var req reasonBody
	if !decodeBody(w, r, 1<<20, &req) {
		return
	}
	if strings.TrimSpace(req.Reason) == "" {
		writeError(w, http.StatusBadRequest, errors.New("reason: revoking a token needs a reason"))
		return
	}
	id := r.PathValue("id")
	ts, err := a.Tokens.Tokens(r.Context())
	if err != nil {
		writeError(w, http.StatusInternalServerError, err)
		return
	}
	if i := slices.IndexFunc(ts, func(t auth.Token) bool { return t.ID == id }); i < 0 || !tokenVisible(principal(r), ts[i]) {
		// Another matter's token is answered as if it did not exist.
		writeError(w, http.StatusNotFound, fmt.Errorf("token %s: %w", id, auth.ErrTokenNotFound))
		return
	}
	err = a.Tokens.Revoke(r.Context(), actor(r), id, req.Reason)
	switch {
	case errors.Is(err, auth.ErrTokenNotFound):
		writeError(w, http.StatusNotFound, err)
	case err != nil:
		writeError(w, http.StatusInternalServerError, err)
	default:
		writeJSON(w, http.StatusOK, map[string]any{"revoked": id})
	}
}
