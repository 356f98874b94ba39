package api_test

import (
	"archive/zip"
	"bytes"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/simdex/simdex/api"
	"github.com/simdex/simdex/daemon"
	"github.com/simdex/simdex/index"
	"github.com/simdex/simdex/policy"
)

// scopeSubject is something a principal limited to matter A may not see,
// asked of every route beside its twin, which does not exist.
type scopeSubject struct {
	what string
	id   int64  // a document or flag id
	name string // the document's name, searched for
	key  string // the document's key
	text string // what an upload compared with it sends
	flag bool   // a flag, asked of the routes under /flags/
}

// scopeRequest is one call of a route about a subject (id, matter, key,
// text): path params, the query parameters it names and a body.
func scopeRequest(rt api.RouteInfo, id int64, matter, name, key, text string, visible int64) (string, any) {
	path := strings.NewReplacer("{id}", fmt.Sprint(id), "{matter}", matter, "{name}", "nope", "{action}", "dismiss").Replace(rt.Path)
	q := url.Values{}
	for name, v := range map[string]string{"q": name, "key": key, "a": fmt.Sprint(id), "b": fmt.Sprint(visible),
		"document": fmt.Sprint(id), "format": "jsonl", "matter": matter, "limit": "1000"} {
		if strings.Contains(rt.Path, "/flags") && name == "matter" {
			continue // a matter filter the caller cannot see is refused whatever it names
		}
		q.Set(name, v)
	}
	path += "?" + q.Encode()
	switch {
	case rt.Method != "POST":
		return path, nil
	case strings.HasSuffix(rt.Path, "/similar"):
		return path, text
	case strings.HasSuffix(rt.Path, "/bulk"):
		return path, map[string]any{"ids": []int64{id}, "action": "dismiss", "reason": "x"}
	case strings.HasSuffix(rt.Path, "/requeue"):
		return path, map[string]any{"ids": []int64{id}}
	case rt.Path == "/api/v1/holds":
		return path, map[string]any{"matter": "A", "seeds": []int64{id}}
	}
	return path, map[string]any{"reason": "x"}
}

// TestMatterScopeEveryRoute walks every route of the route table as a
// viewer and a reviewer limited to matter A: asked about a document no
// hold covers, another matter's seed file or an organisation-wide flag,
// each answers exactly as for one that does not exist; and no answer
// without a subject moves when another matter's seed file and an
// organisation-wide flag appear.
func TestMatterScopeEveryRoute(t *testing.T) {
	r := newRoleRigWith(t, func(c *daemon.Config) {
		c.Policy.Retention = []policy.RetentionRule{{Name: "purge-text", Selector: policy.Selector{ContentType: "text/*"},
			Period: "1ns", Action: policy.ActionDelete}}
	})
	memo, contract := r.doc(t, "unrelated-memo.txt"), r.doc(t, "contract.txt")
	who := []string{"viewer", "reviewer-A"}
	lists := func() map[string]string {
		out := map[string]string{}
		for _, rt := range api.RouteTable() {
			if rt.Public || rt.Method != "GET" || strings.Contains(rt.Path, "{") || rt.Path == "/api/v1/openapi.json" {
				continue
			}
			path, _ := scopeRequest(rt, int64(memo.ID), "A", ".txt", "hold-seed:S/exhibit.txt", "", int64(contract.ID))
			for _, w := range who {
				code, body := r.call(t, w, "GET", path, nil, nil)
				out[w+" GET "+path] = fmt.Sprint(code, " ", body)
			}
		}
		return out
	}
	before := lists()

	// Another matter's seed file, and an organisation-wide flag.
	exhibit := strings.Repeat("The supplier shall deliver the confidential prototype to the buyer by the first of March. ", 20)
	hold := map[string]any{"matter": "S", "name": "Secret", "reason": "litigation", "mode": "report",
		"seed_files": []api.SeedFile{{Name: "exhibit.txt", Data: []byte(exhibit)}}}
	if code, out := r.call(t, "admin", "POST", "/api/v1/holds", hold, nil); code != http.StatusCreated {
		t.Fatalf("hold S: %d %s", code, out)
	}
	if code, out := r.call(t, "admin", "POST", "/api/v1/policy/evaluate", nil, nil); code != 200 {
		t.Fatalf("evaluate: %d %s", code, out)
	}
	var found struct{ Documents []api.Document }
	r.call(t, "admin", "GET", "/api/v1/search?q=exhibit.txt", nil, &found)
	var fs struct{ Flags []policy.FlagView }
	r.call(t, "admin", "GET", fmt.Sprintf("/api/v1/flags?kind=disposition-due&document=%d", memo.ID), nil, &fs)
	if len(found.Documents) != 1 || len(fs.Flags) != 1 {
		t.Fatalf("seed file %+v, disposition flags of the memo %+v", found.Documents, fs.Flags)
	}
	for k, v := range lists() {
		if before[k] != v {
			t.Errorf("%s moved with another matter's seed file or an organisation-wide flag:\nbefore %s\nafter  %s", k, before[k], v)
		}
	}

	const twin = 99999999
	seed := found.Documents[0]
	subjects := []scopeSubject{
		{what: "a document no hold covers", id: int64(memo.ID), name: memo.Name, key: memo.Key, text: strings.Repeat("Quarterly figures for the north region were flat. ", 60)},
		{what: "another matter's seed file", id: int64(seed.ID), name: seed.Name, key: seed.Key, text: exhibit},
		{what: "an organisation-wide flag", id: fs.Flags[0].ID, flag: true},
	}
	for _, rt := range api.RouteTable() {
		if rt.Public {
			continue
		}
		for _, s := range subjects {
			if s.flag != strings.Contains(rt.Path, "/flags/") {
				continue
			}
			path, body := scopeRequest(rt, s.id, "S", s.name, s.key, s.text, int64(contract.ID))
			tpath, tbody := scopeRequest(rt, twin, "NOPE-zeta", "never-stored.txt", "fs:/nope/never.txt", strings.Repeat("Nothing here is like any stored text at all. ", 60), int64(contract.ID))
			for _, w := range who {
				code, out := r.call(t, w, rt.Method, path, body, nil)
				tcode, tout := r.call(t, w, rt.Method, tpath, tbody, nil)
				tout = strings.NewReplacer(fmt.Sprint(twin), fmt.Sprint(s.id), "NOPE-zeta", "S", "fs:/nope/never.txt", s.key, "never-stored.txt", s.name).Replace(tout)
				if code != tcode || out != tout {
					t.Errorf("%s %s %s about %s: %d %.300s\nbut about one that does not exist: %d %.300s", w, rt.Method, rt.Path, s.what, code, out, tcode, tout)
				}
			}
		}
	}
	// A search finds the matter's documents behind newer ones it may not see.
	var found1 struct{ Documents []api.Document }
	r.call(t, "viewer", "GET", "/api/v1/search?q=.txt&limit=1", nil, &found1)
	if len(found1.Documents) != 1 || found1.Documents[0].Name == memo.Name || found1.Documents[0].Name == seed.Name {
		t.Errorf("search .txt, limit 1, as the viewer of A: %+v, want one document of A", found1.Documents)
	}
}

// TestMatterScopeFamilies: a principal limited to a matter that holds one
// member of an archive sees the archive and its other member (the held
// document's family), counts them in stats, and sees nothing else.
func TestMatterScopeFamilies(t *testing.T) {
	var dir string
	r := newRoleRigWith(t, func(c *daemon.Config) { dir = c.DataDir })
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for name, text := range map[string]string{
		"one.txt": strings.Repeat("Minutes of the board meeting on the merger with the northern subsidiary. ", 30),
		"two.txt": strings.Repeat("Travel expenses of the sales team for the spring trade fair in Lyon. ", 30),
	} {
		f, err := zw.Create(name)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := f.Write([]byte(text)); err != nil {
			t.Fatal(err)
		}
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "inbox", "bundle.zip"), buf.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	var bundle, one, two api.Document
	waitFor(t, 60*time.Second, "the archive and its members indexed", func() bool {
		var found struct{ Documents []api.Document }
		r.call(t, "admin", "GET", "/api/v1/search?q=bundle.zip", nil, &found)
		for _, d := range found.Documents {
			switch {
			case d.Parent == 0:
				bundle = d
			case strings.HasSuffix(d.Name, "one.txt"):
				one = d
			case strings.HasSuffix(d.Name, "two.txt"):
				two = d
			}
		}
		return bundle.ID != 0 && one.ID != 0 && two.ID != 0
	})
	hold := map[string]any{"matter": "Z", "name": "Matter Z", "reason": "litigation", "mode": "report", "seeds": []int64{int64(one.ID)}}
	if code, out := r.call(t, "admin", "POST", "/api/v1/holds", hold, nil); code != http.StatusCreated {
		t.Fatalf("hold Z: %d %s", code, out)
	}
	for id, want := range map[index.DocID]int{bundle.ID: 200, one.ID: 200, two.ID: 200,
		r.doc(t, "unrelated-memo.txt").ID: 404, r.doc(t, "contract.txt").ID: 404} {
		if code, out := r.call(t, "reviewer", "GET", fmt.Sprintf("/api/v1/documents/%d", id), nil, nil); code != want {
			t.Errorf("reviewer of Z reads document %d: %d %.200s, want %d", id, code, out, want)
		}
	}
	var kids struct{ Documents []api.Document }
	r.call(t, "reviewer", "GET", fmt.Sprintf("/api/v1/documents/%d/children", bundle.ID), nil, &kids)
	if len(kids.Documents) != 2 {
		t.Errorf("members of the archive to the reviewer of Z: %+v", kids.Documents)
	}
	var st index.Stats
	r.call(t, "reviewer", "GET", "/api/v1/stats", nil, &st)
	if st.Documents != 3 || st.Contents != 2 {
		t.Errorf("stats of the reviewer of Z: %+v, want the archive and its two members, two texts", st)
	}
}
