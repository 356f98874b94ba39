package extract

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"path"
	"strings"
)

// errPackageTruncated is what a packaged object whose header or contents
// run past its stream is: ErrMalformed.
var errPackageTruncated = fmt.Errorf("%w: packaged object truncated", ErrMalformed)

// olePackage is a file packaged by the Object Packager (an \x01Ole10Native
// stream): its name and contents, or the source path of a link.
type olePackage struct {
	label, source, temp string
	link                bool
	data                []byte
}

// name is the file name the package is known by: its label, else the
// base of its source or temporary path.
func (o olePackage) name() string {
	for _, s := range []string{o.label, o.source, o.temp} {
		s = strings.ReplaceAll(s, `\`, "/")
		if b := path.Base(cleanName(s)); s != "" && b != "." && b != "/" {
			return b
		}
	}
	return ""
}

// ole10Native unpacks a packaged file. The layout (as the packager
// writes it): a 4-byte size of the rest, a 2-byte type, the label and
// the source path (NUL-terminated), 2 reserved bytes, a 2-byte kind (3 an
// embedded file, 1 a link), a 4-byte length and the temporary path, then
// a 4-byte length and the contents. Writers vary: some omit the leading
// size or the temporary path's length, some write a size that is not the
// stream's. The sizes are only ever compared with the bytes present,
// never allocated: a package claiming more than its stream holds is
// ErrMalformed.
func ole10Native(b []byte) (olePackage, error) {
	// The type follows the leading size; a stream without the size
	// starts with the type.
	if len(b) >= 6 && !validPkgType(b[4:]) && validPkgType(b) {
		return ole10Body(b)
	}
	if len(b) < 4 {
		return olePackage{}, errPackageTruncated
	}
	return ole10Body(b[4:])
}

// validPkgType reports whether b starts with a package type (1 a link,
// 2 an embedded file).
func validPkgType(b []byte) bool {
	if len(b) < 2 {
		return false
	}
	t := binary.LittleEndian.Uint16(b)
	return t == 1 || t == 2
}

// ole10Body reads a package after its leading size.
func ole10Body(b []byte) (olePackage, error) {
	var o olePackage
	r := pkgReader{b: b}
	if _, ok := r.u16(); !ok {
		return o, errPackageTruncated
	}
	label, ok1 := r.cstr()
	source, ok2 := r.cstr()
	o.label, o.source = ansi(label), ansi(source)
	_, ok3 := r.u16()
	kind, ok4 := r.u16()
	if !ok1 || !ok2 || !ok3 || !ok4 {
		return o, errPackageTruncated
	}
	if kind == 1 {
		o.link = true
		return o, nil
	}
	temp, ok := r.tempPath()
	o.temp = ansi(temp)
	n, ok5 := r.u32()
	if !ok || !ok5 || uint64(n) > uint64(len(r.b)) {
		return o, errPackageTruncated
	}
	o.data = r.b[:n]
	return o, nil
}

// ansi decodes a path or label of a package (the packager writes the
// system's ANSI code page; 1252 is the common one).
func ansi(s string) string { return string(convert([]byte(s), codepage(1252))) }

// pkgReader reads the fields of a packaged object in order.
type pkgReader struct{ b []byte }

func (r *pkgReader) u16() (uint16, bool) {
	if len(r.b) < 2 {
		return 0, false
	}
	v := binary.LittleEndian.Uint16(r.b)
	r.b = r.b[2:]
	return v, true
}

func (r *pkgReader) u32() (uint32, bool) {
	if len(r.b) < 4 {
		return 0, false
	}
	v := binary.LittleEndian.Uint32(r.b)
	r.b = r.b[4:]
	return v, true
}

func (r *pkgReader) cstr() (string, bool) {
	i := bytes.IndexByte(r.b, 0)
	if i < 0 {
		return "", false
	}
	s := string(r.b[:i])
	r.b = r.b[i+1:]
	return s, true
}

// tempPath reads the temporary path: its length and the NUL-terminated
// path, or (when the length does not fit) only the path.
func (r *pkgReader) tempPath() (string, bool) {
	if len(r.b) >= 4 {
		n := binary.LittleEndian.Uint32(r.b)
		if rest := r.b[4:]; uint64(n) <= uint64(len(rest)) && bytes.IndexByte(bytes.TrimRight(rest[:n], "\x00"), 0) < 0 {
			r.b = rest[n:]
			return string(bytes.TrimRight(rest[:n], "\x00")), true
		}
	}
	return r.cstr()
}

// oleClasses names the classes (a storage's CLSID) of the objects Office
// embeds; document says a reader exists for the kind, so a storage of it
// that no reader recognised is damaged rather than unsupported.
var oleClasses = map[string]struct {
	name     string
	document bool
}{
	"00020906-0000-0000-C000-000000000046": {"Word document", true},
	"00020900-0000-0000-C000-000000000046": {"Word 6 document", true},
	"00020820-0000-0000-C000-000000000046": {"Excel worksheet", true},
	"00020810-0000-0000-C000-000000000046": {"Excel 5 worksheet", true},
	"00020821-0000-0000-C000-000000000046": {"Excel chart", true},
	"64818D10-4F9B-11CF-86EA-00AA00B929E8": {"PowerPoint presentation", true},
	"0003000C-0000-0000-C000-000000000046": {"package", false},
	"F20DA720-C02F-11CE-927B-0800095AE340": {"package", false},
	"0002CE02-0000-0000-C000-000000000046": {"Equation 3.0", false},
}

// clsidString formats a CLSID as its registry form.
func clsidString(c [16]byte) string {
	le := binary.LittleEndian
	return fmt.Sprintf("%08X-%04X-%04X-%X-%X", le.Uint32(c[0:]), le.Uint16(c[4:]), le.Uint16(c[6:]), c[8:10], c[10:])
}

// oleObjectErr is the error of an embedded object in storage st that no
// reader recognised: ErrUnsupported naming its kind (the user type of its
// \x01CompObj stream, else its class), or ErrMalformed when its class is
// a document kind extract reads.
func oleObjectErr(f *cfb, st int) error {
	var desc string
	if b, ok, err := f.streamNamed(st, "\x01CompObj"); ok && err == nil {
		desc = compObjUserType(b)
	}
	var zero [16]byte
	c := f.dir[st].clsid
	if c == zero {
		if desc == "" {
			return fmt.Errorf("%w: embedded OLE object", ErrUnsupported)
		}
		return fmt.Errorf("%w: embedded OLE object %q", ErrUnsupported, desc)
	}
	id := clsidString(c)
	known, ok := oleClasses[id]
	if desc == "" {
		desc = known.name
	}
	if ok && known.document {
		return fmt.Errorf("%w: embedded %s {%s} has none of its document's streams", ErrMalformed, known.name, id)
	}
	return fmt.Errorf("%w: embedded OLE object %q {%s}", ErrUnsupported, desc, id)
}

// compObjUserType reads the user type (e.g. "Microsoft Equation 3.0") of
// a \x01CompObj stream (MS-OLEDS 2.3.7): after a 28-byte header, a
// length-prefixed ANSI string. It is "" when the stream is too short.
func compObjUserType(b []byte) string {
	if len(b) < 32 {
		return ""
	}
	n := binary.LittleEndian.Uint32(b[28:])
	if n == 0 || uint64(n) > uint64(len(b)-32) || n > 256 {
		return ""
	}
	return cleanProp(ansi(string(bytes.TrimRight(b[32:32+n], "\x00"))))
}
