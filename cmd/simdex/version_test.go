package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"runtime"
	"strings"
	"testing"

	"github.com/simdex/simdex/internal/buildinfo"
)

func TestVersion(t *testing.T) {
	var out bytes.Buffer
	root := newRootCmd()
	root.SetOut(&out)
	root.SetArgs([]string{"version", "--json"})
	if err := root.Execute(); err != nil {
		t.Fatal(err)
	}
	var in buildinfo.Info
	if err := json.Unmarshal(out.Bytes(), &in); err != nil {
		t.Fatalf("version --json: %v: %s", err, out.String())
	}
	if in.GoVersion != runtime.Version() || in.IndexSchema == 0 || in.Scheme == "" || in.NormalForm == 0 {
		t.Fatalf("version --json = %+v", in)
	}
}

// TestArgumentErrorsPrintUsage: "accepts 1 arg(s), received 0" alone left
// the user to guess; the usage line follows, on the error's own line.
func TestArgumentErrorsPrintUsage(t *testing.T) {
	for _, args := range [][]string{{"similar"}, {"scan", "--bogus", "x"}, {"version", "extra"}} {
		root := newRootCmd()
		root.SetArgs(args)
		root.SetOut(&bytes.Buffer{})
		err := root.Execute()
		if err == nil {
			t.Fatalf("%v: accepted", args)
		}
		var buf bytes.Buffer
		printError(&buf, err)
		if !strings.Contains(buf.String(), "usage: simdex "+args[0]) || !strings.Contains(buf.String(), "--help") ||
			strings.Count(buf.String(), "\n") != 1 {
			t.Errorf("%v printed %q, want one line with the usage line", args, buf.String())
		}
	}
}

// TestReviewNeedsAReasonBeforeTheCall: flags approve and dismiss say in
// their help that --reason is required and refuse to run without it,
// before any request is made.
func TestReviewNeedsAReasonBeforeTheCall(t *testing.T) {
	for _, action := range []string{"approve", "dismiss"} {
		root := newRootCmd()
		var out bytes.Buffer
		root.SetOut(&out)
		root.SetArgs([]string{"flags", action, "--help"})
		if err := root.Execute(); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(out.String(), "--reason TEXT") || !strings.Contains(out.String(), "required") {
			t.Errorf("flags %s --help does not say --reason is required:\n%s", action, out.String())
		}
		root = newRootCmd()
		root.SetOut(&bytes.Buffer{})
		root.SetArgs([]string{"flags", action, "7"})
		cmd, err := root.ExecuteC()
		err = asUsageError(cmd, err)
		var ue *usageError
		if err == nil || !strings.Contains(err.Error(), `"reason" not set`) || !errors.As(err, &ue) {
			t.Errorf("flags %s without --reason: %v, want a usage error before any call", action, err)
		}
	}
}
