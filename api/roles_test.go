package api_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/simdex/simdex/api"
	"github.com/simdex/simdex/auth"
	"github.com/simdex/simdex/daemon"
	"github.com/simdex/simdex/internal/corpustest"
	"github.com/simdex/simdex/internal/daemontest"
	"github.com/simdex/simdex/policy"
)

// roleRig is a running daemon on its embedded default holding two
// near-copies and one other document, two matters (A and B) each holding
// the first document, and a token per role.
type roleRig struct {
	addr   string
	hc     *http.Client // never signs: each call names its token
	tokens map[string]string
	docs   []api.Document
}

func newRoleRig(t *testing.T) *roleRig {
	t.Helper()
	return newRoleRigWith(t, func(*daemon.Config) {})
}

// newRoleRigWith is newRoleRig with cfg changed by edit before the start.
func newRoleRigWith(t *testing.T, edit func(*daemon.Config)) *roleRig {
	t.Helper()
	cfg := daemon.DefaultConfig()
	cfg.DataDir = t.TempDir()
	cfg.HTTP.Addr = "127.0.0.1:0"
	cfg.Connectors.FS.Interval = 100 * time.Millisecond
	cfg.Connectors.FS.Settle = 100 * time.Millisecond
	cfg.Connectors.NATS = nil
	edit(&cfg)
	d := daemontest.Start(t, cfg, nil)
	r := &roleRig{addr: d.Addr().String(), hc: &http.Client{Timeout: time.Minute}, tokens: map[string]string{}}
	inbox := filepath.Join(cfg.DataDir, "inbox")
	gpl := corpustest.Read(t, "spdx/text/GPL-3.0-only.txt")
	files := map[string]string{
		"contract.txt":       string(gpl),
		"contract-v2.txt":    strings.Replace(string(gpl), "software", "programs", 5),
		"unrelated-memo.txt": strings.Repeat("Quarterly figures for the north region were flat. ", 60),
	}
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(inbox, name), []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	for role, matters := range map[string][]string{
		// "reviewer" is on matter Z, which has no hold: a reviewer token
		// cannot be made without a matter.
		"viewer": {"A"}, "reviewer-A": {"A"}, "reviewer-B": {"B"}, "legal-admin-A": {"A"}, "reviewer": {"Z"},
		"legal-admin": nil, "admin": nil,
	} {
		roleName, _, _ := strings.Cut(role, "-A")
		roleName, _, _ = strings.Cut(roleName, "-B")
		secret, _, err := daemon.CreateToken(context.Background(), cfg, "test", auth.CreateRequest{Role: auth.Role(roleName), Matters: matters,
			Name: "Person " + role, Description: role})
		if err != nil {
			t.Fatalf("create %s token: %v", role, err)
		}
		r.tokens[role] = secret
	}
	waitFor(t, 60*time.Second, "three documents indexed", func() bool {
		var out struct{ Documents []api.Document }
		r.call(t, "admin", "GET", "/api/v1/search?q=.txt", nil, &out)
		r.docs = out.Documents
		return len(out.Documents) == 3
	})
	slices.SortFunc(r.docs, func(a, b api.Document) int { return strings.Compare(a.Name, b.Name) })
	for _, m := range []string{"A", "B"} {
		body := map[string]any{"matter": m, "name": "Matter " + m, "reason": "litigation", "mode": "report", "seeds": []int64{int64(r.doc(t, "contract.txt").ID)}}
		if code, out := r.call(t, "admin", "POST", "/api/v1/holds", body, nil); code != http.StatusCreated {
			t.Fatalf("create hold %s: %d %s", m, code, out)
		}
	}
	return r
}

func (r *roleRig) doc(t *testing.T, name string) api.Document {
	t.Helper()
	for _, d := range r.docs {
		if d.Name == name {
			return d
		}
	}
	t.Fatalf("no document %s in %v", name, r.docs)
	return api.Document{}
}

// call sends a request as who ("" for no token, or a literal token when
// not a role name) and decodes a 2xx JSON answer into out.
func (r *roleRig) call(t *testing.T, who, method, path string, body, out any) (int, string) {
	t.Helper()
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case string: // a raw body, such as a file to compare
		rd = strings.NewReader(b)
	default:
		j, _ := json.Marshal(b)
		rd = bytes.NewReader(j)
	}
	req, err := http.NewRequest(method, "http://"+r.addr+path, rd)
	if err != nil {
		t.Fatal(err)
	}
	if tok, ok := r.tokens[who]; ok {
		req.Header.Set("Authorization", "Bearer "+tok)
	} else if who != "" {
		req.Header.Set("Authorization", "Bearer "+who)
	}
	resp, err := r.hc.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	if out != nil && resp.StatusCode/100 == 2 {
		if err := json.Unmarshal(data, out); err != nil {
			t.Fatalf("%s %s: decode: %v: %s", method, path, err, data)
		}
	}
	return resp.StatusCode, string(data)
}

// TestEveryRoleAgainstEveryEndpoint calls every authenticated route of the
// route table without a token, with a bad one, and as each role: a role
// below the route's least role is refused with 403, every other passes
// authentication and authorisation.
func TestEveryRoleAgainstEveryEndpoint(t *testing.T) {
	r := newRoleRig(t)
	doc := r.doc(t, "contract.txt").ID
	other := r.doc(t, "contract-v2.txt").ID
	// Requests that reach each handler without changing much: where a
	// handler acts, the body makes it refuse after authorisation.
	reqs := map[string]struct {
		path string
		body any
	}{
		"GET /api/v1/openapi.json":                   {"/api/v1/openapi.json", nil},
		"GET /api/v1/whoami":                         {"/api/v1/whoami", nil},
		"GET /api/v1/about":                          {"/api/v1/about", nil},
		"GET /api/v1/documents/{id}/similar":         {fmt.Sprintf("/api/v1/documents/%d/similar", doc), nil},
		"POST /api/v1/similar":                       {"/api/v1/similar", "some text to compare with the index"},
		"POST /api/v1/connectors/{name}/backfill":    {"/api/v1/connectors/none/backfill", nil},
		"GET /api/v1/documents/{id}":                 {fmt.Sprintf("/api/v1/documents/%d", doc), nil},
		"GET /api/v1/documents/{id}/children":        {fmt.Sprintf("/api/v1/documents/%d/children", doc), nil},
		"GET /api/v1/documents/{id}/text":            {fmt.Sprintf("/api/v1/documents/%d/text", doc), nil},
		"GET /api/v1/documents/{id}/family":          {fmt.Sprintf("/api/v1/documents/%d/family", doc), nil},
		"GET /api/v1/documents/{id}/thread":          {fmt.Sprintf("/api/v1/documents/%d/thread", doc), nil}, // not a message: 404
		"GET /api/v1/documents":                      {"/api/v1/documents?key=none", nil},
		"GET /api/v1/search":                         {"/api/v1/search?q=contract", nil},
		"GET /api/v1/diff":                           {fmt.Sprintf("/api/v1/diff?a=%d&b=%d", doc, other), nil},
		"GET /api/v1/stats":                          {"/api/v1/stats", nil},
		"GET /api/v1/deadletters":                    {"/api/v1/deadletters?limit=1", nil},
		"GET /api/v1/deliveries":                     {"/api/v1/deliveries", nil},
		"POST /api/v1/deliveries/requeue":            {"/api/v1/deliveries/requeue", map[string]any{"ids": []int{999999}}},
		"GET /api/v1/holds":                          {"/api/v1/holds", nil},
		"POST /api/v1/holds":                         {"/api/v1/holds", map[string]any{"matter": "A", "seeds": []int64{int64(doc)}}}, // exists: 409
		"GET /api/v1/holds/{matter}":                 {"/api/v1/holds/A", nil},
		"GET /api/v1/holds/{matter}/documents":       {"/api/v1/holds/A/documents", nil},
		"POST /api/v1/holds/{matter}/release":        {"/api/v1/holds/A/release", map[string]any{"reason": ""}}, // no reason: 400
		"GET /api/v1/flags":                          {"/api/v1/flags", nil},
		"POST /api/v1/flags/bulk":                    {"/api/v1/flags/bulk", map[string]any{"ids": []int{999999}, "action": "dismiss", "reason": "x"}},
		"GET /api/v1/flags/{id}":                     {"/api/v1/flags/999999", nil},
		"POST /api/v1/flags/{id}/{action}":           {"/api/v1/flags/999999/dismiss", map[string]any{"reason": "x"}},
		"GET /api/v1/rules":                          {"/api/v1/rules", nil},
		"POST /api/v1/policy/evaluate":               {"/api/v1/policy/evaluate?dry_run=true", nil},
		"GET /api/v1/policy/runs":                    {"/api/v1/policy/runs", nil},
		"GET /api/v1/audit":                          {"/api/v1/audit?limit=5", nil},
		"GET /api/v1/disposals":                      {"/api/v1/disposals?rule=none", nil},
		"POST /api/v1/audit/verify":                  {"/api/v1/audit/verify", map[string]any{"seq": 0}},
		"GET /api/v1/export":                         {"/api/v1/export?format=jsonl&matter=A", nil},
		"GET /api/v1/tokens":                         {"/api/v1/tokens", nil},
		"POST /api/v1/tokens":                        {"/api/v1/tokens", map[string]any{"role": "emperor"}}, // bad role: 400
		"POST /api/v1/tokens/{id}/revoke":            {"/api/v1/tokens/0000000000000000/revoke", map[string]any{"reason": "test"}},
		"POST /api/v1/flags/{id}/{action} (execute)": {"/api/v1/flags/999999/execute", nil},
	}
	roles := []string{"viewer", "reviewer-A", "legal-admin", "admin"}
	covered := map[string]bool{}
	for _, rt := range api.RouteTable() {
		if rt.Public {
			continue
		}
		key := rt.Method + " " + rt.Path
		covered[key] = true
		req, ok := reqs[key]
		if !ok {
			t.Errorf("%s: no request in this test; add one", key)
			continue
		}
		r.checkRoute(t, key, rt.Method, req.path, req.body, rt.Perm, roles)
	}
	// Executing a deletion needs more than reviewing.
	req := reqs["POST /api/v1/flags/{id}/{action} (execute)"]
	r.checkRoute(t, "execute", "POST", req.path, req.body, auth.PermDeletionsExecute, roles)
	for key := range reqs {
		if !covered[key] && !strings.HasSuffix(key, "(execute)") {
			t.Errorf("%s: not a route any more; remove it from the test", key)
		}
	}
	// Any other /api/v1 path: 401 first, 404 once signed in.
	if code, _ := r.call(t, "", "GET", "/api/v1/nothing-here", nil, nil); code != http.StatusUnauthorized {
		t.Errorf("unknown path without a token: %d, want 401", code)
	}
	if code, _ := r.call(t, "viewer", "GET", "/api/v1/nothing-here", nil, nil); code != http.StatusNotFound {
		t.Errorf("unknown path with a token: %d, want 404", code)
	}
	// Health, readiness, metrics and the UI need no token.
	for _, p := range []string{"/healthz", "/readyz", "/metrics", "/"} {
		if code, _ := r.call(t, "", "GET", p, nil, nil); code != http.StatusOK {
			t.Errorf("GET %s without a token: %d, want 200", p, code)
		}
	}
}

func (r *roleRig) checkRoute(t *testing.T, name, method, path string, body any, perm auth.Permission, roles []string) {
	t.Helper()
	for _, who := range []string{"", "sdx_0000000000000000_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA", "not-a-token"} {
		if code, out := r.call(t, who, method, path, body, nil); code != http.StatusUnauthorized {
			t.Errorf("%s with token %q: %d %s, want 401", name, who, code, out)
		}
	}
	for _, who := range roles {
		role, _, _ := strings.Cut(who, "-")
		if role == "legal" {
			role = "legal-admin"
		}
		code, out := r.call(t, who, method, path, body, nil)
		allowed := perm == "" || auth.Allowed(auth.Role(role), perm)
		switch {
		case allowed && (code == http.StatusUnauthorized || code == http.StatusForbidden):
			t.Errorf("%s as %s: %d %s, want access", name, who, code, out)
		case !allowed && code != http.StatusForbidden:
			t.Errorf("%s as %s: %d %s, want 403", name, who, code, out)
		case code >= 500:
			t.Errorf("%s as %s: %d %s", name, who, code, out)
		}
	}
}

// TestNoCrossMatterLeak: a reviewer or legal-admin on matter A learns
// nothing of matter B — not its hold, its flags, its export or its audit
// entries — and cannot act on it.
func TestNoCrossMatterLeak(t *testing.T) {
	r := newRoleRig(t)
	var all struct{ Flags []policy.FlagView }
	r.call(t, "admin", "GET", "/api/v1/flags?limit=1000", nil, &all)
	var flagA, flagB int64
	for _, f := range all.Flags {
		switch f.Matter {
		case "A":
			flagA = f.ID
		case "B":
			flagB = f.ID
		}
	}
	if flagA == 0 || flagB == 0 {
		t.Fatalf("want flags of both matters, got %+v", all.Flags)
	}
	for _, who := range []string{"reviewer-A", "legal-admin-A"} {
		var fs struct{ Flags []policy.FlagView }
		if code, out := r.call(t, who, "GET", "/api/v1/flags?limit=1000", nil, &fs); code != 200 {
			t.Fatalf("%s lists flags: %d %s", who, code, out)
		}
		sawA := false
		for _, f := range fs.Flags {
			if f.Matter == "B" {
				t.Errorf("%s sees flag %d of matter B", who, f.ID)
			}
			sawA = sawA || f.Matter == "A"
		}
		if !sawA {
			t.Errorf("%s does not see the flags of its own matter", who)
		}
		var hs struct{ Holds []policy.Hold }
		r.call(t, who, "GET", "/api/v1/holds", nil, &hs)
		if len(hs.Holds) != 1 || hs.Holds[0].Matter != "A" {
			t.Errorf("%s lists holds %+v, want A alone", who, hs.Holds)
		}
		for _, c := range []struct {
			method, path string
			body         any
			want         int
		}{
			{"GET", "/api/v1/holds/B", nil, 404},
			{"GET", fmt.Sprintf("/api/v1/flags/%d", flagB), nil, 404},
			{"POST", fmt.Sprintf("/api/v1/flags/%d/dismiss", flagB), map[string]any{"reason": "not mine"}, 404},
			{"GET", "/api/v1/flags?matter=B", nil, 403},
		} {
			if code, out := r.call(t, who, c.method, c.path, c.body, nil); code != c.want {
				t.Errorf("%s %s %s: %d %s, want %d", who, c.method, c.path, code, out, c.want)
			}
		}
		var bulk struct{ Results []api.BulkResult }
		r.call(t, who, "POST", "/api/v1/flags/bulk", api.BulkRequest{IDs: []int64{flagB}, Action: "dismiss", Reason: "x"}, &bulk)
		if len(bulk.Results) != 1 || bulk.Results[0].Error == "" {
			t.Errorf("%s bulk-dismissed flag %d of matter B: %+v", who, flagB, bulk.Results)
		}
	}
	for _, c := range []struct {
		path string
		body any
		want int
	}{
		{"/api/v1/holds/B/release", map[string]any{"reason": "not mine"}, 404},
		{"/api/v1/holds", map[string]any{"matter": "C", "seeds": []int64{int64(r.doc(t, "unrelated-memo.txt").ID)}}, 403},
	} {
		if code, out := r.call(t, "legal-admin-A", "POST", c.path, c.body, nil); code != c.want {
			t.Errorf("legal-admin-A POST %s: %d %s, want %d", c.path, code, out, c.want)
		}
	}
	for _, c := range []struct {
		path string
		want int
	}{
		{"/api/v1/export?format=csv&matter=B", 403},
		{"/api/v1/export?format=csv", 403}, // everything includes B
		{"/api/v1/export?format=csv&matter=A", 200},
		{"/api/v1/audit", 403},
	} {
		if code, out := r.call(t, "legal-admin-A", "GET", c.path, nil, nil); code != c.want {
			t.Errorf("legal-admin-A GET %s: %d %s, want %d", c.path, code, out, c.want)
		}
	}
	// Nothing of B changed.
	var fb struct {
		Status string `json:"status"`
	}
	r.call(t, "admin", "GET", fmt.Sprintf("/api/v1/flags/%d", flagB), nil, &fb)
	if fb.Status != "open" {
		t.Errorf("flag %d of matter B is %s after other matters' attempts", flagB, fb.Status)
	}
}

// TestReviewEndpoints checks what the review UI reads: whoami, search,
// the kept text, the word diff of two near-copies, the family and bulk
// actions.
func TestReviewEndpoints(t *testing.T) {
	r := newRoleRig(t)
	v1, v2, memo := r.doc(t, "contract.txt"), r.doc(t, "contract-v2.txt"), r.doc(t, "unrelated-memo.txt")

	var me api.Whoami
	r.call(t, "reviewer-A", "GET", "/api/v1/whoami", nil, &me)
	if me.Role != "reviewer" || !slices.Equal(me.Matters, []string{"A"}) || me.AllMatters ||
		!slices.Contains(me.Permissions, "flags.review") || slices.Contains(me.Permissions, "holds.manage") {
		t.Errorf("whoami: %+v", me)
	}
	// A legal-admin limited to a matter is refused what weighs every
	// matter's holds, so whoami does not offer it.
	r.call(t, "legal-admin-A", "GET", "/api/v1/whoami", nil, &me)
	if slices.Contains(me.Permissions, "deletions.execute") || slices.Contains(me.Permissions, "rules.dryrun") || !slices.Contains(me.Permissions, "holds.manage") {
		t.Errorf("whoami of a legal-admin limited to A: %+v", me)
	}

	var found struct{ Documents []api.Document }
	r.call(t, "legal-admin", "GET", "/api/v1/search?q=CONTRACT-v2", nil, &found)
	if len(found.Documents) != 1 || found.Documents[0].ID != v2.ID {
		t.Errorf("search by name: %+v", found.Documents)
	}
	r.call(t, "legal-admin", "GET", fmt.Sprintf("/api/v1/search?q=%d", memo.ID), nil, &found)
	if len(found.Documents) == 0 || found.Documents[0].ID != memo.ID {
		t.Errorf("search by id: %+v", found.Documents)
	}
	if code, _ := r.call(t, "legal-admin", "GET", "/api/v1/search", nil, nil); code != 400 {
		t.Errorf("search without q: %d, want 400", code)
	}

	code, text := r.call(t, "legal-admin", "GET", fmt.Sprintf("/api/v1/documents/%d/text", memo.ID), nil, nil)
	if code != 200 || !strings.HasPrefix(text, "Quarterly figures") {
		t.Errorf("text: %d %.60q", code, text)
	}

	var diff api.DiffResponse
	r.call(t, "legal-admin", "GET", fmt.Sprintf("/api/v1/diff?a=%d&b=%d", v1.ID, v2.ID), nil, &diff)
	var del, ins []string
	for _, op := range diff.Ops {
		switch op.Op {
		case "delete":
			del = append(del, op.Text)
		case "insert":
			ins = append(ins, op.Text)
		}
	}
	if len(del) != 5 || len(ins) != 5 || slices.ContainsFunc(del, func(s string) bool { return s != "software" }) ||
		slices.ContainsFunc(ins, func(s string) bool { return s != "programs" }) {
		t.Errorf("diff of the two versions: deleted %q, inserted %q", del, ins)
	}
	for _, c := range []struct {
		q    string
		want int
	}{{"a=x&b=1", 400}, {fmt.Sprintf("a=%d&b=999999", v1.ID), 404}, {fmt.Sprintf("a=%d", v1.ID), 400}} {
		if code, out := r.call(t, "legal-admin", "GET", "/api/v1/diff?"+c.q, nil, nil); code != c.want {
			t.Errorf("diff?%s: %d %s, want %d", c.q, code, out, c.want)
		}
	}

	var fam api.FamilyResponse
	r.call(t, "legal-admin", "GET", fmt.Sprintf("/api/v1/documents/%d/family", v2.ID), nil, &fam)
	if len(fam.Members) != 2 || len(fam.Edges) != 1 || fam.Edges[0].A != min(v1.ID, v2.ID) || fam.Edges[0].B != max(v1.ID, v2.ID) ||
		fam.Edges[0].Resemblance < 0.5 || fam.Truncated {
		t.Errorf("family: %+v", fam)
	}
	r.call(t, "legal-admin", "GET", fmt.Sprintf("/api/v1/documents/%d/family", memo.ID), nil, &fam)
	if len(fam.Members) != 1 || len(fam.Edges) != 0 || fam.Pivot != memo.ID {
		t.Errorf("family of a document alone: %+v", fam)
	}
	r.call(t, "legal-admin", "GET", fmt.Sprintf("/api/v1/documents/%d/family?limit=1", v1.ID), nil, &fam)
	if len(fam.Members) != 1 || !fam.Truncated {
		t.Errorf("family limited to 1: %+v", fam)
	}

	// A filter no flag can match is refused, not answered with no flags.
	for _, c := range []struct {
		q, want string
		code    int
	}{{"status=bogus", `status \"bogus\"`, 400}, {"status=any", `status \"any\"`, 400}, {"kind=bogus", `kind \"bogus\"`, 400},
		{"status=executed&kind=hold-match", `"flags": []`, 200}} {
		if code, out := r.call(t, "reviewer-A", "GET", "/api/v1/flags?"+c.q, nil, nil); code != c.code || !strings.Contains(out, c.want) {
			t.Errorf("flags?%s: %d %s, want %d with %s", c.q, code, out, c.code, c.want)
		}
	}

	// Bulk: the reviewer dismisses every open flag of its matter at once;
	// a flag already settled fails alone.
	var fs struct {
		Flags     []policy.FlagView
		NextAfter int64 `json:"next_after"`
	}
	r.call(t, "reviewer-A", "GET", "/api/v1/flags?status=open&limit=1", nil, &fs)
	if len(fs.Flags) != 1 || fs.NextAfter != fs.Flags[0].ID {
		t.Fatalf("first page of one: %+v", fs)
	}
	r.call(t, "reviewer-A", "GET", "/api/v1/flags?status=open&matter=A", nil, &fs)
	var ids []int64
	for _, f := range fs.Flags {
		ids = append(ids, f.ID)
	}
	if len(ids) == 0 || fs.NextAfter != 0 {
		t.Fatalf("open flags of A: %+v", fs)
	}
	var bulk struct{ Results []api.BulkResult }
	r.call(t, "reviewer-A", "POST", "/api/v1/flags/bulk", api.BulkRequest{IDs: ids, Action: "dismiss", Reason: "reviewed: not relevant"}, &bulk)
	for _, res := range bulk.Results {
		if res.Error != "" || res.Status != "dismissed" {
			t.Errorf("bulk dismiss: %+v", res)
		}
	}
	r.call(t, "reviewer-A", "POST", "/api/v1/flags/bulk", api.BulkRequest{IDs: ids[:1], Action: "approve", Reason: "x"}, &bulk)
	if len(bulk.Results) != 1 || bulk.Results[0].Error == "" {
		t.Errorf("approving a dismissed flag: %+v", bulk.Results)
	}
	if code, _ := r.call(t, "reviewer-A", "POST", "/api/v1/flags/bulk", api.BulkRequest{IDs: ids, Action: "delete"}, nil); code != 400 {
		t.Errorf("bulk with a bad action: %d, want 400", code)
	}
	// Every dismissal is audited under the reviewer's name and token.
	var audit struct{ Entries []policy.AuditEntry }
	r.call(t, "admin", "GET", "/api/v1/audit?limit=10000", nil, &audit)
	id, _, _ := auth.ParseToken(r.tokens["reviewer-A"])
	n := 0
	for _, e := range audit.Entries {
		if e.Action == policy.AuditFlagDismiss && e.Actor == "Person reviewer-A (token:"+id+")" {
			n++
		}
	}
	if n != len(ids) {
		t.Errorf("%d dismissals audited, want %d", n, len(ids))
	}
}

// TestSeedFileWithoutTextIsRefusedAndNotStored: a hold's seed file with
// nothing to compare is refused with a clear error, and the index keeps
// no trace of it.
func TestSeedFileWithoutTextIsRefusedAndNotStored(t *testing.T) {
	r := newRoleRig(t)
	var before, after struct{ Documents int64 }
	r.call(t, "admin", "GET", "/api/v1/stats", nil, &before)
	for _, data := range [][]byte{{0, 1, 2, 0xff}, []byte("   \n\t  "), {}} {
		body := map[string]any{"matter": "C", "reason": "x", "seed_files": []api.SeedFile{{Name: "blank.txt", Data: data}}}
		code, out := r.call(t, "legal-admin", "POST", "/api/v1/holds", body, nil)
		if code != http.StatusUnprocessableEntity || !strings.Contains(out, "no text") && !strings.Contains(out, "required") {
			t.Errorf("seed %q: %d %s, want 422 naming the problem", data, code, out)
		}
	}
	r.call(t, "admin", "GET", "/api/v1/stats", nil, &after)
	if after.Documents != before.Documents {
		t.Errorf("documents %d -> %d: a refused seed was stored", before.Documents, after.Documents)
	}
	if code, _ := r.call(t, "admin", "GET", "/api/v1/holds/C", nil, nil); code != http.StatusNotFound {
		t.Errorf("hold C exists after its seeds were refused: %d", code)
	}
}

// TestMatterLimitsCoverTokensAndSeedFiles: a principal limited to matter
// A neither sees nor revokes tokens beyond A, and never sees the seed files
// uploaded for matter B (their key names B; their text is B's evidence):
// not by search, by id, by its text or among near-copies.
func TestMatterLimitsCoverTokensAndSeedFiles(t *testing.T) {
	r := newRoleRig(t)
	var created struct {
		Token string        `json:"token"`
		Info  api.TokenView `json:"info"`
	}
	if code, out := r.call(t, "admin", "POST", "/api/v1/tokens", api.TokenRequest{Role: "admin", Matters: []string{"A"}, Name: "Ada Admin"}, &created); code != http.StatusCreated {
		t.Fatalf("create admin-A: %d %s", code, out)
	}
	r.tokens["admin-A"] = created.Token
	if code, out := r.call(t, "admin", "POST", "/api/v1/tokens", api.TokenRequest{Role: "viewer", Matters: []string{" "}, Name: "Vic Viewer"}, nil); code != http.StatusBadRequest {
		t.Errorf("token for a blank matter: %d %s, want 400", code, out)
	}
	var all, mine struct{ Tokens []api.TokenView }
	r.call(t, "admin", "GET", "/api/v1/tokens", nil, &all)
	r.call(t, "admin-A", "GET", "/api/v1/tokens", nil, &mine)
	var unlimited string
	for _, tv := range all.Tokens {
		if len(tv.Matters) == 0 && tv.Revoked.IsZero() {
			unlimited = tv.ID
		}
	}
	for _, tv := range mine.Tokens {
		if len(tv.Matters) == 0 || slices.ContainsFunc(tv.Matters, func(m string) bool { return m != "A" }) {
			t.Errorf("admin-A lists token %s of matters %v", tv.ID, tv.Matters)
		}
	}
	if len(mine.Tokens) == 0 || len(mine.Tokens) >= len(all.Tokens) || unlimited == "" {
		t.Fatalf("admin-A lists %d of %d tokens; want its matter's alone (unlimited: %q)", len(mine.Tokens), len(all.Tokens), unlimited)
	}
	if code, out := r.call(t, "admin-A", "POST", "/api/v1/tokens/"+unlimited+"/revoke", map[string]any{"reason": "takeover"}, nil); code != http.StatusNotFound {
		t.Errorf("admin-A revokes an unlimited token: %d %s, want 404", code, out)
	}
	if code, out := r.call(t, "admin", "GET", "/api/v1/whoami", nil, nil); code != http.StatusOK {
		t.Fatalf("the unlimited admin token stopped working: %d %s", code, out)
	}

	seed := strings.Repeat("The parties agree that the supplier shall deliver the confidential prototype to the buyer by the first of March. ", 20)
	body := map[string]any{"matter": "B2", "reason": "litigation", "seed_files": []api.SeedFile{{Name: "secret-memo.txt", Data: []byte(seed)}}}
	if code, out := r.call(t, "legal-admin", "POST", "/api/v1/holds", body, nil); code != http.StatusCreated && code != http.StatusOK {
		t.Fatalf("hold B2 with a seed file: %d %s", code, out)
	}
	var found struct{ Documents []api.Document }
	r.call(t, "admin", "GET", "/api/v1/search?q=secret-memo", nil, &found)
	if len(found.Documents) != 1 {
		t.Fatalf("the seed file is not stored: %+v", found.Documents)
	}
	id := found.Documents[0].ID
	for _, who := range []string{"viewer", "reviewer-A", "legal-admin-A", "admin-A"} {
		var docs struct{ Documents []api.Document }
		if code, out := r.call(t, who, "GET", "/api/v1/search?q=hold-seed", nil, &docs); code != http.StatusOK || len(docs.Documents) != 0 {
			t.Errorf("%s searches hold-seed: %d, %d documents %s", who, code, len(docs.Documents), out)
		}
		for _, p := range []string{"/api/v1/documents/%d", "/api/v1/documents/%d/text", "/api/v1/documents/%d/similar", "/api/v1/documents/%d/family"} {
			path := fmt.Sprintf(p, id)
			if code, out := r.call(t, who, "GET", path, nil, nil); code != http.StatusNotFound {
				t.Errorf("%s GET %s: %d %s, want 404", who, path, code, out)
			}
		}
		var ms struct{ Matches []api.Match }
		if code, out := r.call(t, who, "POST", "/api/v1/similar", seed, &ms); code != http.StatusOK || len(ms.Matches) != 0 {
			t.Errorf("%s compares a copy of the seed: %d, matches %+v %s", who, code, ms.Matches, out)
		}
	}
	var ms struct{ Matches []api.Match }
	if r.call(t, "legal-admin", "POST", "/api/v1/similar", seed, &ms); len(ms.Matches) == 0 {
		t.Error("legal-admin, who sees every matter, does not find the seed file")
	}
}

// secretMatter is a matter none of the rig's limited tokens is on; its
// name appears in nothing they may be told.
const secretMatter = "MH3-zeta"

// TestPolicyEndpointsHideOtherMatters is the roles × matters matrix of
// every policy and flag endpoint. A hold of matter MH3-zeta (which no
// limited token is on) holds the memo, due for deletion under a retention
// rule, whose disposition flag is approved. Each endpoint is called by the
// principals limited to matters (a reviewer and a legal-admin on A, a
// reviewer on none) about MH3-zeta's hold and flags, and again about a
// twin that does not exist: the two answers must be the same, word for
// word once the names are swapped, and no answer may name MH3-zeta. What
// weighs every matter's holds (evaluating, executing a deletion, the
// audit log) is refused to them whatever it names. An unlimited
// legal-admin sees MH3-zeta's hold where it decides.
func TestPolicyEndpointsHideOtherMatters(t *testing.T) {
	r := newRoleRigWith(t, func(c *daemon.Config) {
		c.Policy.Retention = []policy.RetentionRule{{Name: "purge-text", Selector: policy.Selector{ContentType: "text/*"},
			Period: "1ns", Action: policy.ActionDelete}}
	})
	memo, contract := r.doc(t, "unrelated-memo.txt").ID, r.doc(t, "contract.txt").ID

	// The counts of a dry run agree with its decisions (the contracts are
	// held by A and B; the memo is due and not flagged yet).
	var dry policy.Run
	if code, out := r.call(t, "admin", "POST", "/api/v1/policy/evaluate?dry_run=true", nil, &dry); code != 200 {
		t.Fatalf("dry run: %d %s", code, out)
	}
	flagOutcomes := 0
	for _, d := range dry.Decisions {
		if d.Outcome == policy.OutcomeFlag && d.Flag == 0 {
			flagOutcomes++
		}
	}
	if flagOutcomes != 1 || dry.Flagged != flagOutcomes || dry.Due != flagOutcomes {
		t.Errorf("dry run: due %d, flagged %d, with %d new flag decisions (want 1): %+v", dry.Due, dry.Flagged, flagOutcomes, dry.Decisions)
	}
	if code, out := r.call(t, "admin", "POST", "/api/v1/policy/evaluate", nil, nil); code != 200 {
		t.Fatalf("evaluate: %d %s", code, out)
	}
	var fs struct{ Flags []policy.FlagView }
	r.call(t, "admin", "GET", fmt.Sprintf("/api/v1/flags?kind=disposition-due&document=%d", memo), nil, &fs)
	if len(fs.Flags) != 1 {
		t.Fatalf("disposition flags of the memo: %+v", fs.Flags)
	}
	disposition := fs.Flags[0].ID
	exhibit := strings.Repeat("The supplier shall deliver the confidential prototype to the buyer by the first of March. ", 20)
	hold := map[string]any{"matter": secretMatter, "name": "Secret", "reason": "litigation", "mode": "report", "seeds": []int64{int64(memo), int64(contract)},
		"seed_files": []api.SeedFile{{Name: "exhibit.txt", Data: []byte(exhibit)}}}
	if code, out := r.call(t, "admin", "POST", "/api/v1/holds", hold, nil); code != http.StatusCreated {
		t.Fatalf("hold %s: %d %s", secretMatter, code, out)
	}
	var found struct{ Documents []api.Document }
	r.call(t, "admin", "GET", "/api/v1/search?q=exhibit.txt", nil, &found)
	if len(found.Documents) != 1 {
		t.Fatalf("the seed file of %s: %+v", secretMatter, found.Documents)
	}
	seedFile := int64(found.Documents[0].ID)
	r.call(t, "admin", "GET", "/api/v1/flags?matter="+secretMatter, nil, &fs)
	if len(fs.Flags) == 0 {
		t.Fatalf("no flag of matter %s", secretMatter)
	}
	secretFlag := fs.Flags[0].ID
	if code, out := r.call(t, "admin", "POST", fmt.Sprintf("/api/v1/flags/%d/approve", disposition), map[string]any{"reason": "due"}, nil); code != 200 {
		t.Fatalf("approve: %d %s", code, out)
	}
	var approved policy.FlagView
	r.call(t, "admin", "GET", fmt.Sprintf("/api/v1/flags/%d", disposition), nil, &approved)

	// The unlimited legal-admin is told why: the dry run and the refused
	// deletion name the hold.
	for _, c := range []struct{ method, path string }{
		{"POST", "/api/v1/policy/evaluate?dry_run=true"},
		{"POST", fmt.Sprintf("/api/v1/flags/%d/execute", disposition)},
	} {
		if code, out := r.call(t, "legal-admin", c.method, c.path, nil, nil); !strings.Contains(out, secretMatter) {
			t.Errorf("legal-admin %s %s: %d %s, want %s named", c.method, c.path, code, out, secretMatter)
		}
	}

	const noFlag = 99999999
	cases := []struct {
		route        string // the route table's "METHOD path"
		method, path string // %v is the subject
		body         func(subject any) any
		secret, twin any // the subject, and one that does not exist (nil: a list, nothing to compare)
		want         map[string]int
	}{
		{route: "GET /api/v1/holds", method: "GET", path: "/api/v1/holds"},
		{route: "POST /api/v1/holds", method: "POST", path: "/api/v1/holds",
			body: func(m any) any { return map[string]any{"matter": m, "seeds": []int64{int64(memo)}} }, secret: secretMatter, twin: "NOPE-zeta",
			want: map[string]int{"legal-admin-A": 403, "reviewer-A": 403, "reviewer": 403}},
		// Another matter's seed file is no seed: as an id never used.
		{route: "POST /api/v1/holds", method: "POST", path: "/api/v1/holds",
			body: func(id any) any { return map[string]any{"matter": "A", "seeds": []any{id}} }, secret: seedFile, twin: noFlag,
			want: map[string]int{"legal-admin-A": 404, "reviewer-A": 403, "reviewer": 403}},
		{route: "GET /api/v1/holds/{matter}", method: "GET", path: "/api/v1/holds/%v", secret: secretMatter, twin: "NOPE-zeta",
			want: map[string]int{"legal-admin-A": 404, "reviewer-A": 404, "reviewer": 404}},
		{route: "GET /api/v1/holds/{matter}/documents", method: "GET", path: "/api/v1/holds/%v/documents", secret: secretMatter, twin: "NOPE-zeta",
			want: map[string]int{"legal-admin-A": 404, "reviewer-A": 404, "reviewer": 404}},
		{route: "POST /api/v1/holds/{matter}/release", method: "POST", path: "/api/v1/holds/%v/release",
			body: func(any) any { return map[string]any{"reason": "mine now"} }, secret: secretMatter, twin: "NOPE-zeta",
			want: map[string]int{"legal-admin-A": 404, "reviewer-A": 403, "reviewer": 403}},
		{route: "GET /api/v1/flags", method: "GET", path: "/api/v1/flags?limit=1000"},
		{route: "GET /api/v1/flags", method: "GET", path: "/api/v1/flags?matter=%v", secret: secretMatter, twin: "NOPE-zeta",
			want: map[string]int{"legal-admin-A": 403, "reviewer-A": 403, "reviewer": 403}},
		{route: "GET /api/v1/flags", method: "GET", path: fmt.Sprintf("/api/v1/flags?document=%d", r.doc(t, "contract-v2.txt").ID)},
		{route: "GET /api/v1/flags/{id}", method: "GET", path: "/api/v1/flags/%v", secret: secretFlag, twin: noFlag,
			want: map[string]int{"legal-admin-A": 404, "reviewer-A": 404, "reviewer": 404}},
		{route: "POST /api/v1/flags/{id}/{action}", method: "POST", path: "/api/v1/flags/%v/dismiss",
			body: func(any) any { return map[string]any{"reason": "not mine"} }, secret: secretFlag, twin: noFlag,
			want: map[string]int{"legal-admin-A": 404, "reviewer-A": 404, "reviewer": 404}},
		{route: "POST /api/v1/flags/{id}/{action}", method: "POST", path: "/api/v1/flags/%v/approve",
			body: func(any) any { return map[string]any{"reason": "not mine"} }, secret: secretFlag, twin: noFlag,
			want: map[string]int{"legal-admin-A": 404, "reviewer-A": 404, "reviewer": 404}},
		// A deletion blocked by the secret hold is refused as any other.
		{route: "POST /api/v1/flags/{id}/{action}", method: "POST", path: "/api/v1/flags/%v/execute", secret: disposition, twin: noFlag,
			want: map[string]int{"legal-admin-A": 403, "reviewer-A": 403, "reviewer": 403}},
		{route: "POST /api/v1/flags/{id}/{action}", method: "POST", path: "/api/v1/flags/%v/execute", secret: secretFlag, twin: noFlag,
			want: map[string]int{"legal-admin-A": 403, "reviewer-A": 403, "reviewer": 403}},
		{route: "POST /api/v1/flags/bulk", method: "POST", path: "/api/v1/flags/bulk",
			body: func(id any) any { return map[string]any{"ids": []any{id}, "action": "dismiss", "reason": "x"} }, secret: secretFlag, twin: noFlag,
			want: map[string]int{"legal-admin-A": 200, "reviewer-A": 200, "reviewer": 200}},
		{route: "GET /api/v1/rules", method: "GET", path: "/api/v1/rules"},
		{route: "POST /api/v1/policy/evaluate", method: "POST", path: "/api/v1/policy/evaluate?dry_run=true",
			want: map[string]int{"legal-admin-A": 403, "reviewer-A": 403, "reviewer": 403}},
		{route: "POST /api/v1/policy/evaluate", method: "POST", path: "/api/v1/policy/evaluate",
			want: map[string]int{"legal-admin-A": 403, "reviewer-A": 403, "reviewer": 403}},
		{route: "GET /api/v1/policy/runs", method: "GET", path: "/api/v1/policy/runs"},
		{route: "GET /api/v1/audit", method: "GET", path: "/api/v1/audit",
			want: map[string]int{"legal-admin-A": 403, "reviewer-A": 403, "reviewer": 403}},
		{route: "GET /api/v1/disposals", method: "GET", path: "/api/v1/disposals",
			want: map[string]int{"legal-admin-A": 403, "reviewer-A": 403, "reviewer": 403}},
		{route: "POST /api/v1/audit/verify", method: "POST", path: "/api/v1/audit/verify", body: func(any) any { return map[string]any{"seq": 0} },
			want: map[string]int{"legal-admin-A": 403, "reviewer-A": 403, "reviewer": 403}},
		{route: "GET /api/v1/export", method: "GET", path: "/api/v1/export?format=jsonl&matter=%v", secret: secretMatter, twin: "NOPE-zeta",
			want: map[string]int{"legal-admin-A": 403, "reviewer-A": 403, "reviewer": 403}},
	}
	covered := map[string]bool{}
	for _, c := range cases {
		covered[c.route] = true
	}
	for _, rt := range api.RouteTable() {
		key := rt.Method + " " + rt.Path
		for _, p := range []string{"/api/v1/holds", "/api/v1/flags", "/api/v1/policy", "/api/v1/rules", "/api/v1/audit", "/api/v1/disposals", "/api/v1/export"} {
			if strings.HasPrefix(rt.Path, p) && !covered[key] {
				t.Errorf("%s: a policy or flag endpoint missing from this matrix; add it", key)
			}
		}
	}
	ask := func(who string, c int, subject any) (int, string) {
		path := casePath(cases[c].path, subject)
		var body any
		if cases[c].body != nil {
			body = cases[c].body(subject)
		}
		return r.call(t, who, cases[c].method, path, body, nil)
	}
	for _, who := range []string{"reviewer-A", "legal-admin-A", "reviewer"} {
		for i, c := range cases {
			name := fmt.Sprintf("%s %s %s", who, c.method, casePath(c.path, c.secret))
			code, out := ask(who, i, c.secret)
			if want, ok := c.want[who]; ok && code != want {
				t.Errorf("%s: %d %s, want %d", name, code, out, want)
			}
			if code >= 500 {
				t.Errorf("%s: %d %s", name, code, out)
			}
			if c.twin != nil {
				tcode, tout := ask(who, i, c.twin)
				tout = strings.ReplaceAll(tout, fmt.Sprint(c.twin), fmt.Sprint(c.secret))
				if tcode != code || tout != out {
					t.Errorf("%s: answers %d %s\nbut for %v, which does not exist: %d %s", name, code, out, c.twin, tcode, tout)
				}
				continue
			}
			if strings.Contains(out, secretMatter) {
				t.Errorf("%s: %d names %s: %s", name, code, secretMatter, out)
			}
			if c.route == "GET /api/v1/policy/runs" {
				for _, field := range []string{`"due"`, `"held"`, `"hold_matches"`, `"errors"`} {
					if strings.Contains(out, field) {
						t.Errorf("%s: tells %s, which depends on every matter's holds: %s", name, field, out)
					}
				}
			}
		}
	}
	// Nothing the limited principals did changed the secret matter; the
	// refused deletion reads refused, keeping its approval, and tells
	// them not why (the hold), which a principal of every matter reads.
	// The disposition flag is organisation-wide: a principal limited to
	// matters does not see it at all.
	code, out := r.call(t, "reviewer-A", "GET", fmt.Sprintf("/api/v1/flags/%d", disposition), nil, nil)
	tcode, tout := r.call(t, "reviewer-A", "GET", fmt.Sprintf("/api/v1/flags/%d", noFlag), nil, nil)
	if code != http.StatusNotFound || strings.ReplaceAll(tout, fmt.Sprint(noFlag), fmt.Sprint(disposition)) != out {
		t.Errorf("an organisation-wide flag to reviewer-A: %d %s, want as flag %d: %d %s", code, out, noFlag, tcode, tout)
	}
	var told policy.FlagView
	r.call(t, "admin", "GET", fmt.Sprintf("/api/v1/flags/%d", disposition), nil, &told)
	if told.Status != policy.StatusRefused || told.Reason != "held for matter "+secretMatter || told.Actor != approved.Actor {
		t.Errorf("the refused flag as admin sees it: %+v, want held for matter %s", told, secretMatter)
	}
	var h policy.Hold
	r.call(t, "admin", "GET", "/api/v1/holds/"+secretMatter, nil, &h)
	if h.Status != policy.HoldActive {
		t.Errorf("hold %s is %s", secretMatter, h.Status)
	}
}

// casePath fills the subject into a case's path.
func casePath(path string, subject any) string {
	if !strings.Contains(path, "%v") {
		return path
	}
	return fmt.Sprintf(path, subject)
}

// waitFor polls ok every 50 ms until it holds, failing after limit.
func waitFor(t testing.TB, limit time.Duration, what string, ok func() bool) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for !ok() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for %s", limit, what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestSeedFileBeyondMemoryBudgetIsRefused: a hold whose seed files need
// more than the daemon's whole memory budget (memory.budget) is answered
// 413 naming the budget, and neither the hold nor the seed is stored.
func TestSeedFileBeyondMemoryBudgetIsRefused(t *testing.T) {
	r := newRoleRigWith(t, func(c *daemon.Config) { c.Memory.Budget = 64 << 10 })
	var before, after struct{ Documents int64 }
	r.call(t, "admin", "GET", "/api/v1/stats", nil, &before)
	seed := strings.Repeat("The parties agree to settle the matter within thirty days. ", 2000)
	body := map[string]any{"matter": "C", "reason": "x", "seed_files": []api.SeedFile{{Name: "big.txt", Data: []byte(seed)}}}
	code, out := r.call(t, "legal-admin", "POST", "/api/v1/holds", body, nil)
	if code != http.StatusRequestEntityTooLarge || !strings.Contains(out, "memory budget") {
		t.Errorf("%d %s, want 413 naming the memory budget", code, out)
	}
	r.call(t, "admin", "GET", "/api/v1/stats", nil, &after)
	if after.Documents != before.Documents {
		t.Errorf("documents %d -> %d: a refused seed was stored", before.Documents, after.Documents)
	}
	if code, _ := r.call(t, "admin", "GET", "/api/v1/holds/C", nil, nil); code != http.StatusNotFound {
		t.Errorf("hold C exists after its seed was refused: %d", code)
	}
}
