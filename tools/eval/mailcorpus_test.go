package eval

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"mime"
	"mime/multipart"
	"mime/quotedprintable"
	"net/mail"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/simdex/simdex/index"
	"github.com/simdex/simdex/index/normalise"
	"github.com/simdex/simdex/internal/corpustest"
)

// mailSourceDir is the source corpus of the e-mail corpus tests, in the
// full corpora: the tests that reach it are of the corpus suite.
func mailSourceDir(t *testing.T) fs.FS {
	t.Helper()
	dir := filepath.Join(corpustest.Dir(t), "debian-copyright")
	fsys, err := openDir(dir)
	if err != nil {
		t.Fatalf("open debian-copyright: %v", err)
	}
	return fsys
}

func genMail(t *testing.T, threads int, seed uint64) (string, *MailCorpusInfo) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "mail")
	info, err := GenerateMailCorpus(dir, MailOptions{Source: mailSourceDir(t), SourceName: "debian-copyright", Threads: threads, Seed: seed})
	if err != nil {
		t.Fatal(err)
	}
	return dir, info
}

// tree returns every file of dir by slash path.
func tree(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		rel, _ := filepath.Rel(dir, p)
		out[filepath.ToSlash(rel)] = b
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func TestGenerateMailCorpusDeterministic(t *testing.T) {
	corpustest.Suite(t)
	a, _ := genMail(t, 3, 7)
	b, _ := genMail(t, 3, 7)
	c, _ := genMail(t, 3, 8)
	ta, tb, tc := tree(t, a), tree(t, b), tree(t, c)
	if len(ta) != len(tb) {
		t.Fatalf("%d files, then %d", len(ta), len(tb))
	}
	for name, data := range ta {
		if !bytes.Equal(data, tb[name]) {
			t.Errorf("%s differs between two runs with the same seed", name)
		}
	}
	same := 0
	for name, data := range ta {
		if bytes.Equal(data, tc[name]) {
			same++
		}
	}
	if same == len(ta) {
		t.Error("another seed wrote the same corpus")
	}
}

// walkMIME decodes every part of an entity, calling leaf for the decoded
// body of each non-multipart part.
func walkMIME(t *testing.T, where string, h mail.Header, body io.Reader, leaf func(ct string, params map[string]string, disp string, data []byte)) {
	t.Helper()
	ct, params, err := mime.ParseMediaType(h.Get("Content-Type"))
	if err != nil {
		t.Fatalf("%s: Content-Type %q: %v", where, h.Get("Content-Type"), err)
	}
	if strings.HasPrefix(ct, "multipart/") {
		mr := multipart.NewReader(body, params["boundary"])
		n := 0
		for {
			p, err := mr.NextRawPart()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				t.Fatalf("%s: %s: %v", where, ct, err)
			}
			n++
			walkMIME(t, where, mail.Header(p.Header), p, leaf)
		}
		if n < 2 {
			t.Errorf("%s: %s with %d parts", where, ct, n)
		}
		return
	}
	var r io.Reader = body
	switch enc := strings.ToLower(h.Get("Content-Transfer-Encoding")); enc {
	case "base64":
		r = base64.NewDecoder(base64.StdEncoding, body)
	case "quoted-printable":
		r = quotedprintable.NewReader(body)
	case "", "7bit", "8bit":
	default:
		t.Fatalf("%s: unexpected transfer encoding %q", where, enc)
	}
	data, err := io.ReadAll(r)
	if err != nil {
		t.Fatalf("%s: decode %s: %v", where, ct, err)
	}
	disp, _, _ := mime.ParseMediaType(h.Get("Content-Disposition"))
	leaf(ct, params, disp, data)
}

func TestGenerateMailCorpusParses(t *testing.T) {
	corpustest.Suite(t)
	if testing.Short() {
		checkMailCorpus(t, 1, 3)
		return
	}
	for _, seed := range []uint64{1, 2} {
		t.Run(fmt.Sprint(seed), func(t *testing.T) { checkMailCorpus(t, seed, 6) })
	}
}

// checkMailCorpus generates a corpus and checks its files and labels.
func checkMailCorpus(t *testing.T, seed uint64, threads int) {
	dir, info := genMail(t, threads, seed)
	files := tree(t, dir)
	fsys := os.DirFS(dir)
	rows, err := readTSV(fsys, MailLabels, nil)
	if err != nil {
		t.Fatal(err)
	}
	// The label table is complete: every file but the table and the README
	// has a row, every row a file, and all columns are there.
	if len(rows) != threads*mailDocsPerThread || len(files) != len(rows)+2 || info.Documents != len(rows) {
		t.Fatalf("%d rows, %d files, info %d documents (want %d rows)", len(rows), len(files), info.Documents, threads*mailDocsPerThread)
	}
	listed := map[string]map[string]string{}
	for _, r := range rows {
		if _, ok := files[r["file"]]; !ok {
			t.Errorf("row %s names no file", r["file"])
		}
		for _, c := range mailColumns {
			if _, ok := r[c]; !ok {
				t.Errorf("row %s lacks column %s", r["file"], c)
			}
		}
		if string(sha1Sum(files[r["file"]])) != r["sha1"] {
			t.Errorf("%s: sha1 column wrong", r["file"])
		}
		if (r["original"] == "") != (r["situation"] == SitUnrelated) {
			t.Errorf("%s: situation %q, original %q", r["file"], r["situation"], r["original"])
		}
		listed[r["file"]] = r
	}
	for f := range files {
		if _, ok := listed[f]; !ok && f != MailLabels && f != "README.md" {
			t.Errorf("file %s not in the label table", f)
		}
	}
	for _, s := range MailSituations {
		want := threads
		if s == SitUnrelated {
			want = 2 * threads
		}
		if info.Situations[s] != want {
			t.Errorf("situation %s: %d documents, want %d", s, info.Situations[s], want)
		}
	}

	// Every message parses with net/mail and its MIME parts decode; the
	// text/plain body holds the document where it should; attachments are
	// the files the table lists.
	x, err := DefaultMailExtractor()
	if err != nil {
		t.Fatal(err)
	}
	var nz normalise.Normaliser
	norm := func(b []byte) string {
		n, err := nz.Append(nil, b)
		if err != nil {
			t.Fatal(err)
		}
		return string(n)
	}
	for _, r := range rows {
		name := r["file"]
		if !strings.HasSuffix(name, ".eml") {
			continue
		}
		msg, err := mail.ReadMessage(bytes.NewReader(files[name]))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		for _, k := range []string{"From", "To", "Date", "Subject", "Message-Id", "Mime-Version"} {
			if msg.Header.Get(k) == "" {
				t.Errorf("%s: no %s header", name, k)
			}
		}
		if _, err := msg.Header.Date(); err != nil {
			t.Errorf("%s: Date: %v", name, err)
		}
		if _, err := msg.Header.AddressList("From"); err != nil {
			t.Errorf("%s: From: %v", name, err)
		}
		if got := msg.Header.Get("Message-Id"); got != r["message_id"] {
			t.Errorf("%s: Message-ID %s, table %s", name, got, r["message_id"])
		}
		if _, err := new(mime.WordDecoder).DecodeHeader(msg.Header.Get("Subject")); err != nil {
			t.Errorf("%s: Subject: %v", name, err)
		}
		var body []byte
		var attachments [][]byte
		walkMIME(t, name, msg.Header, msg.Body, func(ct string, params map[string]string, disp string, data []byte) {
			switch {
			case disp == "attachment":
				attachments = append(attachments, data)
			case ct == "text/plain" || ct == "text/html":
				if !utf8.Valid(data) || params["charset"] != "utf-8" {
					t.Errorf("%s: %s not in UTF-8", name, ct)
				}
				body = append(body, data...)
			default:
				t.Errorf("%s: unexpected inline part %s", name, ct)
			}
		})
		if body == nil {
			t.Errorf("%s: no text body", name)
		}
		// The product's extraction of the message's own text holds the
		// original where the situation says so.
		own, err := x.Extract(context.Background(), name, files[name])
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		orig := norm(files["originals/"+r["thread"]+"-"+base(r["original"])])
		holds := len(orig) > 1000 && strings.Contains(norm(own), orig)
		switch r["situation"] {
		case SitPasted, SitForwarded, SitAttachedMessage:
			if !holds {
				t.Errorf("%s (%s): text lacks the original", name, r["situation"])
			}
		case SitQuoted:
			// HTML alone renders the quote as a blockquote, without "> ".
			if r["body"] == "text/html" && !holds || r["body"] != "text/html" && !bytes.Contains(own, []byte("\n> ")) {
				t.Errorf("%s: no quoted lines in %q", name, own)
			}
		case SitAttachCover, SitForwardCover:
			if holds || len(own) > 3000 {
				t.Errorf("%s (%s): cover note holds the original", name, r["situation"])
			}
		}
		var parts []string
		for f, x := range listed {
			if x["parent"] == name {
				parts = append(parts, f)
			}
		}
		if len(parts) != len(attachments) {
			t.Fatalf("%s: %d attachments, table lists %v", name, len(attachments), parts)
		}
		for i, p := range parts {
			if !bytes.Equal(files[p], attachments[i]) {
				t.Errorf("%s: attachment differs from %s", name, p)
			}
		}
	}
}

// base is the name of an original in the corpus's originals/ folder.
func base(file string) string {
	b := filepath.Base(file)
	if !strings.HasSuffix(b, ".txt") {
		b = strings.ReplaceAll(b, ".", "-") + ".txt"
	}
	return b
}

func TestOwnText(t *testing.T) {
	corpustest.Suite(t)
	dir, _ := genMail(t, 1, 3)
	rows, err := readTSV(os.DirFS(dir), MailLabels, nil)
	if err != nil {
		t.Fatal(err)
	}
	own, err := DefaultMailExtractor()
	if err != nil {
		t.Fatal(err)
	}
	all, err := DefaultExtractor()
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for _, r := range rows {
		if r["situation"] != SitAttachCover {
			continue
		}
		raw, err := os.ReadFile(filepath.Join(dir, r["file"]))
		if err != nil {
			t.Fatal(err)
		}
		o, err := own.Extract(ctx, r["file"], raw)
		if err != nil {
			t.Fatal(err)
		}
		a, err := all.Extract(ctx, r["file"], raw)
		if err != nil {
			t.Fatal(err)
		}
		// DefaultExtractor appends the attachment's text; OwnText keeps
		// the cover note only.
		if len(a) < len(o)+1000 || !bytes.HasPrefix(a, bytes.TrimRight(o, "\n")) {
			t.Errorf("own text %d bytes, with children %d bytes", len(o), len(a))
		}
		if bytes.Contains(o, []byte("Forwarded message")) || len(o) > 2500 {
			t.Errorf("cover note: %q", o)
		}
	}
}

func TestMailRelation(t *testing.T) {
	doc := func(sit, orig, thread, sha string) *Document {
		return &Document{Meta: map[string]string{"situation": sit, "original": orig, "thread": thread, "sha1": sha}}
	}
	for _, tc := range []struct {
		a, b *Document
		want string
	}{
		{doc(SitOriginal, "x", "t1", "s1"), doc(SitAttachment, "x", "t1", "s1"), RelSameBytes},
		{doc(SitOriginal, "x", "t1", "s1"), doc(SitPasted, "x", "t1", "s2"), RelMailCopy},
		{doc(SitForwarded, "x", "t1", "s1"), doc(SitQuoted, "x", "t1", "s2"), RelMailQuoted},
		{doc(SitPartial, "x", "t1", "s1"), doc(SitEdited, "x", "t1x", "s2"), RelMailEdited},
		{doc(SitPartial, "x", "t1", "s1"), doc(SitPasted, "x", "t1", "s2"), RelMailPartial},
		{doc(SitUnrelated, "", "t1", "s1"), doc(SitPasted, "x", "t1", "s2"), RelMailThread},
		{doc(SitPasted, "y", "t2", "s1"), doc(SitPasted, "x", "t1", "s2"), RelMailOther},
		{doc(SitUnrelated, "", "t2", "s1"), doc(SitPasted, "x", "t1", "s2"), ""},
		{doc(SitAttachCover, "x", "t1", "s1"), doc(SitOriginal, "x", "t1", "s2"), RelMailThread},
		{doc(SitForwardCover, "x", "t1", "s1"), doc(SitEdited, "x", "t1x", "s2"), ""},
	} {
		if got := mailRelation(tc.a, tc.b); got != tc.want {
			t.Errorf("%s / %s: %q, want %q", tc.a.Meta["situation"], tc.b.Meta["situation"], got, tc.want)
		}
		if got := mailRelation(tc.b, tc.a); got != tc.want {
			t.Errorf("%s / %s (swapped): %q, want %q", tc.a.Meta["situation"], tc.b.Meta["situation"], got, tc.want)
		}
	}
}

func TestGenerateMailCorpusErrors(t *testing.T) {
	corpustest.Suite(t)
	for _, o := range []MailOptions{
		{Source: mailSourceDir(t), SourceName: "debian-copyright"},
		{SourceName: "debian-copyright", Threads: 2},
		{Source: mailSourceDir(t), SourceName: "nope", Threads: 2},
		{Source: mailSourceDir(t), SourceName: "debian-copyright", Threads: 2, MinBytes: 1 << 30, MaxBytes: math.MaxInt32},
	} {
		if _, err := GenerateMailCorpus(filepath.Join(t.TempDir(), "m"), o); err == nil {
			t.Errorf("%+v: no error", o)
		}
	}
}

// TestEvaluateMailCorpus runs a small e-mail corpus end to end: truth,
// the index, both peers on raw and extracted files, labelled relations.
func TestEvaluateMailCorpus(t *testing.T) {
	corpora := corpustest.Suite(t)
	work := t.TempDir()
	cfg := Config{Corpora: corpora, Names: []string{MailCorpus}, MailThreads: 4, Seed: 1}
	if err := cfg.defaults(); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	c, err := generateMail(ctx, cfg, work)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(c.Title, "generated from debian-copyright") || !strings.Contains(c.About, "Generated") {
		t.Errorf("title %q, about %q", c.Title, c.About)
	}
	p, err := Prepare(c)
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Failed) > 0 {
		t.Fatalf("documents without text: %v", p.Failed)
	}
	r, err := EvaluateCorpus(ctx, p, index.DefaultOptions(), work)
	if err != nil {
		t.Fatal(err)
	}
	if r.Docs != 4*mailDocsPerThread || r.Positives[0] == 0 || r.Positives[1] == 0 || r.Positives[2] == 0 {
		t.Errorf("%d documents, positives %v", r.Docs, r.Positives)
	}
	if r.Default.Recall(Exact) != 1 {
		t.Errorf("exact recall %.3f", r.Default.Recall(Exact))
	}
	if len(r.SsdeepRaw) == 0 || len(r.TLSHRaw) == 0 {
		t.Error("peers not run on the raw files")
	}
	rels := map[string]bool{}
	for _, x := range r.Relations {
		rels[x.Relation] = true
	}
	for _, want := range []string{RelSameBytes, RelMailCopy, RelMailQuoted, RelMailEdited, RelMailPartial, RelMailThread, RelMailOther} {
		if !rels[want] {
			t.Errorf("no labelled pairs %q", want)
		}
	}
	t.Logf("exact %.3f near %.3f contained %.3f false alarms %.2f %%; ssdeep near %.3f (raw %.3f), tlsh near %.3f (raw %.3f)",
		r.Default.Recall(Exact), r.Default.Recall(Near), r.Default.Recall(Contained), 100*r.Default.FalseAlarmShare(),
		r.SsdeepBest.Recall(Near), best(r.SsdeepRaw).Recall(Near), r.TLSHBest.Recall(Near), best(r.TLSHRaw).Recall(Near))
}
