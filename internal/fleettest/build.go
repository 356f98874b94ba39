package fleettest

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
)

// Binaries are the programs a fleet runs, built once per test binary.
type Binaries struct {
	Simdex     string // bin/simdex of this module
	NATSServer string // nats-server at the version in go.mod
}

var built struct {
	once sync.Once
	bins Binaries
	err  error
}

// Build builds simdex and nats-server into a directory of the test
// binary's own (removed by Cleanup) the first time it is called, and
// returns their paths. The Go build cache makes later builds quick.
func Build(t testing.TB) Binaries {
	t.Helper()
	built.once.Do(func() { built.bins, built.err = build() })
	if built.err != nil {
		t.Fatalf("fleettest: %v", built.err)
	}
	return built.bins
}

// Cleanup removes the built binaries; call it from TestMain after m.Run.
func Cleanup() {
	if built.bins.Simdex != "" {
		_ = os.RemoveAll(filepath.Dir(built.bins.Simdex))
	}
}

func build() (Binaries, error) {
	root, err := moduleRoot()
	if err != nil {
		return Binaries{}, err
	}
	dir, err := os.MkdirTemp("", "simdex-fleet-bin-")
	if err != nil {
		return Binaries{}, fmt.Errorf("create binary directory: %w", err)
	}
	b := Binaries{Simdex: filepath.Join(dir, "simdex"), NATSServer: filepath.Join(dir, "nats-server")}
	// Both at once: linking dominates, and it is single-threaded.
	var wg sync.WaitGroup
	errs := make([]error, 2)
	for i, job := range [][2]string{{b.Simdex, "./cmd/simdex"}, {b.NATSServer, "github.com/nats-io/nats-server/v2"}} {
		wg.Go(func() {
			cmd := exec.Command("go", "build", "-o", job[0], job[1])
			cmd.Dir = root
			if msg, err := cmd.CombinedOutput(); err != nil {
				errs[i] = fmt.Errorf("go build %s: %w\n%s", job[1], err, msg)
			}
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		_ = os.RemoveAll(dir)
		return Binaries{}, err
	}
	return b, nil
}

// moduleRoot finds the directory of go.mod from the working directory.
func moduleRoot() (string, error) {
	out, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil {
		return "", fmt.Errorf("locate go.mod: %w", err)
	}
	mod := string(out[:len(out)-1])
	if mod == "" || mod == os.DevNull {
		return "", fmt.Errorf("locate go.mod: not inside the simdex module")
	}
	return filepath.Dir(mod), nil
}
