package extract

import (
	"archive/zip"
	"bytes"
	"context"
	"fmt"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/simdex/simdex/internal/corpustest"
	"golang.org/x/text/encoding"
	"golang.org/x/text/encoding/charmap"
)

// Benchmarks for issue 4: extraction throughput per format (MB/s of input
// bytes, b.SetBytes) and memory per object (scripts/bench.d/30-extract.sh
// writes them into docs/BENCHMARKS.md).
//
// Every benchmark reports, besides ns/op, MB/s, B/op and allocs/op:
//   - alloc-MB/op: bytes allocated per extracted object, in MB;
//   - alloc/input: the same divided by the input size;
//   - peak-live-MB: the peak heap of one extraction above the heap before
//     it, sampled with the collector at GOGC=5 (see peakLiveHeap).
//
// The BenchmarkExtract/mem-* cases show that memory follows the input and
// the limits, not the claims of the input: 1 MB and 64 MB of text (memory
// grows linearly, alloc/input stays flat), and decompression bombs whose
// members inflate to 1 GiB but are cut by MaxCompressionRatio.

// benchCase is one input of BenchmarkExtract.
type benchCase struct {
	name  string // sub-benchmark name
	file  string // Object.Name
	ct    string // declared content type
	media string // media type the sniffer must find
	gen   func(b *testing.B) []byte
	// errOK: the case expects an extraction error (a bomb hitting a limit).
	errOK bool
}

var (
	benchOnce  sync.Once
	benchCases []benchCase
	benchMu    sync.Mutex
	benchData  = map[string][]byte{}
)

// input builds (once) and returns the case's input.
func (c *benchCase) input(b *testing.B) []byte {
	benchMu.Lock()
	defer benchMu.Unlock()
	d, ok := benchData[c.name]
	if !ok {
		d = c.gen(b)
		benchData[c.name] = d
	}
	return d
}

func fixed(data []byte) func(*testing.B) []byte { return func(*testing.B) []byte { return data } }

// benchCorpus reads a file of the full debian-docs corpus (SIMDEX_CORPORA);
// the benchmarks need it and fail without it.
func benchCorpus(b *testing.B, rel string) []byte {
	b.Helper()
	return corpustest.ReadFrom(b, corpustest.Dir(b), "debian-docs/raw/"+rel)
}

// paragraphs splits text into its blank-line separated paragraphs.
func paragraphs(text string) []string {
	var out []string
	for _, p := range strings.Split(strings.ReplaceAll(text, "\r\n", "\n"), "\n\n") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// repeatTo repeats data until it is at least n bytes long, then cuts it
// at n.
func repeatTo(data []byte, n int) []byte {
	out := make([]byte, 0, n+len(data))
	for len(out) < n {
		out = append(out, data...)
	}
	return out[:n]
}

// zerosZip is a ZIP whose single member inflates to n zero bytes (about
// n/1000 bytes compressed): a decompression bomb.
func zerosZip(b *testing.B, n int) []byte {
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	w, err := zw.Create("zeros.txt")
	if err != nil {
		b.Fatal(err)
	}
	zeros := make([]byte, 1<<20)
	for n > 0 {
		k := min(n, len(zeros))
		if _, err := w.Write(zeros[:k]); err != nil {
			b.Fatal(err)
		}
		n -= k
	}
	if err := zw.Close(); err != nil {
		b.Fatal(err)
	}
	return buf.Bytes()
}

func loadBenchCases(b *testing.B) []benchCase {
	benchOnce.Do(func() { benchCases = makeBenchCases(b) })
	if benchCases == nil {
		b.Fatal("benchmark inputs could not be built")
	}
	return benchCases
}

func makeBenchCases(b *testing.B) []benchCase {
	en := benchCorpus(b, "debian-reference-en/usr/share/debian-reference/debian-reference.en.txt")
	fr := benchCorpus(b, "debian-reference-fr/usr/share/debian-reference/debian-reference.fr.txt")
	html := benchCorpus(b, "developers-reference/usr/share/developers-reference/developers-reference.html")
	pdf := benchCorpus(b, "debian-faq/usr/share/doc/debian/FAQ/debian-faq.pdf")
	paras := paragraphs(string(en))

	// A legacy 8-bit charset: the French edition in Windows-1252.
	cp1252, err := encoding.ReplaceUnsupported(charmap.Windows1252.NewEncoder()).Bytes(fr)
	if err != nil {
		b.Fatal(err)
	}

	// Markdown: the English paragraphs with headings, emphasis, links,
	// lists and code spans.
	var md strings.Builder
	for i, p := range paras {
		switch i % 8 {
		case 0:
			fmt.Fprintf(&md, "## Section %d: *%s*\n\n", i/8+1, firstWords(p, 5))
		case 3:
			fmt.Fprintf(&md, "- %s\n- see [the reference](https://www.debian.org/doc/%d) and `apt-get`\n\n", p, i)
		case 5:
			fmt.Fprintf(&md, "> **Note:** %s\n\n", p)
		default:
			md.WriteString(p + "\n\n")
		}
	}

	// CSV: 20,000 records with quoted fields.
	var csv strings.Builder
	csv.WriteString("id,name,amount,date,note\n")
	for i := 0; i < 20000; i++ {
		fmt.Fprintf(&csv, "%d,\"Customer %d, Ltd\",%d.%02d,2024-%02d-%02d,\"%s\"\n", i, i%977, i*37%100000, i%100, i%12+1, i%28+1, firstWords(paras[i%len(paras)], 4))
	}

	// Office documents built by the format tests' generators from the
	// English paragraphs.
	docx := makeDOCX(b, "Debian Reference", "Debian", paras...)
	var rows [][]string
	for i := 0; i < 10000; i++ {
		rows = append(rows, []string{fmt.Sprintf("s:Region %d", i%50), fmt.Sprintf("n:%d.5", i), firstWords(paras[i%len(paras)], 6), fmt.Sprintf("s:Product %d", i%300)})
	}
	xlsx := makeXLSX(b, map[string][][]string{"Data": rows}, []string{"Data"})
	var slides []string
	for i := 0; i+4 <= len(paras); i += 4 {
		slides = append(slides, strings.Join(paras[i:i+4], "\n"))
	}
	pptx := makePPTX(b, slides...)
	var odt strings.Builder
	odt.WriteString("<office:text>")
	for i, p := range paras {
		if i%10 == 0 {
			fmt.Fprintf(&odt, `<text:h text:outline-level="1">%s</text:h>`, xmlEscape(firstWords(p, 5)))
		}
		fmt.Fprintf(&odt, "<text:p>%s</text:p>", xmlEscape(p))
	}
	odt.WriteString("</office:text>")

	// RTF: the French paragraphs with \'xx escapes for accents, bold
	// runs and a font table.
	var rtf strings.Builder
	rtf.WriteString(`{\rtf1\ansi\ansicpg1252\deff0{\fonttbl{\f0\froman\fcharset0 Times New Roman;}{\f1\fswiss\fcharset0 Arial;}}` + "\n" +
		`{\info{\title Debian Reference}{\author Debian}}` + "\n")
	for i, p := range paragraphs(string(fr)) {
		if i%6 == 0 {
			rtf.WriteString(`{\b `)
		}
		for _, r := range p {
			switch {
			case r == '\\' || r == '{' || r == '}':
				rtf.WriteString(`\` + string(r))
			case r == '\n':
				rtf.WriteString(`\line `)
			case r < 128:
				rtf.WriteRune(r)
			default:
				if c, ok := charmap.Windows1252.EncodeRune(r); ok {
					fmt.Fprintf(&rtf, `\'%02x`, c)
				} else {
					fmt.Fprintf(&rtf, `\u%d?`, int16(r))
				}
			}
		}
		if i%6 == 0 {
			rtf.WriteString(`}`)
		}
		rtf.WriteString("\\par\n")
	}
	rtf.WriteString("}")

	// E-mail: a 100 KB body with a text and a DOCX attachment; an mbox
	// of 500 messages of about 2 KB.
	body := string(repeatTo(en, 100<<10))
	eml := makeEML("Contract review", body,
		attachment{name: "notes.txt", contentType: "text/plain", data: repeatTo(fr, 100<<10)},
		attachment{name: "contract.docx", contentType: mediaDOCX, data: makeDOCX(b, "Contract", "Legal", paras[:200]...)})
	var mbox bytes.Buffer
	for i := 0; i < 500; i++ {
		fmt.Fprintf(&mbox, "From sender%d@example.com Mon Jan  1 00:00:00 2024\n", i)
		mbox.Write(simpleEML(fmt.Sprintf("sender%d@example.com", i), fmt.Sprintf("message %d", i), strings.Join(paras[i%(len(paras)-8):i%(len(paras)-8)+8], "\n\n")))
		mbox.WriteString("\n")
	}

	// Archives: 100 text members of 10 KB each.
	var zfs []zipFile
	var tfs []tarFile
	for i := 0; i < 100; i++ {
		off := i * 10000 % (len(en) - 10000)
		name := fmt.Sprintf("docs/member-%03d.txt", i)
		zfs = append(zfs, zipFile{name: name, body: string(en[off : off+10000])})
		tfs = append(tfs, tarFile{name: name, body: string(en[off : off+10000])})
	}

	return []benchCase{
		{name: "text-utf8", file: "debian-reference.en.txt", media: mediaText, gen: fixed(en)},
		{name: "text-cp1252", file: "debian-reference.fr.txt", media: mediaText, gen: fixed(cp1252)},
		{name: "html", file: "developers-reference.html", media: mediaHTML, gen: fixed(html)},
		{name: "markdown", file: "reference.md", media: mediaMarkdown, gen: fixed([]byte(md.String()))},
		{name: "csv", file: "customers.csv", media: mediaCSV, gen: fixed([]byte(csv.String()))},
		{name: "pdf", file: "debian-faq.pdf", media: mediaPDF, gen: fixed(pdf)},
		{name: "docx", file: "reference.docx", media: mediaDOCX, gen: fixed(docx)},
		{name: "xlsx", file: "data.xlsx", media: mediaXLSX, gen: fixed(xlsx)},
		{name: "pptx", file: "deck.pptx", media: mediaPPTX, gen: fixed(pptx)},
		{name: "odt", file: "reference.odt", media: mediaODT, gen: fixed(makeODF(b, mediaODT, odt.String(), false))},
		{name: "rtf", file: "reference.rtf", media: mediaRTF, gen: fixed([]byte(rtf.String()))},
		{name: "eml-attachments", file: "msg.eml", media: mediaEML, gen: fixed(eml)},
		{name: "mbox", file: "archive.mbox", media: mediaMBOX, gen: fixed(mbox.Bytes())},
		{name: "zip", file: "bundle.zip", media: mediaZIP, gen: fixed(makeZip(b, zfs...))},
		{name: "tar.gz", file: "bundle.tar.gz", media: mediaGZIP, gen: fixed(gzipBytes(b, "bundle.tar", makeTar(b, tfs...)))},
		// Memory: the same text at 1 MB and 64 MB (just under the default
		// MaxTextSize of 64 MiB), then bombs.
		{name: "mem-text-1MB", file: "big.txt", media: mediaText, gen: fixed(repeatTo(en, 1e6))},
		{name: "mem-text-64MB", file: "big.txt", media: mediaText, gen: func(b *testing.B) []byte { return repeatTo(en, 64e6) }},
		{name: "mem-zip-bomb-1GiB", file: "bomb.zip", media: mediaZIP, gen: func(b *testing.B) []byte { return zerosZip(b, 1<<30) }, errOK: true},
		{name: "mem-nested-zip-bomb-1GiB", file: "nested.zip", media: mediaZIP, gen: func(b *testing.B) []byte { return nest(b, zerosZip(b, 1<<30), 3) }, errOK: true},
	}
}

// firstWords returns the first n words of s.
func firstWords(s string, n int) string {
	w := strings.Fields(s)
	return strings.Join(w[:min(n, len(w))], " ")
}

// peakLiveHeap returns the peak heap above the heap before it while fn
// runs, sampled every 100µs with the collector at GOGC=5, so that the
// sampled heap stays within about 5 % of the live heap: the memory an
// extraction holds at its peak, whatever garbage it also leaves.
func peakLiveHeap(fn func()) uint64 {
	defer debug.SetGCPercent(debug.SetGCPercent(5))
	runtime.GC()
	s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	read := func() uint64 {
		metrics.Read(s)
		return s[0].Value.Uint64()
	}
	base := read()
	var peak atomic.Uint64
	stop, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(100 * time.Microsecond)
		defer t.Stop()
		for {
			if v := read(); v > peak.Load() {
				peak.Store(v)
			}
			select {
			case <-stop:
				return
			case <-t.C:
			}
		}
	}()
	fn()
	close(stop)
	<-done
	return max(peak.Load(), base) - base
}

func BenchmarkExtract(b *testing.B) {
	cases := loadBenchCases(b)
	x, err := New(Options{Limits: DefaultLimits()})
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	for _, tc := range cases {
		var peakLive uint64
		b.Run(tc.name, func(b *testing.B) {
			data := tc.input(b)
			// Check once, untimed, that the input is extracted as intended.
			d, err := x.Extract(ctx, Object{Name: tc.file, ContentType: tc.ct, Reader: bytes.NewReader(data)})
			switch {
			case d == nil:
				b.Fatalf("no document: %v", err)
			case d.MediaType != tc.media:
				b.Fatalf("sniffed %s, want %s", d.MediaType, tc.media)
			case tc.errOK && !hasErr(d):
				b.Fatalf("bomb extracted without a limit error")
			case !tc.errOK && hasErr(d):
				b.Fatalf("extraction error: %v", firstErr(d))
			case !tc.errOK && textSize(d) == 0:
				b.Fatal("no text extracted")
			}
			d = nil
			if b.N == 1 {
				// First call of each run: measure the peak live heap of one
				// extraction, untimed.
				peakLive = peakLiveHeap(func() {
					d, _ = x.Extract(ctx, Object{Name: tc.file, ContentType: tc.ct, Reader: bytes.NewReader(data)})
				})
				d = nil
			}
			b.SetBytes(int64(len(data)))
			b.ReportAllocs()
			var ms0, ms1 runtime.MemStats
			runtime.ReadMemStats(&ms0)
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				d, _ := x.Extract(ctx, Object{Name: tc.file, ContentType: tc.ct, Reader: bytes.NewReader(data)})
				if d == nil {
					b.Fatal("no document")
				}
			}
			b.StopTimer()
			runtime.ReadMemStats(&ms1)
			alloc := float64(ms1.TotalAlloc-ms0.TotalAlloc) / float64(b.N)
			b.ReportMetric(alloc/1e6, "alloc-MB/op")
			b.ReportMetric(alloc/float64(len(data)), "alloc/input")
			b.ReportMetric(float64(peakLive)/1e6, "peak-live-MB")
		})
	}
}

func walk(d *Document, fn func(*Document)) {
	fn(d)
	for _, c := range d.Children {
		walk(c, fn)
	}
}

func hasErr(d *Document) bool { return firstErr(d) != nil }

func firstErr(d *Document) error {
	var err error
	walk(d, func(c *Document) {
		if err == nil && c.Err != nil {
			err = c.Err
		}
	})
	return err
}

func textSize(d *Document) int {
	n := 0
	walk(d, func(c *Document) { n += len(c.Text) })
	return n
}
