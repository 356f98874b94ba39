package daemon

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"

	"github.com/simdex/simdex/api"
	"github.com/simdex/simdex/index"
)

// postJSON posts body as JSON and decodes the answer into out (if not nil).
func postJSON(t testing.TB, addr, path string, body, out any) int {
	t.Helper()
	b, _ := json.Marshal(body)
	resp, err := http.Post("http://"+addr+path, "application/json", bytes.NewReader(b))
	if err != nil {
		t.Fatalf("POST %s: %v", path, err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	if out != nil && resp.StatusCode < 300 {
		if err := json.Unmarshal(raw, out); err != nil {
			t.Fatalf("POST %s: decode %s: %v", path, raw, err)
		}
	}
	if resp.StatusCode >= 300 {
		t.Logf("POST %s: %d %s", path, resp.StatusCode, raw)
	}
	return resp.StatusCode
}

// TestHeldDocumentDeletedAtSourceStaysInItsMatter: S3 accepts a delete
// marker on a key whose version is under legal hold, and the daemon used
// to remove the document from the index, so the matter's export lost it
// while the hold still counted it (issue 31, item 3). The held version now
// stays, marked deleted at source with when and by which event; a
// non-current version that no hold covers leaves; and once the hold is
// released the held version leaves too.
func TestHeldDocumentDeletedAtSourceStaysInItsMatter(t *testing.T) {
	r := newRig(t)
	r.bucket = "locked"
	r.minio.MakeBucket(t, r.bucket, true, true)
	r.minio.EnableNotifications(t, r.bucket)
	cfg := r.config(t, t.TempDir())
	cfg.Connectors.S3[0].Bucket = r.bucket
	cfg.Connectors.S3[0].Reconcile = ""
	cfg.Pipeline.PurgeInterval = 200 * time.Millisecond
	d := startDaemon(t, cfg, r.env)
	addr := d.Addr().String()
	const key = "s3:records/locked/contracts/supply.txt"

	held := r.put(t, "contracts/supply.txt", "SUPPLY AGREEMENT. "+strings.Repeat("The supplier shall deliver the goods described in schedule one to the buyer's warehouse. ", 12))
	waitFor(t, 30*time.Second, "first version indexed", func() bool { return len(versionsOf(t, addr, key)) == 1 })
	seed := versionsOf(t, addr, key)[0]
	if code := postJSON(t, addr, "/api/v1/holds", api.HoldRequest{Matter: "M-31", Reason: "litigation", Seeds: []index.DocID{seed.ID}}, nil); code != http.StatusCreated {
		t.Fatalf("place hold: %d", code)
	}
	free := r.put(t, "contracts/supply.txt", "MEETING NOTES. "+strings.Repeat("Lunch is at noon on Friday and the parking lot will be repainted next week. ", 12))
	waitFor(t, 30*time.Second, "second version indexed", func() bool { return len(versionsOf(t, addr, key)) == 2 })

	if err := r.mc.RemoveObject(context.Background(), r.bucket, "contracts/supply.txt", minio.RemoveObjectOptions{}); err != nil {
		t.Fatalf("delete: %v", err)
	}
	waitFor(t, 30*time.Second, "the unheld version removed", func() bool { return len(versionsOf(t, addr, key)) == 1 })
	time.Sleep(500 * time.Millisecond) // a purge runs meanwhile and must keep it
	vs := versionsOf(t, addr, key)
	if len(vs) != 1 || vs[0].VersionID != held.VersionID {
		t.Fatalf("versions after the delete marker: %+v, want only the held %s (not %s)", vs, held.VersionID, free.VersionID)
	}
	if at := vs[0].Meta[index.MetaDeletedAtSource]; at == "" || !strings.Contains(vs[0].Meta[index.MetaDeletedAtSourceEvent], "delete marker") {
		t.Fatalf("held version's metadata %v: want it marked deleted at source by the delete marker", vs[0].Meta)
	}
	resp, err := http.Get("http://" + addr + "/api/v1/export?format=csv&matter=M-31")
	if err != nil {
		t.Fatal(err)
	}
	csv, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !strings.Contains(string(csv), "supply.txt") {
		t.Fatalf("the matter's export lost the held document:\n%s", csv)
	}

	if code := postJSON(t, addr, "/api/v1/holds/M-31/release", map[string]string{"reason": "matter closed"}, nil); code != http.StatusOK {
		t.Fatalf("release hold: %d", code)
	}
	waitFor(t, 30*time.Second, "the released version removed", func() bool { return len(versionsOf(t, addr, key)) == 0 })
}
