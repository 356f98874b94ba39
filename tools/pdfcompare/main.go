// Command pdfcompare measures how much of each debian-docs TXT edition the
// text extracted from its PDF edition contains (word 5-gram containment),
// for simdex's extractor and for ledongthuc/pdf, the most used pure-Go PDF
// text library, with the time each took. It is the evidence behind the
// choice recorded in docs/extract.md:
//
//	cd tools && go run ./pdfcompare [-corpus ../../shared/corpora/debian-docs]
package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"
	"unicode"

	lpdf "github.com/ledongthuc/pdf"
	"github.com/simdex/simdex/extract"
)

func shingles(s string) map[string]bool {
	f := strings.FieldsFunc(strings.ToLower(s), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
	m := map[string]bool{}
	for i := 0; i+5 <= len(f); i++ {
		m[strings.Join(f[i:i+5], " ")] = true
	}
	return m
}
func cont(a, b map[string]bool) float64 {
	n := 0
	for k := range a {
		if b[k] {
			n++
		}
	}
	if len(a) == 0 {
		return 0
	}
	return float64(n) / float64(len(a))
}

func ledong(path string) (s string, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("panic: %v", r)
		}
	}()
	f, r, err := lpdf.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	var buf bytes.Buffer
	rd, err := r.GetPlainText()
	if err != nil {
		return "", err
	}
	buf.ReadFrom(rd)
	return buf.String(), nil
}

func main() {
	corpus := flag.String("corpus", "../../shared/corpora/debian-docs", "the debian-docs corpus")
	flag.Parse()
	pairs, err := editions(*corpus)
	if err != nil {
		fmt.Fprintln(os.Stderr, "pdfcompare:", err)
		os.Exit(1)
	}
	ex, err := extract.New(extract.Options{Limits: extract.DefaultLimits()})
	if err != nil {
		fmt.Fprintln(os.Stderr, "pdfcompare:", err)
		os.Exit(1)
	}
	fmt.Println("| PDF | simdex: TXT in PDF | time | ledongthuc/pdf: TXT in PDF | time |")
	fmt.Println("|---|--:|--:|--:|--:|")
	for _, pair := range pairs {
		pdf, txt := pair[0], pair[1]
		tb, _ := os.ReadFile(txt)
		ts := shingles(string(tb))
		t0 := time.Now()
		data, _ := os.ReadFile(pdf)
		d, err := ex.Extract(context.Background(), extract.Object{Name: pdf, Reader: bytes.NewReader(data)})
		ours := ""
		if d != nil {
			ours = d.Text
		}
		t1 := time.Now()
		l, lerr := ledong(pdf)
		t2 := time.Now()
		fmt.Printf("| %s | %.3f%s | %v | %.3f%s | %v |\n", filepath.Base(pdf),
			cont(ts, shingles(ours)), errNote(err), t1.Sub(t0).Round(time.Millisecond),
			cont(ts, shingles(l)), errNote(lerr), t2.Sub(t1).Round(time.Millisecond))
	}
}

func errNote(err error) string {
	if err != nil {
		return " (" + err.Error() + ")"
	}
	return ""
}

// editions pairs each work's PDF with its whole TXT edition, per language,
// from the corpus's index.tsv.
func editions(dir string) ([][2]string, error) {
	b, err := os.ReadFile(filepath.Join(dir, "index.tsv"))
	if err != nil {
		return nil, fmt.Errorf("read corpus index: %w", err)
	}
	pdfs, txts := map[string]string{}, map[string]string{}
	var order []string
	for _, line := range strings.Split(string(b), "\n") {
		c := strings.Split(line, "\t")
		if len(c) < 6 || c[0] == "file" {
			continue
		}
		k := c[2] + "|" + c[3]
		switch {
		case c[4] == "pdf":
			if _, dup := pdfs[k]; !dup {
				order = append(order, k)
			}
			pdfs[k] = filepath.Join(dir, c[0])
		case c[4] == "txt" && c[5] == "whole":
			txts[k] = filepath.Join(dir, c[0])
		}
	}
	var out [][2]string
	for _, k := range order {
		if t, ok := txts[k]; ok {
			out = append(out, [2]string{pdfs[k], t})
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no PDF with a TXT edition in %s", dir)
	}
	return out, nil
}
