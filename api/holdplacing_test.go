package api

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/simdex/simdex/index"
	"github.com/simdex/simdex/ingest"
	"github.com/simdex/simdex/policy"
	policysqlite "github.com/simdex/simdex/policy/sqlite"
)

// unreachableOrigin stands for an S3 origin that cannot be reached while
// down is set (no legal hold can be turned on), and holds every version
// otherwise.
type unreachableOrigin struct{ down atomic.Bool }

func (u *unreachableOrigin) HoldAll(_ context.Context, o policy.Object) ([]string, error) {
	if u.down.Load() {
		return nil, errors.New("connection refused")
	}
	return []string{o.VersionID}, nil
}

func (u *unreachableOrigin) Held(context.Context, policy.Object) (bool, error) { return true, nil }

func (u *unreachableOrigin) Delete(context.Context, policy.Object) error { return policy.ErrLegalHold }

// TestCreateHoldWhosePlacementFails: a hold stored whose placement cannot
// complete (its origin unreachable) is answered 202 with the hold placing
// and why, not 500 (issue 47); the same create once the origin is back
// places it and answers 200 with the hold active.
func TestCreateHoldWhosePlacementFails(t *testing.T) {
	ctx := t.Context()
	dir := t.TempDir()
	opts := index.DefaultOptions()
	ix, ex := openTestIndex(t, opts)
	out, err := ingest.New(ex, ix).Ingest(ctx, ingest.Object{Key: "test:stored.txt", Name: "stored.txt", Source: "test",
		Body: strings.NewReader(strings.Repeat("The licensee may copy and distribute the work in any medium. ", 30))})
	if err != nil {
		t.Fatal(err)
	}
	pst, err := policysqlite.Open(ctx, filepath.Join(dir, "policy.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { pst.Close() })
	origin := &unreachableOrigin{}
	origin.down.Store(true)
	eng, err := policy.New(policy.Options{Config: policy.DefaultConfig(), Store: pst, Index: policy.IndexOf(ix), Enforcer: origin})
	if err != nil {
		t.Fatal(err)
	}
	a := &Server{Deps: Deps{Index: ix, Extractor: ex, Thresholds: opts.Thresholds, Registry: prometheus.NewRegistry(),
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), Authn: staticAuth{}, Policy: eng}}
	srv := httptest.NewServer(a.Handler())
	t.Cleanup(srv.Close)
	signAs(srv.URL, func() string { return testAdminToken })

	body, _ := json.Marshal(HoldRequest{Matter: "M-47", Reason: "litigation", Seeds: []index.DocID{out.Results[0].ID}})
	create := func() (int, HoldResponse) {
		t.Helper()
		resp, err := http.Post(srv.URL+"/api/v1/holds", "application/json", bytes.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var hr HoldResponse
		if err := json.NewDecoder(resp.Body).Decode(&hr); err != nil {
			t.Fatalf("decode: %v", err)
		}
		return resp.StatusCode, hr
	}
	code, hr := create()
	if code != http.StatusAccepted || hr.Hold.Status != policy.HoldPlacing || !strings.Contains(hr.Error, "connection refused") {
		t.Fatalf("create with the origin down: %d, hold %s, error %q; want 202, placing, the origin's error", code, hr.Hold.Status, hr.Error)
	}
	origin.down.Store(false)
	code, hr = create()
	if code != http.StatusOK || hr.Hold.Status != policy.HoldActive || hr.Placement.Enforced != 1 {
		t.Fatalf("the same create with the origin back: %d, hold %s, %d enforced; want 200, active, the seed locked", code, hr.Hold.Status, hr.Placement.Enforced)
	}
}
