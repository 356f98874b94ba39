package mailthread

import (
	"strings"
	"unicode/utf8"
)

// headerWindow is how many lines a header block or an attribution may
// span, its first line included.
const headerWindow = 16

// maxAttributionLines is how many lines an attribution may be wrapped on.
const maxAttributionLines = 3

// maxAttributionLen bounds an attribution's length in bytes.
const maxAttributionLen = 400

// header roles of the fields of an Outlook header block.
const (
	roleFrom = iota + 1
	roleDate
	roleTo
	roleSubject
	roleCc
)

// headerFields maps a header block's field names, lower-cased, in the
// languages Outlook and webmail clients write them, to their role.
var headerFields = map[string]int{
	"from": roleFrom, "de": roleFrom, "von": roleFrom, "da": roleFrom, "van": roleFrom,
	"från": roleFrom, "fra": roleFrom, "od": roleFrom, "от": roleFrom, "发件人": roleFrom,
	"寄件者": roleFrom, "lähettäjä": roleFrom, "kimden": roleFrom, "差出人": roleFrom,
	"sent": roleDate, "date": roleDate, "gesendet": roleDate, "datum": roleDate, "envoyé": roleDate,
	"enviado": roleDate, "enviada": roleDate, "fecha": roleDate, "inviato": roleDate, "data": roleDate,
	"verzonden": roleDate, "skickat": roleDate, "sendt": roleDate, "wysłano": roleDate,
	"отправлено": roleDate, "发送时间": roleDate, "日期": roleDate, "lähetetty": roleDate,
	"tarih": roleDate, "送信日時": roleDate, "sent at": roleDate,
	"to": roleTo, "an": roleTo, "à": roleTo, "para": roleTo, "a": roleTo, "aan": roleTo,
	"till": roleTo, "til": roleTo, "do": roleTo, "кому": roleTo, "收件人": roleTo,
	"vastaanottaja": roleTo, "kime": roleTo, "宛先": roleTo,
	"cc": roleCc, "kopie": roleCc, "copie": roleCc, "kopia": roleCc, "копия": roleCc, "抄送": roleCc,
	"subject": roleSubject, "betreff": roleSubject, "objet": roleSubject, "asunto": roleSubject,
	"oggetto": roleSubject, "onderwerp": roleSubject, "ämne": roleSubject, "emne": roleSubject,
	"temat": roleSubject, "тема": roleSubject, "主题": roleSubject, "主旨": roleSubject,
	"aihe": roleSubject, "konu": roleSubject, "assunto": roleSubject, "件名": roleSubject,
}

// separators are the lines, lower-cased and without their dashes, that
// introduce an earlier message, with the kind of part they open.
var separators = map[string]Kind{
	"original message":           Quoted,
	"ursprüngliche nachricht":    Quoted,
	"message d'origine":          Quoted,
	"mensaje original":           Quoted,
	"messaggio originale":        Quoted,
	"oorspronkelijk bericht":     Quoted,
	"originalmeddelande":         Quoted,
	"oprindelig meddelelse":      Quoted,
	"opprinnelig melding":        Quoted,
	"oryginalna wiadomość":       Quoted,
	"исходное сообщение":         Quoted,
	"mensagem original":          Quoted,
	"alkuperäinen viesti":        Quoted,
	"forwarded message":          Forwarded,
	"begin forwarded message:":   Forwarded,
	"weitergeleitete nachricht":  Forwarded,
	"message transféré":          Forwarded,
	"mensaje reenviado":          Forwarded,
	"messaggio inoltrato":        Forwarded,
	"doorgestuurd bericht":       Forwarded,
	"mensagem encaminhada":       Forwarded,
	"vidarebefordrat meddelande": Forwarded,
	"пересылаемое сообщение":     Forwarded,
	"转发的邮件":                      Forwarded,
}

// maybeBoundary is a cheap test of whether s may start a header block or
// an attribution, so that most lines are not looked at further.
func maybeBoundary(s string) bool {
	s = strings.TrimSpace(s)
	if s == "" {
		return false
	}
	if strings.HasPrefix(s, "--") || strings.HasPrefix(s, "__") || strings.HasSuffix(s, ":") || strings.HasSuffix(s, "：") {
		return true
	}
	if _, ok := fieldRole(s); ok {
		return true
	}
	_, ok := attributionLead(s)
	return ok
}

// separatorKind recognises a separator line such as "-----Original
// Message-----" or "---------- Forwarded message ---------".
func separatorKind(s string) (Kind, bool) {
	t := strings.TrimSpace(s)
	if len(t) > 80 {
		return 0, false
	}
	dashed := strings.HasPrefix(t, "--") || strings.HasPrefix(t, "__")
	t = strings.ToLower(strings.Trim(t, "-_ *"))
	kind, ok := separators[t]
	if !ok {
		return 0, false
	}
	if !dashed && t != "begin forwarded message:" {
		return 0, false
	}
	return kind, true
}

// fieldRole recognises a header block field line ("From: Ann", "Von:
// Ann") and returns its role.
func fieldRole(s string) (int, bool) {
	s = strings.TrimLeft(s, " *")
	i := strings.IndexAny(s, ":：")
	if i <= 0 || i > 24 {
		return 0, false
	}
	name := strings.ToLower(strings.TrimRight(s[:i], " *"))
	role, ok := headerFields[name]
	return role, ok
}

// headerBlock recognises a header block at the start of window: a
// separator line, its fields, or an Outlook block of fields with at
// least a From, a date or To, and a Subject. It returns how many lines
// the block takes (0 when there is none) and the kind of part it opens.
func headerBlock(window []line) (int, Kind) {
	if len(window) == 0 {
		return 0, 0
	}
	marker := window[0].marker
	if kind, ok := separatorKind(window[0].text); ok {
		blank := 1
		for blank < len(window) && blank < 3 && window[blank].marker == marker && strings.TrimSpace(window[blank].text) == "" {
			blank++
		}
		if n, _ := fields(window[blank:], marker); n > 0 {
			return blank + n, kind
		}
		return 1, kind
	}
	if role, _ := fieldRole(window[0].text); role != roleFrom {
		return 0, 0
	}
	n, roles := fields(window, marker)
	if roles&(1<<roleFrom) != 0 && roles&(1<<roleSubject) != 0 && roles&(1<<roleDate|1<<roleTo) != 0 {
		return n, Quoted
	}
	return 0, 0
}

// fields counts the field lines at the start of window (with their
// wrapped continuations), up to the first blank line or other line, and
// returns the set of roles seen (a bit each).
func fields(window []line, marker int) (int, int) {
	n, roles, last := 0, 0, 0
	for i, ln := range window {
		if ln.marker != marker || strings.TrimSpace(ln.text) == "" {
			break
		}
		if role, ok := fieldRole(ln.text); ok {
			roles |= 1 << role
			n, last = i+1, role
			continue
		}
		if last == roleTo || last == roleCc {
			n = i + 1 // a wrapped recipient list
			continue
		}
		break
	}
	return n, roles
}

// attributionLeads start an attribution line, lower-cased: "On … wrote:",
// "Am … schrieb …:", "Le … a écrit :", "El … escribió:", "Il giorno … ha
// scritto:", "Op … schreef …:", "Em … escreveu:", "Den … skrev …:", "W
// dniu … pisze:", "在 … 写道：".
var attributionLeads = []string{"on ", "am ", "le ", "el ", "il ", "op ", "em ", "den ", "w dniu ", "dne ", "在", "quoting "}

// attributionVerbs end an attribution (before its final colon) or come
// before the writer's name in it, lower-cased.
var attributionVerbs = []string{
	"wrote", "writes", "said", "schrieb", "a écrit", "escribió", "ha scritto", "schreef", "escreveu",
	"skrev", "pisze", "napisał", "napisała", "написал", "написала", "написал(а)", "写道", "kirjoitti",
	"napsal", "yazdı",
}

func attributionLead(s string) (string, bool) {
	l := strings.ToLower(s)
	for _, lead := range attributionLeads {
		if strings.HasPrefix(l, lead) {
			return lead, true
		}
	}
	return "", false
}

// attribution recognises an attribution at the start of window, on up to
// maxAttributionLines lines, and returns how many lines it takes, or 0.
// A line that ends in a verb and a colon but does not start like an
// attribution ("Ann Smith wrote:") counts only when quoted text follows
// it at once.
func attribution(window []line) int {
	if len(window) == 0 {
		return 0
	}
	marker := window[0].marker
	_, led := attributionLead(strings.TrimSpace(window[0].text))
	joined := ""
	for i := 0; i < len(window) && i < maxAttributionLines; i++ {
		ln := window[i]
		if ln.marker != marker || strings.TrimSpace(ln.text) == "" {
			return 0
		}
		joined = strings.TrimSpace(joined + " " + strings.TrimSpace(ln.text))
		if len(joined) > maxAttributionLen {
			return 0
		}
		if !endsAttribution(joined) {
			if !led {
				return 0
			}
			continue
		}
		if led || deeper(window[i+1:], marker) {
			return i + 1
		}
		return 0
	}
	return 0
}

// endsAttribution reports whether s ends with a colon and holds an
// attribution verb in its last words.
func endsAttribution(s string) bool {
	t, ok := strings.CutSuffix(s, ":")
	if !ok {
		if t, ok = strings.CutSuffix(s, "："); !ok {
			return false
		}
	}
	t = strings.ToLower(strings.TrimSpace(t))
	tail := t
	if utf8.RuneCountInString(tail) > 80 {
		tail = t[len(t)-80:]
	}
	for _, v := range attributionVerbs {
		if strings.Contains(tail, v) {
			return true
		}
	}
	return false
}

// deeper reports whether the first non-blank line of window has more
// quote markers than marker.
func deeper(window []line, marker int) bool {
	for _, ln := range window {
		if strings.TrimSpace(ln.text) == "" && ln.marker <= marker {
			continue
		}
		return ln.marker > marker
	}
	return false
}
