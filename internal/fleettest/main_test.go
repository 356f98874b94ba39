package fleettest

import (
	"os"
	"testing"

	"github.com/simdex/simdex/internal/pgtest"
)

func TestMain(m *testing.M) {
	code := pgtest.Main(m)
	Cleanup()
	os.Exit(code)
}
