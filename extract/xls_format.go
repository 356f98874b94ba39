package extract

import (
	"math"
	"strconv"
	"strings"
	"time"
)

// builtinDateFormats are the built-in number formats of BIFF that show
// dates and times (MS-XLS 2.4.126), as an en-US Excel shows them.
var builtinDateFormats = map[uint16]string{
	14: "m/d/yyyy", 15: "d-mmm-yy", 16: "d-mmm", 17: "mmm-yy",
	18: "h:mm AM/PM", 19: "h:mm:ss AM/PM", 20: "h:mm", 21: "h:mm:ss",
	22: "m/d/yyyy h:mm", 45: "mm:ss", 46: "[h]:mm:ss", 47: "mm:ss.0",
}

// format writes a cell's number as the sheet shows it where its format is
// a date or time (built in, or a FORMAT string with date tokens), else as
// General does: integers without a decimal point, at most 15 significant
// digits. Other number formats (decimals, thousands, percent) are not
// applied: the value is written as stored.
func (bk *xlsBook) format(xf int, x float64) string {
	if xf >= 0 && xf < len(bk.xfFormat) {
		ifmt := bk.xfFormat[xf]
		layout, ok := bk.formats[ifmt]
		if !ok {
			layout = builtinDateFormats[ifmt]
		}
		if isDateFormat(layout) {
			if t, ok := xlsTime(x, bk.date1904); ok {
				return formatDate(layout, t, x)
			}
		}
	}
	return xlsNumber(x)
}

// xlsTime converts a date serial number to a time: days since 1899-12-30
// (the 1900 system, whose serial 60 is the 29 February 1900 that never
// was) or since 1904-01-01, rounded to the millisecond; false outside the
// years 1900 (1904) to 9999.
func xlsTime(x float64, date1904 bool) (time.Time, bool) {
	base := time.Date(1899, 12, 30, 0, 0, 0, 0, time.UTC)
	switch {
	case date1904:
		base = time.Date(1904, 1, 1, 0, 0, 0, 0, time.UTC)
	case x < 61:
		base = base.AddDate(0, 0, 1)
	}
	if x < 0 || x >= 2958466 || math.IsNaN(x) {
		return time.Time{}, false
	}
	days := math.Floor(x)
	ms := math.Round((x - days) * 86400e3)
	return base.AddDate(0, 0, int(days)).Add(time.Duration(ms) * time.Millisecond), true
}

// isDateFormat reports whether a number format string shows a date or a
// time: a year, month, day, hour or second token outside quoted text,
// escapes and bracketed colours or locales.
func isDateFormat(layout string) bool {
	if layout == "" || strings.EqualFold(layout, "General") {
		return false
	}
	for i := 0; i < len(layout); i++ {
		switch c := layout[i]; c {
		case '"':
			if j := strings.IndexByte(layout[i+1:], '"'); j >= 0 {
				i += j + 1
			}
		case '\\', '_', '*':
			i++
		case '[':
			j := strings.IndexByte(layout[i:], ']')
			if j < 0 {
				return false
			}
			if inner := strings.ToLower(layout[i+1 : i+j]); strings.Trim(inner, "hms") == "" && inner != "" {
				return true // elapsed time: [h], [mm], [ss]
			}
			i += j
		case 'y', 'Y', 'd', 'D', 'h', 'H', 's', 'S', 'm', 'M':
			return true
		case ';':
			return false
		}
	}
	return false
}

// formatDate writes t, the time of serial x, by the first section of an
// Excel date format.
func formatDate(layout string, t time.Time, x float64) string {
	if i := strings.IndexByte(layout, ';'); i >= 0 {
		layout = layout[:i]
	}
	toks := dateTokens(layout)
	ampm := false
	for _, tk := range toks {
		ampm = ampm || tk.kind == 'a'
	}
	var b strings.Builder
	for i, tk := range toks {
		b.WriteString(tk.render(t, x, ampm, minuteAt(toks, i)))
	}
	return b.String()
}

// dateToken is a run of one date format letter (kind, n letters) or a
// literal (kind 0).
type dateToken struct {
	kind byte
	n    int
	lit  string
}

// dateTokens splits a date format into tokens.
func dateTokens(layout string) []dateToken {
	var out []dateToken
	for i := 0; i < len(layout); i++ {
		c := layout[i]
		lc := c | 0x20
		switch {
		case c == '"':
			j := strings.IndexByte(layout[i+1:], '"')
			if j < 0 {
				j = len(layout) - i - 1
			}
			out = append(out, dateToken{lit: layout[i+1 : i+1+j]})
			i += j + 1
		case c == '\\' && i+1 < len(layout):
			out = append(out, dateToken{lit: layout[i+1 : i+2]})
			i++
		case (c == '_' || c == '*') && i+1 < len(layout):
			i++
		case c == '[':
			j := strings.IndexByte(layout[i:], ']')
			if j < 0 {
				return out
			}
			if inner := strings.ToLower(layout[i+1 : i+j]); inner != "" && strings.Trim(inner, "hms") == "" {
				out = append(out, dateToken{kind: inner[0] &^ 0x20, n: len(inner)}) // elapsed: H, M, S
			}
			i += j
		case strings.HasPrefix(strings.ToUpper(layout[i:]), "AM/PM"):
			out = append(out, dateToken{kind: 'a', n: 5})
			i += 4
		case strings.HasPrefix(strings.ToUpper(layout[i:]), "A/P"):
			out = append(out, dateToken{kind: 'a', n: 3})
			i += 2
		case lc == 'y' || lc == 'm' || lc == 'd' || lc == 'h' || lc == 's' || lc == 'e':
			n := 1
			for i+n < len(layout) && layout[i+n]|0x20 == lc {
				n++
			}
			out = append(out, dateToken{kind: lc, n: n})
			i += n - 1
		case c == '.' && i+1 < len(layout) && layout[i+1] == '0' && len(out) > 0 && out[len(out)-1].kind == 's':
			n := 1
			for i+n < len(layout) && layout[i+n] == '0' {
				n++
			}
			out = append(out, dateToken{kind: 'f', n: n - 1})
			i += n - 1
		default:
			out = append(out, dateToken{lit: layout[i : i+1]})
		}
	}
	return out
}

// minuteAt reports whether the m token at i means minutes: after an hour
// or before a second token, literals aside.
func minuteAt(toks []dateToken, i int) bool {
	for j := i - 1; j >= 0; j-- {
		if k := toks[j].kind; k != 0 {
			if k == 'h' || k == 'H' {
				return true
			}
			break
		}
	}
	for j := i + 1; j < len(toks); j++ {
		if k := toks[j].kind; k != 0 {
			return k == 's' || k == 'S'
		}
	}
	return false
}

var longDays = [...]string{"Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"}

// render writes one token of time t (serial x); ampm is set when the
// format has a 12-hour clock, minute when an m token means minutes.
func (tk dateToken) render(t time.Time, x float64, ampm, minute bool) string {
	pad := func(v, n int) string {
		s := strconv.Itoa(v)
		if n >= 2 && len(s) < 2 {
			s = "0" + s
		}
		return s
	}
	h := t.Hour()
	if ampm {
		h = (h+11)%12 + 1
	}
	switch tk.kind {
	case 0:
		return tk.lit
	case 'y', 'e':
		if tk.n <= 2 && tk.kind == 'y' {
			return pad(t.Year()%100, 2)
		}
		return strconv.Itoa(t.Year())
	case 'm':
		switch {
		case minute && tk.n <= 2:
			return pad(t.Minute(), tk.n)
		case tk.n <= 2:
			return pad(int(t.Month()), tk.n)
		case tk.n == 3:
			return t.Month().String()[:3]
		case tk.n == 5:
			return t.Month().String()[:1]
		}
		return t.Month().String()
	case 'd':
		switch {
		case tk.n <= 2:
			return pad(t.Day(), tk.n)
		case tk.n == 3:
			return longDays[t.Weekday()][:3]
		}
		return longDays[t.Weekday()]
	case 'h':
		return pad(h, tk.n)
	case 's':
		return pad(t.Second(), tk.n)
	case 'f':
		n := min(tk.n, 3)
		scale := math.Pow10(n)
		v := min(int(math.Round(float64(t.Nanosecond())/1e9*scale)), int(scale)-1)
		return "." + strconv.Itoa(v + int(scale))[1:]
	case 'a':
		am := t.Hour() < 12
		switch {
		case tk.n == 3 && am:
			return "A"
		case tk.n == 3:
			return "P"
		case am:
			return "AM"
		}
		return "PM"
	case 'H':
		return pad(int(x*24), tk.n)
	case 'M':
		return pad(int(x*1440), tk.n)
	case 'S':
		return pad(int(math.Round(x*86400)), tk.n)
	}
	return ""
}
