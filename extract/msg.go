package extract

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"mime"
	"net/mail"
	"net/textproto"
	"path"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf16"
)

// MAPI property identifiers used from an Outlook message (MS-OXPROPS).
const (
	propMessageClass     = 0x001A
	propSubject          = 0x0037
	propClientSubmitTime = 0x0039
	propSentReprName     = 0x0042
	propSentReprEmail    = 0x0065
	propTransportHeaders = 0x007D
	propRecipientType    = 0x0C15
	propSenderName       = 0x0C1A
	propSenderAddrType   = 0x0C1E
	propSenderEmail      = 0x0C1F
	propDeliveryTime     = 0x0E06
	propBody             = 0x1000
	propRTFCompressed    = 0x1009
	propHTML             = 0x1013
	propMessageID        = 0x1035
	propReferences       = 0x1039
	propInReplyTo        = 0x1042
	propDisplayName      = 0x3001
	propAddrType         = 0x3002
	propEmailAddress     = 0x3003
	propAttachData       = 0x3701
	propAttachFilename   = 0x3704
	propAttachMethod     = 0x3705
	propAttachLongName   = 0x3707
	propAttachMIMETag    = 0x370E
	propSMTPAddress      = 0x39FE
	propCreationTime     = 0x3007
	propModificationTime = 0x3008
	propInternetCPID     = 0x3FDE
	propMessageCodepage  = 0x3FFD
	propSenderSMTP       = 0x5D01
)

// Sizes of the header of a __properties_version1.0 stream (MS-OXMSG 2.4).
const (
	msgTopHeader      = 32
	msgEmbeddedHeader = 24
	msgSubHeader      = 8
)

// msgObject is a message, recipient or attachment storage of an MSG file.
type msgObject struct {
	f     *cfb
	st    int
	fixed map[uint16]uint64
	cp    int
	err   error
}

func newMsgObject(f *cfb, st, header int) *msgObject {
	o := &msgObject{f: f, st: st, fixed: make(map[uint16]uint64), cp: 1252}
	b, ok, err := f.streamNamed(st, "__properties_version1.0")
	o.setErr(err)
	if ok && err == nil {
		le := binary.LittleEndian
		for i := header; i+16 <= len(b); i += 16 {
			o.fixed[le.Uint16(b[i+2:])] = le.Uint64(b[i+8:])
		}
	}
	if cp, ok := o.fixed[propMessageCodepage]; ok && codepage(int(uint32(cp))) != nil {
		o.cp = int(uint32(cp))
	} else if cp, ok := o.fixed[propInternetCPID]; ok && codepage(int(uint32(cp))) != nil {
		o.cp = int(uint32(cp))
	}
	return o
}

func (o *msgObject) setErr(err error) {
	if o.err == nil && err != nil {
		o.err = err
	}
}

// raw returns the stream of property id with type typ.
func (o *msgObject) raw(id, typ uint16) ([]byte, bool) {
	b, ok, err := o.f.streamNamed(o.st, fmt.Sprintf("__substg1.0_%04X%04X", id, typ))
	o.setErr(err)
	return b, ok && err == nil
}

// str returns a string property, Unicode (PT_UNICODE) or 8-bit (PT_STRING8
// in the message's code page).
func (o *msgObject) str(id uint16) string {
	if b, ok := o.raw(id, 0x001F); ok {
		return strings.TrimRight(utf16String(b), "\x00")
	}
	if b, ok := o.raw(id, 0x001E); ok {
		return strings.TrimRight(convert(b, codepage(o.cp)), "\x00")
	}
	return ""
}

// time returns a PT_SYSTIME property.
func (o *msgObject) time(id uint16) time.Time { return filetime(o.fixed[id]) }

func utf16String(b []byte) string {
	u := make([]uint16, len(b)/2)
	for i := range u {
		u[i] = binary.LittleEndian.Uint16(b[2*i:])
	}
	return string(utf16.Decode(u))
}

// readMSG extracts the Outlook message in storage st of f (the root, or an
// embedded message): the same metadata and text as the message would give
// as an EML (mail.go builds both), and its attachments as children.
func readMSG(p *parser, f *cfb, st int) {
	header := msgTopHeader
	if st != 0 {
		header = msgEmbeddedHeader
	}
	o := newMsgObject(f, st, header)
	if class := o.str(propMessageClass); class != "" {
		p.d.setExtra("message class", class)
	}
	h, recips := o.header()
	mailMeta(p, h)
	m := &p.d.Meta
	if m.Subject == "" {
		m.Subject = headerText(o.str(propSubject))
	}
	if m.Date.IsZero() {
		m.Date = o.sentTime()
	}
	if len(m.To) == 0 && len(m.Cc) == 0 {
		m.To, m.Cc = recips[1], recips[2]
	}
	if len(recips[3]) > 0 && m.Extra["bcc"] == "" {
		p.d.setExtra("bcc", strings.Join(recips[3], ", "))
	}
	mp := &mailParser{p: p}
	// Its text as its EML twin's: the cleaned subject first, no
	// signature or list footer.
	reviewerText(p, func() { o.body(p, mp) })
	o.attachments(p, mp)
	if mp.err != nil {
		p.fail("read body", mp.err)
	}
	if o.err != nil {
		p.fail("read message", o.err)
	}
}

// sentTime is when the message was sent, else received, else (a draft)
// last changed or created, as Outlook shows it.
func (o *msgObject) sentTime() time.Time {
	for _, id := range []uint16{propClientSubmitTime, propDeliveryTime, propModificationTime, propCreationTime} {
		if t := o.time(id); !t.IsZero() {
			return t
		}
	}
	return time.Time{}
}

// header returns the message's transport headers when it has them, else a
// header built from its properties; and its recipients by type (1 To,
// 2 Cc, 3 Bcc).
func (o *msgObject) header() (mail.Header, [4][]string) {
	recips := o.recipients()
	if th := o.str(propTransportHeaders); strings.TrimSpace(th) != "" {
		th = strings.TrimLeft(th, "\r\n")
		if msg, err := mail.ReadMessage(strings.NewReader(th + "\r\n\r\n")); err == nil && len(msg.Header) > 0 {
			return msg.Header, recips
		}
	}
	h := mail.Header{}
	set := func(k, v string) {
		if v != "" {
			h[k] = []string{v}
		}
	}
	name := o.str(propSenderName)
	if name == "" {
		name = o.str(propSentReprName)
	}
	addr := o.str(propSenderSMTP)
	if addr == "" && strings.EqualFold(o.str(propSenderAddrType), "SMTP") {
		addr = o.str(propSenderEmail)
	}
	if addr == "" {
		addr = o.str(propSentReprEmail)
	}
	set("From", formatAddress(name, addr))
	set("To", strings.Join(recips[1], ", "))
	set("Cc", strings.Join(recips[2], ", "))
	set("Bcc", strings.Join(recips[3], ", "))
	set("Subject", mime.QEncoding.Encode("utf-8", o.str(propSubject)))
	if t := o.sentTime(); !t.IsZero() {
		set("Date", t.Format(time.RFC1123Z))
	}
	set("Message-Id", o.str(propMessageID))
	set("In-Reply-To", o.str(propInReplyTo))
	set("References", o.str(propReferences))
	return h, recips
}

// formatAddress writes a name and address as a header address.
func formatAddress(name, addr string) string {
	switch {
	case addr == "" || !strings.Contains(addr, "@"):
		return mime.QEncoding.Encode("utf-8", strings.TrimSpace(name+" "+addr))
	case name == "":
		return addr
	}
	return (&mail.Address{Name: name, Address: addr}).String()
}

// recipients reads the recipient storages.
func (o *msgObject) recipients() [4][]string {
	var out [4][]string
	for _, k := range o.subStorages("__recip_version1.0_#") {
		r := newMsgObject(o.f, k, msgSubHeader)
		o.setErr(r.err)
		addr := r.str(propSMTPAddress)
		if addr == "" && strings.EqualFold(r.str(propAddrType), "SMTP") {
			addr = r.str(propEmailAddress)
		}
		typ := int(uint32(r.fixed[propRecipientType]))
		if typ < 1 || typ > 3 {
			typ = 1
		}
		if a := formatAddress(r.str(propDisplayName), addr); a != "" {
			out[typ] = append(out[typ], strings.Join(addressList(a), ", "))
		}
	}
	return out
}

// subStorages lists the storages of the message named prefix + number,
// in number order.
func (o *msgObject) subStorages(prefix string) []int {
	kids, err := o.f.children(o.st)
	o.setErr(err)
	var out []int
	for _, k := range kids {
		if e := &o.f.dir[k]; e.typ == 1 && strings.HasPrefix(e.name, prefix) {
			out = append(out, k)
		}
	}
	slices.SortFunc(out, func(a, b int) int { return strings.Compare(o.f.dir[a].name, o.f.dir[b].name) })
	return out
}

// body writes the message body as an EML's text part would be written:
// plain text, else HTML, else the compressed RTF decompressed.
func (o *msgObject) body(p *parser, mp *mailParser) {
	part := func(ct string, body []byte) {
		mp.entity(textproto.MIMEHeader{"Content-Type": {ct}}, bytes.NewReader(body), 0)
	}
	if s := o.str(propBody); s != "" {
		part("text/plain; charset=utf-8", []byte(s))
		return
	}
	if b, ok := o.raw(propHTML, 0x0102); ok && len(b) > 0 {
		part("text/html; charset="+cpCharset(o.fixed, o.cp), b)
		return
	}
	if s := o.str(propHTML); s != "" {
		part("text/html; charset=utf-8", []byte(s))
		return
	}
	b, ok := o.raw(propRTFCompressed, 0x0102)
	if !ok {
		return
	}
	rtf, err := decompressRTF(p.j, b)
	if err != nil {
		mp.setErr(err)
		return
	}
	sub := &parser{j: p.j, d: &Document{}, format: "rtf", text: textBuf{max: p.text.max}}
	parseRTF(sub, rtf)
	if sub.d.Err != nil {
		mp.setErr(sub.d.Err)
	}
	part("text/plain; charset=utf-8", sub.text.b)
}

// cpCharset names the charset of the message's HTML body.
func cpCharset(fixed map[uint16]uint64, cp int) string {
	if v, ok := fixed[propInternetCPID]; ok {
		cp = int(uint32(v))
	}
	switch cp {
	case 65001:
		return "utf-8"
	case 20127:
		return "us-ascii"
	case 28591:
		return "iso-8859-1"
	}
	return "windows-" + strconv.Itoa(cp)
}

// attachments extracts each attachment as the EML's would be (mail.go
// names it and extracts it as a child); an attached message becomes a
// child read from its storage.
func (o *msgObject) attachments(p *parser, mp *mailParser) {
	for n, k := range o.subStorages("__attach_version1.0_#") {
		if p.cancelled() {
			return
		}
		a := newMsgObject(o.f, k, msgSubHeader)
		name := a.str(propAttachLongName)
		if name == "" {
			name = a.str(propAttachFilename)
		}
		if obj := o.f.lookup(k, "__substg1.0_3701000D"); obj >= 0 && o.f.dir[obj].typ == 1 {
			if a.fixed[propAttachMethod] == attachEmbedded || o.f.lookup(obj, "__properties_version1.0") >= 0 {
				o.embedded(p, msgName(name, a.str(propDisplayName), n+1), obj)
			} else if p.admit() {
				p.failedChild(msgName(name, a.str(propDisplayName), n+1), "application/x-ole-storage", 0, nil,
					&Error{Format: "msg", Op: "read attachment", Err: fmt.Errorf("%w: OLE object attachment", ErrUnsupported)})
			}
			o.setErr(a.err)
			continue
		}
		data, ok := a.raw(propAttachData, 0x0102)
		o.setErr(a.err)
		if !ok {
			continue // attached by reference: no content in the message
		}
		ct := a.str(propAttachMIMETag)
		if _, _, err := mime.ParseMediaType(ct); err != nil || ct == "" {
			ct = "application/octet-stream"
		}
		h := textproto.MIMEHeader{"Content-Type": {ct}, "Content-Disposition": {"attachment"}}
		if name != "" {
			h.Set("Content-Disposition", mime.FormatMediaType("attachment", map[string]string{"filename": name}))
		}
		mp.entity(h, bytes.NewReader(data), 0)
	}
}

// msgName names an attached message: its file name, else its display
// name (usually the subject), with the .msg extension.
func msgName(name, display string, n int) string {
	if name == "" {
		name = display
	}
	if name == "" {
		name = "attachment-" + strconv.Itoa(n)
	}
	name = path.Base(cleanName(name))
	if path.Ext(name) == "" {
		name += ".msg"
	}
	return name
}

// embedded extracts the message in storage st as a child.
func (o *msgObject) embedded(p *parser, name string, st int) {
	if !p.admit() {
		return
	}
	storageChild(p, o.f, st, name, compoundKind{mediaMSG, "msg", func(p *parser, f *cfb) { readMSG(p, f, f.root) }})
}
