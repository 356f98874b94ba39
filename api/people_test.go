package api_test

import (
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/simdex/simdex/api"
	"github.com/simdex/simdex/auth"
	"github.com/simdex/simdex/policy"
)

// tokenID is the id of a token's secret.
func tokenID(t *testing.T, secret string) string {
	t.Helper()
	id, _, err := auth.ParseToken(secret)
	if err != nil {
		t.Fatal(err)
	}
	return id
}

// TestActionsNamePeople: what a token does is recorded under its
// person's name with the token id beside it (it was "token:<id>" alone):
// whoami, a hold's creator and the audit log.
func TestActionsNamePeople(t *testing.T) {
	r := newRoleRig(t)
	id := tokenID(t, r.tokens["admin"])
	want := "Person admin (token:" + id + ")"

	var me api.Whoami
	r.call(t, "admin", "GET", "/api/v1/whoami", nil, &me)
	if me.Name != "Person admin" || me.TokenID != id || me.Actor != want {
		t.Errorf("whoami: %+v, want name Person admin, token %s", me, id)
	}
	var hold policy.Hold
	if code, out := r.call(t, "admin", "GET", "/api/v1/holds/A", nil, &hold); code != http.StatusOK {
		t.Fatalf("hold A: %d %s", code, out)
	}
	if hold.CreatedBy != want {
		t.Errorf("hold A created by %q, want %q", hold.CreatedBy, want)
	}
	var audit struct{ Entries []policy.AuditEntry }
	r.call(t, "admin", "GET", "/api/v1/audit?limit=10000", nil, &audit)
	i := slices.IndexFunc(audit.Entries, func(e policy.AuditEntry) bool {
		return e.Action == policy.AuditHoldCreate && e.Object == "hold:A"
	})
	if i < 0 || audit.Entries[i].Actor != want {
		t.Errorf("audit of hold A's creation: entry %d of %d, actors %q, want actor %q", i, len(audit.Entries), actors(audit.Entries), want)
	}
}

// TestRevokedTokenRefusedAtOnce: a token revoked through the API is
// refused on its very next request, and the token's person is recorded.
func TestRevokedTokenRefusedAtOnce(t *testing.T) {
	r := newRoleRig(t)
	var created struct {
		Token string        `json:"token"`
		Info  api.TokenView `json:"info"`
	}
	req := api.TokenRequest{Role: "reviewer", Matters: []string{"A"}, Name: "Jane Paralegal", Email: "jane@example.com"}
	if code, out := r.call(t, "admin", "POST", "/api/v1/tokens", req, &created); code != http.StatusCreated {
		t.Fatalf("create token: %d %s", code, out)
	}
	if created.Info.Name != "Jane Paralegal" || created.Info.Email != "jane@example.com" {
		t.Errorf("created %+v", created.Info)
	}
	for name, bad := range map[string]api.TokenRequest{
		"no name":           {Role: "reviewer", Matters: []string{"A"}},
		"Reviewer":          {Role: "Reviewer", Matters: []string{"A"}, Name: "Jane"},
		"viewer, no matter": {Role: "viewer", Name: "Jane"},
		"bad e-mail":        {Role: "admin", Name: "Jane", Email: "jane at example"},
	} {
		if code, out := r.call(t, "admin", "POST", "/api/v1/tokens", bad, nil); code != http.StatusBadRequest {
			t.Errorf("%s: %d %s, want 400", name, code, out)
		}
	}
	var me api.Whoami
	if code, out := r.call(t, created.Token, "GET", "/api/v1/whoami", nil, &me); code != http.StatusOK || me.Name != "Jane Paralegal" {
		t.Fatalf("whoami before revocation: %d %s", code, out)
	}
	if code, out := r.call(t, "admin", "POST", "/api/v1/tokens/"+created.Info.ID+"/revoke", map[string]any{"reason": "left"}, nil); code != http.StatusOK {
		t.Fatalf("revoke: %d %s", code, out)
	}
	if code, out := r.call(t, created.Token, "GET", "/api/v1/whoami", nil, nil); code != http.StatusUnauthorized {
		t.Errorf("whoami after revocation: %d %s, want 401", code, out)
	}
	var audit struct{ Entries []policy.AuditEntry }
	r.call(t, "admin", "GET", "/api/v1/audit?limit=10000", nil, &audit)
	if i := slices.IndexFunc(audit.Entries, func(e policy.AuditEntry) bool { return e.Action == auth.AuditTokenRevoke }); i < 0 ||
		!strings.HasPrefix(audit.Entries[i].Actor, "Person admin (token:") {
		t.Errorf("revocation audited (entry %d) among actors %q", i, actors(audit.Entries))
	}
}

// actors lists the actors of entries, for messages.
func actors(entries []policy.AuditEntry) []string {
	out := make([]string, len(entries))
	for i, e := range entries {
		out[i] = e.Action + " by " + e.Actor
	}
	return out
}
