package main

import (
	"encoding/json"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/simdex/simdex/auth"
)

// tokenConfig writes a configuration whose stores are in a temporary
// data directory and returns its path.
func tokenConfig(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	conf := filepath.Join(dir, "simdex.yaml")
	write(t, conf, []byte("data_dir: "+filepath.Join(dir, "data")+"\n"))
	return conf
}

// TestTokenCreateNeedsPerson: token create refuses, before storing
// anything, a token without a person, a role spelled otherwise than the
// roles are, a viewer or reviewer without a matter, a matter no hold may
// carry and an address that is not one; a good request stores the
// person, whom token list names.
func TestTokenCreateNeedsPerson(t *testing.T) {
	conf := tokenConfig(t)
	for name, tc := range map[string]struct {
		args []string
		want error // nil: a usage error cobra reports
		text string
	}{
		"no --name":         {[]string{"--role", "admin"}, nil, `"name"`},
		"blank --name":      {[]string{"--name", " ", "--role", "admin"}, auth.ErrInvalidPerson, "--name"},
		"Reviewer":          {[]string{"--name", "Jane Doe", "--role", "Reviewer", "--matter", "M-17"}, auth.ErrUnknownRole, "Reviewer"},
		"viewer, no matter": {[]string{"--name", "Jane Doe", "--role", "viewer"}, auth.ErrMatterRequired, "--matter"},
		"blank matter":      {[]string{"--name", "Jane Doe", "--role", "reviewer", "--matter", "  "}, auth.ErrInvalidMatter, "matter"},
		"bad e-mail":        {[]string{"--name", "Jane Doe", "--email", "jane", "--role", "admin"}, auth.ErrInvalidPerson, "e-mail"},
	} {
		out, code, err := run(t, append([]string{"token", "create", "--config", conf}, tc.args...)...)
		if code != 2 || err == nil || !strings.Contains(err.Error(), tc.text) || out != "" || (tc.want != nil && !errors.Is(err, tc.want)) {
			t.Errorf("%s: exit %d, %v, printed %q; want exit 2 and %v naming %s", name, code, err, out, tc.want, tc.text)
		}
	}
	out, code, err := run(t, "token", "list", "--config", conf, "--json")
	if code != 0 || strings.TrimSpace(out) != "[]" {
		t.Fatalf("tokens after refusals: exit %d, %v: %s", code, err, out)
	}
	if _, code, err := run(t, "token", "create", "--config", conf, "--name", "Jane Paralegal", "--email", "jane@example.com",
		"--role", "reviewer", "--matter", "M-17"); code != 0 {
		t.Fatalf("token create: exit %d, %v", code, err)
	}
	out, _, _ = run(t, "token", "list", "--config", conf, "--json")
	var views []struct{ Name, Email string }
	if err := json.Unmarshal([]byte(out), &views); err != nil || len(views) != 1 || views[0].Name != "Jane Paralegal" || views[0].Email != "jane@example.com" {
		t.Errorf("token list --json: %s (%v)", out, err)
	}
	if out, _, _ := run(t, "token", "list", "--config", conf); !strings.Contains(out, "Jane Paralegal") {
		t.Errorf("token list does not name the person:\n%s", out)
	}
}
