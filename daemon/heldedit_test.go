package daemon

import (
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
	"github.com/simdex/simdex/index"
	"github.com/simdex/simdex/policy"
)

// getRaw answers the body of GET path, failing unless it is 200.
func getRaw(t *testing.T, addr, path string) string {
	t.Helper()
	resp, err := http.Get("http://" + addr + path)
	if err != nil {
		t.Fatalf("GET %s: %v", path, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %d %s", path, resp.StatusCode, b)
	}
	return string(b)
}

// TestHeldFileEditedInPlaceKeepsItsVersion: a held file edited in place
// in the watched folder lost its held version (its replace removed it:
// GET /documents/{id} and /text answered 404, the matter's export left it
// out), and its deletion raised no alarm (issue 40, items 1 and 2). The
// held version now stays, marked superseded, in its matter and export,
// beside the new version; the edit and the deletion each raise one
// hold-source-changed flag; an unheld file edited in place is still
// replaced.
func TestHeldFileEditedInPlaceKeepsItsVersion(t *testing.T) {
	original := strings.Repeat("Supply agreement between the parties: the supplier ships turbine blades within ninety days. ", 20)
	r := newFSRig(t, map[string]string{
		"held.txt": original,
		"free.txt": strings.Repeat("Minutes of the facilities committee: the roof repair is scheduled before the winter storms. ", 20),
	})
	old := versionsOf(t, r.addr, r.key("held.txt"))[0]
	if code := postJSON(t, r.addr, "/api/v1/holds", api.HoldRequest{Matter: "M-17", Reason: "litigation", Seeds: []index.DocID{old.ID}}, nil); code != http.StatusCreated {
		t.Fatalf("place hold: %d", code)
	}
	edit := func(name, text string) {
		if err := os.WriteFile(filepath.Join(r.inbox, name), []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	edit("held.txt", "AMENDED. "+original)
	waitFor(t, 30*time.Second, "the edited version indexed beside the held one", func() bool { return len(versionsOf(t, r.addr, r.key("held.txt"))) == 2 })

	var doc api.Document
	if code := getJSON(t, r.addr, fmt.Sprintf("/api/v1/documents/%d", old.ID), &doc); code != http.StatusOK {
		t.Fatalf("GET the held version %d: %d", old.ID, code)
	}
	if doc.Meta[index.MetaSupersededAt] == "" || !strings.Contains(doc.Meta[index.MetaSupersededBy], "held.txt") {
		t.Fatalf("held version's metadata %v: want it marked superseded by the edit", doc.Meta)
	}
	if text := getRaw(t, r.addr, fmt.Sprintf("/api/v1/documents/%d/text", old.ID)); !strings.Contains(text, "Supply agreement") || strings.Contains(text, "AMENDED") {
		t.Fatalf("held version's text is not the original: %.80q", text)
	}
	var held struct {
		Documents []policy.HeldDoc `json:"documents"`
	}
	getJSON(t, r.addr, "/api/v1/holds/M-17/documents", &held)
	if !slices.ContainsFunc(held.Documents, func(d policy.HeldDoc) bool { return d.Document.ID == old.ID }) {
		t.Fatalf("the hold lost its document %d: %+v", old.ID, held.Documents)
	}
	if csv := getRaw(t, r.addr, "/api/v1/export?format=csv&matter=M-17"); !strings.Contains(csv, fmt.Sprint(old.ID)) {
		t.Fatalf("the matter's export lost the held version %d:\n%s", old.ID, csv)
	}
	changed := func(rule string, id index.DocID) []policy.FlagView {
		var out struct {
			Flags []policy.FlagView `json:"flags"`
		}
		getJSON(t, r.addr, "/api/v1/flags?kind="+string(policy.KindHoldSourceChanged), &out)
		var fs []policy.FlagView
		for _, f := range out.Flags {
			if f.Rule == rule && f.Document == int64(id) && f.Matter == "M-17" {
				fs = append(fs, f)
			}
		}
		return fs
	}
	waitFor(t, 10*time.Second, "a hold-source-changed flag of the edit", func() bool { return len(changed(policy.ChangeSuperseded, old.ID)) == 1 })
	var current api.Document
	for _, v := range versionsOf(t, r.addr, r.key("held.txt")) {
		if v.ID != old.ID {
			current = v
		}
	}

	edit("free.txt", "UNHELD EDIT. "+strings.Repeat("Parking lot repainted next week. ", 30))
	waitFor(t, 30*time.Second, "the unheld file's new version", func() bool {
		vs := versionsOf(t, r.addr, r.key("free.txt"))
		return len(vs) == 1 && vs[0].ID != 0 && vs[0].Meta[index.MetaSupersededAt] == "" && getRaw(t, r.addr, fmt.Sprintf("/api/v1/documents/%d/text", vs[0].ID)) != "" &&
			strings.Contains(getRaw(t, r.addr, fmt.Sprintf("/api/v1/documents/%d/text", vs[0].ID)), "UNHELD EDIT")
	})

	// The edited version is a near-copy of the seed, so held too; rm
	// deletes it, the current version, at the source.
	if err := os.Remove(filepath.Join(r.inbox, "held.txt")); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 30*time.Second, "a hold-source-changed flag of the deletion", func() bool { return len(changed(policy.ChangeDeleted, current.ID)) == 1 })
	time.Sleep(time.Second) // rescans deliver the folder's state again
	if n, m := len(changed(policy.ChangeSuperseded, old.ID)), len(changed(policy.ChangeDeleted, current.ID)); n != 1 || m != 1 {
		t.Fatalf("flags after redelivery: %d superseded, %d deleted; want one each", n, m)
	}
	if code := getJSON(t, r.addr, fmt.Sprintf("/api/v1/documents/%d", current.ID), &doc); code != http.StatusOK || doc.Meta[index.MetaDeletedAtSource] == "" {
		t.Fatalf("held current version after rm: %d, meta %v; want kept, marked deleted at source", code, doc.Meta)
	}
	if vs := versionsOf(t, r.addr, r.key("held.txt")); len(vs) != 2 {
		t.Fatalf("versions after rm: %+v; want both held versions kept", vs)
	}
}
