package extract

import (
	"encoding/binary"
	"fmt"
	"path"
	"strconv"
	"strings"
	"time"
)

// Named properties ([MS-PST] 2.4.7): the ids above 0x8000 of the
// properties of calendar items, tasks and contacts are given by the
// mailbox's name-to-id map.

// pstNamed is a named property: its property set and numeric name.
type pstNamed struct {
	set byte // the fourth byte of PSETID_{Appointment,Task,Address}: 0x02, 0x03, 0x04
	lid uint32
}

// Named properties read.
var (
	lidLocation    = pstNamed{0x02, 0x8208}
	lidStart       = pstNamed{0x02, 0x820D}
	lidEnd         = pstNamed{0x02, 0x820E}
	lidTaskStatus  = pstNamed{0x03, 0x8101}
	lidTaskStart   = pstNamed{0x03, 0x8104}
	lidTaskDue     = pstNamed{0x03, 0x8105}
	lidFileUnder   = pstNamed{0x04, 0x8005}
	lidEmail1      = pstNamed{0x04, 0x8083}
	lidEmail2      = pstNamed{0x04, 0x8093}
	lidEmail3      = pstNamed{0x04, 0x80A3}
	lidWorkAddress = pstNamed{0x04, 0x801B}
	pstNamedWanted = []pstNamed{lidLocation, lidStart, lidEnd, lidTaskStatus, lidTaskStart, lidTaskDue, lidFileUnder, lidEmail1, lidEmail2, lidEmail3, lidWorkAddress}
	pstOutlookGUID = [16]byte{0x00, 0x20, 0x06, 0x00, 0, 0, 0, 0, 0xC0, 0, 0, 0, 0, 0, 0, 0x46}
)

// namedProps reads the name-to-id map, keeping the properties read here.
func (x *pstReader) namedProps() {
	x.named = make(map[pstNamed]uint16)
	o, props, err := x.f.propsOf(nidNameToID, x.limit)
	if err != nil {
		x.p.fail("read named properties", err)
		return
	}
	guids, err1 := x.bin(o, props, 0x0002)
	entries, err2 := x.bin(o, props, 0x0003)
	if err1 != nil || err2 != nil {
		x.p.fail("read named properties", fmt.Errorf("%w: %w", ErrMalformed, cmpErr(err1, err2)))
		return
	}
	for i := 0; i+8 <= len(entries); i += 8 {
		e := entries[i:]
		g := binary.LittleEndian.Uint16(e[4:])
		if g&1 != 0 || g>>1 < 3 { // string names and the PS_MAPI / PS_PUBLIC_STRINGS sets
			continue
		}
		at := int(g>>1-3) * 16
		if at+16 > len(guids) {
			continue
		}
		guid := [16]byte(guids[at : at+16])
		set := guid[0]
		guid[0] = 0
		if guid != pstOutlookGUID {
			continue
		}
		n := pstNamed{set, binary.LittleEndian.Uint32(e)}
		for _, w := range pstNamedWanted {
			if n == w {
				x.named[n] = 0x8000 + binary.LittleEndian.Uint16(e[6:])
			}
		}
	}
}

func cmpErr(a, b error) error {
	if a != nil {
		return a
	}
	return b
}

// namedStr and namedTime read a named property.
func (x *pstReader) namedStr(o *pstObject, props map[uint16]pstProp, n pstNamed) string {
	if id, ok := x.named[n]; ok {
		return strings.TrimSpace(x.str(o, props, id, 0))
	}
	return ""
}

func (x *pstReader) namedTime(o *pstObject, props map[uint16]pstProp, n pstNamed) time.Time {
	if id, ok := x.named[n]; ok {
		return x.time(o, props, id)
	}
	return time.Time{}
}

// appointment records where and when a calendar item takes place.
func (x *pstReader) appointment(c *parser, o *pstObject, props map[uint16]pstProp) {
	if s := x.namedStr(o, props, lidLocation); s != "" {
		c.d.setExtra("location", s)
	}
	for _, k := range []struct {
		n    pstNamed
		name string
	}{{lidStart, "start"}, {lidEnd, "end"}} {
		if t := x.namedTime(o, props, k.n); !t.IsZero() {
			c.d.setExtra(k.name, t.Format(time.RFC3339))
		}
	}
}

// task records a task's dates and status.
func (x *pstReader) task(c *parser, o *pstObject, props map[uint16]pstProp) {
	for _, k := range []struct {
		n    pstNamed
		name string
	}{{lidTaskStart, "start"}, {lidTaskDue, "due"}} {
		if t := x.namedTime(o, props, k.n); !t.IsZero() {
			c.d.setExtra(k.name, t.Format(time.RFC3339))
		}
	}
	if id, ok := x.named[lidTaskStatus]; ok {
		if p, ok := props[id]; ok && len(p.inline) == 4 {
			status := []string{"not started", "in progress", "complete", "waiting on someone else", "deferred"}
			if s := int(binary.LittleEndian.Uint32(p.inline)); s < len(status) {
				c.d.setExtra("status", status[s])
			}
		}
	}
}

// contact writes a contact card as text, one "Field: value" line each,
// before its notes.
func (x *pstReader) contact(c *parser, o *pstObject, props map[uint16]pstProp) {
	line := func(k, v string) {
		if v = strings.Join(strings.Fields(v), " "); v != "" {
			c.text.addString(k + ": " + v + "\n")
		}
	}
	for _, f := range []struct {
		id   uint16
		name string
	}{
		{pidDisplayName, "Name"}, {0x3A17, "Title"}, {0x3A16, "Company"}, {0x3A18, "Department"},
		{0x3A08, "Business phone"}, {0x3A09, "Home phone"}, {0x3A1C, "Mobile phone"},
		{0x3A29, "Street"}, {0x3A27, "City"}, {0x3A2A, "Postal code"}, {0x3A26, "Country"},
	} {
		line(f.name, x.str(o, props, f.id, 0))
	}
	for i, n := range []pstNamed{lidEmail1, lidEmail2, lidEmail3} {
		line("E-mail"+strings.Repeat(" "+strconv.Itoa(i+1), min(i, 1)), x.namedStr(o, props, n))
	}
	line("Work address", x.namedStr(o, props, lidWorkAddress))
	if c.text.Len() > 0 {
		c.text.addByte('\n')
	}
}

// Attachment methods ([MS-OXCMSG] 2.2.2.9).
const (
	attachByValue  = 1
	attachEmbedded = 5
	attachOLE      = 6
)

// attachments extracts the item's attachments as its children.
func (x *pstReader) attachments(c *parser, o *pstObject) {
	if _, ok := o.sub[nidAttachments]; !ok {
		return
	}
	t, err := o.subobject(nidAttachments)
	var ids []uint32
	if err == nil {
		err = t.rows(func(r pstRow) error {
			if id, ok := r.long(pidRowID); ok {
				ids = append(ids, id)
			}
			return nil
		})
	}
	if err != nil {
		c.fail("read attachments", err)
	}
	for i, id := range ids {
		if !c.admit() {
			return
		}
		x.attachment(c, o, id, i+1)
	}
}

// attachment extracts attachment nid, the n-th of the item o.
func (x *pstReader) attachment(c *parser, o *pstObject, nid uint32, n int) {
	name := "attachment-" + strconv.Itoa(n)
	a, err := o.subobject(nid)
	var props map[uint16]pstProp
	if err == nil {
		props, err = a.props()
	}
	if err != nil {
		c.failedChild(name, "", 0, nil, &Error{Format: "pst", Op: "read attachment " + name, Err: c.j.classify(err)})
		return
	}
	for _, id := range []uint16{pidAttachLongName, pidAttachFilename, pidDisplayName} {
		if s := strings.TrimSpace(x.str(a, props, id, 0)); s != "" {
			name = path.Base(cleanName(s))
			break
		}
	}
	method := -1
	if p, ok := props[pidAttachMethod]; ok && len(p.inline) == 4 {
		method = int(binary.LittleEndian.Uint32(p.inline))
	}
	data, ok := props[pidAttachData]
	switch {
	case method == attachEmbedded && ok && data.typ == ptObject:
		x.embedded(c, a, data, name)
	case ok && (method == attachByValue || method == attachOLE || method == -1):
		b, err := a.value(data)
		if data.typ == ptObject && err == nil {
			b, err = x.object(a, b)
		}
		if err != nil {
			c.failedChild(name, mediaByExt(name), 0, nil, &Error{Format: "pst", Op: "read attachment " + name, Err: c.j.classify(err)})
			return
		}
		c.child(name, x.str(a, props, pidAttachMime, 0), b)
	default:
		err := fmt.Errorf("%w: attachment by reference (method %d), its content is not in the mailbox", ErrUnsupported, method)
		c.failedChild(name, mediaByExt(name), 0, nil, &Error{Format: "pst", Op: "read attachment " + name, Err: err})
	}
}

// object reads a PtypObject value: a subnode of a named by the value's
// first four bytes.
func (x *pstReader) object(a *pstObject, v []byte) ([]byte, error) {
	if len(v) < 4 {
		return nil, errPSTMalformed("object value of %d bytes", len(v))
	}
	return a.hnid(binary.LittleEndian.Uint32(v))
}

// embedded extracts an attached message as an item child of c.
func (x *pstReader) embedded(c *parser, a *pstObject, data pstProp, name string) {
	v, err := a.value(data)
	var m *pstObject
	var props map[uint16]pstProp
	if err == nil && len(v) < 4 {
		err = errPSTMalformed("embedded message reference of %d bytes", len(v))
	}
	if err == nil {
		m, err = a.subobject(binary.LittleEndian.Uint32(v))
	}
	if err == nil {
		props, err = m.props()
	}
	if err != nil {
		c.failedChild(name, mediaOutlook, 0, nil, &Error{Format: "pst", Op: "read attached message " + name, Err: c.j.classify(err)})
		return
	}
	e := c.itemChild(name)
	defer e.finishItem()
	x.item(e, m, props)
}
