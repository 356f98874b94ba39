package api

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"testing"
	"time"

	"github.com/simdex/simdex/notifier"
	notifiersqlite "github.com/simdex/simdex/notifier/sqlite"
)

// TestAPIDeliveries: an alert whose webhook refuses it is failed for good,
// listed by GET /api/v1/deliveries?status=failed, and retried by
// POST /api/v1/deliveries/requeue once the receiver is fixed.
func TestAPIDeliveries(t *testing.T) {
	ctx := context.Background()
	accept := make(chan bool, 1)
	accept <- false
	hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ok := <-accept
		accept <- ok
		if !ok {
			http.Error(w, "bad request", http.StatusBadRequest) // permanent: failed at once
		}
	}))
	defer hook.Close()
	t.Setenv("TEST_HOOK_SECRET", "k")
	ob, err := notifiersqlite.Open(ctx, filepath.Join(t.TempDir(), "outbox.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer ob.Close()
	cfg := notifier.DefaultConfig()
	cfg.FlagsSubject = ""
	cfg.Channels = []notifier.ChannelConfig{{Name: "hook", Type: notifier.TypeWebhook, URL: hook.URL, SecretEnv: "TEST_HOOK_SECRET"}}
	cfg.Routes = []notifier.Route{{Channels: []string{"hook"}}}
	ntf, err := notifier.New(notifier.Options{Config: cfg, Outbox: ob})
	if err != nil {
		t.Fatal(err)
	}
	if err := ntf.Notify(ctx, notifier.Alert{ID: "flag-1", Kind: notifier.KindHoldMatch, Document: 7, Name: "msa.pdf", Summary: "near-copy", Created: time.Now()}); err != nil {
		t.Fatal(err)
	}
	ntf.Dispatch(ctx)
	srv := httptest.NewServer((&Server{Deps: Deps{Outbox: ntf, Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), Authn: staticAuth{}}}).Handler())
	signAs(srv.URL, func() string { return testAdminToken })
	defer srv.Close()

	list := func(status string) []notifier.Delivery {
		t.Helper()
		resp, err := http.Get(srv.URL + "/api/v1/deliveries?status=" + status)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var body struct{ Deliveries []notifier.Delivery }
		if resp.StatusCode != http.StatusOK || json.NewDecoder(resp.Body).Decode(&body) != nil {
			t.Fatalf("GET deliveries: %s", resp.Status)
		}
		return body.Deliveries
	}
	failed := list(notifier.StatusFailed)
	if len(failed) != 1 {
		t.Fatalf("failed deliveries %+v, want 1", failed)
	}
	post := func(body string) int {
		resp, err := http.Post(srv.URL+"/api/v1/deliveries/requeue", "application/json", bytes.NewBufferString(body))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if code := post(`{"ids": [999]}`); code != http.StatusNotFound {
		t.Fatalf("requeue of an unknown delivery: %d, want 404", code)
	}
	if code := post(`nonsense`); code != http.StatusBadRequest {
		t.Fatalf("requeue with a bad body: %d, want 400", code)
	}
	<-accept
	accept <- true
	b, _ := json.Marshal(map[string][]int64{"ids": {failed[0].ID}})
	if code := post(string(b)); code != http.StatusOK {
		t.Fatalf("requeue: %d", code)
	}
	if sent, err := ntf.Dispatch(ctx); sent != 1 || err != nil {
		t.Fatalf("dispatch after requeue: %d, %v", sent, err)
	}
	if got := list(notifier.StatusDelivered); len(got) != 1 {
		t.Fatalf("delivered: %+v", got)
	}
	if resp, err := http.Get(srv.URL + "/api/v1/deliveries?limit=0"); err != nil || resp.StatusCode != http.StatusBadRequest {
		t.Fatalf("limit=0: %v %v", resp.Status, err)
	}
}
