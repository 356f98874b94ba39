package extract

import (
	"encoding/hex"
	"strings"
	"testing"
)

// jaFragment is 200 bytes cut out of a UTF-8 Japanese text (a Debian
// manual) at byte offsets: it begins and ends inside a character. chardet
// rates it Shift JIS and Big5 with the same confidence.
var jaFragment, _ = hex.DecodeString("b3e3839ee383b3e38389e381afe38081e383abe383bce38388e381aee381b5e3828ae38292e38197e381aae38191e3828ce381b0e382a8e383a9e383bce381a7e7b582e4ba86e38197e381bee38199e380820a0a2020202064685f6d616b6520e381abe38288e381a3e381a6e4bd9ce68890e38195e3828ce3819f2072756c657320e38395e382a1e382a4e383abe381abe381a4e38184e381a6e79086e8a7a3e38199e381b9e3818de38193e381a8e381af0ac2a0c2a0c2a020e38081e38193e3828ce381afe58d")

// TestDetectCharsetIsStable guesses the same charset every time: ties
// between recognizers, which run concurrently, used to go to whichever
// finished first.
func TestDetectCharsetIsStable(t *testing.T) {
	first := detectCharset(jaFragment, false)
	for i := range 300 {
		if got := detectCharset(jaFragment, false); got != first {
			t.Fatalf("call %d: %s, first call %s", i, got, first)
		}
	}
}

// TestUTF8Fragment reads text cut inside a character at either end as
// UTF-8, and leaves other charsets to detection.
func TestUTF8Fragment(t *testing.T) {
	text, cs := decodeText(jaFragment, "")
	if cs != "utf-8" || !strings.Contains(text, "dh_make によって作成された rules ファイル") {
		t.Errorf("fragment read as %s: %q", cs, text)
	}
	if !strings.HasPrefix(text, "\uFFFDマンド") || !strings.HasSuffix(text, "これは\uFFFD") {
		t.Errorf("the cut characters are not replaced: %q", text)
	}
	for _, tc := range []struct {
		name string
		data []byte
		want bool
	}{
		{"cut at the start", []byte("\xa9t\xc3\xa9 \xc3\xa0 Paris"), true},
		{"cut at the end", []byte("\xc3\xa9t\xc3\xa9 \xe6\x9d"), true},
		{"whole", []byte("\xc3\xa9t\xc3\xa9"), false}, // valid: not a fragment
		{"latin-1 ending in a lead byte", []byte("caf\xe9"), false},
		{"latin-1", []byte("\xe9t\xe9 caf\xe9"), false},
		{"ascii between the cuts", []byte("\xa9abc\xe6"), false},
		{"invalid inside", []byte("\xa9\xc3\xa9 \xff \xc3\xa9"), false},
		{"only continuation bytes", []byte("\x80\x80\x80\x80"), false},
		{"empty", nil, false},
	} {
		if got := utf8Fragment(tc.data); got != tc.want {
			t.Errorf("%s: utf8Fragment(%q) = %v, want %v", tc.name, tc.data, got, tc.want)
		}
	}
}
