package extract

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"io"
	"maps"
	"net/mail"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf16"
	"unicode/utf8"
)

// Outlook PST and OST mailboxes. A mailbox is a container: each item
// (message, appointment, contact, task, note) of each folder is a child
// document named by its folder path and subject, and each item's
// attachments are its own children, embedded messages included. The file
// is read through an io.ReaderAt, so a mailbox spooled to disk is never
// held in memory: only the item being read is.

// Media types of Outlook containers and items.
const (
	mediaPST     = "application/vnd.ms-outlook-pst"
	mediaOutlook = "application/vnd.ms-outlook"
)

// magicPST opens every PST, OST and PAB file.
var magicPST = []byte("!BDN")

// Well-known node ids ([MS-PST] 2.4.1).
const (
	nidMessageStore = 0x21
	nidNameToID     = 0x61
	nidRootFolder   = 0x122
	nidAttachments  = 0x671
	nidRecipients   = 0x692
)

// Property ids ([MS-OXPROPS]).
const (
	pidMessageClass     = 0x001A
	pidSubject          = 0x0037
	pidSubmitTime       = 0x0039
	pidTransportHeaders = 0x007D
	pidSenderName       = 0x0C1A
	pidSenderEmail      = 0x0C1F
	pidRecipientType    = 0x0C15
	pidDeliveryTime     = 0x0E06
	pidBody             = 0x1000
	pidRTFCompressed    = 0x1009
	pidHTML             = 0x1013
	pidMessageID        = 0x1035
	pidReferences       = 0x1039
	pidInReplyTo        = 0x1042
	pidDisplayName      = 0x3001
	pidAddrType         = 0x3002
	pidEmailAddress     = 0x3003
	pidCreationTime     = 0x3007
	pidModifiedTime     = 0x3008
	pidIPMSubtree       = 0x35E0
	pidAttachData       = 0x3701
	pidAttachFilename   = 0x3704
	pidAttachMethod     = 0x3705
	pidAttachLongName   = 0x3707
	pidAttachMime       = 0x370E
	pidSMTPAddress      = 0x39FE
	pidInternetCodepage = 0x3FDE
	pidMessageCodepage  = 0x3FFD
	pidSenderSMTP       = 0x5D01
	pidRowID            = 0x67F2
	pidPSTPassword      = 0x67FF
)

// pstMaxFolderDepth bounds the folder hierarchy.
const pstMaxFolderDepth = 64

// parsePST extracts a mailbox held in memory (an attachment, or a small
// object).
func parsePST(p *parser, data []byte) { readPST(p, bytes.NewReader(data), int64(len(data))) }

// readPST extracts the mailbox r of the given size into p.
func readPST(p *parser, r io.ReaderAt, size int64) {
	f, err := openPST(p.j.ctx, r, size)
	if err != nil {
		p.fail("open", err)
		return
	}
	x := &pstReader{p: p, f: f, limit: p.j.lim.MaxObjectSize, seen: make(map[uint32]bool)}
	if f.ost {
		p.d.setExtra("content", "ost")
	}
	x.store()
	x.namedProps()
	x.folder(nidRootFolder, "", 0)
	p.d.setExtra("folders", strconv.Itoa(x.folders))
	p.d.setExtra("messages", strconv.Itoa(x.items))
}

// pstReader walks a mailbox's folders into documents.
type pstReader struct {
	p     *parser
	f     *pstFile
	limit int64
	ipm   uint32 // the IPM subtree root, whose name paths leave out
	named map[pstNamed]uint16
	seen  map[uint32]bool
	// folders and items count what was read.
	folders, items int
}

// store reads the message store: the mailbox's name, its IPM subtree and
// whether it has a password (which Outlook alone enforces: the content is
// readable, so it is extracted and flagged).
func (x *pstReader) store() {
	o, props, err := x.f.propsOf(nidMessageStore, x.limit)
	if err != nil {
		x.p.fail("read message store", err)
		return
	}
	if s := x.str(o, props, pidDisplayName, 0); s != "" {
		x.p.d.Meta.Title = s
	}
	if b, err := x.bin(o, props, pidIPMSubtree); err == nil && len(b) >= 24 {
		x.ipm = binary.LittleEndian.Uint32(b[20:])
	}
	if p, ok := props[pidPSTPassword]; ok && len(p.inline) == 4 && binary.LittleEndian.Uint32(p.inline) != 0 {
		x.p.d.setExtra("password protected", "true")
	}
}

// propsOf reads node nid as a property context.
func (f *pstFile) propsOf(nid uint32, limit int64) (*pstObject, map[uint16]pstProp, error) {
	n, err := f.node(nid)
	if err != nil {
		return nil, nil, err
	}
	o, err := f.object(n, limit)
	if err != nil {
		return nil, nil, fmt.Errorf("read node %#x: %w", nid, err)
	}
	props, err := o.props()
	if err != nil {
		return nil, nil, fmt.Errorf("read properties of node %#x: %w", nid, err)
	}
	return o, props, nil
}

// table reads node nid as a table context; ok is false when the node does
// not exist.
func (f *pstFile) table(nid uint32, limit int64) (*pstObject, bool, error) {
	n, ok, err := f.nodeIf(nid)
	if err != nil || !ok {
		return nil, ok, err
	}
	o, err := f.object(n, limit)
	if err != nil {
		return nil, true, fmt.Errorf("read table %#x: %w", nid, err)
	}
	return o, true, nil
}

// folder reads the folder nid at path: its items, then its subfolders.
func (x *pstReader) folder(nid uint32, path string, depth int) {
	p := x.p
	if p.cancelled() {
		return
	}
	if x.seen[nid] || depth > pstMaxFolderDepth {
		p.fail("read folder "+folderName(path), errPSTMalformed("folder %#x is its own ancestor or nested deeper than %d", nid, pstMaxFolderDepth))
		return
	}
	x.seen[nid] = true
	x.folders++
	if !x.contents(nid, path) {
		return
	}
	t, ok, err := x.f.table(nid&^0x1F|0x0D, x.limit)
	if err != nil {
		p.fail("read folder "+folderName(path), err)
		return
	}
	if !ok {
		return
	}
	type sub struct {
		nid  uint32
		name string
	}
	var subs []sub
	err = t.rows(func(r pstRow) error {
		id, ok := r.long(pidRowID)
		if ok && id&0x1F == 2 { // normal folders; search folders hold no items of their own
			subs = append(subs, sub{id, x.cell(r, pidDisplayName)})
		}
		return nil
	})
	if err != nil {
		p.fail("read folder "+folderName(path), err)
	}
	for _, s := range subs {
		x.folder(s.nid, x.subPath(path, s.nid, s.name), depth+1)
	}
}

// subPath is the path of the subfolder nid called name of path.
func (x *pstReader) subPath(path string, nid uint32, name string) string {
	if nid == x.ipm {
		return path
	}
	name = strings.ReplaceAll(strings.TrimSpace(name), "/", "_")
	if name == "" {
		name = fmt.Sprintf("folder %#x", nid)
	}
	if path == "" {
		return name
	}
	return path + "/" + name
}

// contents extracts the items of folder nid; false means stop.
func (x *pstReader) contents(nid uint32, path string) bool {
	p := x.p
	t, ok, err := x.f.table(nid&^0x1F|0x0E, x.limit)
	if err != nil {
		p.fail("read folder "+folderName(path), err)
		return true
	}
	if !ok {
		return true
	}
	var ids []uint32
	err = t.rows(func(r pstRow) error {
		if id, ok := r.long(pidRowID); ok {
			ids = append(ids, id)
		}
		return nil
	})
	if err != nil {
		p.fail("read folder "+folderName(path), err)
	}
	for _, id := range ids {
		if !p.admit() {
			return false
		}
		x.items++
		x.message(id, path)
	}
	return true
}

// message extracts the item nid of folder path as a child.
func (x *pstReader) message(nid uint32, path string) {
	o, props, err := x.f.propsOf(nid, x.limit)
	if err != nil {
		name := itemName(path, fmt.Sprintf("item %#x", nid))
		x.p.failedChild(name, mediaOutlook, 0, nil, &Error{Format: "pst", Op: "read item in " + folderName(path), Err: x.p.j.classify(err)})
		return
	}
	c := x.p.itemChild(itemName(path, x.subject(o, props)))
	defer c.finishItem()
	c.d.setExtra(ExtraFolder, folderName(path))
	x.item(c, o, props)
}

// folderName names the folder path for reviewers.
func folderName(path string) string {
	if path == "" {
		return "/"
	}
	return path
}

// itemName is the child name of an item: folder path and subject.
func itemName(path, subject string) string {
	subject = strings.ReplaceAll(subject, "/", "_")
	if subject == "" {
		subject = "(no subject)"
	}
	if len(subject) > 120 {
		subject = strings.ToValidUTF8(subject[:120], "")
	}
	if path == "" {
		return subject
	}
	return path + "/" + subject
}

// itemChild adds a child document for an Outlook item and returns the
// parser that fills it.
func (p *parser) itemChild(name string) *parser {
	name = p.unique(name)
	d := &Document{Name: name, MediaType: mediaOutlook, Path: p.childPath(name)}
	p.d.Children = append(p.d.Children, d)
	return &parser{j: p.j, d: d, depth: p.depth + 1, format: "pst", text: textBuf{max: p.text.max}}
}

// finishItem stores the text of an item filled by itemChild, as run does
// for the other formats, and turns a panic into ErrMalformed.
func (p *parser) finishItem() {
	if r := recover(); r != nil {
		p.fail("read item", fmt.Errorf("%w: pst reader panic: %v", ErrMalformed, r))
	}
	if p.text.full() {
		p.fail("text", fmt.Errorf("%w: text exceeds MaxTextSize (%d bytes), truncated", ErrTooLarge, p.j.lim.MaxTextSize))
	}
	if p.d.Text == "" && p.text.Len() > 0 {
		p.d.Text = p.text.String()
	}
}

// item fills c from the item's properties: metadata, text, attachments.
func (x *pstReader) item(c *parser, o *pstObject, props map[uint16]pstProp) {
	class := x.str(o, props, pidMessageClass, 0)
	if class != "" {
		c.d.setExtra("message class", class)
	}
	x.hash(c, o, props)
	x.meta(c, o, props)
	switch cls := strings.ToLower(class); {
	case strings.HasPrefix(cls, "ipm.contact"), strings.HasPrefix(cls, "ipm.distlist"):
		x.contact(c, o, props)
	case strings.HasPrefix(cls, "ipm.appointment"), strings.HasPrefix(cls, "ipm.schedule.meeting"):
		x.appointment(c, o, props)
	case strings.HasPrefix(cls, "ipm.task"):
		x.task(c, o, props)
	case cls == "", strings.HasPrefix(cls, "ipm.note"), strings.HasPrefix(cls, "ipm.post"):
		// A message: its text as its EML's (reviewerText).
		reviewerText(c, func() { x.body(c, o, props) })
		x.attachments(c, o)
		return
	}
	x.body(c, o, props)
	x.attachments(c, o)
}

// hash sets the item's SHA256 and Size from its properties, in id order:
// the same item in two mailboxes has the same hash.
func (x *pstReader) hash(c *parser, o *pstObject, props map[uint16]pstProp) {
	h := sha256.New()
	var hdr [8]byte
	for _, id := range slices.Sorted(maps.Keys(props)) {
		v, err := o.value(props[id])
		if err != nil {
			c.fail(fmt.Sprintf("read property %#04x", id), err)
			return
		}
		binary.LittleEndian.PutUint16(hdr[:], id)
		binary.LittleEndian.PutUint16(hdr[2:], props[id].typ)
		binary.LittleEndian.PutUint32(hdr[4:], uint32(len(v)))
		h.Write(hdr[:])
		h.Write(v)
		c.d.Size += int64(len(v))
	}
	h.Sum(c.d.SHA256[:0])
}

// subject returns the item's subject without its prefix marker.
func (x *pstReader) subject(o *pstObject, props map[uint16]pstProp) string {
	s := x.str(o, props, pidSubject, 0)
	if len(s) >= 2 && s[0] == 1 {
		s = s[2:] // 0x01 and the length of the prefix ("RE: ")
	}
	return strings.Join(strings.Fields(s), " ")
}

// meta fills the e-mail metadata: from the transport headers when the
// item has them (as the same message's EML gives), then from properties.
func (x *pstReader) meta(c *parser, o *pstObject, props map[uint16]pstProp) {
	if h := x.str(o, props, pidTransportHeaders, 0); strings.TrimSpace(h) != "" {
		if msg, err := mail.ReadMessage(strings.NewReader(strings.TrimRight(h, "\r\n") + "\r\n\r\n")); err == nil {
			mailMeta(c, msg.Header)
		}
	}
	m := &c.d.Meta
	if m.Subject == "" {
		m.Subject = x.subject(o, props)
	}
	if m.From == "" {
		m.From = address(x.str(o, props, pidSenderName, 0), x.smtp(o, props, pidSenderSMTP, pidSenderEmail))
	}
	to, cc, bcc := x.recipients(c, o)
	if len(m.To) == 0 {
		m.To = to
	}
	if len(m.Cc) == 0 {
		m.Cc = cc
	}
	if _, ok := c.d.Meta.Extra["bcc"]; !ok && len(bcc) > 0 {
		c.d.setExtra("bcc", strings.Join(bcc, ", "))
	}
	if m.MessageID == "" {
		m.MessageID = strings.TrimSpace(x.str(o, props, pidMessageID, 0))
	}
	if m.InReplyTo == "" {
		m.InReplyTo = strings.TrimSpace(x.str(o, props, pidInReplyTo, 0))
	}
	if refs := strings.Join(strings.Fields(x.str(o, props, pidReferences, 0)), " "); refs != "" && c.d.Meta.Extra[ExtraReferences] == "" {
		c.d.setExtra(ExtraReferences, refs)
	}
	if m.Date.IsZero() {
		m.Date = x.time(o, props, pidSubmitTime)
	}
	if m.Date.IsZero() {
		m.Date = x.time(o, props, pidDeliveryTime)
	}
	m.Created, m.Modified = x.time(o, props, pidCreationTime), x.time(o, props, pidModifiedTime)
}

// address formats a name and address as mail.go's addressList does.
func address(name, addr string) string {
	name = strings.TrimSpace(name)
	switch addr = strings.TrimSpace(addr); {
	case addr == "":
		return name
	case name == "" || strings.EqualFold(name, addr) || strings.EqualFold(strings.Trim(name, "'\""), addr):
		return addr
	}
	return name + " <" + addr + ">"
}

// smtp returns the SMTP address in property smtpID, else the address in
// emailID when it looks like one (not an Exchange X.500 path).
func (x *pstReader) smtp(o *pstObject, props map[uint16]pstProp, smtpID, emailID uint16) string {
	if s := x.str(o, props, smtpID, 0); s != "" {
		return s
	}
	if s := x.str(o, props, emailID, 0); strings.Contains(s, "@") && !strings.HasPrefix(s, "/") {
		return s
	}
	return ""
}

// recipients reads the recipient table: To, Cc and Bcc lists.
func (x *pstReader) recipients(c *parser, o *pstObject) (to, cc, bcc []string) {
	if _, ok := o.sub[nidRecipients]; !ok {
		return nil, nil, nil
	}
	t, err := o.subobject(nidRecipients)
	if err == nil {
		err = t.rows(func(r pstRow) error {
			a := address(x.cell(r, pidDisplayName), x.cellSMTP(r))
			if a == "" {
				return nil
			}
			switch typ, _ := r.long(pidRecipientType); typ & 0xF {
			case 2:
				cc = append(cc, a)
			case 3:
				bcc = append(bcc, a)
			default:
				to = append(to, a)
			}
			return nil
		})
	}
	if err != nil {
		c.fail("read recipients", err)
	}
	return to, cc, bcc
}

// cellSMTP returns the SMTP address of a recipient row.
func (x *pstReader) cellSMTP(r pstRow) string {
	if s := x.cell(r, pidSMTPAddress); s != "" {
		return s
	}
	if s := x.cell(r, pidEmailAddress); strings.Contains(s, "@") && !strings.HasPrefix(s, "/") {
		return s
	}
	return ""
}

// cell returns a string cell of a table row.
func (x *pstReader) cell(r pstRow, id uint16) string {
	p, ok := r.prop(id)
	if !ok {
		return ""
	}
	b, err := r.o.value(p)
	if err != nil {
		return ""
	}
	return pstString(p.typ, b, 0)
}

// body adds the item's text: the plain body, else the HTML body, else the
// compressed RTF body, converted as the EML path converts them.
func (x *pstReader) body(c *parser, o *pstObject, props map[uint16]pstProp) {
	cp := x.codepage(props)
	if s := x.str(o, props, pidBody, cp); strings.TrimSpace(s) != "" {
		c.text.addString(strings.ReplaceAll(s, "\r\n", "\n"))
		return
	}
	if b, err := x.bin(o, props, pidHTML); err != nil {
		c.fail("read html body", err)
	} else if len(bytes.TrimSpace(b)) > 0 {
		if props[pidHTML].typ == ptUnicode {
			b = []byte(pstString(ptUnicode, b, 0))
		}
		html, _ := htmlToUTF8(b, "text/html; charset="+charsetOf(cp))
		// htmlToUTF8 trusts a declared UTF-8 even when the bytes are not.
		html = bytes.ToValidUTF8(html, []byte("\uFFFD"))
		var ignore Metadata
		if err := htmlText(c, html, &ignore); err != nil {
			c.fail("read html body", err)
		}
		return
	}
	b, err := x.bin(o, props, pidRTFCompressed)
	if err != nil || len(b) == 0 {
		if err != nil {
			c.fail("read rtf body", err)
		}
		return
	}
	raw, err := decompressRTF(x.p.j, b)
	if err != nil {
		c.fail("read rtf body", err)
		return
	}
	r := &parser{j: c.j, d: &Document{}, format: "rtf", text: textBuf{max: c.text.max}}
	parseRTF(r, raw)
	c.text.add(r.text.b)
}

// codepage returns the item's code page for 8-bit strings.
func (x *pstReader) codepage(props map[uint16]pstProp) int {
	for _, id := range []uint16{pidInternetCodepage, pidMessageCodepage} {
		if p, ok := props[id]; ok && len(p.inline) == 4 {
			if cp := int(binary.LittleEndian.Uint32(p.inline)); codepage(cp) != nil {
				return cp
			}
		}
	}
	return 0
}

// charsetOf names a Windows code page as a MIME charset.
func charsetOf(cp int) string {
	switch {
	case cp == 65001:
		return "utf-8"
	case cp >= 1250 && cp <= 1258:
		return "windows-" + strconv.Itoa(cp)
	case cp == 932:
		return "shift_jis"
	case cp == 936:
		return "gbk"
	case cp == 949:
		return "euc-kr"
	case cp == 950:
		return "big5"
	case cp == 874:
		return "windows-874"
	case cp == 866:
		return "ibm866"
	}
	return ""
}

// str returns a string property, "" when absent or unreadable.
func (x *pstReader) str(o *pstObject, props map[uint16]pstProp, id uint16, cp int) string {
	p, ok := props[id]
	if !ok {
		return ""
	}
	b, err := o.value(p)
	if err != nil {
		return ""
	}
	return pstString(p.typ, b, cp)
}

// bin returns the bytes of a property, nil when absent.
func (x *pstReader) bin(o *pstObject, props map[uint16]pstProp, id uint16) ([]byte, error) {
	p, ok := props[id]
	if !ok {
		return nil, nil
	}
	return o.value(p)
}

// time returns a PT_SYSTIME property.
func (x *pstReader) time(o *pstObject, props map[uint16]pstProp, id uint16) time.Time {
	p, ok := props[id]
	if !ok || p.typ != ptSysTime {
		return time.Time{}
	}
	b, err := o.value(p)
	if err != nil || len(b) != 8 {
		return time.Time{}
	}
	return filetime(binary.LittleEndian.Uint64(b))
}

// pstString decodes a string value: UTF-16LE, or 8-bit in code page cp.
func pstString(typ uint16, b []byte, cp int) string {
	switch typ {
	case ptUnicode:
		u := make([]uint16, len(b)/2)
		for i := range u {
			u[i] = binary.LittleEndian.Uint16(b[2*i:])
		}
		for len(u) > 0 && u[len(u)-1] == 0 {
			u = u[:len(u)-1]
		}
		return string(utf16.Decode(u))
	case ptString8, ptBinary:
		b = bytes.TrimRight(b, "\x00")
		if utf8.Valid(b) {
			return string(b)
		}
		e := codepage(cp)
		if e == nil {
			e = codepage(1252)
		}
		return convert(b, e)
	}
	return ""
}
