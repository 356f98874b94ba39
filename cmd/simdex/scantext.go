package main

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"github.com/simdex/simdex/index"
	"github.com/simdex/simdex/ingest"
)

// textNamer names files in the text report one way: as the scan names the
// files it indexes. With one directory, relative to it; with several,
// under each directory as given: relative to the working directory, or
// absolute when every directory was given absolute.
type textNamer struct {
	base string // the directory names are relative to; "": absolute names
}

func newTextNamer(dirs []string) textNamer {
	if len(dirs) == 1 {
		if abs, err := filepath.Abs(dirs[0]); err == nil {
			if fi, err := os.Stat(abs); err == nil && !fi.IsDir() {
				abs = filepath.Dir(abs) // one file: named in its folder
			}
			return textNamer{base: abs}
		}
	}
	if !slices.ContainsFunc(dirs, func(d string) bool { return !filepath.IsAbs(d) }) {
		return textNamer{}
	}
	wd, _ := os.Getwd()
	return textNamer{base: wd}
}

// name returns the report name of the file at path (relative to the
// working directory when not absolute).
func (n textNamer) name(path string) string {
	abs, err := filepath.Abs(path)
	if err != nil {
		return filepath.ToSlash(path)
	}
	if n.base == "" {
		return filepath.ToSlash(abs)
	}
	rel, err := filepath.Rel(n.base, abs)
	if err != nil {
		return filepath.ToSlash(abs)
	}
	return filepath.ToSlash(rel)
}

// nameForText gives the text report one naming of files where the JSON
// report's names differ, which stay as they are: a file an earlier scan
// indexed is named there by its key (fs:/abs/path), a path the scan could
// not read by the path walked. Here both are named as this scan's files
// are, and an error is marked when nothing was recorded in the index.
func (r *report) nameForText(an *index.Analysis, scanned map[index.DocID]string, dirs []string) {
	n := newTextNamer(dirs)
	r.textNames = map[string]string{}
	for id, rec := range an.Documents {
		name, thisScan := scanned[id]
		p, ok := ingest.ScanPath(rec.Doc)
		switch {
		case !ok:
		case !thisScan:
			r.textNames[rec.Key] = n.name(p)
		case name == ".": // the one file scanned, named by the JSON relative to itself
			r.textNames[name] = n.name(p)
		}
	}
	recorded := make(map[string]bool, len(scanned))
	for _, name := range scanned {
		recorded[name] = true
	}
	r.notIndexed = make([]bool, len(r.Errors))
	r.errorNames = make([]string, len(r.Errors))
	for i, e := range r.Errors {
		r.errorNames[i] = e.Path
		if !recorded[e.Path] {
			r.notIndexed[i] = true
			r.errorNames[i] = n.name(e.Path)
		}
	}
}

// text returns the text report's name of the document the JSON names
// name.
func (r *report) text(name string) string {
	if t, ok := r.textNames[name]; ok {
		return t
	}
	return name
}

// plural returns "1 file", "2 files": n and the noun, in the plural
// (noun+"s") unless n is 1.
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
