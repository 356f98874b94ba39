package daemon

import (
	"net/http"
	"regexp"
	"strings"

	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// route is one HTTP endpoint: the mux registers it and the OpenAPI
// document describes it, from the same table, so the two cannot drift.
type route struct {
	method, path string
	summary      string
	query        []string // query parameters, "name" or "name*" when required
	body         string   // media type of the request body, if any
	handler      http.HandlerFunc
}

func (a *api) routes() []route {
	metrics := promhttp.HandlerFor(a.gather, promhttp.HandlerOpts{})
	return []route{
		{method: "GET", path: "/healthz", summary: "Liveness", handler: func(w http.ResponseWriter, r *http.Request) {
			writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
		}},
		{method: "GET", path: "/readyz", summary: "Readiness: 503 until every component has started", handler: func(w http.ResponseWriter, r *http.Request) {
			if err := a.ready(); err != nil {
				writeJSON(w, http.StatusServiceUnavailable, map[string]string{"status": "not ready", "error": err.Error()})
				return
			}
			writeJSON(w, http.StatusOK, map[string]string{"status": "ready"})
		}},
		{method: "GET", path: "/metrics", summary: "Prometheus metrics", handler: metrics.ServeHTTP},
		{method: "GET", path: "/api/v1/openapi.json", summary: "This OpenAPI document", handler: a.openAPI},
		{method: "GET", path: "/api/v1/documents/{id}/similar", summary: "All versions of a stored document: every copy and near-copy with its scores",
			query: []string{"resemblance", "containment"}, handler: a.similarByID},
		{method: "POST", path: "/api/v1/similar", summary: "All versions of an uploaded file (not stored), and of each attachment or member in it",
			query: []string{"resemblance", "containment"}, body: "application/octet-stream", handler: a.similarByUpload},
		{method: "POST", path: "/api/v1/connectors/{name}/backfill", summary: "Queue every object version of an S3 connector", handler: a.backfillConnector},
		{method: "GET", path: "/api/v1/documents/{id}", summary: "A stored document version", handler: a.document},
		{method: "GET", path: "/api/v1/documents", summary: "The stored versions of an index key, newest first", query: []string{"key*"}, handler: a.documentsByKey},
		{method: "GET", path: "/api/v1/stats", summary: "Documents, distinct contents and failed extractions", handler: a.stats},
		{method: "GET", path: "/api/v1/deadletters", summary: "Events that exhausted their deliveries, oldest first", query: []string{"limit"}, handler: a.listDeadLetters},
		{method: "GET", path: "/api/v1/deliveries", summary: "The notifier's outbox: alerts sent, retried and failed, newest first", query: []string{"status", "limit"}, handler: a.listDeliveries},
		{method: "POST", path: "/api/v1/deliveries/requeue", summary: "Retry failed alert deliveries now", body: "application/json", handler: a.requeueDeliveries},
		{method: "GET", path: "/api/v1/holds", summary: "Legal holds (matters)", query: []string{"status"}, handler: a.listHolds},
		{method: "POST", path: "/api/v1/holds", summary: "Place a legal hold: every near-copy of its seeds is held and flagged", body: "application/json", handler: a.createHold},
		{method: "GET", path: "/api/v1/holds/{matter}", summary: "One legal hold", handler: a.getHold},
		{method: "POST", path: "/api/v1/holds/{matter}/release", summary: "Release a legal hold, with a reason", body: "application/json", handler: a.releaseHold},
		{method: "GET", path: "/api/v1/flags", summary: "Review flags, filtered and paged by id",
			query: []string{"kind", "status", "matter", "rule", "document", "after", "limit"}, handler: a.listFlags},
		{method: "GET", path: "/api/v1/flags/{id}", summary: "One review flag", handler: a.getFlag},
		{method: "POST", path: "/api/v1/flags/{id}/{action}", summary: "approve or dismiss a flag (with a reason), or execute an approved deletion",
			body: "application/json", handler: a.actOnFlag},
		{method: "POST", path: "/api/v1/policy/evaluate", summary: "Evaluate retention now; with dry_run, what would be flagged and why", query: []string{"dry_run"}, handler: a.evaluate},
		{method: "GET", path: "/api/v1/policy/runs", summary: "Recorded evaluations, newest first", query: []string{"limit"}, handler: a.listRuns},
		{method: "POST", path: "/api/v1/audit/verify", summary: "Verify the audit log's hash chain against a saved checkpoint", body: "application/json", handler: a.verifyAudit},
		{method: "GET", path: "/api/v1/export", summary: "A load file (csv, jsonl or Concordance dat) with near-duplicate fields", query: []string{"format*", "matter"}, handler: a.exportDocuments},
	}
}

func (a *api) handler() http.Handler {
	mux := http.NewServeMux()
	for _, rt := range a.routes() {
		mux.HandleFunc(rt.method+" "+rt.path, rt.handler)
	}
	return mux
}

var pathParam = regexp.MustCompile(`\{([a-z_]+)\}`)

// openAPIDocument describes every route in OpenAPI 3.0.
func (a *api) openAPIDocument() map[string]any {
	paths := map[string]map[string]any{}
	for _, rt := range a.routes() {
		var params []map[string]any
		for _, m := range pathParam.FindAllStringSubmatch(rt.path, -1) {
			params = append(params, map[string]any{"name": m[1], "in": "path", "required": true, "schema": map[string]string{"type": "string"}})
		}
		for _, q := range rt.query {
			name, required := strings.CutSuffix(q, "*")
			params = append(params, map[string]any{"name": name, "in": "query", "required": required, "schema": map[string]string{"type": "string"}})
		}
		op := map[string]any{
			"summary":     rt.summary,
			"operationId": strings.ToLower(rt.method) + strings.NewReplacer("/", "_", "{", "", "}", "", ".", "_").Replace(rt.path),
			"responses": map[string]any{
				"200":     map[string]any{"description": "success", "content": map[string]any{"application/json": map[string]any{}}},
				"default": map[string]any{"description": `an error: {"error": "..."}`, "content": map[string]any{"application/json": map[string]any{}}},
			},
		}
		if params != nil {
			op["parameters"] = params
		}
		if rt.body != "" {
			op["requestBody"] = map[string]any{"required": true, "content": map[string]any{rt.body: map[string]any{}}}
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
	}
}

func (a *api) openAPI(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, a.openAPIDocument())
}
