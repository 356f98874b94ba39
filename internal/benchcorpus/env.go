package benchcorpus

import (
	"os"
	"strconv"
	"testing"
)

// EnvInt returns the positive integer in the environment variable name,
// or def when it is unset; another value fails the benchmark.
func EnvInt(tb testing.TB, name string, def int) int {
	tb.Helper()
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(v)
	if err != nil || n <= 0 {
		tb.Fatalf("%s=%q: want a positive integer", name, v)
	}
	return n
}
