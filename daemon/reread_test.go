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

	"github.com/nats-io/nats.go"

	"github.com/simdex/simdex/api"
	natsconn "github.com/simdex/simdex/connectors/nats"
)

// getText answers GET /api/v1/documents/{id}/text: status, body and
// where the text came from.
func getText(t *testing.T, addr string, id int64) (int, string, string) {
	t.Helper()
	resp, err := http.Get(fmt.Sprintf("http://%s/api/v1/documents/%d/text", addr, id))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), resp.Header.Get(api.TextFromHeader)
}

// With index.keep_text off, a reviewer's text and diff are read again
// from the objects' origins, real MinIO versions and a watched folder,
// and the buckets NATS reference messages name, exactly as indexed: an
// overwritten S3 object's older version still shows its own text. A NATS
// message that carried its body has none to show; a hold's seed file
// keeps its text.
func TestDiffReadsTextsAgainFromTheirOrigins(t *testing.T) {
	r := newRig(t)
	cfg := r.config(t, t.TempDir())
	cfg.Index.KeepText = false
	inbox := t.TempDir()
	cfg.Connectors.FS.Dirs = []string{inbox}
	d := startDaemon(t, cfg, r.env)
	addr := d.Addr().String()

	memo := strings.Repeat("The retention schedule keeps payroll records for seven years after the year they close. ", 30)
	edited := strings.Replace(memo, "seven", "ten", 1)
	v1 := r.put(t, "memo.txt", memo)
	if err := os.WriteFile(filepath.Join(inbox, "memo copy.txt"), []byte(edited), 0o600); err != nil {
		t.Fatal(err)
	}
	nc := r.ns.Conn(t)
	msg := nats.NewMsg("simdex.docs.memo")
	msg.Header.Set(natsconn.HeaderID, "memo-by-nats")
	msg.Header.Set(natsconn.HeaderName, "memo.txt")
	msg.Data = []byte(edited)
	publishToStream(t, nc, msg)
	ref := nats.NewMsg("simdex.docs.memo")
	ref.Header.Set(natsconn.HeaderID, "memo-by-reference")
	ref.Header.Set(natsconn.HeaderRef, natsconn.FormatRef(r.bucket, "memo.txt", v1.VersionID))
	publishToStream(t, nc, ref)
	ids := map[string]int64{}
	for name, key := range map[string]string{"s3": "s3:records/records/memo.txt", "fs": "fs:" + inbox + "/memo copy.txt",
		"nats": "nats:docs/memo-by-nats", "ref": "nats:docs/records/memo-by-reference"} {
		waitFor(t, 30*time.Second, "indexing of "+key, func() bool {
			docs := versionsOf(t, addr, key)
			if len(docs) == 1 {
				ids[name] = int64(docs[0].ID)
			}
			return len(docs) == 1
		})
	}

	var diff api.DiffResponse
	if code := getJSON(t, addr, fmt.Sprintf("/api/v1/diff?a=%d&b=%d", ids["s3"], ids["fs"]), &diff); code != 200 {
		t.Fatalf("diff: status %d", code)
	}
	var changed []string
	for _, op := range diff.Ops {
		if op.Op != "equal" {
			changed = append(changed, op.Op+" "+op.Text)
		}
	}
	if !slices.Equal(diff.Reread, []string{"a", "b"}) || !slices.Equal(changed, []string{"delete seven", "insert ten"}) {
		t.Errorf("diff read again %v, changed %q; want a and b, seven for ten", diff.Reread, changed)
	}

	// The object overwritten: the older version keeps its own text.
	r.put(t, "memo.txt", edited)
	waitFor(t, 30*time.Second, "the second version", func() bool { return len(versionsOf(t, addr, "s3:records/records/memo.txt")) == 2 })
	if code, body, from := getText(t, addr, ids["s3"]); code != 200 || body != memo || from != "origin" {
		t.Errorf("first version's text: status %d, from %q, %.40q", code, from, body)
	}
	if code, body, from := getText(t, addr, ids["ref"]); code != 200 || body != memo || from != "origin" {
		t.Errorf("NATS reference's text: status %d, from %q, %.40q", code, from, body)
	}
	if code, body, _ := getText(t, addr, ids["nats"]); code != http.StatusNotFound || !strings.Contains(body, "carried its body") {
		t.Errorf("NATS message's text: status %d, %s; want 404, carried its body", code, body)
	}

	// A seed file's text is kept: its diff reads only the other side again.
	var hold api.HoldResponse
	req := api.HoldRequest{Matter: "payroll", SeedFiles: []api.SeedFile{{Name: "seed.txt", Data: []byte(memo)}}}
	if code := postJSON(t, addr, "/api/v1/holds", req, &hold); code != 201 && code != 200 {
		t.Fatalf("create hold: status %d", code)
	}
	seed := versionsOf(t, addr, "hold-seed:payroll/seed.txt")
	if len(seed) != 1 {
		t.Fatalf("seed documents = %v", seed)
	}
	diff = api.DiffResponse{}
	if code := getJSON(t, addr, fmt.Sprintf("/api/v1/diff?a=%d&b=%d", seed[0].ID, ids["fs"]), &diff); code != 200 || !slices.Equal(diff.Reread, []string{"b"}) {
		t.Errorf("diff with the seed: status %d, read again %v; want 200, b only", code, diff.Reread)
	}
}
