// Command benchfixture builds (or finds up to date in the cache) the
// benchmark fixture of a synthetic collection and prints how it was built:
// the scripts in scripts/bench.d run it before the benchmarks that use the
// fixture, so that the build's cost is reported and not mixed into theirs.
//
//	go run ./internal/benchcorpus/cmd/benchfixture -docs 1000000
//
// With -out DIR it builds a fresh index into DIR instead, bypassing the
// cache, to measure or profile the build (-cpuprofile).
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"runtime/pprof"

	"github.com/simdex/simdex/internal/benchcorpus"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "benchfixture:", err)
		os.Exit(1)
	}
}

func run() error {
	var (
		spec    benchcorpus.Spec
		opts    benchcorpus.BuildOptions
		out     = flag.String("out", "", "build a fresh index into this directory instead of the cache")
		profile = flag.String("cpuprofile", "", "write a CPU profile of the build to this file")
	)
	flag.IntVar(&spec.Docs, "docs", 1_000_000, "documents in the collection")
	flag.Uint64Var(&spec.Seed, "seed", 0, "collection seed (0: the default)")
	flag.IntVar(&spec.Groups, "groups", 0, "planted near-copy groups (0: one per 50 documents)")
	flag.BoolVar(&spec.KeepText, "keep-text", false, "keep texts in the index, as the daemon does")
	flag.IntVar(&opts.Workers, "workers", 0, "goroutines calling index.Add (0: GOMAXPROCS+1)")
	flag.IntVar(&opts.Batch, "batch", 0, "documents per index.Add (0: docs/50, 256 to 16384)")
	flag.IntVar(&opts.CacheMiB, "cache-mib", 0, "the index writer's page cache (0: 64 + 2 per thousand documents)")
	flag.Parse()
	opts.Logger = slog.New(slog.NewTextHandler(os.Stderr, nil))
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if *profile != "" {
		f, err := os.Create(*profile)
		if err != nil {
			return fmt.Errorf("create profile: %w", err)
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return fmt.Errorf("start profile: %w", err)
		}
		defer pprof.StopCPUProfile()
	}
	var m benchcorpus.Marker
	if *out != "" {
		c, err := benchcorpus.New(spec)
		if err != nil {
			return err
		}
		if err := os.MkdirAll(*out, 0o750); err != nil {
			return fmt.Errorf("create %s: %w", *out, err)
		}
		if m, _, err = benchcorpus.Build(ctx, c, filepath.Join(*out, "index.db"), &opts); err != nil {
			return err
		}
	} else {
		f, err := benchcorpus.Ensure(ctx, spec, &opts)
		if err != nil {
			return err
		}
		m = f.Marker
		fmt.Fprintln(os.Stderr, "fixture:", f.Dir)
	}
	enc := json.NewEncoder(os.Stdout)
	enc.SetIndent("", "  ")
	return enc.Encode(m)
}
