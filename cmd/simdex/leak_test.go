package main

import (
	"os"
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package's tests if any goroutine outlives them. Run
// with $SIMDEX_TEST_RUN_CLI set, the test binary is the simdex command
// line instead (see runCLI).
func TestMain(m *testing.M) {
	if os.Getenv(runCLIEnv) != "" {
		main()
		os.Exit(0)
	}
	goleak.VerifyTestMain(m)
}
