package main

import (
	"strings"
	"testing"
)

// TestFlagsListRefusesUnknownFilters: --status bogus and --status any
// printed an empty table and exit 0, while --kind bogus was refused. Both
// are refused before any call (no daemon listens at --addr), naming the
// values there are.
func TestFlagsListRefusesUnknownFilters(t *testing.T) {
	for _, c := range []struct{ flag, value, want string }{
		{"--status", "bogus", "open, approved, executing, executed, refused, dismissed"},
		{"--status", "any", "open, approved, executing, executed, refused, dismissed"},
		{"--kind", "bogus", "disposition-due, hold-match, duplicate-upload, hold-unenforced or hold-source-changed"},
	} {
		out, code, err := run(t, "flags", "list", "--addr", "127.0.0.1:1", c.flag, c.value)
		if code != 2 || err == nil || out != "" {
			t.Errorf("flags list %s %s: exit %d, %v, printed %q; want exit 2 and nothing printed", c.flag, c.value, code, err, out)
			continue
		}
		if msg := err.Error(); !strings.Contains(msg, c.flag+` "`+c.value+`"`) || !strings.Contains(msg, c.want) || strings.Contains(msg, "call the daemon") {
			t.Errorf("flags list %s %s: %q; want it named with the values there are, before any call", c.flag, c.value, msg)
		}
	}
}
