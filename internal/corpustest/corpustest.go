// Package corpustest locates the real documents tests read. The unit
// tests (make test) read the small fixture set committed under
// testdata/corpora at the repository's root, and need nothing beside the
// checkout. The corpus suite (make test-corpora, go test -tags corpora)
// and the benchmarks read the full corpora at the directory named by
// SIMDEX_CORPORA, and fail, not skip, when it is unset or missing.
package corpustest

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

// Env is the environment variable naming the full corpora directory (the
// Makefile's default is ../shared/corpora beside the checkout).
const Env = "SIMDEX_CORPORA"

// Fixtures returns the committed fixture set: testdata/corpora at the root
// of the checkout this package was built from.
func Fixtures() string {
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		panic("corpustest: no caller information to locate testdata/corpora")
	}
	// file is <checkout>/internal/corpustest/corpustest.go.
	return filepath.Join(filepath.Dir(file), "..", "..", "testdata", "corpora")
}

// Path returns the path of rel, slash-separated and relative to the
// fixture set (as "spdx/text/MIT.txt").
func Path(rel string) string { return filepath.Join(Fixtures(), filepath.FromSlash(rel)) }

// Read returns the bytes of the committed fixture rel, failing tb when it
// is missing.
func Read(tb testing.TB, rel string) []byte {
	tb.Helper()
	b, err := os.ReadFile(Path(rel))
	if err != nil {
		tb.Fatalf("read fixture %s (testdata/corpora; scripts/make-fixtures.sh writes it): %v", rel, err)
	}
	return b
}

// ReadFrom returns the bytes of rel, slash-separated, under the corpora
// directory dir (as Dir or Suite return), failing tb when it is missing.
func ReadFrom(tb testing.TB, dir, rel string) []byte {
	tb.Helper()
	b, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(rel)))
	if err != nil {
		tb.Fatalf("read corpus file %s under %s=%s: %v", rel, Env, dir, err)
	}
	return b
}

// Dir returns the full corpora directory named by SIMDEX_CORPORA, failing
// tb when the variable is unset or names no directory.
func Dir(tb testing.TB) string {
	tb.Helper()
	d, err := FullDir()
	if err != nil {
		tb.Fatal(err)
	}
	return d
}

// FullDir returns the full corpora directory named by SIMDEX_CORPORA, or
// an error naming the variable when it is unset or names no directory.
func FullDir() (string, error) {
	d := os.Getenv(Env)
	if d == "" {
		return "", fmt.Errorf("%s is unset: set it to the full corpora (make test-corpora, make bench and make eval set it; default ../shared/corpora beside the checkout)", Env)
	}
	st, err := os.Stat(d)
	if err != nil {
		return "", fmt.Errorf("%s=%s: the full corpora are not there (default ../shared/corpora beside the checkout): %w", Env, d, err)
	}
	if !st.IsDir() {
		return "", fmt.Errorf("%s=%s is not a directory (set it to the full corpora, default ../shared/corpora beside the checkout)", Env, d)
	}
	return d, nil
}

// Suite marks t as a test of the corpus suite and returns the full
// corpora directory. Built without the tag corpora (make test) it skips
// t, which make test-corpora runs; built with it, it fails t when
// SIMDEX_CORPORA is unset or missing. A corpus-suite test calls Suite in
// its own body: scripts/test-corpora.sh finds the tests to run by that
// call.
func Suite(t testing.TB) string {
	t.Helper()
	if !suite {
		t.Skip("corpus suite: runs in make test-corpora (go test -tags corpora, with " + Env + ")")
	}
	return Dir(t)
}
