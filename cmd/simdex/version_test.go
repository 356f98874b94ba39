package main

import (
	"bytes"
	"encoding/json"
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
// the user to guess; the usage line follows.
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
		if !strings.Contains(buf.String(), "Usage: simdex "+args[0]) || !strings.Contains(buf.String(), "--help") {
			t.Errorf("%v printed %q, want the usage line", args, buf.String())
		}
	}
}
