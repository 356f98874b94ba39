// Command gencorpus writes a synthetic benchmark collection (see package
// corpusgen): gencorpus -sources DIR -files N -size BYTES OUT.
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/simdex/simdex/tools/corpusgen"
)

func main() {
	o := corpusgen.Options{}
	flag.StringVar(&o.Sources, "sources", "../shared/corpora", "directory of .txt files to draw from")
	flag.IntVar(&o.Files, "files", 50000, "number of files")
	flag.IntVar(&o.MeanSize, "size", 7000, "mean file size in bytes")
	flag.Float64Var(&o.NearShare, "near", 0.2, "share of edited versions of earlier files")
	flag.Float64Var(&o.ExactShare, "exact", 0.05, "share of exact copies of earlier files")
	flag.Uint64Var(&o.Seed, "seed", 1, "random seed")
	flag.Parse()
	if flag.NArg() != 1 {
		fmt.Fprintln(os.Stderr, "usage: gencorpus [flags] OUT")
		os.Exit(2)
	}
	n, err := corpusgen.Write(flag.Arg(0), o)
	if err != nil {
		fmt.Fprintln(os.Stderr, "gencorpus:", err)
		os.Exit(1)
	}
	fmt.Printf("%d files, %d bytes\n", o.Files, n)
}
