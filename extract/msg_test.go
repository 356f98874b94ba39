package extract

import (
	"bufio"
	"context"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf16"

	"github.com/simdex/simdex/internal/corpustest"
)

// outlookDir holds the Outlook test files of the committed fixtures
// (testdata/corpora).
var outlookDir = corpustest.Path("outlook")

// TestMSGMatchesEML checks that each MSG of the corpus gives the text and
// metadata of the same message as an EML (testdata/legacy/NAME.msg.eml,
// written by msgconvert, its attachment bodies removed), and its
// attachments as children with the bytes msgconvert found
// (NAME.msg.attachments: name, size, SHA-256).
func TestMSGMatchesEML(t *testing.T) {
	x := newTestExtractor(t, DefaultLimits())
	for _, name := range []string{"strangeDate", "unicode"} {
		t.Run(name, func(t *testing.T) {
			msg := extractFile(t, x, filepath.Join(outlookDir, name+".msg"))
			eml := extractFile(t, x, filepath.Join("testdata", "legacy", name+".msg.eml"))
			if msg.MediaType != mediaMSG || msg.Err != nil {
				t.Fatalf("msg: %s, %v", msg.MediaType, msg.Err)
			}
			if msg.Text != eml.Text {
				t.Errorf("text differs:\nmsg: %q\neml: %q", msg.Text, eml.Text)
			}
			m, e := msg.Meta, eml.Meta
			if m.From != e.From || !slices.Equal(m.To, e.To) || !slices.Equal(m.Cc, e.Cc) || m.Subject != e.Subject ||
				!m.Date.Equal(e.Date) || m.MessageID != e.MessageID || m.InReplyTo != e.InReplyTo {
				t.Errorf("metadata differs:\nmsg: %+v\neml: %+v", m, e)
			}
			want := readAttachmentList(t, filepath.Join("testdata", "legacy", name+".msg.attachments"))
			var got []string
			for _, c := range msg.Children {
				got = append(got, c.Name+"\t"+strconv.FormatInt(c.Size, 10)+"\t"+hex.EncodeToString(c.SHA256[:]))
			}
			if !slices.Equal(got, want) {
				t.Errorf("attachments:\n got %q\nwant %q", got, want)
			}
		})
	}
}

func readAttachmentList(t *testing.T, path string) []string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if l := strings.TrimSpace(sc.Text()); l != "" {
			out = append(out, l)
		}
	}
	return out
}

func utf16LE(s string) []byte {
	var b []byte
	for _, u := range utf16.Encode([]rune(s)) {
		b = binary.LittleEndian.AppendUint16(b, u)
	}
	return b
}

// makeMSGNodes builds the entries of a message with a subject and a plain
// body; header is the size of its property stream's header (32 for a
// message file, 24 for an attached message); each attached message in
// inner becomes an attachment.
func makeMSGNodes(header int, subject, body string, inner ...[]*cfbNode) []*cfbNode {
	nodes := []*cfbNode{
		{name: "__properties_version1.0", data: make([]byte, header)},
		{name: "__substg1.0_0037001F", data: utf16LE(subject)},
		{name: "__substg1.0_1000001F", data: utf16LE(body)},
	}
	for i, in := range inner {
		props := make([]byte, msgSubHeader+16)
		binary.LittleEndian.PutUint16(props[msgSubHeader:], 0x0003)
		binary.LittleEndian.PutUint16(props[msgSubHeader+2:], propAttachMethod)
		binary.LittleEndian.PutUint32(props[msgSubHeader+8:], attachEmbedded)
		nodes = append(nodes, &cfbNode{name: fmt.Sprintf("__attach_version1.0_#%08X", i), kids: []*cfbNode{
			{name: "__properties_version1.0", data: props},
			{name: "__substg1.0_3001001F", data: utf16LE("attached " + strconv.Itoa(i))},
			{name: "__substg1.0_3701000D", kids: in},
		}})
	}
	return nodes
}

// TestMSGEmbedded checks attached messages: extracted as children, their
// nesting bounded by MaxDepth, and a message that contains itself
// refused as malformed.
func TestMSGEmbedded(t *testing.T) {
	inner := makeMSGNodes(msgEmbeddedHeader, "inner subject", "inner body")
	x := newTestExtractor(t, DefaultLimits())
	d := extractBytes(t, x, "a.msg", "", buildCFB(makeMSGNodes(msgTopHeader, "top", "top body", inner), nil))
	if d.Err != nil || d.Text != "top\n\ntop body\n" || len(d.Children) != 1 {
		t.Fatalf("top: %v %q %d children", d.Err, d.Text, len(d.Children))
	}
	c := d.Children[0]
	if c.Name != "attached 0.msg" || c.MediaType != mediaMSG || c.Text != "inner subject\n\ninner body\n" || c.Meta.Subject != "inner subject" || c.Err != nil || c.Size == 0 {
		t.Errorf("child: %q %s %q %q %v %d", c.Name, c.MediaType, c.Text, c.Meta.Subject, c.Err, c.Size)
	}

	t.Run("recursive", func(t *testing.T) {
		data := buildCFB(makeMSGNodes(msgTopHeader, "top", "top body", inner), func(dir []cfbEntry) {
			for i := range dir {
				if dir[i].name == "__substg1.0_3701000D" {
					dir[i].child = dir[0].child // the attached message is the message itself
				}
			}
		})
		d := extractBytes(t, x, "a.msg", "", data)
		if d.Text != "top\n\ntop body\n" || len(d.Children) != 1 || !errors.Is(d.Children[0].Err, ErrMalformed) {
			t.Fatalf("%q, %d children, %v", d.Text, len(d.Children), d.Children)
		}
		t.Logf("%v", d.Children[0].Err)
	})

	t.Run("depth", func(t *testing.T) {
		nodes := inner
		for range 4 {
			nodes = makeMSGNodes(msgEmbeddedHeader, "s", "b", nodes)
		}
		nodes[0].data = make([]byte, msgTopHeader)
		lim := DefaultLimits()
		lim.MaxDepth = 2
		d := extractBytes(t, newTestExtractor(t, lim), "a.msg", "", buildCFB(nodes, nil))
		deepest := d.Children[0].Children[0]
		if len(deepest.Children) != 0 || !errors.Is(deepest.Err, ErrTooDeep) {
			t.Errorf("depth 2: %d children, %v", len(deepest.Children), deepest.Err)
		}
	})
}

// TestLZFu checks compressed RTF against the example of MS-OXRTFCP 4.1.
func TestLZFu(t *testing.T) {
	if len(lzfuPrebuffer) != 207 {
		t.Fatalf("prebuffer is %d bytes", len(lzfuPrebuffer))
	}
	in := lzfuExample
	want := "{\\rtf1\\ansi\\ansicpg1252\\pard hello world}\r\n"
	j := newJob(context.Background(), DefaultLimits())
	out, err := decompressRTF(j, in)
	if err != nil || string(out) != want {
		t.Errorf("%q, %v", out, err)
	}
	if _, err := decompressRTF(j, in[:30]); !errors.Is(err, ErrMalformed) {
		t.Errorf("truncated: %v", err)
	}
}

// rtfMSGNodes is a message with transport headers, a compressed RTF body
// and one attached file.
func rtfMSGNodes() []*cfbNode {
	return []*cfbNode{
		{name: "__properties_version1.0", data: make([]byte, msgTopHeader)},
		{name: "__substg1.0_007D001F", data: utf16LE("From: A <a@example.com>\r\nSubject: s\r\nDate: Mon, 1 Jan 2024 10:00:00 +0000\r\n")},
		{name: "__substg1.0_10090102", data: lzfuExample},
		{name: "__attach_version1.0_#00000000", kids: []*cfbNode{
			{name: "__properties_version1.0", data: make([]byte, msgSubHeader)},
			{name: "__substg1.0_3707001F", data: utf16LE("a.txt")},
			{name: "__substg1.0_370E001F", data: utf16LE("text/plain")},
			{name: "__substg1.0_37010102", data: []byte("attached text")},
		}},
	}
}

// TestMSGRTFBody checks a message whose only body is compressed RTF and
// whose headers are transport headers.
func TestMSGRTFBody(t *testing.T) {
	x := newTestExtractor(t, DefaultLimits())
	d := extractBytes(t, x, "a.msg", "", buildCFB(rtfMSGNodes(), nil))
	if d.Err != nil || d.Text != "s\n\nhello world\n" || d.Meta.From != "A <a@example.com>" || d.Meta.Subject != "s" || d.Meta.Date.IsZero() {
		t.Errorf("%v %q %+v", d.Err, d.Text, d.Meta)
	}
	if len(d.Children) != 1 || d.Children[0].Name != "a.txt" || d.Children[0].Text != "attached text" {
		t.Errorf("children: %+v", d.Children)
	}
}

// fixedProps writes a __properties_version1.0 stream: a header of size
// header, then one 16-byte entry per property (type, id, value).
func fixedProps(header int, props ...[3]uint64) []byte {
	b := make([]byte, header)
	for _, p := range props {
		b = binary.LittleEndian.AppendUint16(b, uint16(p[0]))
		b = binary.LittleEndian.AppendUint16(b, uint16(p[1]))
		b = binary.LittleEndian.AppendUint32(b, 0)
		b = binary.LittleEndian.AppendUint64(b, p[2])
	}
	return b
}

func recipient(n int, typ uint64, name, addr string) *cfbNode {
	return &cfbNode{name: fmt.Sprintf("__recip_version1.0_#%08X", n), kids: []*cfbNode{
		{name: "__properties_version1.0", data: fixedProps(msgSubHeader, [3]uint64{0x0003, propRecipientType, typ})},
		{name: "__substg1.0_3001001F", data: utf16LE(name)},
		{name: "__substg1.0_39FE001F", data: utf16LE(addr)},
	}}
}

// TestMSGPropertyHeaders checks a message without transport headers: its
// header is built from the sender, recipients and submit time, and its
// HTML body is converted as an EML's would be.
func TestMSGPropertyHeaders(t *testing.T) {
	sent := time.Date(2024, 3, 1, 9, 30, 0, 0, time.UTC)
	ft := uint64(sent.Unix())*1e7 + 116444736000000000
	nodes := []*cfbNode{
		{name: "__properties_version1.0", data: fixedProps(msgTopHeader, [3]uint64{0x0040, propClientSubmitTime, ft}, [3]uint64{0x0003, propInternetCPID, 65001})},
		{name: "__substg1.0_0037001F", data: utf16LE("Quarterly réport")},
		{name: "__substg1.0_0C1A001F", data: utf16LE("Sénder Name")},
		{name: "__substg1.0_5D01001F", data: utf16LE("s@example.com")},
		{name: "__substg1.0_1035001F", data: utf16LE("<id@example.com>")},
		{name: "__substg1.0_10130102", data: []byte("<html><body><p>Hello <b>HTML</b> café</p></body></html>")},
		recipient(0, 1, "To Person", "to@example.com"),
		recipient(1, 2, "Cc Person", "cc@example.com"),
		recipient(2, 3, "Bcc Person", "bcc@example.com"),
	}
	x := newTestExtractor(t, DefaultLimits())
	d := extractBytes(t, x, "a.msg", "", buildCFB(nodes, nil))
	m := d.Meta
	if d.Err != nil || strings.TrimSpace(d.Text) != "Quarterly réport\n\nHello HTML café" {
		t.Errorf("%v %q", d.Err, d.Text)
	}
	if m.From != "Sénder Name <s@example.com>" || !slices.Equal(m.To, []string{"To Person <to@example.com>"}) ||
		!slices.Equal(m.Cc, []string{"Cc Person <cc@example.com>"}) || m.Extra["bcc"] != "Bcc Person <bcc@example.com>" ||
		m.Subject != "Quarterly réport" || !m.Date.Equal(sent) || m.MessageID != "<id@example.com>" {
		t.Errorf("metadata: %+v", m)
	}
}
