package main

import (
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/simdex/simdex/api"
	"github.com/simdex/simdex/index"
)

// TestHoldSeedSaysWhichItIs: --seed 35 was taken for the file 35 when one
// existed, silently, though 35 is also a document id. Such a seed is
// refused before any call; ./35 names the file, --seed-id 35 the document.
func TestHoldSeedSaysWhichItIs(t *testing.T) {
	t.Chdir(t.TempDir())
	write(t, "35", []byte("a seed file named like a document id"))
	var req api.HoldRequest
	if err := addSeeds(&req, []string{"35"}, nil); err == nil || !strings.Contains(err.Error(), "say --seed ./35 for the file, or --seed-id 35") {
		t.Errorf("--seed 35 beside a file 35: %v", err)
	}
	req = api.HoldRequest{}
	if err := addSeeds(&req, []string{"./35", "36"}, []int64{35}); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(req.Seeds, []index.DocID{35, 36}) || len(req.SeedFiles) != 1 || req.SeedFiles[0].Name != "35" {
		t.Errorf("seeds %v, seed files %d: want documents 35 and 36 and the file 35", req.Seeds, len(req.SeedFiles))
	}
	if err := addSeeds(&api.HoldRequest{}, nil, []int64{-1}); err == nil {
		t.Error("--seed-id -1 accepted")
	}
	_, code, err := run(t, "hold", "create", "--addr", "127.0.0.1:1", "--matter", "M-1", "--seed", "35")
	if code != 2 || err == nil || strings.Contains(err.Error(), "call the daemon") {
		t.Errorf("hold create --seed 35: exit %d, %v; want it refused before any call", code, err)
	}
	if _, err := os.Stat("35"); err != nil {
		t.Fatal(err)
	}
}
