package sqlite

import (
	"path/filepath"
	"testing"

	"github.com/simdex/simdex/index/storetest"
)

func TestMarkDeletedAtSource(t *testing.T) {
	storetest.DeletedAtSource(t, open(t, filepath.Join(t.TempDir(), "index.db"), 1))
}
