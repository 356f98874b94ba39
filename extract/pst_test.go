package extract

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf16"
)

// outlookDir holds the Outlook fixtures of the shared corpus.
const outlookDir = "../../shared/corpora/outlook"

func pstFixture(t testing.TB, name string) []byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(outlookDir, name))
	if err != nil {
		t.Fatalf("the outlook corpus is required: %v", err)
	}
	return data
}

func newPSTExtractor(t testing.TB, lim Limits, dir string) *Extractor {
	t.Helper()
	x, err := New(Options{Limits: lim, SpoolDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	return x
}

// oracleItem is what readpst wrote for one item.
type oracleItem struct{ subject, text string }

// readOracle reads testdata/pst/NAME: per folder, the items in readpst's
// order, their subject and text as the EML path extracts them (the
// DESCRIPTION of an .ics).
func readOracle(t *testing.T, x *Extractor, name string) map[string][]oracleItem {
	t.Helper()
	root := filepath.Join("testdata", "pst", name)
	out := make(map[string][]oracleItem)
	err := filepath.WalkDir(root, func(path string, e os.DirEntry, err error) error {
		if err != nil || e.IsDir() {
			return err
		}
		folder, _ := filepath.Rel(root, filepath.Dir(path))
		n, _ := strconv.Atoi(strings.TrimSuffix(e.Name(), filepath.Ext(e.Name())))
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		var it oracleItem
		if filepath.Ext(path) == ".ics" {
			it = icsItem(data)
		} else {
			d := extractBytes(t, x, e.Name(), "", data)
			it = oracleItem{d.Meta.Subject, d.Text}
		}
		items := out[filepath.ToSlash(folder)]
		for len(items) < n {
			items = append(items, oracleItem{})
		}
		items[n-1] = it
		out[filepath.ToSlash(folder)] = items
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// icsItem reads the SUMMARY and DESCRIPTION of a readpst .ics, the
// latter with its line ends as in the item's plain body.
func icsItem(data []byte) oracleItem {
	var it oracleItem
	sc := bufio.NewScanner(bytes.NewReader(data))
	unescape := strings.NewReplacer(`\n`, "\n", `\,`, ",", `\;`, ";", `\\`, `\`)
	for sc.Scan() {
		k, v, _ := strings.Cut(sc.Text(), ":")
		switch k {
		case "SUMMARY":
			it.subject = unescape.Replace(v)
		case "DESCRIPTION":
			it.text = strings.TrimRight(unescape.Replace(v), "\n") + "\n"
		}
	}
	return it
}

// TestPSTOracle checks that every item readpst finds in the fixtures is a
// child with the same subject and text, in the same folder and order, and
// that there is nothing more.
func TestPSTOracle(t *testing.T) {
	x := newPSTExtractor(t, DefaultLimits(), t.TempDir())
	for _, name := range []string{"support", "32-bit"} {
		t.Run(name, func(t *testing.T) {
			want := readOracle(t, x, name)
			d := extractBytes(t, x, name+".pst", "", pstFixture(t, name+".pst"))
			if d.Err != nil || d.MediaType != mediaPST {
				t.Fatalf("mailbox: %s, %v", d.MediaType, d.Err)
			}
			got := make(map[string][]oracleItem)
			for _, c := range d.Children {
				if c.Err != nil || c.MediaType != mediaOutlook {
					t.Errorf("%s: %s, %v", c.Name, c.MediaType, c.Err)
				}
				folder := c.Meta.Extra["folder"]
				if !strings.HasPrefix(c.Name, folder+"/") {
					t.Errorf("%s: not named under its folder %q", c.Name, folder)
				}
				got[folder] = append(got[folder], oracleItem{c.Meta.Subject, c.Text})
			}
			for folder, items := range want {
				if len(got[folder]) != len(items) {
					t.Errorf("%s: %d items, readpst finds %d", folder, len(got[folder]), len(items))
					continue
				}
				for i, w := range items {
					g := got[folder][i]
					if g.subject != w.subject || g.text != w.text {
						t.Errorf("%s #%d:\n got %q\n%s\nwant %q\n%s", folder, i+1, g.subject, g.text, w.subject, w.text)
					}
				}
			}
			for folder := range got {
				if _, ok := want[folder]; !ok {
					t.Errorf("%s: %d items readpst does not find", folder, len(got[folder]))
				}
			}
		})
	}
}

// TestPSTLikeEML checks that an item's metadata is what its EML gives.
func TestPSTLikeEML(t *testing.T) {
	x := newPSTExtractor(t, DefaultLimits(), t.TempDir())
	d := extractBytes(t, x, "support.pst", "", pstFixture(t, "support.pst"))
	byID := make(map[string]*Document)
	for _, c := range d.Children {
		byID[c.Meta.MessageID] = c
	}
	for _, f := range []string{"Drafts/4.eml", "Sent Messages/11.eml", "Sent Messages/6.eml"} {
		data, err := os.ReadFile(filepath.Join("testdata", "pst", "support", f))
		if err != nil {
			t.Fatal(err)
		}
		e := extractBytes(t, x, "m.eml", "", data)
		c := byID[e.Meta.MessageID]
		if c == nil {
			t.Fatalf("%s: no item with Message-ID %s", f, e.Meta.MessageID)
		}
		if c.Meta.From != e.Meta.From || !slices.Equal(c.Meta.To, e.Meta.To) || !c.Meta.Date.Equal(e.Meta.Date) ||
			c.Meta.Subject != e.Meta.Subject || c.Meta.Extra["bcc"] != e.Meta.Extra["bcc"] {
			t.Errorf("%s:\n pst %+v\n eml %+v", f, c.Meta, e.Meta)
		}
		if c.Text != e.Text {
			t.Errorf("%s: text differs:\n pst %q\n eml %q", f, c.Text, e.Text)
		}
	}
	att := find(d, func(c *Document) bool { return c.Name == "support@hackingteam.it.asc" })
	if att == nil || !strings.Contains(att.Text, "BEGIN PGP PUBLIC KEY BLOCK") || len(att.Path) != 3 {
		t.Fatalf("attachment of Sent Messages/6: %+v", att)
	}
}

// TestPSTCalendar checks the calendar item of the ANSI fixture.
func TestPSTCalendar(t *testing.T) {
	x := newPSTExtractor(t, DefaultLimits(), t.TempDir())
	d := extractBytes(t, x, "32-bit.pst", "", pstFixture(t, "32-bit.pst"))
	if len(d.Children) != 1 {
		t.Fatalf("%d items", len(d.Children))
	}
	c := d.Children[0]
	if c.Name != "Calendar/Updated: Olympus training for new hires" || c.Meta.Extra["message class"] != "IPM.Appointment" {
		t.Errorf("item %q, class %q", c.Name, c.Meta.Extra["message class"])
	}
	if c.Meta.Extra["start"] != "2004-08-19T18:30:00Z" || c.Meta.Extra["end"] != "2004-08-19T19:30:00Z" {
		t.Errorf("start %q, end %q", c.Meta.Extra["start"], c.Meta.Extra["end"])
	}
}

// TestPSTNested checks a mailbox attached to a message and the limits
// that apply below it.
func TestPSTNested(t *testing.T) {
	pst := pstFixture(t, "32-bit.pst")
	eml := makeEML("mailbox attached", "see the mailbox", attachment{"old.pst", "application/octet-stream", pst})
	x := newPSTExtractor(t, DefaultLimits(), t.TempDir())
	d := extractBytes(t, x, "m.eml", "", eml)
	item := find(d, func(c *Document) bool { return strings.HasPrefix(c.Name, "Calendar/") })
	if item == nil || !slices.Equal(item.Path, []string{"m.eml", "old.pst", "Calendar/Updated: Olympus training for new hires"}) {
		t.Fatalf("nested item: %+v", item)
	}
	lim := DefaultLimits()
	lim.MaxDepth = 1
	d = extractBytes(t, newPSTExtractor(t, lim, t.TempDir()), "m.eml", "", eml)
	if box := find(d, func(c *Document) bool { return c.Name == "old.pst" }); box == nil || !errors.Is(box.Err, ErrTooDeep) {
		t.Fatalf("mailbox at the depth limit: %+v", box)
	}
	lim = DefaultLimits()
	lim.MaxChildren = 3
	d = extractBytes(t, newPSTExtractor(t, lim, t.TempDir()), "support.pst", "", pstFixture(t, "support.pst"))
	if !errors.Is(d.Err, ErrTooManyChildren) || len(d.Children) != 3 {
		t.Fatalf("MaxChildren 3: %d children, %v", len(d.Children), d.Err)
	}
}

// patch returns a copy of data with b written at off.
func patch(data []byte, off int, b ...byte) []byte {
	out := bytes.Clone(data)
	copy(out[off:], b)
	return out
}

// TestPSTBadInput checks damaged and encrypted mailboxes: each is an
// error wrapping a sentinel, with the folder reached, and no panic.
func TestPSTBadInput(t *testing.T) {
	uni, ansi := pstFixture(t, "support.pst"), pstFixture(t, "32-bit.pst")
	le64 := func(v uint64) []byte {
		b := make([]byte, 8)
		for i := range b {
			b[i] = byte(v >> (8 * i))
		}
		return b
	}
	nbt := int(le64Of(uni[224:]))
	for _, tc := range []struct {
		name string
		data []byte
		err  error
		op   string // substring of the error's Op
	}{
		{"header only", uni[:512], ErrMalformed, "open"},
		{"truncated mailbox", uni[:len(uni)/2], ErrMalformed, ""},
		{"truncated ansi", ansi[:40000], ErrMalformed, ""},
		{"cyclic encryption of a permuted file", patch(uni, 513, 2), ErrMalformed, ""},
		{"unknown encryption", patch(ansi, 461, 0x10), ErrEncrypted, "open"},
		{"unknown version", patch(uni, 10, 99, 0), ErrMalformed, "open"},
		{"4k OST", patch(uni, 10, 36, 0), ErrUnsupported, "open"},
		{"node b-tree past the end", patch(uni, 224, le64(1<<40)...), ErrMalformed, "message store"},
		{"node b-tree cycle", patch(uni, nbt+16, le64(uint64(nbt))...), ErrMalformed, "message store"},
		{"node b-tree on a block page", patch(uni, 224, uni[240:248]...), ErrMalformed, "message store"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := extractBytes(t, newPSTExtractor(t, DefaultLimits(), t.TempDir()), "bad.pst", "", tc.data)
			var xe *Error
			if !errors.Is(d.Err, tc.err) || !errors.As(d.Err, &xe) || !strings.Contains(xe.Op, tc.op) {
				t.Fatalf("error %v, want %v in %q", d.Err, tc.err, tc.op)
			}
			checkInvariants(t, d, DefaultLimits(), 0)
		})
	}
}

func le64Of(b []byte) uint64 {
	var v uint64
	for i := 7; i >= 0; i-- {
		v = v<<8 | uint64(b[i])
	}
	return v
}

// TestPSTTruncations cuts the fixtures everywhere: never a panic, and a
// cut mailbox is an error wrapping a sentinel that names what was read.
func TestPSTTruncations(t *testing.T) {
	x := newPSTExtractor(t, DefaultLimits(), t.TempDir())
	for _, name := range []string{"32-bit.pst", "support.pst"} {
		data := pstFixture(t, name)
		for cut := 0; cut < len(data); cut += len(data)/97 + 1 {
			d := extractBytes(t, x, name, "", data[:cut])
			checkInvariants(t, d, DefaultLimits(), 0)
			if cut >= 4 && d.Err == nil && find(d, func(c *Document) bool { return c.Err != nil }) == nil && cut < len(data)/2 {
				t.Errorf("%s cut at %d: no error anywhere", name, cut)
			}
		}
	}
}

// onlyReader hides every method but Read, as a network body does.
type onlyReader struct{ r io.Reader }

func (o onlyReader) Read(p []byte) (int, error) { return o.r.Read(p) }

// TestPSTSpool checks that a mailbox read from a stream is spooled to a
// private directory that is removed afterwards, with the same result as
// in place, and bounded by MaxSpoolSize rather than MaxObjectSize.
func TestPSTSpool(t *testing.T) {
	data := pstFixture(t, "support.pst")
	dir := t.TempDir()
	lim := DefaultLimits()
	lim.MaxObjectSize = 64 << 10 // far smaller than the mailbox
	x := newPSTExtractor(t, lim, dir)
	inPlace := extractBytes(t, x, "support.pst", "", data)
	streamed, err := x.Extract(context.Background(), Object{Name: "support.pst", Reader: onlyReader{bytes.NewReader(data)}})
	if err != nil || inPlace.Err != nil {
		t.Fatalf("streamed %v, in place %v", err, inPlace.Err)
	}
	if streamed.SHA256 != inPlace.SHA256 || streamed.Size != int64(len(data)) || count(streamed) != count(inPlace) || count(streamed) != 20 {
		t.Fatalf("streamed %x %d bytes %d docs, in place %x %d docs", streamed.SHA256, streamed.Size, count(streamed), inPlace.SHA256, count(inPlace))
	}
	f, err := os.Open(filepath.Join(outlookDir, "support.pst"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	fromFile, err := x.Extract(context.Background(), Object{Name: "support.pst", Reader: f})
	if err != nil || fromFile.SHA256 != inPlace.SHA256 || count(fromFile) != 20 {
		t.Fatalf("from file: %v, %d docs", err, count(fromFile))
	}
	fromBuffer, err := x.Extract(context.Background(), Object{Name: "support.pst", Reader: bytes.NewBuffer(data)})
	if err != nil || fromBuffer.SHA256 != inPlace.SHA256 || count(fromBuffer) != 20 {
		t.Fatalf("from a buffer: %v, %d docs", err, count(fromBuffer))
	}
	if left, _ := os.ReadDir(dir); len(left) != 0 {
		t.Fatalf("spool left %v", left)
	}
	lim.MaxSpoolSize = 512 << 10
	small := newPSTExtractor(t, lim, dir)
	for _, r := range []io.Reader{bytes.NewReader(data), onlyReader{bytes.NewReader(data)}} {
		d, err := small.Extract(context.Background(), Object{Name: "support.pst", Reader: r})
		if !errors.Is(err, ErrTooLarge) || d.Meta.Extra["truncated"] != "true" {
			t.Fatalf("MaxSpoolSize 512 KiB: %v", err)
		}
	}
	if left, _ := os.ReadDir(dir); len(left) != 0 {
		t.Fatalf("spool left %v", left)
	}
}

// TestSpoolPrivate checks the spool's directory and file modes.
func TestSpoolPrivate(t *testing.T) {
	sp, err := newSpool(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer sp.remove()
	di, err := os.Stat(sp.dir)
	if err != nil {
		t.Fatal(err)
	}
	fi, err := sp.f.Stat()
	if err != nil {
		t.Fatal(err)
	}
	if di.Mode().Perm() != 0o700 || fi.Mode().Perm() != 0o600 {
		t.Fatalf("spool modes %v %v", di.Mode(), fi.Mode())
	}
	if _, err := newSpool(filepath.Join(t.TempDir(), "missing")); err == nil {
		t.Fatal("spool in a missing directory")
	}
}

// TestPSTFolderReached checks that damage inside a mailbox is reported
// with the folder it was found in, and spares what it does not touch.
func TestPSTFolderReached(t *testing.T) {
	data := pstFixture(t, "support.pst")
	x := newPSTExtractor(t, DefaultLimits(), t.TempDir())
	// Zeroes over the Sent Messages tables: its items are lost, not the
	// six drafts before it.
	d := extractBytes(t, x, "s.pst", "", patch(data, 700000, make([]byte, 200000)...))
	var xe *Error
	if !errors.As(d.Err, &xe) || xe.Op != "read folder Sent Messages" || !errors.Is(d.Err, ErrMalformed) || len(d.Children) != 6 {
		t.Fatalf("tables zeroed: %v, %d children", d.Err, len(d.Children))
	}
	// Zeroes over a node b-tree page: each item it indexes is a child
	// with its error and its folder.
	d = extractBytes(t, x, "s.pst", "", patch(data, 400000, make([]byte, 300000)...))
	failed := 0
	for _, c := range d.Children {
		if c.Err != nil {
			failed++
			if !errors.As(c.Err, &xe) || xe.Op != "read item in Sent Messages" || !strings.HasPrefix(c.Name, "Sent Messages/") {
				t.Errorf("%s: %v", c.Name, c.Err)
			}
		}
	}
	if failed == 0 || len(d.Children) != 17 {
		t.Fatalf("%d of %d items failed", failed, len(d.Children))
	}
}

// TestDecompressRTF checks the example of [MS-OXRTFCP] 4.1 and a stored
// ("MELA") stream.
func TestDecompressRTF(t *testing.T) {
	lzfu := []byte{0x2d, 0x00, 0x00, 0x00, 0x2b, 0x00, 0x00, 0x00, 0x4c, 0x5a, 0x46, 0x75, 0xf1, 0xc5, 0xc7, 0xa7,
		0x03, 0x00, 0x0a, 0x00, 0x72, 0x63, 0x70, 0x67, 0x31, 0x32, 0x35, 0x42, 0x32, 0x0a, 0xf3, 0x20,
		0x68, 0x65, 0x6c, 0x09, 0x00, 0x20, 0x62, 0x77, 0x05, 0xb0, 0x6c, 0x64, 0x7d, 0x0a, 0x80, 0x0f, 0xa0}
	want := "{\\rtf1\\ansi\\ansicpg1252\\pard hello world}\r\n"
	if got, err := decompressRTF(lzfu, 1<<20); err != nil || string(got) != want {
		t.Fatalf("LZFu: %q, %v", got, err)
	}
	if got, _ := decompressRTF(lzfu, 10); string(got) != want[:10] {
		t.Fatalf("LZFu limited to 10 bytes: %q", got)
	}
	mela := append([]byte{0x14, 0, 0, 0, 4, 0, 0, 0, 'M', 'E', 'L', 'A', 0, 0, 0, 0}, "{\\rt"...)
	if got, err := decompressRTF(mela, 1<<20); err != nil || string(got) != "{\\rt" {
		t.Fatalf("MELA: %q, %v", got, err)
	}
	for _, bad := range [][]byte{lzfu[:10], append(bytes.Clone(lzfu[:8]), "XXXX0000"...)} {
		if _, err := decompressRTF(bad, 1<<20); !errors.Is(err, ErrMalformed) {
			t.Fatalf("%q: %v", bad, err)
		}
	}
}

// zeros reads n zero bytes.
type zeros struct{ n int64 }

func (z *zeros) Read(p []byte) (int, error) {
	if z.n <= 0 {
		return 0, io.EOF
	}
	p = p[:min(int64(len(p)), z.n)]
	clear(p)
	z.n -= int64(len(p))
	return len(p), nil
}

// TestPSTSpoolMemory streams a 65 MiB mailbox (the fixture followed by
// free space) and checks that the heap allocated while extracting it is a
// small fraction of its size: it is spooled, not read into memory.
func TestPSTSpoolMemory(t *testing.T) {
	const pad = 64 << 20
	data := pstFixture(t, "support.pst")
	x := newPSTExtractor(t, DefaultLimits(), t.TempDir())
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	d, err := x.Extract(context.Background(), Object{Name: "big.pst", Reader: onlyReader{io.MultiReader(bytes.NewReader(data), &zeros{pad})}})
	runtime.ReadMemStats(&after)
	if err != nil || count(d) != 20 || d.Size != int64(len(data))+pad {
		t.Fatalf("%v, %d documents, %d bytes", err, count(d), d.Size)
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 24<<20 {
		t.Fatalf("extracting a %d MiB mailbox allocated %d MiB", (len(data)+pad)>>20, alloc>>20)
	} else {
		t.Logf("extracting a %d MiB mailbox allocated %.1f MiB", (len(data)+pad)>>20, float64(alloc)/(1<<20))
	}
}

// TestMailboxPeek checks that objects that are not mailboxes read from
// streams lose nothing to the peek at their first bytes.
func TestMailboxPeek(t *testing.T) {
	x := newPSTExtractor(t, DefaultLimits(), t.TempDir())
	for _, s := range []string{"", "h", "hi!", "!BD", "!BDM is not a mailbox", "plain text of some length"} {
		d, err := x.Extract(context.Background(), Object{Name: "a.txt", Reader: onlyReader{strings.NewReader(s)}})
		if err != nil || d.Text != s || d.Size != int64(len(s)) {
			t.Errorf("%q: text %q, %d bytes, %v", s, d.Text, d.Size, err)
		}
	}
	broken := errors.New("connection reset")
	d, err := x.Extract(context.Background(), Object{Name: "a.txt", Reader: onlyReader{io.MultiReader(strings.NewReader("ab"), errReader{broken})}})
	if !errors.Is(err, broken) || d == nil {
		t.Errorf("read error: %v", err)
	}
}

// toCyclic re-encodes a permute-encoded Unicode PST with cyclic
// encryption: every data block listed in the block b-tree.
func toCyclic(t *testing.T, data []byte) []byte {
	out := bytes.Clone(data)
	le := func(b []byte) int { return int(le64Of(b)) }
	var walk func(off int)
	walk = func(off int) {
		pg := data[off : off+512]
		n, size, level := int(pg[488]), int(pg[490]), int(pg[491])
		for i := range n {
			e := pg[i*size:]
			if level > 0 {
				walk(le(e[16:]))
				continue
			}
			bid, ib, cb := le64Of(e), le(e[8:]), int(e[16])|int(e[17])<<8
			if bid&2 != 0 {
				continue
			}
			b := out[ib : ib+cb]
			for k, c := range b {
				b[k] = pstCryptPermute[c]
			}
			decodeCyclic(b, uint32(bid)) // its own inverse: encodes
		}
	}
	walk(le(data[240:]))
	out[513] = 2
	return out
}

// TestPSTCyclic checks that a mailbox with cyclic ("high") encryption
// reads as the same mailbox with permutation.
func TestPSTCyclic(t *testing.T) {
	data := pstFixture(t, "support.pst")
	x := newPSTExtractor(t, DefaultLimits(), t.TempDir())
	want := extractBytes(t, x, "support.pst", "", data)
	got := extractBytes(t, x, "support.pst", "", toCyclic(t, data))
	if got.Err != nil || len(got.Children) != len(want.Children) {
		t.Fatalf("cyclic: %v, %d items", got.Err, len(got.Children))
	}
	for i, c := range got.Children {
		if w := want.Children[i]; c.Name != w.Name || c.Text != w.Text || c.SHA256 != w.SHA256 {
			t.Errorf("item %d: %q, want %q", i, c.Name, w.Name)
		}
	}
	plain := bytes.Clone(data)
	for i := range 256 {
		plain[i] = byte(i)
	}
	decodeCyclic(plain[:256], 0x12345678)
	decodeCyclic(plain[:256], 0x12345678)
	for i := range 256 {
		if plain[i] != byte(i) {
			t.Fatalf("cyclic encoding is not its own inverse at %d", i)
		}
	}
}

// stallingReader serves n reads, then blocks every read until ctx ends:
// a disk or spool that stops answering.
type stallingReader struct {
	*bytes.Reader
	ctx context.Context
	n   int
}

func (s *stallingReader) ReadAt(p []byte, off int64) (int, error) {
	if s.n--; s.n < 0 {
		<-s.ctx.Done()
		return 0, s.ctx.Err()
	}
	return s.Reader.ReadAt(p, off)
}

// TestPSTDeadline checks that a mailbox whose reads stall ends at the
// deadline with ErrTimeout, keeping the items read before.
func TestPSTDeadline(t *testing.T) {
	data := pstFixture(t, "support.pst")
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	x := newPSTExtractor(t, DefaultLimits(), t.TempDir())
	r := &stallingReader{Reader: bytes.NewReader(data), ctx: ctx, n: 150}
	d, err := x.Extract(ctx, Object{Name: "slow.pst", Reader: r})
	if d == nil || !errors.Is(err, ErrTimeout) || len(d.Children) == 0 || len(d.Children) == 17 {
		t.Fatalf("stalled mailbox: %v, %+v", err, d)
	}
}

// testProp is a property of a synthetic property context.
type testProp struct {
	id, typ uint16
	val     []byte
}

func utf16le(s string) []byte {
	var b []byte
	for _, u := range utf16.Encode([]rune(s)) {
		b = append(b, byte(u), byte(u>>8))
	}
	return b
}

// makePC builds a one-block heap-on-node holding a property context of
// props: a b-tree-on-heap header, its records, then the values too large
// to be inline.
func makePC(props ...testProp) *pstObject {
	allocs := [][]byte{{0xB5, 2, 6, 0, 2 << 5, 0, 0, 0}, nil}
	slices.SortFunc(props, func(a, b testProp) int { return int(a.id) - int(b.id) })
	for _, p := range props {
		rec := []byte{byte(p.id), byte(p.id >> 8), byte(p.typ), byte(p.typ >> 8), 0, 0, 0, 0}
		if n := fixedSize(p.typ); n > 0 && n <= 4 {
			copy(rec[4:], p.val)
		} else {
			allocs = append(allocs, p.val)
			hid := uint32(len(allocs)) << 5
			rec[4], rec[5], rec[6], rec[7] = byte(hid), byte(hid>>8), byte(hid>>16), byte(hid>>24)
		}
		allocs[1] = append(allocs[1], rec...)
	}
	b := []byte{0, 0, 0xEC, 0xBC, 1 << 5, 0, 0, 0, 0, 0, 0, 0}
	offs := []int{len(b)}
	for _, a := range allocs {
		b = append(b, a...)
		offs = append(offs, len(b))
	}
	pm := len(b)
	b[0], b[1] = byte(pm), byte(pm>>8)
	b = append(b, byte(len(allocs)), byte(len(allocs)>>8), 0, 0)
	for _, o := range offs {
		b = append(b, byte(o), byte(o>>8))
	}
	h, err := newHeap([][]byte{b})
	if err != nil {
		panic(err)
	}
	return &pstObject{heap: h, limit: 1 << 20}
}

// TestPSTItemKinds checks the text of a contact and the fields of a task
// built as property contexts.
func TestPSTItemKinds(t *testing.T) {
	str := func(id uint16, s string) testProp { return testProp{id, ptUnicode, utf16le(s)} }
	for _, tc := range []struct {
		name  string
		props []testProp
		text  string
	}{
		{"contact", []testProp{str(pidMessageClass, "IPM.Contact"), str(pidDisplayName, "Ada Lovelace"),
			str(0x3A16, "Analytical Engines Ltd"), str(0x3A1C, "+44 20 7946 0000"), str(pidBody, "Met at the\r\nRoyal Society.")},
			"Name: Ada Lovelace\nCompany: Analytical Engines Ltd\nMobile phone: +44 20 7946 0000\n\nMet at the\nRoyal Society."},
		{"task", []testProp{str(pidMessageClass, "IPM.Task"), str(pidSubject, "\x01\x04RE: Review the draft"),
			testProp{pidBody, ptString8, []byte("Before Friday, caf\xe9 included.")}, testProp{pidMessageCodepage, ptLong, []byte{0xE4, 0x04, 0, 0}}},
			"Before Friday, café included."},
		{"html note", []testProp{str(pidMessageClass, "IPM.Note"), testProp{pidHTML, ptBinary, []byte("<p>Hello <b>there</b></p>")}},
			"Hello there\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := makePC(tc.props...)
			props, err := o.props()
			if err != nil {
				t.Fatal(err)
			}
			ctx := context.Background()
			root := &parser{j: newJob(ctx, DefaultLimits()), d: &Document{Name: "box.pst", Path: []string{"box.pst"}}, text: textBuf{max: 1 << 20}}
			x := &pstReader{p: root, limit: 1 << 20}
			c := root.itemChild("Contacts/x")
			x.item(c, o, props)
			c.finishItem()
			if c.d.Err != nil || c.d.Text != tc.text {
				t.Fatalf("text %q, %v; want %q", c.d.Text, c.d.Err, tc.text)
			}
			if tc.name == "task" && c.d.Meta.Subject != "RE: Review the draft" {
				t.Fatalf("subject %q", c.d.Meta.Subject)
			}
		})
	}
}

// TestPSTSpoolReadError checks that a stream failing halfway is reported
// as the read error it is, and leaves no spool behind.
func TestPSTSpoolReadError(t *testing.T) {
	dir := t.TempDir()
	broken := errors.New("connection reset")
	r := onlyReader{io.MultiReader(bytes.NewReader(pstFixture(t, "32-bit.pst")[:5000]), errReader{broken})}
	d, err := newPSTExtractor(t, DefaultLimits(), dir).Extract(context.Background(), Object{Name: "box.pst", Reader: r})
	if !errors.Is(err, broken) || d.MediaType != mediaPST || d.Size != 5000 {
		t.Fatalf("%v, %+v", err, d)
	}
	if left, _ := os.ReadDir(dir); len(left) != 0 {
		t.Fatalf("spool left %v", left)
	}
}
