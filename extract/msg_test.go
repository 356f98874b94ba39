package extract

import (
	"bufio"
	"encoding/hex"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// outlookDir holds the Outlook test files of the shared corpus.
const outlookDir = "../../shared/corpora/outlook"

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
