package auth_test

import (
	"errors"
	"testing"

	"github.com/simdex/simdex/auth"
)

func TestRolePermissionTable(t *testing.T) {
	// Written out role by role, independently of the grants table.
	const (
		v = 1 << iota // viewer
		r             // reviewer
		l             // legal-admin
		a             // admin
	)
	want := map[auth.Permission]int{
		auth.PermDocumentsRead:      v | r | l | a,
		auth.PermSimilarRead:        v | r | l | a,
		auth.PermFamiliesRead:       v | r | l | a,
		auth.PermFlagsRead:          r | l | a,
		auth.PermFlagsReview:        r | l | a,
		auth.PermMattersRead:        r | l | a,
		auth.PermRulesRead:          r | l | a,
		auth.PermHoldsManage:        l | a,
		auth.PermRulesDryRun:        l | a,
		auth.PermAuditRead:          l | a,
		auth.PermExport:             l | a,
		auth.PermDeletionsExecute:   l | a,
		auth.PermOperationsRead:     a,
		auth.PermTokensManage:       a,
		auth.PermConnectorsBackfill: a,
		auth.PermDeliveriesRequeue:  a,
	}
	if len(want) != len(auth.Permissions) {
		t.Fatalf("%d permissions listed, %d in this table", len(auth.Permissions), len(want))
	}
	bits := map[auth.Role]int{auth.RoleViewer: v, auth.RoleReviewer: r, auth.RoleLegalAdmin: l, auth.RoleAdmin: a}
	for _, perm := range auth.Permissions {
		for _, role := range auth.Roles {
			t.Run(string(role)+"/"+string(perm), func(t *testing.T) {
				if got, exp := auth.Allowed(role, perm), want[perm]&bits[role] != 0; got != exp {
					t.Errorf("Allowed(%s, %s) = %v, want %v", role, perm, got, exp)
				}
				if got := (auth.Principal{Role: role}).Can(perm); got != auth.Allowed(role, perm) {
					t.Errorf("Principal.Can disagrees with Allowed")
				}
			})
		}
		if min, ok := auth.MinRole(perm); !ok || !auth.Allowed(min, perm) {
			t.Errorf("MinRole(%s) = %s, %v", perm, min, ok)
		}
	}
	for _, role := range []auth.Role{"", "root", "Admin"} {
		for _, perm := range auth.Permissions {
			if auth.Allowed(role, perm) {
				t.Errorf("unknown role %q allowed %s", role, perm)
			}
		}
	}
	if auth.Allowed(auth.RoleAdmin, "shell.exec") {
		t.Error("unknown permission allowed")
	}
}

func TestParseRole(t *testing.T) {
	for _, role := range auth.Roles {
		if got, err := auth.ParseRole(" " + string(role) + " "); err != nil || got != role {
			t.Errorf("ParseRole(%s) = %s, %v", role, got, err)
		}
	}
	// Roles are spelled exactly: "Reviewer" was taken for reviewer.
	for _, s := range []string{"", "root", "legal_admin", "Reviewer", "Legal-Admin", "ADMIN"} {
		if _, err := auth.ParseRole(s); !errors.Is(err, auth.ErrUnknownRole) {
			t.Errorf("ParseRole(%q): %v", s, err)
		}
	}
	if !auth.RoleAdmin.AtLeast(auth.RoleViewer) || auth.RoleReviewer.AtLeast(auth.RoleLegalAdmin) || auth.Role("x").AtLeast(auth.RoleViewer) {
		t.Error("role order")
	}
}

func TestCanSeeMatter(t *testing.T) {
	cases := []struct {
		p    auth.Principal
		see  []string
		hide []string
	}{
		{auth.Principal{Role: auth.RoleReviewer, Matters: []string{"acme"}}, []string{"acme"}, []string{"globex", ""}},
		{auth.Principal{Role: auth.RoleReviewer}, nil, []string{"acme"}},
		{auth.Principal{Role: auth.RoleViewer}, nil, []string{"acme"}},
		{auth.Principal{Role: auth.RoleLegalAdmin}, []string{"acme", "globex"}, nil},
		{auth.Principal{Role: auth.RoleAdmin}, []string{"acme"}, nil},
		{auth.Principal{Role: auth.RoleAdmin, Matters: []string{"globex"}}, []string{"globex"}, []string{"acme"}},
	}
	for _, c := range cases {
		for _, m := range c.see {
			if !c.p.CanSeeMatter(m) {
				t.Errorf("%+v cannot see %q", c.p, m)
			}
		}
		for _, m := range c.hide {
			if c.p.CanSeeMatter(m) {
				t.Errorf("%+v sees %q", c.p, m)
			}
		}
		if c.p.AllMatters() != (len(c.hide) == 0) {
			t.Errorf("%+v AllMatters = %v", c.p, c.p.AllMatters())
		}
	}
}
