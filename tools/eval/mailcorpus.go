package eval

import (
	"bytes"
	"context"
	"crypto/sha1"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"html"
	"io"
	"io/fs"
	"math/rand/v2"
	"mime"
	"mime/multipart"
	"mime/quotedprintable"
	"net/mail"
	"net/textproto"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/simdex/simdex/extract"
)

// MailCorpus is the name of the generated e-mail corpus: real documents of
// a held-out source corpus carried by generated RFC 5322 / MIME messages,
// as an e-discovery review meets them (see GenerateMailCorpus).
const MailCorpus = "e-mail"

// MailLabels is the label table of a generated e-mail corpus.
const MailLabels = "labels.tsv"

// Situations of the e-mail corpus: the situation column of its label table.
const (
	// SitOriginal is the document itself, as kept on a file share.
	SitOriginal = "original"
	// SitPasted is the document pasted into a message body, between a
	// greeting and a signature (and the sender's disclaimer).
	SitPasted = "pasted"
	// SitForwarded forwards the pasted message inline, below a
	// "---------- Forwarded message ---------" header block.
	SitForwarded = "forwarded"
	// SitQuoted is a reply quoting the whole pasted message with "> "
	// prefixes, re-wrapped at 72 columns.
	SitQuoted = "quoted reply"
	// SitAttachCover is a message carrying the document as a text/plain
	// attachment: the message's own text is its short cover note.
	SitAttachCover = "attachment cover"
	// SitAttachment is that attachment, a document of its own as the
	// daemon indexes it (the same bytes as the original).
	SitAttachment = "attachment"
	// SitForwardCover is a message forwarding the pasted message as a
	// message/rfc822 attachment.
	SitForwardCover = "forwarded-as-attachment cover"
	// SitAttachedMessage is that attached message, a document of its own
	// (the same bytes as the pasted message).
	SitAttachedMessage = "attached message"
	// SitEdited is a lightly edited copy (a few words changed) pasted into
	// a message of another thread.
	SitEdited = "edited copy"
	// SitPartial is a reply quoting only part of the document.
	SitPartial = "partial quote"
	// SitUnrelated is a message of the same thread without the document:
	// it shares only greetings, signatures, disclaimers and list footers.
	SitUnrelated = "unrelated on thread"
)

// MailSituations are the situations in the order of each thread.
var MailSituations = []string{SitOriginal, SitPasted, SitForwarded, SitQuoted, SitAttachCover, SitAttachment,
	SitForwardCover, SitAttachedMessage, SitEdited, SitPartial, SitUnrelated}

// mailDocsPerThread is the number of documents each thread adds (two
// unrelated messages).
const mailDocsPerThread = 12

// mailColumns are the columns of MailLabels.
var mailColumns = []string{"file", "kind", "situation", "original", "thread", "parent", "body", "edits", "quoted", "style", "message_id", "sha1"}

// MailOptions configures GenerateMailCorpus.
type MailOptions struct {
	// Source is the directory of the source corpus (with metadata.tsv).
	Source fs.FS
	// SourceName names it: debian-copyright, spdx or licenseclassifier.
	SourceName string
	// Threads is the number of originals; each gets a thread of its own
	// (12 documents each). Fewer are used when the source has fewer.
	Threads int
	// Seed makes the corpus reproducible; the same options give the same
	// bytes.
	Seed uint64
	// MinBytes and MaxBytes bound the originals' sizes (default 2000 and
	// 20000).
	MinBytes, MaxBytes int
}

// MailCorpusInfo describes a generated e-mail corpus.
type MailCorpusInfo struct {
	// Dir is the corpus directory.
	Dir string
	// Source is the source corpus's name.
	Source string
	// Originals is the number of originals (threads).
	Originals int
	// Situations counts the documents per situation.
	Situations map[string]int
	// Messages counts the .eml files (attached messages included);
	// Documents counts every labelled document.
	Messages, Documents int
	// Encodings counts the MIME transfer encodings of text parts.
	Encodings map[string]int
}

// Title is the corpus's name in the report.
func (m *MailCorpusInfo) Title() string {
	return fmt.Sprintf("%s (generated from %s)", MailCorpus, m.Source)
}

// About describes the corpus for the report.
func (m *MailCorpusInfo) About() string {
	var parts []string
	for _, s := range MailSituations {
		parts = append(parts, fmt.Sprintf("%s %d", s, m.Situations[s]))
	}
	var enc []string
	for _, e := range []string{"quoted-printable", "base64", "7bit", "HTML only"} {
		enc = append(enc, fmt.Sprintf("%s %d", e, m.Encodings[e]))
	}
	return fmt.Sprintf("**Generated, not collected.** %d held-out originals of %d–%d KB from `%s` (one per group, evenly chosen; not used by the synthetic experiments), each carried by a generated thread of RFC 5322 / MIME messages as an e-discovery review finds them: %d documents, %d of them `.eml` files. Per situation: %s. "+
		"Messages have From/To/Cc/Date/Subject/Message-ID/In-Reply-To/References headers, fictitious people of four organisations (`example.com`, `.net`, `.org`, `.example`), bodies as multipart/alternative text and HTML, text alone or HTML alone (text parts: %s), signatures, the senders' disclaimers and, on mailing-list threads, a list footer. "+
		"simdex indexes what the daemon indexes: a message's own text (its body, as package `extract` returns it: the text/plain alternative, else the HTML converted), and each attachment as a document of its own — here a file of its own, the decoded MIME part. ssdeep and tlsh see the same extracted texts and, separately, the raw files (`.eml` with headers, HTML and transfer encoding). Labels come from the generator, not from similarity; the truth is, as everywhere, the word 5-grams of the extracted text.",
		m.Originals, 2, 20, m.Source, m.Documents, m.Messages, strings.Join(parts, ", "), strings.Join(enc, ", "))
}

// OwnText adapts package extract to Extractor like Extracted, but returns
// only a file's own text, without its children's: the body of a message
// without its attachments, which the daemon indexes as documents of their
// own (and which the e-mail corpus lists as files of their own).
func OwnText(x *extract.Extractor) Extractor {
	return ExtractFunc(func(ctx context.Context, name string, raw []byte) ([]byte, error) {
		d, err := x.Extract(ctx, extract.Object{Name: name, Reader: bytes.NewReader(raw)})
		if d == nil || (err != nil && d.Text == "") {
			return nil, fmt.Errorf("extract %s: %w", name, err)
		}
		if d.Err != nil && d.Text == "" {
			return nil, fmt.Errorf("extract %s: %w", name, d.Err)
		}
		return []byte(d.Text), nil
	})
}

// DefaultMailExtractor returns OwnText over package extract with its
// default limits.
func DefaultMailExtractor() (Extractor, error) {
	x, err := extract.New(extract.Options{Limits: extract.DefaultLimits()})
	if err != nil {
		return nil, err
	}
	return OwnText(x), nil
}

// mailSource describes how to read a source corpus: its title and group
// columns (one original per group).
var mailSource = map[string]struct{ title, group string }{
	"debian-copyright":  {"package", "source"},
	"spdx":              {"name", "family"},
	"licenseclassifier": {"license_id", "license_id"},
}

type mailOriginal struct {
	file, title string
	text        []byte
}

// mailOriginals chooses the originals: text files of the source's label
// table within the size bounds, one per group and per content, by name,
// n evenly spaced (offset by the seed).
func mailOriginals(o MailOptions) ([]mailOriginal, error) {
	src, ok := mailSource[o.SourceName]
	if !ok {
		return nil, fmt.Errorf("%w: e-mail source %q (known: debian-copyright, spdx, licenseclassifier)", ErrConfig, o.SourceName)
	}
	rows, err := readTSV(o.Source, "metadata.tsv", nil)
	if err != nil {
		return nil, fmt.Errorf("e-mail originals from %s: %w", o.SourceName, err)
	}
	slices.SortFunc(rows, func(a, b map[string]string) int { return strings.Compare(a["file"], b["file"]) })
	var cands []mailOriginal
	groups, texts := map[string]bool{}, map[string]bool{}
	for _, r := range rows {
		g := r[src.group]
		if g != "" && groups[g] {
			continue
		}
		b, err := fs.ReadFile(o.Source, r["file"])
		if err != nil {
			return nil, fmt.Errorf("e-mail originals from %s: %w", o.SourceName, err)
		}
		h := string(sha1Sum(b))
		if len(b) < o.MinBytes || len(b) > o.MaxBytes || !utf8.Valid(b) || slices.Contains(b, 0) || texts[h] {
			continue
		}
		groups[g], texts[h] = true, true
		title := r[src.title]
		if title == "" {
			title = path.Base(r["file"])
		}
		cands = append(cands, mailOriginal{file: r["file"], title: title, text: b})
	}
	if len(cands) == 0 {
		return nil, fmt.Errorf("e-mail originals from %s: no text file of %d–%d bytes", o.SourceName, o.MinBytes, o.MaxBytes)
	}
	n := min(o.Threads, len(cands))
	step := len(cands) / n
	off := int(o.Seed % uint64(step))
	out := make([]mailOriginal, n)
	for i := range out {
		out[i] = cands[(off+i*len(cands)/n)%len(cands)]
	}
	return out, nil
}

func sha1Sum(b []byte) []byte {
	h := sha1.Sum(b)
	return []byte(hex.EncodeToString(h[:]))
}

// GenerateMailCorpus writes the e-mail corpus into dir (created; files of
// an earlier corpus there are replaced): for each original of the source,
// the original as a file, and a thread of messages carrying it in every
// situation of MailSituations; and the label table MailLabels with a row
// per document (file, kind, situation, original, thread, parent, body,
// edits, quoted, style, message_id, sha1). The same options write the same bytes.
func GenerateMailCorpus(dir string, o MailOptions) (*MailCorpusInfo, error) {
	if o.MinBytes == 0 {
		o.MinBytes = 2000
	}
	if o.MaxBytes == 0 {
		o.MaxBytes = 20000
	}
	if o.Threads < 1 || o.Source == nil || o.MinBytes > o.MaxBytes {
		return nil, fmt.Errorf("%w: e-mail corpus: %d threads, source %v, sizes %d–%d", ErrConfig, o.Threads, o.Source != nil, o.MinBytes, o.MaxBytes)
	}
	origs, err := mailOriginals(o)
	if err != nil {
		return nil, fmt.Errorf("generate e-mail corpus: %w", err)
	}
	if err := os.RemoveAll(dir); err != nil {
		return nil, fmt.Errorf("generate e-mail corpus: %w", err)
	}
	info := &MailCorpusInfo{Dir: dir, Source: o.SourceName, Originals: len(origs), Situations: map[string]int{}, Encodings: map[string]int{}}
	var table bytes.Buffer
	table.WriteString(strings.Join(mailColumns, "\t") + "\n")
	for i, orig := range origs {
		t := newMailThread(o.Seed, i, orig)
		docs, err := t.generate()
		if err != nil {
			return nil, fmt.Errorf("generate e-mail corpus: thread %s: %w", t.id, err)
		}
		for _, d := range docs {
			p := filepath.Join(dir, filepath.FromSlash(d.row["file"]))
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				return nil, fmt.Errorf("generate e-mail corpus: %w", err)
			}
			if err := os.WriteFile(p, d.data, 0o644); err != nil {
				return nil, fmt.Errorf("generate e-mail corpus: %w", err)
			}
			d.row["sha1"] = string(sha1Sum(d.data))
			cells := make([]string, len(mailColumns))
			for k, c := range mailColumns {
				cells[k] = strings.NewReplacer("\t", " ", "\n", " ").Replace(d.row[c])
			}
			table.WriteString(strings.Join(cells, "\t") + "\n")
			info.Situations[d.row["situation"]]++
			info.Documents++
			if strings.HasSuffix(d.row["file"], ".eml") {
				info.Messages++
			}
		}
		for k, v := range t.encodings {
			info.Encodings[k] += v
		}
	}
	if err := os.WriteFile(filepath.Join(dir, MailLabels), table.Bytes(), 0o644); err != nil {
		return nil, fmt.Errorf("generate e-mail corpus: %w", err)
	}
	readme := fmt.Sprintf("# %s\n\nGenerated by simdex's eval package (GenerateMailCorpus, seed %d); do not edit. %s\n", info.Title(), o.Seed, info.About())
	if err := os.WriteFile(filepath.Join(dir, "README.md"), []byte(readme), 0o644); err != nil {
		return nil, fmt.Errorf("generate e-mail corpus: %w", err)
	}
	return info, nil
}

// Fictitious organisations and people of the generated messages (reserved
// example domains only).
type mailOrg struct {
	name, domain, disclaimer, phone string
	zone                            *time.Location
}

var mailOrgs = []*mailOrg{
	{name: "Example Corp", domain: "example.com", disclaimer: boilerplate, phone: "+1 555 01", zone: time.FixedZone("", -5*3600)},
	{name: "Northwind Legal LLP", domain: "northwind.example.net", phone: "+44 20 7946 0", zone: time.FixedZone("", 0),
		disclaimer: "PRIVILEGED & CONFIDENTIAL - ATTORNEY-CLIENT COMMUNICATION / ATTORNEY WORK PRODUCT.\nThis e-mail may contain legally privileged information. If you are not the intended\nrecipient, any review, dissemination or copying is strictly prohibited. Northwind\nLegal LLP is a limited liability partnership registered in England and Wales."},
	{name: "Contoso Open Source Office", domain: "contoso.example.org", phone: "+1 555 02", zone: time.FixedZone("", -8*3600)},
	{name: "Fabrikam GmbH", domain: "fabrikam.example", phone: "+49 30 555 1", zone: time.FixedZone("", 3600),
		disclaimer: "Fabrikam GmbH · Sitz der Gesellschaft: Berlin · Amtsgericht Charlottenburg HRB 000000\nGeschäftsführung: Dr. Anna Beispiel, Jörg Muster\nDiese E-Mail enthält vertrauliche Informationen. Wenn Sie nicht der richtige Adressat\nsind, informieren Sie bitte sofort den Absender und vernichten Sie diese E-Mail."},
}

var (
	mailFirst = []string{"Alice", "Bruno", "Chloé", "Dmitri", "Emma", "François", "Grace", "Hiroshi", "Ingrid", "José",
		"Karin", "Liam", "Mónica", "Nadia", "Oskar", "Priya", "Quentin", "Rosa", "Søren", "Tomás", "Uma", "Viktor", "Wen", "Zoë"}
	mailLast = []string{"Andersen", "Bauer", "Castillo", "Dubois", "Evans", "Fischer", "García", "Hughes", "Ivanova", "Jensen",
		"Kowalski", "Larsen", "Müller", "Nakamura", "O'Brien", "Petrova", "Rossi", "Schmidt", "Tanaka", "Weber"}
	mailRoles = []string{"Senior Counsel", "Paralegal", "Open Source Program Manager", "Compliance Analyst",
		"Software Engineer", "Release Manager", "Associate", "Procurement Lead", "Legal Operations"}
	mailSubjects = []string{"Licence terms for %s", "%s – copyright notice for the audit", "Open-source review: %s",
		"Third-party notices (%s)", "Question about the %s licence", "%s copyright file"}
	mailIntros = []string{
		"As discussed on the call, here is the copyright notice of %s. Could you check whether the terms below work for our distribution?",
		"Below is the licence text that ships with %s, copied from the package. Please review it before Friday.",
		"Pasting the %s notice here so that everyone has it in one place:",
		"For the audit file: the complete copyright statement of %s follows.",
	}
	mailNotes = []string{"FYI, see below.", "Forwarding for your records.", "Please see the notice below; legal asked for it.",
		"Adding you to this one. The text is below.", "FYI – the %s terms as we received them."}
	mailReplies = []string{"Thanks, this is helpful. A few remarks below.", "I went through it; see my comments inline.",
		"Thanks for sending. I think we are fine, but see below.", "Looks familiar. Quoting it for the record."}
	mailPartials = []string{"Regarding this part of the %s notice:", "The relevant section is this one:",
		"I only have a question about the following passage:", "This is the part that matters for us:"}
	mailAfter = []string{"Does this apply to the binaries we ship as well?", "I think this needs a closer look by outside counsel.",
		"Can we confirm that we comply with this?", "We should record this in the inventory."}
	mailCovers = []string{"Please find attached the copyright file of %s.", "Attached is the %s notice you asked for.",
		"The %s licence file is attached for the audit folder.", "See the attached notice (%s)."}
	mailFwdCovers = []string{"Forwarding the earlier message as an attachment, for the file.",
		"I attach the original message about %s so that the headers are preserved.",
		"Original message attached (%s)."}
	mailClosings   = []string{"Thanks,", "Best regards,", "Kind regards,", "Cheers,", "Many thanks,"}
	mailListFooter = "_______________________________________________\nlegal-review mailing list\nlegal-review@lists.example.org\nhttps://lists.example.org/mailman/listinfo/legal-review"

	chatterTemplates = []string{
		"Can we {verb} the {noun} before {day}?", "I have {verbed} the {noun} and left a few comments.",
		"{name} from {dept} will join the call on {day}.", "The {noun} is still pending with {dept}.",
		"Please keep {dept} in copy for the {noun}.", "I moved our meeting to {day} at {time}.",
		"Let me know if the {noun} needs another round.", "Thanks, that works for me.",
		"We should close the {noun} by the end of {month}.", "Sorry for the delay, I was out of office until {day}.",
		"Who owns the {noun} on the {dept} side?", "Quick reminder about the {noun}.",
		"Could {dept} {verb} the {noun} this week?", "{name} has {verbed} the {noun}; {dept} still needs to {verb} it.",
	}
	// chatterWords fill the placeholders of chatterTemplates; {verbed} is
	// a verb made past, {name} and any other a first name.
	chatterWords = map[string][]string{
		"verb": {"review", "sign", "update", "circulate", "approve", "check", "finalise", "discuss", "archive"},
		"noun": {"draft", "contract", "budget", "release notes", "inventory", "audit report", "vendor list", "export",
			"schedule", "distribution plan", "compliance checklist", "statement of work", "invoice", "board memo", "slide deck"},
		"day":   {"Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "tomorrow", "next week", "the 15th"},
		"dept":  {"procurement", "engineering", "the product team", "finance", "the open-source office", "security", "HR"},
		"month": {"March", "April", "May", "June", "the quarter", "the month"},
		"time":  {"9:30", "11:00", "14:00", "16:30"},
	}
	editWords = []string{"company", "software", "licensee", "product", "program", "recipient", "material", "author",
		"project", "package", "notice", "terms", "vendor", "customer", "distributor"}
)

type mailPerson struct {
	name, addr, role string
	org              *mailOrg
}

func (p mailPerson) address() string { return (&mail.Address{Name: p.name, Address: p.addr}).String() }

func (p mailPerson) first() string { return strings.Fields(p.name)[0] }

// mailDoc is one generated file and its label row.
type mailDoc struct {
	data []byte
	row  map[string]string
}

// mailThread generates the documents of one original.
type mailThread struct {
	id        string
	r         *rand.Rand
	seed      uint64
	orig      mailOriginal
	list      bool
	date      time.Time
	n         int // messages so far, for file names
	encodings map[string]int
}

func newMailThread(seed uint64, i int, orig mailOriginal) *mailThread {
	return &mailThread{
		id:        fmt.Sprintf("t%03d", i+1),
		r:         rand.New(rand.NewPCG(seed, uint64(i)+0x6d61696c)),
		seed:      seed,
		orig:      orig,
		list:      i%3 == 1,
		date:      time.Date(2023, 3, 1, 8, 0, 0, 0, time.UTC).Add(time.Duration(i) * 26 * time.Hour),
		encodings: map[string]int{},
	}
}

func (t *mailThread) pick(list []string) string { return list[t.r.IntN(len(list))] }

func (t *mailThread) person(org *mailOrg) mailPerson {
	first, last := t.pick(mailFirst), t.pick(mailLast)
	local := strings.ToLower(asciiOnly(first) + "." + asciiOnly(last))
	return mailPerson{name: first + " " + last, addr: local + "@" + org.domain, role: t.pick(mailRoles), org: org}
}

// asciiOnly drops accents (of the names used) and other non-letters.
func asciiOnly(s string) string {
	r := strings.NewReplacer("é", "e", "ç", "c", "ó", "o", "ø", "o", "á", "a", "ë", "e", "í", "i", "ü", "u", "'", "")
	return r.Replace(s)
}

// people returns n people of at least two organisations.
func (t *mailThread) people(n int) []mailPerson {
	a := t.r.IntN(len(mailOrgs))
	b := (a + 1 + t.r.IntN(len(mailOrgs)-1)) % len(mailOrgs)
	out := make([]mailPerson, n)
	seen := map[string]bool{}
	for i := range out {
		org := mailOrgs[a]
		if i%2 == 1 {
			org = mailOrgs[b]
		}
		for {
			out[i] = t.person(org)
			if !seen[out[i].addr] {
				break
			}
		}
		seen[out[i].addr] = true
	}
	return out
}

func (t *mailThread) signature(p mailPerson) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s\n%s\n\n-- \n%s\n%s, %s\n%s%02d | %s", t.pick(mailClosings), p.first(), p.name, p.role, p.org.name,
		p.org.phone, t.r.IntN(100), p.addr)
	if p.org.disclaimer != "" {
		b.WriteString("\n\n" + p.org.disclaimer)
	}
	if t.list {
		b.WriteString("\n" + mailListFooter)
	}
	return b.String()
}

func (t *mailThread) greeting(to mailPerson) string {
	return fmt.Sprintf(t.pick([]string{"Hi %s,", "Dear %s,", "Hello %s,", "%s,"}), to.first())
}

func (t *mailThread) chatter() string {
	n := 2 + t.r.IntN(4)
	s := make([]string, n)
	for i := range s {
		line := t.pick(chatterTemplates)
		for {
			a := strings.IndexByte(line, '{')
			if a < 0 {
				break
			}
			b := a + strings.IndexByte(line[a:], '}')
			name := line[a+1 : b]
			words, ok := chatterWords[strings.TrimSuffix(name, "ed")]
			if !ok {
				words = mailFirst
			}
			w := t.pick(words)
			if name == "verbed" {
				w = strings.TrimSuffix(w, "e") + "ed"
			}
			line = line[:a] + w + line[b+1:]
		}
		s[i] = line
	}
	return strings.Join(s, " ")
}

// rewrap re-fills the paragraphs of text at width columns, prefixing every
// line with prefix ("> " for a quote).
func rewrap(text string, width int, prefix string) string {
	var out []string
	for _, para := range strings.Split(strings.ReplaceAll(text, "\r\n", "\n"), "\n\n") {
		words := strings.Fields(para)
		if len(words) == 0 {
			continue
		}
		if len(out) > 0 {
			out = append(out, strings.TrimRight(prefix, " "))
		}
		line := ""
		for _, w := range words {
			if line != "" && len(prefix)+utf8.RuneCountInString(line)+1+utf8.RuneCountInString(w) > width {
				out = append(out, prefix+line)
				line = ""
			}
			if line != "" {
				line += " "
			}
			line += w
		}
		out = append(out, prefix+line)
	}
	return strings.Join(out, "\n")
}

var editableWord = regexp.MustCompile(`[A-Za-z]{4,}`)

// edit changes n random words of text (of four letters or more) to other
// words.
func (t *mailThread) edit(text string, n int) string {
	locs := editableWord.FindAllStringIndex(text, -1)
	if len(locs) == 0 {
		return text
	}
	chosen := map[int]bool{}
	for len(chosen) < min(n, len(locs)) {
		chosen[t.r.IntN(len(locs))] = true
	}
	var b strings.Builder
	last := 0
	for k, l := range locs {
		if !chosen[k] {
			continue
		}
		b.WriteString(text[last:l[0]])
		w := t.pick(editWords)
		for strings.EqualFold(w, text[l[0]:l[1]]) {
			w = t.pick(editWords)
		}
		b.WriteString(w)
		last = l[1]
	}
	b.WriteString(text[last:])
	return b.String()
}

// excerpt returns a contiguous run of whole lines of text holding about
// share of its bytes.
func (t *mailThread) excerpt(text string, share float64) string {
	lines := strings.SplitAfter(text, "\n")
	want := int(share * float64(len(text)))
	start := t.r.IntN(max(1, len(lines)/2))
	n, end := 0, start
	for end < len(lines) && n < want {
		n += len(lines[end])
		end++
	}
	for start > 0 && n < want {
		start--
		n += len(lines[start])
	}
	return strings.Trim(strings.Join(lines[start:end], ""), "\n")
}

// mailMsg is one message to render.
type mailMsg struct {
	from      mailPerson
	to, cc    []mailPerson
	date      time.Time
	subject   string
	id        string
	inReplyTo string
	refs      []string
	body      mailEntity
	// form is the body's form: multipart/alternative, text/plain or
	// text/html.
	form string
}

// mailEntity is a MIME entity: a leaf with an encoded body, or a
// multipart with children.
type mailEntity struct {
	header   textproto.MIMEHeader
	body     []byte
	children []mailEntity
}

func (e mailEntity) writeBody(w io.Writer) error {
	if e.children == nil {
		_, err := w.Write(e.body)
		return err
	}
	_, params, err := mime.ParseMediaType(e.header.Get("Content-Type"))
	if err != nil {
		return err
	}
	mw := multipart.NewWriter(w)
	if err := mw.SetBoundary(params["boundary"]); err != nil {
		return err
	}
	for _, c := range e.children {
		pw, err := mw.CreatePart(c.header)
		if err != nil {
			return err
		}
		if err := c.writeBody(pw); err != nil {
			return err
		}
	}
	return mw.Close()
}

func (t *mailThread) boundary() string {
	return fmt.Sprintf("%016x%08x", t.r.Uint64(), t.r.Uint32())
}

func (t *mailThread) multipart(kind string, children ...mailEntity) mailEntity {
	h := textproto.MIMEHeader{}
	h.Set("Content-Type", mime.FormatMediaType("multipart/"+kind, map[string]string{"boundary": t.boundary()}))
	return mailEntity{header: h, children: children}
}

func crlf(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "\r\n", "\n"), "\n", "\r\n")
}

// encode returns data in a transfer encoding, lines ending in CRLF.
func encode(data []byte, enc string) ([]byte, error) {
	var b bytes.Buffer
	switch enc {
	case "base64":
		s := base64.StdEncoding.EncodeToString(data)
		for len(s) > 76 {
			b.WriteString(s[:76] + "\r\n")
			s = s[76:]
		}
		b.WriteString(s + "\r\n")
	case "quoted-printable":
		w := quotedprintable.NewWriter(&b)
		if _, err := w.Write(data); err != nil {
			return nil, err
		}
		if err := w.Close(); err != nil {
			return nil, err
		}
		b.WriteString("\r\n")
	default:
		b.WriteString(crlf(string(data)))
		if !bytes.HasSuffix(b.Bytes(), []byte("\r\n")) {
			b.WriteString("\r\n")
		}
	}
	return b.Bytes(), nil
}

// textEncoding picks a transfer encoding for a text body: mostly
// quoted-printable, some base64, 7bit for short-lined ASCII.
func (t *mailThread) textEncoding(s string) string {
	x := t.r.Float64()
	switch {
	case x < 0.2:
		return "base64"
	case x < 0.45 && isASCII7(s):
		return "7bit"
	}
	return "quoted-printable"
}

func isASCII7(s string) bool {
	for _, line := range strings.Split(s, "\n") {
		if len(line) > 900 {
			return false
		}
	}
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 || s[i] == 0 {
			return false
		}
	}
	return true
}

func (t *mailThread) leaf(ctype string, params map[string]string, data []byte, enc string, extra map[string]string) (mailEntity, error) {
	h := textproto.MIMEHeader{}
	h.Set("Content-Type", mime.FormatMediaType(ctype, params))
	if enc != "" {
		h.Set("Content-Transfer-Encoding", enc)
	}
	for k, v := range extra {
		h.Set(k, v)
	}
	body, err := encode(data, enc)
	if err != nil {
		return mailEntity{}, fmt.Errorf("encode %s: %w", ctype, err)
	}
	return mailEntity{header: h, body: body}, nil
}

// textToHTML renders a plain body as the HTML alternative a mail client
// would send: a div per line, quoted lines ("> ") in a blockquote without
// their prefix.
func textToHTML(s string) string {
	var b strings.Builder
	b.WriteString("<!DOCTYPE html>\n<html><head><meta http-equiv=\"Content-Type\" content=\"text/html; charset=utf-8\"></head>\n<body><div dir=\"ltr\">\n")
	quote := false
	for _, l := range strings.Split(s, "\n") {
		q := strings.HasPrefix(l, ">")
		switch {
		case q && !quote:
			b.WriteString("<blockquote class=\"gmail_quote\" style=\"margin:0 0 0 .8ex;border-left:1px #ccc solid;padding-left:1ex\">\n")
		case !q && quote:
			b.WriteString("</blockquote>\n")
		}
		quote = q
		if q {
			l = strings.TrimPrefix(strings.TrimPrefix(l, ">"), " ")
		}
		if l == "" {
			b.WriteString("<div><br></div>\n")
			continue
		}
		b.WriteString("<div>" + html.EscapeString(l) + "</div>\n")
	}
	if quote {
		b.WriteString("</blockquote>\n")
	}
	b.WriteString("</div></body></html>\n")
	return b.String()
}

// body returns the body entity of a plain text: multipart/alternative
// with an HTML version (most messages), text/plain alone, or HTML alone.
func (t *mailThread) body(text string) (mailEntity, string, error) {
	form := t.r.IntN(8)
	var plain, htm mailEntity
	var err error
	if form != 2 {
		enc := t.textEncoding(text)
		t.encodings[enc]++
		if plain, err = t.leaf("text/plain", map[string]string{"charset": "utf-8"}, []byte(text), enc, nil); err != nil {
			return mailEntity{}, "", err
		}
		if form < 2 {
			return plain, "text/plain", nil
		}
	}
	henc := "quoted-printable"
	if t.r.IntN(3) == 0 {
		henc = "base64"
	}
	if htm, err = t.leaf("text/html", map[string]string{"charset": "utf-8"}, []byte(textToHTML(text)), henc, nil); err != nil {
		return mailEntity{}, "", err
	}
	if form == 2 {
		t.encodings["HTML only"]++
		return htm, "text/html", nil
	}
	return t.multipart("alternative", plain, htm), "multipart/alternative", nil
}

func (t *mailThread) msgID(from mailPerson) string {
	return fmt.Sprintf("<%016x.%s@%s>", t.r.Uint64(), t.id, from.org.domain)
}

func (t *mailThread) next() time.Time {
	t.date = t.date.Add(time.Duration(5+t.r.IntN(180)) * time.Minute)
	return t.date
}

// render writes a message: RFC 5322 header, MIME header, body; CRLF.
func (m *mailMsg) render() ([]byte, error) {
	var b bytes.Buffer
	hdr := func(k, v string) {
		if v != "" {
			b.WriteString(k + ": " + v + "\r\n")
		}
	}
	list := func(ps []mailPerson) string {
		var s []string
		for _, p := range ps {
			s = append(s, p.address())
		}
		return strings.Join(s, ",\r\n ")
	}
	hdr("From", m.from.address())
	hdr("To", list(m.to))
	hdr("Cc", list(m.cc))
	hdr("Subject", mime.QEncoding.Encode("utf-8", m.subject))
	hdr("Date", m.date.In(m.from.org.zone).Format(time.RFC1123Z))
	hdr("Message-ID", m.id)
	hdr("In-Reply-To", m.inReplyTo)
	hdr("References", strings.Join(m.refs, "\r\n "))
	hdr("MIME-Version", "1.0")
	keys := make([]string, 0, len(m.body.header))
	for k := range m.body.header {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		for _, v := range m.body.header[k] {
			hdr(k, v)
		}
	}
	b.WriteString("\r\n")
	if err := m.body.writeBody(&b); err != nil {
		return nil, fmt.Errorf("render message %s: %w", m.id, err)
	}
	return b.Bytes(), nil
}

// forwardBlock is the header block a mail client writes above a message
// forwarded inline.
func forwardBlock(m *mailMsg) string {
	var to []string
	for _, p := range m.to {
		to = append(to, p.name+" <"+p.addr+">")
	}
	return fmt.Sprintf("---------- Forwarded message ---------\nFrom: %s <%s>\nDate: %s\nSubject: %s\nTo: %s\n",
		m.from.name, m.from.addr, m.date.In(m.from.org.zone).Format("Mon, 2 Jan 2006 at 15:04"), m.subject, strings.Join(to, ", "))
}

// generate writes the thread: the original, then one message (and its
// attachment) per situation.
func (t *mailThread) generate() ([]mailDoc, error) {
	text := strings.TrimRight(strings.ReplaceAll(string(t.orig.text), "\r\n", "\n"), "\n")
	title := t.orig.title
	ppl := t.people(4)
	subject := fmt.Sprintf(t.pick(mailSubjects), title)
	base := path.Base(t.orig.file)
	if !strings.HasSuffix(base, ".txt") {
		base = strings.ReplaceAll(base, ".", "-") + ".txt"
	}
	var docs []mailDoc
	add := func(file, kind, situation string, data []byte, extra map[string]string) {
		row := map[string]string{"file": file, "kind": kind, "situation": situation, "original": t.orig.file, "thread": t.id}
		for k, v := range extra {
			row[k] = v
		}
		docs = append(docs, mailDoc{data: data, row: row})
	}
	emit := func(situation string, m *mailMsg, extra map[string]string) ([]byte, string, error) {
		raw, err := m.render()
		if err != nil {
			return nil, "", err
		}
		t.n++
		file := fmt.Sprintf("mail/%s-%02d-%s.eml", t.id, t.n, strings.ReplaceAll(situation, " ", "-"))
		if extra == nil {
			extra = map[string]string{}
		}
		extra["message_id"] = m.id
		extra["body"] = m.form
		add(file, "message", situation, raw, extra)
		return raw, file, nil
	}
	newMsg := func(from mailPerson, to []mailPerson, cc []mailPerson, subj string, parent *mailMsg, text string) (*mailMsg, error) {
		m := &mailMsg{from: from, to: to, cc: cc, date: t.next(), subject: subj, id: t.msgID(from)}
		if parent != nil {
			m.inReplyTo = parent.id
			m.refs = append(slices.Clone(parent.refs), parent.id)
		}
		var err error
		m.body, m.form, err = t.body(text)
		return m, err
	}

	add("originals/"+t.id+"-"+base, "document", SitOriginal, t.orig.text, nil)

	// Pasted into a body.
	sender, rcpt := ppl[0], ppl[1]
	pastedText := t.greeting(rcpt) + "\n\n" + fmt.Sprintf(t.pick(mailIntros), title) + "\n\n" + text + "\n\n" + t.signature(sender)
	pasted, err := newMsg(sender, []mailPerson{rcpt}, []mailPerson{ppl[2]}, subject, nil, pastedText)
	if err != nil {
		return nil, err
	}
	pastedRaw, _, err := emit(SitPasted, pasted, nil)
	if err != nil {
		return nil, err
	}

	// Forwarded inline.
	fwdFrom := ppl[1]
	note := t.pick(mailNotes)
	if strings.Contains(note, "%s") {
		note = fmt.Sprintf(note, title)
	}
	fwdText := t.greeting(ppl[3]) + "\n\n" + note + "\n\n" + t.signature(fwdFrom) + "\n\n" + forwardBlock(pasted) + "\n\n" + pastedText
	fwd, err := newMsg(fwdFrom, []mailPerson{ppl[3]}, nil, "Fwd: "+subject, nil, fwdText)
	if err != nil {
		return nil, err
	}
	if _, _, err := emit(SitForwarded, fwd, map[string]string{"style": "inline forward"}); err != nil {
		return nil, err
	}

	// A reply quoting the whole message, re-wrapped at 72 columns.
	replier := ppl[2]
	quoteHead := fmt.Sprintf("On %s, %s <%s> wrote:", pasted.date.In(sender.org.zone).Format("Mon, 2 Jan 2006 at 15:04"), sender.name, sender.addr)
	qText := t.greeting(sender) + "\n\n" + t.pick(mailReplies) + "\n\n" + t.signature(replier) + "\n\n" + quoteHead + "\n" + rewrap(pastedText, 72, "> ")
	quoted, err := newMsg(replier, []mailPerson{sender}, []mailPerson{rcpt}, "Re: "+subject, pasted, qText)
	if err != nil {
		return nil, err
	}
	if _, _, err := emit(SitQuoted, quoted, map[string]string{"style": "> quoted, re-wrapped at 72"}); err != nil {
		return nil, err
	}

	// Attached as a text/plain file.
	cover := fmt.Sprintf(t.pick(mailCovers), title)
	coverText := t.greeting(rcpt) + "\n\n" + cover + "\n\n" + t.signature(sender)
	coverBody, coverForm, err := t.body(coverText)
	if err != nil {
		return nil, err
	}
	att, err := t.leaf("text/plain", map[string]string{"charset": "utf-8", "name": base}, t.orig.text, "base64",
		map[string]string{"Content-Disposition": mime.FormatMediaType("attachment", map[string]string{"filename": base})})
	if err != nil {
		return nil, err
	}
	attMsg := &mailMsg{from: sender, to: []mailPerson{rcpt}, date: t.next(), subject: "Re: " + subject, id: t.msgID(sender),
		inReplyTo: pasted.id, refs: []string{pasted.id}, body: t.multipart("mixed", coverBody, att), form: coverForm}
	_, attFile, err := emit(SitAttachCover, attMsg, nil)
	if err != nil {
		return nil, err
	}
	add(attFile+".parts/"+base, "attachment", SitAttachment, t.orig.text, map[string]string{"parent": attFile, "style": "text/plain, base64"})

	// The pasted message forwarded as a message/rfc822 attachment.
	fc := t.pick(mailFwdCovers)
	if strings.Contains(fc, "%s") {
		fc = fmt.Sprintf(fc, title)
	}
	fcText := t.greeting(ppl[3]) + "\n\n" + fc + "\n\n" + t.signature(rcpt)
	fcBody, fcForm, err := t.body(fcText)
	if err != nil {
		return nil, err
	}
	emlName := "forwarded-message.eml"
	inner, err := t.leaf("message/rfc822", nil, pastedRaw, "",
		map[string]string{"Content-Disposition": mime.FormatMediaType("attachment", map[string]string{"filename": emlName})})
	if err != nil {
		return nil, err
	}
	inner.body = pastedRaw
	fcMsg := &mailMsg{from: rcpt, to: []mailPerson{ppl[3]}, date: t.next(), subject: "Fwd: " + subject, id: t.msgID(rcpt), body: t.multipart("mixed", fcBody, inner), form: fcForm}
	_, fcFile, err := emit(SitForwardCover, fcMsg, nil)
	if err != nil {
		return nil, err
	}
	add(fcFile+".parts/"+emlName, "attachment", SitAttachedMessage, pastedRaw, map[string]string{"parent": fcFile, "style": "message/rfc822", "message_id": pasted.id, "body": pasted.form})

	// A lightly edited copy pasted into another thread.
	other := t.people(2)
	nEdits := 3 + t.r.IntN(6)
	edText := t.greeting(other[1]) + "\n\n" + fmt.Sprintf(t.pick(mailIntros), title) + "\n\n" + t.edit(text, nEdits) + "\n\n" + t.signature(other[0])
	saved := t.list
	t.list = !t.list
	ed, err := newMsg(other[0], []mailPerson{other[1]}, nil, fmt.Sprintf(t.pick(mailSubjects), title+" (rev.)"), nil, edText)
	t.list = saved
	if err != nil {
		return nil, err
	}
	if _, _, err := emit(SitEdited, ed, map[string]string{"edits": strconv.Itoa(nEdits)}); err != nil {
		return nil, err
	}
	docs[len(docs)-1].row["thread"] = t.id + "x"

	// A reply quoting part of the document.
	share := 0.3 + 0.4*t.r.Float64()
	ex := t.excerpt(text, share)
	style := "pasted excerpt"
	var pText string
	if t.r.IntN(2) == 0 {
		style = "> quoted excerpt"
		pText = t.greeting(sender) + "\n\n" + fmt.Sprintf("%s wrote:\n", sender.name) + rewrap(ex, 72, "> ") + "\n\n" + t.pick(mailAfter) + "\n\n" + t.signature(ppl[3])
	} else {
		intro := t.pick(mailPartials)
		if strings.Contains(intro, "%s") {
			intro = fmt.Sprintf(intro, title)
		}
		pText = t.greeting(sender) + "\n\n" + intro + "\n\n" + ex + "\n\n" + t.pick(mailAfter) + "\n\n" + t.signature(ppl[3])
	}
	partial, err := newMsg(ppl[3], []mailPerson{sender}, []mailPerson{rcpt, replier}, "Re: "+subject, quoted, pText)
	if err != nil {
		return nil, err
	}
	if _, _, err := emit(SitPartial, partial, map[string]string{"quoted": fmt.Sprintf("%.2f", float64(len(ex))/float64(len(text))), "style": style}); err != nil {
		return nil, err
	}

	// Unrelated messages of the thread: greetings, chatter, signatures.
	parent := partial
	for k := range 2 {
		from, to := ppl[(k+1)%4], ppl[k%4]
		m, err := newMsg(from, []mailPerson{to}, nil, "Re: "+subject, parent, t.greeting(to)+"\n\n"+t.chatter()+"\n\n"+t.signature(from))
		if err != nil {
			return nil, err
		}
		if _, _, err := emit(SitUnrelated, m, nil); err != nil {
			return nil, err
		}
		docs[len(docs)-1].row["original"] = ""
		parent = m
	}
	if len(docs) != mailDocsPerThread {
		return nil, fmt.Errorf("%d documents, want %d", len(docs), mailDocsPerThread)
	}
	return docs, nil
}

// Labelled relations of the e-mail corpus.
const (
	RelMailCopy    = "e-mailed copy"              // the document verbatim in both texts (original, pasted, forwarded, attached)
	RelMailQuoted  = "quoted with > in a reply"   // one quotes the whole document with "> "
	RelMailPartial = "part quoted in a reply"     // one quotes part of the document
	RelMailEdited  = "edited copy, other thread"  // one is a lightly edited copy
	RelMailThread  = "same thread, other content" // same thread, one text without the document (cover notes, chatter)
	RelMailOther   = "other document"             // texts carrying different originals
)

// mailRelation is the relation function of the e-mail corpus.
func mailRelation(a, b *Document) string {
	am, bm := a.Meta, b.Meta
	if am["sha1"] != "" && am["sha1"] == bm["sha1"] {
		return RelSameBytes
	}
	// carried is the original a document's own text holds: not that of a
	// cover note, whose attachment is a document of its own.
	carried := func(m map[string]string) string {
		switch m["situation"] {
		case SitAttachCover, SitForwardCover, SitUnrelated:
			return ""
		}
		return m["original"]
	}
	oa, ob := carried(am), carried(bm)
	either := func(s string) bool { return am["situation"] == s || bm["situation"] == s }
	switch {
	case oa != "" && oa == ob && either(SitEdited):
		return RelMailEdited
	case oa != "" && oa == ob && either(SitPartial):
		return RelMailPartial
	case oa != "" && oa == ob && either(SitQuoted):
		return RelMailQuoted
	case oa != "" && oa == ob:
		return RelMailCopy
	case am["thread"] == bm["thread"]:
		return RelMailThread
	case oa != "" && ob != "":
		return RelMailOther
	}
	return ""
}

// errMailSource reports a missing source corpus for the e-mail corpus.
var errMailSource = errors.New("e-mail corpus source")

// generateMail generates the e-mail corpus of cfg into work and loads it.
func generateMail(ctx context.Context, cfg Config, work string) (*Corpus, error) {
	src, err := openDir(filepath.Join(cfg.Corpora, cfg.MailSource))
	if err != nil {
		return nil, fmt.Errorf("%w %s: %w", errMailSource, cfg.MailSource, err)
	}
	dir := filepath.Join(work, "generated-"+MailCorpus)
	info, err := GenerateMailCorpus(dir, MailOptions{Source: src, SourceName: cfg.MailSource, Threads: cfg.MailThreads, Seed: cfg.Seed})
	if err != nil {
		return nil, err
	}
	c, err := LoadCorpus(ctx, os.DirFS(dir), MailCorpus, cfg.MailExtractor, cfg.MaxDocs)
	if err != nil {
		return nil, err
	}
	c.Title, c.About = info.Title(), info.About()
	return c, nil
}
