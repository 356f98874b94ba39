package api

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
)

// TestOpenAPIDocument: the served document is valid OpenAPI 3 (checked by
// kin-openapi) and describes every route the daemon serves, with its
// method and path parameters; a route missing from it fails here.
func TestOpenAPIDocument(t *testing.T) {
	a := &Server{Deps: Deps{Authn: staticAuth{}}}
	srv := httptest.NewServer(a.Handler())
	signAs(srv.URL, func() string { return testAdminToken })
	defer srv.Close()
	resp, err := http.Get(srv.URL + "/api/v1/openapi.json")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK || !strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") {
		t.Fatalf("GET /api/v1/openapi.json: %s %s", resp.Status, resp.Header.Get("Content-Type"))
	}
	doc, err := openapi3.NewLoader().LoadFromData(body)
	if err != nil {
		t.Fatalf("load: %v", err)
	}
	if err := doc.Validate(context.Background()); err != nil {
		t.Fatalf("invalid OpenAPI document: %v", err)
	}
	for _, rt := range a.routes() {
		item := doc.Paths.Find(rt.path)
		if item == nil || item.GetOperation(rt.method) == nil {
			t.Errorf("%s %s is served but not described", rt.method, rt.path)
			continue
		}
		op := item.GetOperation(rt.method)
		if rt.resp != nil {
			if ok := op.Responses.Value("200"); ok == nil || ok.Value.Content.Get("application/json") == nil || ok.Value.Content.Get("application/json").Schema == nil {
				t.Errorf("%s %s: no schema for its answer", rt.method, rt.path)
			}
		}
		if !rt.public && op.Responses.Value("401") == nil {
			t.Errorf("%s %s: 401 not described", rt.method, rt.path)
		}
		for _, m := range pathParam.FindAllStringSubmatch(rt.path, -1) {
			if op.Parameters.GetByInAndName("path", m[1]) == nil {
				t.Errorf("%s %s: path parameter %s not described", rt.method, rt.path, m[1])
			}
		}
	}
	if n := len(doc.Paths.Map()); n < 20 {
		t.Errorf("only %d paths described", n)
	}
	var raw map[string]any
	if json.Unmarshal(body, &raw) != nil || raw["openapi"] != "3.0.3" {
		t.Errorf("openapi version: %v", raw["openapi"])
	}
}
