package eval

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/simdex/simdex/internal/corpustest"
)

func file(s string) *fstest.MapFile { return &fstest.MapFile{Data: []byte(s)} }

func TestLoadCorpusGomod(t *testing.T) {
	fsys := fstest.MapFS{
		"index.tsv": file("file\tmodule\tversion\tpath_in_module\tsha1\tbytes\n" +
			"files/a\tm1\tv1\tLICENSE\tsha-a\t10\n" +
			"files/b\tm2\tv1\tLICENSE\tsha-a\t10\n" +
			"files/c\tm3\tv1\tLICENSE\tsha-c\t10\n" +
			"files/d\tm4\tv1\tLICENSE\tsha-d\t10\n" +
			"files/e\tm5\tv1\tNOTICE\tsha-e\t10\n"),
		"classified.tsv": file("files/a\tMIT\t1.000\tMIT:1.00\nfiles/b\tMIT\t1.000\tMIT:1.00\n" +
			"files/c\tMIT\t0.990\tMIT:0.99\nfiles/d\tApache-2.0\t1.000\tApache-2.0:1.00\n"),
		"files/a": file("Copyright A\n\nPermission is hereby granted"),
		"files/b": file("Copyright A\n\nPermission is hereby granted"),
		"files/c": file("Copyright \xa9 Caf\xe9\n\nPermission is hereby granted"), // Latin-1
		"files/d": file("Apache License"),
		"files/e": file("\x00\x01binary"),
	}
	c, err := LoadCorpus(context.Background(), fsys, "gomod-licenses", PlainText, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Docs) != 5 {
		t.Fatalf("%d documents, want 5", len(c.Docs))
	}
	// Decoded from Latin-1 (é is 0xE9), then in the engine's canonical
	// form, where © is a separator like any symbol.
	if got := string(c.Docs[2].Norm); got != "copyright café permission is hereby granted" {
		t.Errorf("Latin-1 text normalised to %q", got)
	}
	if !errors.Is(c.Docs[4].Err, ErrNotText) {
		t.Errorf("binary file: err = %v, want ErrNotText", c.Docs[4].Err)
	}
	docs, failed := usable(c)
	if len(docs) != 4 || len(failed) != 1 || !strings.Contains(failed[0], "files/e") {
		t.Errorf("usable: %d documents, failed %v", len(docs), failed)
	}
	d := c.Docs
	for _, tc := range []struct {
		a, b int
		want string
	}{
		{0, 1, RelSameBytes},
		{0, 2, RelVariant},
		{0, 3, RelOtherLic},
		{0, 4, ""}, // unclassified
	} {
		if got := c.Relate(&d[tc.a], &d[tc.b]); got != tc.want {
			t.Errorf("Relate(%s, %s) = %q, want %q", d[tc.a].Name, d[tc.b].Name, got, tc.want)
		}
	}
	sub, err := LoadCorpus(context.Background(), fsys, "gomod-licenses", PlainText, 2)
	if err != nil {
		t.Fatal(err)
	}
	if len(sub.Docs) != 2 || sub.Docs[0].Name != "files/a" || sub.Docs[1].Name != "files/c" {
		t.Errorf("subset of 2: %v, %v", sub.Docs[0].Name, sub.Docs[1].Name)
	}
}

func TestLoadCorpusRelations(t *testing.T) {
	fsys := fstest.MapFS{
		"metadata.tsv": file("file\tcategory\tlicense_id\tvariant\tsha1\n" +
			"assets/License/MIT/a.txt\tLicense\tMIT\ta.txt\t1\n" +
			"assets/License/MIT/b.txt\tLicense\tMIT\tb.txt\t2\n" +
			"assets/Header/MIT/h.txt\tHeader\tMIT\th.txt\t3\n" +
			"assets/License/BSD/a.txt\tLicense\tBSD\ta.txt\t4\n"),
		"scenarios.tsv":            file("file\texpected\nscenarios/1\tMIT,Copyright\n"),
		"assets/License/MIT/a.txt": file("mit a"),
		"assets/License/MIT/b.txt": file("mit b"),
		"assets/Header/MIT/h.txt":  file("mit header"),
		"assets/License/BSD/a.txt": file("bsd"),
		"scenarios/1":              file("a project licence"),
	}
	c, err := LoadCorpus(context.Background(), fsys, "licenseclassifier", PlainText, 0)
	if err != nil {
		t.Fatal(err)
	}
	d := c.Docs
	for _, tc := range []struct {
		a, b int
		want string
	}{
		{0, 1, RelVariant},
		{0, 2, RelHeader},
		{0, 3, RelOtherLic},
		{4, 0, RelScenario},
		{3, 4, ""},
		{4, 2, ""},
	} {
		if got := c.Relate(&d[tc.a], &d[tc.b]); got != tc.want {
			t.Errorf("Relate(%s, %s) = %q, want %q", d[tc.a].Name, d[tc.b].Name, got, tc.want)
		}
	}
	docs := relations("debian-docs")
	book := &Document{Meta: map[string]string{"work": "faq", "lang": "en", "format": "txt", "granularity": "whole", "sha1": "1"}}
	pdf := &Document{Meta: map[string]string{"work": "faq", "lang": "en", "format": "pdf", "granularity": "whole", "sha1": "2"}}
	ch := &Document{Meta: map[string]string{"work": "faq", "lang": "en", "format": "html", "granularity": "chapter", "sha1": "3"}}
	fr := &Document{Meta: map[string]string{"work": "faq", "lang": "fr", "format": "txt", "granularity": "whole", "sha1": "4"}}
	a4 := &Document{Meta: map[string]string{"work": "refcard", "lang": "en", "format": "pdf", "granularity": "whole", "variant": "a4", "sha1": "5"}}
	lt := &Document{Meta: map[string]string{"work": "refcard", "lang": "en", "format": "pdf", "granularity": "whole", "variant": "letter", "sha1": "6"}}
	for _, tc := range []struct {
		a, b *Document
		want string
	}{
		{book, pdf, RelFormats}, {ch, book, RelChapter}, {book, fr, RelOtherLang}, {a4, lt, RelLayout}, {book, a4, ""}, {book, book, RelSameBytes},
	} {
		if got := docs(tc.a, tc.b); got != tc.want {
			t.Errorf("debian-docs relation %v / %v = %q, want %q", tc.a.Meta, tc.b.Meta, got, tc.want)
		}
	}
}

func TestLoadCorpusErrors(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name   string
		corpus string
		fsys   fstest.MapFS
		want   error
	}{
		{"unknown corpus", "elsewhere", fstest.MapFS{}, ErrNoLabels},
		{"no label table", "spdx", fstest.MapFS{}, fs.ErrNotExist},
		{"missing file", "spdx", fstest.MapFS{"metadata.tsv": file("file\tspdx_id\ntext/x.txt\tX\n")}, fs.ErrNotExist},
		{"too many fields", "spdx", fstest.MapFS{"metadata.tsv": file("file\tspdx_id\ntext/x.txt\tX\textra\n")}, nil},
		{"row without file", "spdx", fstest.MapFS{"metadata.tsv": file("file\tspdx_id\n\tX\n")}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := LoadCorpus(ctx, tc.fsys, tc.corpus, PlainText, 0)
			if err == nil || (tc.want != nil && !errors.Is(err, tc.want)) {
				t.Errorf("err = %v, want %v", err, tc.want)
			}
		})
	}
}

func TestOriginalsFromDir(t *testing.T) {
	long := strings.Repeat("word ", 50)
	fsys := fstest.MapFS{
		"a.txt":     file(long + "a"),
		"b.txt":     file(long + "a"), // same text as a.txt
		"c.txt":     file("short"),
		"d.bin":     file("\x00\x00"),
		"e.txt":     file(strings.ToUpper(long) + "e"),
		"sub/f.txt": file(long),
	}
	names, texts, err := OriginalsFromDir(fsys, ".", 100)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(names, ",") != "a.txt,e.txt" || len(texts) != 2 || !strings.HasPrefix(string(texts[1]), "word word") {
		t.Errorf("originals %v", names)
	}
	if _, _, err := OriginalsFromDir(fsys, ".", 1000); err == nil {
		t.Error("no original long enough: no error")
	}
}

func FuzzReadTSV(f *testing.F) {
	f.Add([]byte("file\ta\nx\t1\n"))
	f.Add([]byte("file\n\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		rows, err := readTSV(fstest.MapFS{"t.tsv": &fstest.MapFile{Data: data}}, "t.tsv", nil)
		if err != nil {
			return
		}
		for _, r := range rows {
			if r["file"] == "" {
				t.Fatalf("row without file accepted: %v", r)
			}
		}
	})
}

// TestRunQuick runs the whole pipeline in quick mode on a sample of a real
// corpus: truth, the index, both peers, the synthetic experiments, the
// figures and the report.
func TestRunQuick(t *testing.T) {
	corpora := corpustest.Suite(t)
	out := t.TempDir()
	var log strings.Builder
	cfg := Config{Corpora: corpora, Names: []string{"gomod-licenses"}, Out: out, Work: t.TempDir(),
		Quick: true, MaxDocs: 40, MaxOriginals: 3, Command: "go test"}
	if err := Run(context.Background(), cfg, &log); err != nil {
		t.Fatal(err)
	}
	report, err := os.ReadFile(filepath.Join(out, "EVALUATION.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"## Summary", "| gomod-licenses | 40 |", "### gomod-licenses", "tlsh on the extracted text", "](eval/windows.png)", "## Synthetic experiments"} {
		if !strings.Contains(string(report), want) {
			t.Errorf("report lacks %q", want)
		}
	}
	for _, f := range []string{"corpora.png", "windows.png", "distinct.png", "sampling.png", "algorithms.png", "containment.png", "spans.png", "boilerplate.png"} {
		st, err := os.Stat(filepath.Join(out, FigureDir, f))
		if err != nil || st.Size() < 1000 {
			t.Errorf("figure %s: %v", f, err)
		}
	}
	if !strings.Contains(log.String(), "corpus gomod-licenses: 40 documents") {
		t.Errorf("progress: %s", log.String())
	}
}

func TestRunBadConfig(t *testing.T) {
	err := Run(context.Background(), Config{Names: []string{"nope"}}, &strings.Builder{})
	if !errors.Is(err, ErrConfig) {
		t.Errorf("unknown corpus: err = %v, want ErrConfig", err)
	}
	err = Run(context.Background(), Config{Corpora: t.TempDir(), Names: []string{"spdx"}, Out: t.TempDir()}, &strings.Builder{})
	if err == nil || !strings.Contains(err.Error(), "corpus spdx") {
		t.Errorf("missing corpus: err = %v", err)
	}
}

func TestDefaultExtractor(t *testing.T) {
	x, err := DefaultExtractor()
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	got, err := x.Extract(ctx, "a.html", []byte("<html><head><title>T</title></head><body><p>Hello <b>world</b></p></body></html>"))
	if err != nil {
		t.Fatal(err)
	}
	if s := string(got); !strings.Contains(s, "Hello") || !strings.Contains(s, "world") || strings.Contains(s, "<b>") {
		t.Errorf("HTML extracted as %q", s)
	}
	got, err = x.Extract(ctx, "a.txt", []byte("plain text"))
	if err != nil || !strings.Contains(string(got), "plain text") {
		t.Errorf("text extracted as %q, %v", got, err)
	}
	if _, err := x.Extract(ctx, "bad.pdf", []byte("%PDF-1.4\n\x00\x01 not really")); err == nil {
		t.Error("a broken PDF extracted without error")
	}
}
