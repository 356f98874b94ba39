package api

import (
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3gen"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/simdex/simdex/auth"
	"github.com/simdex/simdex/index"
	"github.com/simdex/simdex/internal/buildinfo"
	"github.com/simdex/simdex/notifier"
	"github.com/simdex/simdex/policy"
)

// route is one HTTP endpoint: the mux registers it and the OpenAPI
// document describes it, from the same table, so the two cannot drift.
type route struct {
	method, path string
	summary      string
	query        []string // query parameters, "name" or "name*" when required
	body         string   // media type of the request body, if any
	// public routes need no credentials; every other route needs a valid
	// token or client certificate, and perm when it is set.
	public  bool
	perm    auth.Permission
	handler http.HandlerFunc
	// search routes run near-copy searches: in turn, at most
	// http.max_searches at once (searchGate).
	search bool
	// policy routes answer 503 while the policy engine is not running.
	policy bool
	// req and resp are values of the JSON request body and success answer,
	// from which the OpenAPI document's schemas are generated.
	req, resp any
}

// Shapes of answers that are not a named type, for the OpenAPI schemas.
type (
	matchesAnswer struct {
		Matches []Match `json:"matches"`
	}
	documentsAnswer struct {
		Documents []Document `json:"documents"`
	}
	flagsAnswer struct {
		Flags     []policy.FlagView `json:"flags"`
		NextAfter int64             `json:"next_after"`
	}
	auditAnswer struct {
		Entries   []policy.AuditEntry `json:"entries"`
		NextAfter int64               `json:"next_after"`
	}
	disposalsAnswer struct {
		Disposals []policy.Disposal `json:"disposals"`
	}
	rulesAnswer struct {
		Retention   []policy.RetentionRule `json:"retention"`
		KeepAtLeast []policy.KeepRule      `json:"keep_at_least"`
	}
	reasonBody struct {
		Reason string `json:"reason"`
	}
	idsBody struct {
		IDs []int64 `json:"ids"`
	}
)

func (a *Server) routes() []route {
	metrics := promhttp.HandlerFor(a.Registry, promhttp.HandlerOpts{})
	rs := []route{
		{method: "GET", path: "/healthz", summary: "Liveness", public: true, handler: func(w http.ResponseWriter, r *http.Request) {
			writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
		}},
		{method: "GET", path: "/readyz", summary: "Readiness: 503, naming the failing checks, until every component has started and while a store or NATS does not answer",
			public: true, handler: a.readyz},
		{method: "GET", path: "/metrics", summary: "Prometheus metrics", public: true, handler: metrics.ServeHTTP},
		{method: "GET", path: "/api/v1/openapi.json", summary: "This OpenAPI document", handler: a.openAPI},
		{method: "GET", path: "/api/v1/whoami", summary: "The caller: role, matters and permissions", handler: a.whoami, resp: Whoami{}},
		{method: "GET", path: "/api/v1/about", summary: "This simdex: version, commit, Go version and the versions of its formats", handler: func(w http.ResponseWriter, r *http.Request) {
			writeJSON(w, http.StatusOK, buildinfo.Read())
		}, resp: buildinfo.Info{}},
		{method: "GET", path: "/api/v1/documents/{id}/similar", summary: "All versions of a stored document: every copy and near-copy with its scores",
			query: []string{"resemblance", "containment"}, perm: auth.PermSimilarRead, handler: a.similarByID, resp: matchesAnswer{}, search: true},
		{method: "POST", path: "/api/v1/similar", summary: "All versions of an uploaded file (not stored), and of each attachment or member in it",
			query: []string{"resemblance", "containment"}, body: "application/octet-stream", perm: auth.PermSimilarRead, handler: a.similarByUpload, resp: matchesAnswer{}, search: true},
		{method: "POST", path: "/api/v1/connectors/{name}/backfill", summary: "Queue every object version of an S3 connector", perm: auth.PermConnectorsBackfill, handler: a.backfillConnector},
		{method: "GET", path: "/api/v1/documents/{id}", summary: "A stored document version", perm: auth.PermDocumentsRead, handler: a.document, resp: Document{}},
		{method: "GET", path: "/api/v1/documents/{id}/children", summary: "The attachments and archive members directly inside a document", perm: auth.PermDocumentsRead, handler: a.children, resp: documentsAnswer{}},
		{method: "GET", path: "/api/v1/documents/{id}/text", summary: "A document's extracted text (text/plain): kept, or read again from its origin where the index keeps none (then 404 no origin, 410 version gone, 409 text changed, 502 origin unreachable; header X-Simdex-Text-From: origin)", perm: auth.PermDocumentsRead, handler: a.text},
		{method: "GET", path: "/api/v1/documents/{id}/thread", summary: "A message's e-mail thread in date order, each message marked inclusive or not (inclusive=true: the inclusive ones only)",
			query: []string{"inclusive"}, perm: auth.PermDocumentsRead, handler: a.thread, resp: ThreadResponse{}},
		{method: "GET", path: "/api/v1/documents/{id}/family", summary: "A document's near-copy family: members, pivot and the scored pairs between them",
			query: []string{"limit", "resemblance", "containment"}, perm: auth.PermFamiliesRead, handler: a.family, resp: FamilyResponse{}, search: true},
		{method: "GET", path: "/api/v1/documents", summary: "The stored versions of an index key, newest first", query: []string{"key*"}, perm: auth.PermDocumentsRead, handler: a.documentsByKey, resp: documentsAnswer{}},
		{method: "GET", path: "/api/v1/search", summary: "Documents whose name or key contains q, or whose id is q, newest first",
			query: []string{"q*", "limit"}, perm: auth.PermDocumentsRead, handler: a.search, resp: documentsAnswer{}},
		{method: "GET", path: "/api/v1/diff", summary: "What differs between two documents' texts, word by word (texts the index keeps none of are read again from their origins, as for …/text, and named in reread)",
			query: []string{"a*", "b*"}, perm: auth.PermDocumentsRead, handler: a.diff, resp: DiffResponse{}},
		{method: "GET", path: "/api/v1/stats", summary: "Documents, distinct contents and failed extractions", perm: auth.PermDocumentsRead, handler: a.stats, resp: index.Stats{}},
		{method: "GET", path: "/api/v1/deadletters", summary: "Events that exhausted their deliveries, oldest first", query: []string{"limit"}, perm: auth.PermOperationsRead, handler: a.listDeadLetters, resp: struct {
			DeadLetters []DeadLetter `json:"deadletters"`
		}{}},
		{method: "GET", path: "/api/v1/deliveries", summary: "The notifier's outbox: alerts sent, retried and failed, newest first", query: []string{"status", "limit"}, perm: auth.PermOperationsRead, handler: a.listDeliveries, resp: struct {
			Deliveries []notifier.Delivery `json:"deliveries"`
		}{}},
		{method: "POST", path: "/api/v1/deliveries/requeue", summary: "Retry failed alert deliveries now", body: "application/json", perm: auth.PermDeliveriesRequeue, handler: a.requeueDeliveries, req: idsBody{}},
		{method: "GET", path: "/api/v1/holds", summary: "Legal holds (matters) the caller may see", query: []string{"status"}, perm: auth.PermMattersRead, policy: true, handler: a.listHolds, resp: struct {
			Holds []policy.Hold `json:"holds"`
		}{}},
		{method: "POST", path: "/api/v1/holds", summary: "Place a legal hold: every near-copy of its seeds is held and flagged", body: "application/json", perm: auth.PermHoldsManage, policy: true, handler: a.createHold, req: HoldRequest{}, resp: HoldResponse{}},
		{method: "GET", path: "/api/v1/holds/{matter}", summary: "One legal hold", perm: auth.PermMattersRead, policy: true, handler: a.getHold, resp: policy.Hold{}},
		{method: "GET", path: "/api/v1/holds/{matter}/documents", summary: "The documents a hold holds, by name, and why: seed, or the seed each matched with its scores", perm: auth.PermMattersRead, policy: true, handler: a.heldDocuments, resp: struct {
			Documents []HeldDocument `json:"documents"`
		}{}},
		{method: "POST", path: "/api/v1/holds/{matter}/release", summary: "Release a legal hold, with a reason", body: "application/json", perm: auth.PermHoldsManage, policy: true, handler: a.releaseHold, req: reasonBody{}, resp: policy.Hold{}},
		{method: "GET", path: "/api/v1/flags", summary: "Review flags the caller may see, filtered and paged by id",
			query: []string{"kind", "status", "matter", "rule", "document", "after", "limit"}, perm: auth.PermFlagsRead, policy: true, handler: a.listFlags, resp: flagsAnswer{}},
		{method: "POST", path: "/api/v1/flags/bulk", summary: "Approve or dismiss many flags, each on its own", body: "application/json", perm: auth.PermFlagsReview, policy: true, handler: a.bulkFlags, req: BulkRequest{}, resp: struct {
			Results []BulkResult `json:"results"`
		}{}},
		{method: "GET", path: "/api/v1/flags/{id}", summary: "One review flag", perm: auth.PermFlagsRead, policy: true, handler: a.getFlag, resp: policy.FlagView{}},
		{method: "POST", path: "/api/v1/flags/{id}/{action}", summary: "approve or dismiss a flag (with a reason), or execute an approved deletion",
			body: "application/json", perm: auth.PermFlagsReview, policy: true, handler: a.actOnFlag, req: reasonBody{}, resp: policy.FlagView{}},
		{method: "GET", path: "/api/v1/rules", summary: "Retention and keep-at-least rules in force", perm: auth.PermRulesRead, handler: a.listRules, resp: rulesAnswer{}},
		{method: "POST", path: "/api/v1/policy/evaluate", summary: "Evaluate retention now; with dry_run, what would be flagged and why", query: []string{"dry_run"}, perm: auth.PermRulesDryRun, policy: true, handler: a.evaluate, resp: policy.Run{}},
		{method: "GET", path: "/api/v1/policy/runs", summary: "Recorded evaluations, newest first", query: []string{"limit"}, perm: auth.PermRulesRead, policy: true, handler: a.listRuns, resp: struct {
			Runs []policy.Run `json:"runs"`
		}{}},
		{method: "GET", path: "/api/v1/audit", summary: "Audit log entries from seq after on, oldest first", query: []string{"after", "limit"}, perm: auth.PermAuditRead, handler: a.listAudit, resp: auditAnswer{}},
		{method: "GET", path: "/api/v1/disposals", summary: "Executed deletions with their proof (what, rule, approval, when, by whom), from the audit log",
			query: []string{"rule", "since"}, perm: auth.PermAuditRead, handler: a.listDisposals, resp: disposalsAnswer{}},
		{method: "POST", path: "/api/v1/audit/verify", summary: "Verify the audit log's hash chain against a saved checkpoint", body: "application/json", perm: auth.PermAuditRead, policy: true, handler: a.verifyAudit, req: policy.Checkpoint{}, resp: AuditVerifyResponse{}},
		{method: "GET", path: "/api/v1/export", summary: "A load file (csv, jsonl or Concordance dat) with near-duplicate fields", query: []string{"format*", "matter"}, perm: auth.PermExport, handler: a.exportDocuments},
		{method: "GET", path: "/api/v1/tokens", summary: "API tokens (never their secrets)", perm: auth.PermTokensManage, handler: a.listTokens, resp: struct {
			Tokens []TokenView `json:"tokens"`
		}{}},
		{method: "POST", path: "/api/v1/tokens", summary: "Create an API token; its secret is shown once", body: "application/json", perm: auth.PermTokensManage, handler: a.createToken, req: TokenRequest{}, resp: struct {
			Token string    `json:"token"`
			Info  TokenView `json:"info"`
		}{}},
		{method: "POST", path: "/api/v1/tokens/{id}/revoke", summary: "Revoke an API token, with a reason", body: "application/json", perm: auth.PermTokensManage, handler: a.revokeToken, req: reasonBody{}},
	}
	if a.UI != nil {
		rs = append(rs,
			route{method: "GET", path: "/{$}", summary: "The review UI", public: true, handler: a.UI.ServeHTTP},
			route{method: "GET", path: "/ui/", summary: "The review UI's files", public: true, handler: a.UI.ServeHTTP})
	}
	return rs
}

// Handler serves every route: public ones as they are, the others behind
// authentication and their permission. Any other /api/v1 path answers 401
// without credentials, so that nothing is learnt about the API unsigned.
func (a *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	guard := func(h http.Handler) http.Handler {
		if a.Authn == nil {
			return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				writeError(w, http.StatusServiceUnavailable, errors.New("authentication is not configured"))
			})
		}
		var opts []auth.Option
		if a.Certs != nil {
			opts = append(opts, auth.ClientCerts(a.Certs))
		}
		return auth.Middleware(a.Authn, h, opts...)
	}
	for _, rt := range a.routes() {
		var h http.Handler = rt.handler
		if rt.policy {
			h = a.needPolicy(rt.handler)
		}
		if rt.search {
			h = a.searches.wrap(h)
		}
		if !rt.public {
			if rt.perm != "" {
				h = auth.Require(rt.perm, h)
			}
			h = guard(a.withScope(h))
		}
		mux.Handle(rt.method+" "+rt.path, h)
	}
	mux.Handle("/api/", guard(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		writeError(w, http.StatusNotFound, fmt.Errorf("no endpoint %s %s", r.Method, r.URL.Path))
	})))
	return mux
}

var pathParam = regexp.MustCompile(`\{([a-z_]+)\}`)

// openAPIDocument describes every route in OpenAPI 3.0.
func (a *Server) openAPIDocument() map[string]any {
	paths := map[string]map[string]any{}
	schemas := openapi3.Schemas{}
	gen := openapi3gen.NewGenerator(openapi3gen.CreateComponentSchemas(openapi3gen.ExportComponentSchemasOptions{ExportComponentSchemas: true}))
	schema := func(v any) any {
		ref, err := gen.NewSchemaRefForValue(v, schemas)
		if err != nil {
			return map[string]any{} // described by its summary alone
		}
		return ref
	}
	for _, rt := range a.routes() {
		if rt.path == "/{$}" || rt.path == "/ui/" {
			continue // the UI, not the API
		}
		var params []map[string]any
		for _, m := range pathParam.FindAllStringSubmatch(rt.path, -1) {
			params = append(params, map[string]any{"name": m[1], "in": "path", "required": true, "schema": map[string]string{"type": "string"}})
		}
		for _, q := range rt.query {
			name, required := strings.CutSuffix(q, "*")
			params = append(params, map[string]any{"name": name, "in": "query", "required": required, "schema": map[string]string{"type": "string"}})
		}
		ok := map[string]any{}
		if rt.resp != nil {
			ok["schema"] = schema(rt.resp)
		}
		responses := map[string]any{
			"200":     map[string]any{"description": "success", "content": map[string]any{"application/json": ok}},
			"default": map[string]any{"description": `an error: {"error": "..."}`, "content": map[string]any{"application/json": map[string]any{}}},
		}
		if !rt.public {
			responses["401"] = map[string]any{"description": "no valid token or client certificate"}
		}
		if rt.perm != "" {
			responses["403"] = map[string]any{"description": "the caller's role lacks " + string(rt.perm)}
		}
		op := map[string]any{
			"summary":     rt.summary,
			"operationId": strings.ToLower(rt.method) + strings.NewReplacer("/", "_", "{", "", "}", "", ".", "_").Replace(rt.path),
			"responses":   responses,
		}
		if rt.public {
			op["security"] = []any{}
		}
		if rt.perm != "" {
			op["x-simdex-permission"] = string(rt.perm)
			if role, ok := auth.MinRole(rt.perm); ok {
				op["description"] = "Needs permission " + string(rt.perm) + " (role " + string(role) + " or above)."
			}
		}
		if params != nil {
			op["parameters"] = params
		}
		if rt.body != "" {
			media := map[string]any{}
			if rt.req != nil {
				media["schema"] = schema(rt.req)
			}
			op["requestBody"] = map[string]any{"required": true, "content": map[string]any{rt.body: media}}
		}
		if paths[rt.path] == nil {
			paths[rt.path] = map[string]any{}
		}
		paths[rt.path][strings.ToLower(rt.method)] = op
	}
	return map[string]any{
		"openapi": "3.0.3",
		"info": map[string]any{
			"title":       "simdex",
			"version":     "v1",
			"description": "Every copy and near-copy of a document, with retention rules and legal holds that follow the content.",
		},
		"paths": paths,
		"components": map[string]any{"schemas": schemas, "securitySchemes": map[string]any{
			"token": map[string]any{"type": "http", "scheme": "bearer", "description": "An API token from `simdex token create`"},
		}},
		"security": []any{map[string]any{"token": []any{}}},
	}
}

func (a *Server) openAPI(w http.ResponseWriter, r *http.Request) {
	a.openAPIOnce.Do(func() { a.openAPIDoc = a.openAPIDocument() })
	writeJSON(w, http.StatusOK, a.openAPIDoc)
}
