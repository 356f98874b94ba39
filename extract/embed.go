package extract

import (
	"fmt"
	"strings"
)

// embeddedObjects extracts the OLE objects embedded in a Word document
// (the storages of ObjectPool) or an Excel workbook (the MBD storages) as
// children: a packaged file (\x01Ole10Native), an OOXML package
// (Package), raw contents (CONTENTS), or a compound document of its own
// (a Word, Excel, PowerPoint or Outlook storage). Anything else is a
// child with ErrUnsupported, so that nothing embedded goes unrecorded.
func embeddedObjects(p *parser, f *cfb) {
	var objs []int
	if pool := f.lookup(f.root, "ObjectPool"); pool >= 0 && f.dir[pool].typ == 1 {
		kids, err := f.children(pool)
		if err != nil {
			p.fail("read ObjectPool", err)
		}
		objs = append(objs, kids...)
	}
	kids, _ := f.children(f.root)
	for _, k := range kids {
		if strings.HasPrefix(f.dir[k].name, "MBD") {
			objs = append(objs, k)
		}
	}
	for _, st := range sortedByName(f, objs) {
		if f.dir[st].typ != 1 {
			continue
		}
		if !p.admit() {
			return
		}
		embeddedObject(p, f, st, "object "+strings.TrimLeft(f.dir[st].name, "_"))
	}
	if b, ok, err := f.streamNamed(f.root, "PowerPoint Document"); ok && err == nil && f.lookup(f.root, "EncryptedSummary") < 0 {
		pptEmbeddedObjects(p, b)
	}
}

// embeddedObject extracts the object in storage st as a child named
// name, unless it names itself (a packaged file); call admit first.
func embeddedObject(p *parser, f *cfb, st int, name string) {
	if b, ok, err := f.streamNamed(st, "\x01Ole10Native"); ok {
		packagedChild(p, name, b, err)
		return
	}
	for _, s := range []string{"Package", "CONTENTS"} {
		if b, ok, err := f.streamNamed(st, s); ok {
			if err != nil {
				p.failedChild(name, mediaBinary, 0, nil, &Error{Format: p.format, Op: "read embedded object", Err: err})
				return
			}
			p.child(name, "", b)
			return
		}
	}
	kids, _ := f.children(st)
	var names []string
	for _, k := range kids {
		names = append(names, f.dir[k].name)
	}
	if c := classifyCompound(names); c.read != nil {
		storageChild(p, f, st, name, c)
		return
	}
	p.failedChild(name, mediaCFB, 0, nil, &Error{Format: p.format, Op: "read embedded object", Err: oleObjectErr(f, st)})
}

// storageChild extracts storage st of f as a child document of kind c;
// its hash and size are those of its streams (see cfb.digest). Call admit
// first.
func storageChild(p *parser, f *cfb, st int, name string, c compoundKind) {
	name = p.unique(name)
	d := &Document{Name: name, MediaType: c.media, Path: p.childPath(name)}
	p.d.Children = append(p.d.Children, d)
	sub := &parser{j: p.j, d: d, depth: p.depth + 1, format: c.format, text: textBuf{max: p.text.max}}
	sum, size, err := f.digest(st)
	d.SHA256, d.Size = sum, size
	if err != nil {
		sub.fail("read embedded object", err)
		return
	}
	view := *f
	view.root = st
	sub.run(kind{format: c.format, media: c.media, parse: func(sp *parser, _ []byte) { c.read(sp, &view) }}, nil)
}

// packagedChild extracts the file packaged in an \x01Ole10Native stream
// (b, or the error reading it) as a child named by the package, name
// when it has none; call admit first. A link (no contents) or a damaged
// package is a child with the error.
func packagedChild(p *parser, name string, b []byte, err error) {
	var o olePackage
	if err == nil {
		o, err = ole10Native(b)
		if n := o.name(); n != "" {
			name = n
		}
		if err == nil && o.link {
			err = fmt.Errorf("%w: packaged link to %q, no contents", ErrUnsupported, o.source)
		}
	}
	if err != nil {
		p.failedChild(name, mediaBinary, int64(len(b)), nil, &Error{Format: p.format, Op: "read embedded object", Err: p.j.classify(err)})
		return
	}
	p.child(name, "", o.data)
}
