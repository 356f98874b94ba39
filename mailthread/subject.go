package mailthread

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// replyPrefixes are the reply and forward prefixes mail clients put before
// a subject, lower-cased, in English and in the localized forms Outlook,
// Thunderbird and webmail clients write: German AW/WG, Scandinavian SV/VS/VB,
// Dutch Antw/Doorst, Polish Odp/PD, French TR, Spanish RV, Portuguese
// RES/ENC, Italian R/RIF/I, Finnish VL/VS, Turkish YNT/ILT, Chinese, Greek.
var replyPrefixes = []string{
	"re", "fw", "fwd", "aw", "wg", "sv", "vs", "vb", "antw", "antwort", "doorst",
	"odp", "pd", "tr", "rv", "res", "enc", "r", "rif", "i", "vl", "ynt", "ilt",
	"fs", "回复", "答复", "回覆", "转发", "轉寄", "转寄", "απ", "σχετ", "προθ",
	"ответ", "отв", "пересл", "הועבר", "השב",
}

// maxTagLen bounds a leading [list] tag: longer bracketed text is part of
// the subject.
const maxTagLen = 64

// Subject returns subject without its leading reply and forward prefixes
// ("Re:", "Fwd:", "AW:", "Re[2]:", "RE :", any case, repeated) and list
// tags ("[USRP-users]": a bracketed word without spaces), with runs of
// white space collapsed. "Re: [list] Re: Fwd: Budget" becomes "Budget".
// Bracketed text with spaces, such as "[PATCH v2 1/3]", is kept: it tells
// messages apart.
func Subject(subject string) string {
	s := strings.Join(strings.Fields(subject), " ")
	for {
		t := strings.TrimLeftFunc(s, unicode.IsSpace)
		t = trimTag(t)
		t = trimPrefix(t)
		t = strings.TrimLeftFunc(t, unicode.IsSpace)
		if t == s {
			return s
		}
		s = t
	}
}

// trimTag removes one leading "[tag]" without spaces.
func trimTag(s string) string {
	if !strings.HasPrefix(s, "[") {
		return s
	}
	end := strings.IndexByte(s, ']')
	if end < 2 || end > maxTagLen || strings.ContainsAny(s[1:end], " \t") {
		return s
	}
	return s[end+1:]
}

// trimPrefix removes one leading reply or forward prefix with its colon.
func trimPrefix(s string) string {
	word := s
	for i, r := range s {
		if !unicode.IsLetter(r) {
			word = s[:i]
			break
		}
	}
	if word == "" || !isReplyPrefix(word) {
		return s
	}
	rest := s[len(word):]
	rest = trimCount(rest)
	rest = strings.TrimLeft(rest, " ")
	switch {
	case strings.HasPrefix(rest, ":"):
		return rest[1:]
	case strings.HasPrefix(rest, "："): // full-width colon
		return rest[len("："):]
	}
	return s
}

// trimCount removes a reply count: "[2]", "(2)", "^2" or "*2".
func trimCount(s string) string {
	if s == "" {
		return s
	}
	closing := map[byte]byte{'[': ']', '(': ')', '^': 0, '*': 0}
	c, ok := closing[s[0]]
	if !ok {
		return s
	}
	i := 1
	for i < len(s) && i < 8 && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	if i == 1 {
		return s
	}
	if c != 0 {
		if i >= len(s) || s[i] != c {
			return s
		}
		i++
	}
	return s[i:]
}

func isReplyPrefix(word string) bool {
	if utf8.RuneCountInString(word) > 8 {
		return false
	}
	w := strings.ToLower(word)
	for _, p := range replyPrefixes {
		if w == p {
			return true
		}
	}
	return false
}
