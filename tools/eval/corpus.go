package eval

import (
	"bufio"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/simdex/simdex/index/normalise"
)

// Extractor turns a file's raw bytes into text.
type Extractor interface {
	// Extract returns the text of the file called name. It must not retain
	// raw.
	Extract(ctx context.Context, name string, raw []byte) ([]byte, error)
}

// ExtractFunc adapts a function to Extractor.
type ExtractFunc func(ctx context.Context, name string, raw []byte) ([]byte, error)

// Extract calls f.
func (f ExtractFunc) Extract(ctx context.Context, name string, raw []byte) ([]byte, error) {
	return f(ctx, name, raw)
}

// ErrNotText is returned by PlainText for files that are not text.
var ErrNotText = errors.New("not a text file")

// PlainText extracts text files: UTF-8 as is, other bytes read as
// Latin-1; files with NUL bytes are refused with ErrNotText.
var PlainText = ExtractFunc(func(_ context.Context, name string, raw []byte) ([]byte, error) {
	if slices.Contains(raw, 0) {
		return nil, fmt.Errorf("extract %s: %w", name, ErrNotText)
	}
	if utf8.Valid(raw) {
		return slices.Clone(raw), nil
	}
	out := make([]byte, 0, len(raw)+len(raw)/8)
	for _, b := range raw {
		out = utf8.AppendRune(out, rune(b))
	}
	return out, nil
})

// Document is one file of a corpus.
type Document struct {
	// Name is the file's path inside the corpus directory.
	Name string
	// Meta is the file's row of the corpus's label table.
	Meta map[string]string
	// RawSHA256 and RawSize describe the raw bytes.
	RawSHA256 [32]byte
	RawSize   int64
	// Text is the extracted text.
	Text []byte
	// Norm is the engine's normalised text (index/normalise), which the
	// seed algorithms sign; the truth does not use it.
	Norm []byte
	// Truth is the text the truth reads (see TruthWords): for an e-mail
	// (.eml), its Subject and decoded inline text parts (ReadMail); for
	// any other file, the extracted text.
	Truth []byte
	// Quote is an e-mail's quote depth (QuoteDepth of its body); 0 for
	// other files.
	Quote int
	// Err is why the file has no usable text (extraction failed, empty).
	Err error
}

// Corpus is a set of labelled documents.
type Corpus struct {
	// Name names the corpus (its directory name).
	Name string
	// FS holds the corpus files; Docs name paths in it.
	FS fs.FS
	// Docs are the documents, in label-table order.
	Docs []Document
	// Relate names the labelled relation of two documents ("" for none);
	// see the corpus's README for the labels.
	Relate func(a, b *Document) string
	// Title names the corpus in the report (default Name); About
	// describes a generated corpus (empty for the collected ones).
	Title, About string
	// Quoting is true for e-mail corpora, whose results are split by how
	// the two messages of a pair quote (see PairQuoting).
	Quoting bool
}

// ErrNoLabels reports a corpus directory without a known label table.
var ErrNoLabels = errors.New("no label table")

// LoadCorpus reads the corpus called name from fsys (the corpus's own
// directory), extracting and normalising every file listed in its label
// table. Known layouts are those of ../shared/corpora: spdx,
// licenseclassifier, gomod-licenses, debian-copyright, debian-docs,
// mail-usrp (every eml/*.eml, threads by subject); and
// the generated e-mail corpus (MailCorpus, see GenerateMailCorpus). max,
// when positive, keeps an evenly spaced subset of at most max files.
func LoadCorpus(ctx context.Context, fsys fs.FS, name string, ex Extractor, maxDocs int) (*Corpus, error) {
	c := &Corpus{Name: name, FS: fsys}
	var rows []map[string]string
	var err error
	switch name {
	case "spdx", "debian-copyright", "licenseclassifier":
		rows, err = readTSV(fsys, "metadata.tsv", nil)
		if err == nil && name == "licenseclassifier" {
			var sc []map[string]string
			sc, err = readTSV(fsys, "scenarios.tsv", nil)
			for _, r := range sc {
				r["category"] = "Scenario"
			}
			rows = append(rows, sc...)
		}
	case "gomod-licenses":
		rows, err = readTSV(fsys, "index.tsv", nil)
		if err == nil {
			var cl []map[string]string
			cl, err = readTSV(fsys, "classified.tsv", []string{"file", "license", "confidence", "matches"})
			byFile := map[string]map[string]string{}
			for _, r := range cl {
				byFile[r["file"]] = r
			}
			for _, r := range rows {
				if x, ok := byFile[r["file"]]; ok {
					r["license"], r["confidence"] = x["license"], x["confidence"]
				}
			}
		}
	case "debian-docs":
		rows, err = readTSV(fsys, "index.tsv", nil)
	case MailCorpus:
		rows, err = readTSV(fsys, MailLabels, nil)
		c.Quoting = true
	case MailUSRP:
		rows, err = emlFiles(fsys, "eml")
		c.Quoting = true
	default:
		return nil, fmt.Errorf("load corpus %s: %w", name, ErrNoLabels)
	}
	if err != nil {
		return nil, fmt.Errorf("load corpus %s: %w", name, err)
	}
	c.Relate = relations(name)
	if maxDocs > 0 && len(rows) > maxDocs {
		sub := make([]map[string]string, 0, maxDocs)
		for i := range maxDocs {
			sub = append(sub, rows[i*len(rows)/maxDocs])
		}
		rows = sub
	}
	var nz normalise.Normaliser
	for _, r := range rows {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		d := Document{Name: r["file"], Meta: r}
		raw, err := fs.ReadFile(fsys, d.Name)
		if err != nil {
			return nil, fmt.Errorf("load corpus %s: %w", name, err)
		}
		d.RawSHA256, d.RawSize = sha256.Sum256(raw), int64(len(raw))
		d.Text, d.Err = ex.Extract(ctx, d.Name, raw)
		if d.Err == nil {
			d.Norm, d.Err = nz.Append(nil, d.Text)
		}
		if d.Err == nil && len(d.Norm) == 0 {
			d.Err = fmt.Errorf("%s: empty text", d.Name)
		}
		if d.Err == nil {
			d.Err = d.readTruth(raw)
		}
		c.Docs = append(c.Docs, d)
	}
	return c, nil
}

// readTruth sets the document's truth text and quote depth: an e-mail is
// read on its own (ReadMail), any other file by its extracted text.
func (d *Document) readTruth(raw []byte) error {
	if !strings.EqualFold(path.Ext(d.Name), ".eml") {
		d.Truth = d.Text
		return nil
	}
	m, err := ReadMail(raw)
	if err != nil {
		return fmt.Errorf("%s: truth: %w", d.Name, err)
	}
	d.Truth, d.Quote = m.Text(), QuoteDepth(m.Body)
	if d.Meta["thread"] == "" {
		d.Meta["thread"] = threadSubject(m.Subject)
	}
	return nil
}

// threadSubject is a subject without reply and forward prefixes and list
// tags, in lower case: messages of a thread share it.
func threadSubject(s string) string {
	s = strings.ToLower(strings.TrimSpace(s))
	for {
		t := strings.TrimSpace(s)
		for _, p := range []string{"re:", "fwd:", "fw:", "aw:", "tr:", "re :", "fwd :"} {
			t = strings.TrimSpace(strings.TrimPrefix(t, p))
		}
		if strings.HasPrefix(t, "[") {
			if k := strings.IndexByte(t, ']'); k > 0 {
				t = strings.TrimSpace(t[k+1:])
			}
		}
		if t == s {
			return strings.Join(strings.Fields(s), " ")
		}
		s = t
	}
}

// emlFiles lists the .eml files of a directory as label rows, by name.
func emlFiles(fsys fs.FS, dir string) ([]map[string]string, error) {
	ents, err := fs.ReadDir(fsys, dir)
	if err != nil {
		return nil, err
	}
	var rows []map[string]string
	for _, e := range ents {
		if !e.IsDir() && strings.EqualFold(path.Ext(e.Name()), ".eml") {
			rows = append(rows, map[string]string{"file": path.Join(dir, e.Name())})
		}
	}
	if len(rows) == 0 {
		return nil, fmt.Errorf("no .eml file in %s", dir)
	}
	return rows, nil
}

// readTSV reads a tab-separated table with a header line, or with the
// given column names when header is not nil.
func readTSV(fsys fs.FS, name string, header []string) ([]map[string]string, error) {
	f, err := fsys.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	var rows []map[string]string
	line := 0
	for sc.Scan() {
		line++
		fields := strings.Split(sc.Text(), "\t")
		if header == nil {
			header = fields
			continue
		}
		if len(fields) > len(header) {
			return nil, fmt.Errorf("%s:%d: %d fields, header has %d", name, line, len(fields), len(header))
		}
		r := make(map[string]string, len(header))
		for i, v := range fields {
			r[header[i]] = v
		}
		if r["file"] == "" {
			return nil, fmt.Errorf("%s:%d: no file", name, line)
		}
		rows = append(rows, r)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("read %s: %w", name, err)
	}
	return rows, nil
}

// Labelled relations of document pairs, from the corpora's metadata.
const (
	RelSameBytes   = "same bytes"          // equal sha1 of the raw file
	RelSameText    = "same text (label)"   // spdx: equal normalised sha1
	RelFamily      = "same family"         // spdx: versions of one licence family
	RelOtherFamily = "other family"        // spdx: different coarse family
	RelVariant     = "same licence"        // another wording of the same licence
	RelHeader      = "header vs licence"   // licenseclassifier: header and full text
	RelScenario    = "scenario contains"   // licenseclassifier: a real file holding the licence
	RelOtherLic    = "other licence"       // different licence ids
	RelFormats     = "same work, formats"  // debian-docs: one book in two formats
	RelChapter     = "chapter in book"     // debian-docs: a chapter and its whole book
	RelLayout      = "layout variant"      // debian-docs: refcard A4 vs Letter
	RelOtherLang   = "same work, language" // debian-docs: a translation
	RelSameSource  = "same source package" // debian-copyright
	RelSameThread  = "same thread"         // mail-usrp: same subject without Re:, Fwd: and list tags
)

// relations returns the labelled-relation function of a corpus.
func relations(name string) func(a, b *Document) string {
	sameBytes := func(a, b *Document) bool { return a.Meta["sha1"] != "" && a.Meta["sha1"] == b.Meta["sha1"] }
	switch name {
	case "spdx":
		return func(a, b *Document) string {
			switch {
			case a.Meta["norm_sha1"] == b.Meta["norm_sha1"]:
				return RelSameText
			case a.Meta["family"] == b.Meta["family"]:
				return RelFamily
			case a.Meta["coarse_family"] != b.Meta["coarse_family"]:
				return RelOtherFamily
			}
			return ""
		}
	case "licenseclassifier":
		return func(a, b *Document) string {
			ca, cb := a.Meta["category"], b.Meta["category"]
			if cb == "Scenario" {
				a, b, ca, cb = b, a, cb, ca
			}
			switch {
			case sameBytes(a, b):
				return RelSameBytes
			case ca == "Scenario" && cb == "License":
				if slices.Contains(strings.Split(a.Meta["expected"], ","), b.Meta["license_id"]) {
					return RelScenario
				}
				return ""
			case ca == "Scenario" || cb == "Scenario":
				return ""
			case a.Meta["license_id"] != b.Meta["license_id"]:
				return RelOtherLic
			case ca == "License" && cb == "License":
				return RelVariant
			case ca != cb && (ca == "Header" || cb == "Header"):
				return RelHeader
			}
			return ""
		}
	case "gomod-licenses":
		return func(a, b *Document) string {
			la, lb := a.Meta["license"], b.Meta["license"]
			switch {
			case sameBytes(a, b):
				return RelSameBytes
			case la == "" || lb == "":
				return ""
			case la == lb:
				return RelVariant
			}
			return RelOtherLic
		}
	case "debian-copyright":
		return func(a, b *Document) string {
			switch {
			case sameBytes(a, b):
				return RelSameBytes
			case a.Meta["source"] == b.Meta["source"] && a.Meta["source"] != "":
				return RelSameSource
			}
			return ""
		}
	case MailCorpus:
		return mailRelation
	case MailUSRP:
		return func(a, b *Document) string {
			if sameBytes(a, b) {
				return RelSameBytes
			}
			if t := a.Meta["thread"]; t != "" && t == b.Meta["thread"] {
				return RelSameThread
			}
			return ""
		}
	case "debian-docs":
		return func(a, b *Document) string {
			if sameBytes(a, b) {
				return RelSameBytes
			}
			if a.Meta["work"] != b.Meta["work"] {
				return ""
			}
			if a.Meta["lang"] != b.Meta["lang"] {
				return RelOtherLang
			}
			ga, gb := a.Meta["granularity"], b.Meta["granularity"]
			switch {
			case ga == "whole" && gb == "whole" && a.Meta["variant"] != "" && b.Meta["variant"] != "" && a.Meta["variant"] != b.Meta["variant"]:
				return RelLayout
			case ga == "whole" && gb == "whole" && a.Meta["format"] != b.Meta["format"]:
				return RelFormats
			case ga != gb:
				return RelChapter
			}
			return ""
		}
	}
	return func(_, _ *Document) string { return "" }
}

// OriginalsFromDir reads the text files of a directory (not recursively)
// whose normalised text has at least minBytes, de-duplicated by text, in
// name order, and returns their names and normalised texts.
func OriginalsFromDir(fsys fs.FS, dir string, minBytes int) ([]string, [][]byte, error) {
	ents, err := fs.ReadDir(fsys, dir)
	if err != nil {
		return nil, nil, fmt.Errorf("read originals: %w", err)
	}
	var names []string
	var texts [][]byte
	seen := map[[32]byte]bool{}
	var nz normalise.Normaliser
	for _, e := range ents {
		if e.IsDir() {
			continue
		}
		raw, err := fs.ReadFile(fsys, path.Join(dir, e.Name()))
		if err != nil {
			return nil, nil, fmt.Errorf("read originals: %w", err)
		}
		text, err := PlainText(context.Background(), e.Name(), raw)
		if errors.Is(err, ErrNotText) {
			continue
		}
		if err != nil {
			return nil, nil, fmt.Errorf("read originals: %w", err)
		}
		norm, err := nz.Append(nil, text)
		if err != nil || len(norm) < minBytes {
			continue
		}
		h := sha256.Sum256(norm)
		if seen[h] {
			continue
		}
		seen[h] = true
		names = append(names, e.Name())
		texts = append(texts, norm)
	}
	if len(texts) == 0 {
		return nil, nil, fmt.Errorf("read originals from %s: no text file of %d bytes or more", dir, minBytes)
	}
	return names, texts, nil
}

// openDir returns the file system of a directory, checking it exists.
func openDir(dir string) (fs.FS, error) {
	st, err := os.Stat(dir)
	if err != nil {
		return nil, err
	}
	if !st.IsDir() {
		return nil, fmt.Errorf("%s is not a directory", dir)
	}
	return os.DirFS(dir), nil
}
