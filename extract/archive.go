package extract

import (
	"archive/tar"
	"archive/zip"
	"bufio"
	"bytes"
	"compress/bzip2"
	"compress/gzip"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"
	"strings"
	"unicode/utf8"

	"golang.org/x/text/encoding/charmap"
)

// parseZIP opens a ZIP container and extracts it as the format its members
// reveal (DOCX, XLSX, PPTX, OpenDocument, EPUB) or as an archive whose
// members become children.
func parseZIP(p *parser, data []byte) {
	zr, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
	if err != nil && !errors.Is(err, zip.ErrInsecurePath) {
		p.fail("open", err)
		return
	}
	files := make(map[string]*zip.File, len(zr.File))
	for _, f := range zr.File {
		if _, dup := files[f.Name]; !dup {
			files[f.Name] = f
		}
	}
	c := &zipContainer{p: p, zr: zr, files: files}
	has := func(name string) bool { return files[name] != nil }
	switch {
	case has("[Content_Types].xml") && has("word/document.xml"):
		c.as(mediaDOCX)
		parseDOCX(c)
	case has("[Content_Types].xml") && has("xl/workbook.xml"):
		c.as(mediaXLSX)
		parseXLSX(c)
	case has("[Content_Types].xml") && has("ppt/presentation.xml"):
		c.as(mediaPPTX)
		parsePPTX(c)
	default:
		switch mt := c.mimetype(); {
		case strings.HasPrefix(mt, "application/vnd.oasis.opendocument."):
			c.as(mt)
			parseODF(c)
		case mt == mediaEPUB:
			c.as(mediaEPUB)
			parseEPUB(c)
		default:
			c.members()
		}
	}
}

// zipContainer is an opened ZIP: an archive or a zipped document format.
type zipContainer struct {
	p     *parser
	zr    *zip.Reader
	files map[string]*zip.File
}

// as records that the ZIP is in fact a document of the given media type.
func (c *zipContainer) as(media string) {
	c.p.d.MediaType = media
	c.p.format = formatOf(media)
}

// mimetype returns the content of an OpenDocument/EPUB "mimetype" member.
func (c *zipContainer) mimetype() string {
	f := c.files["mimetype"]
	if f == nil || f.UncompressedSize64 > 256 {
		return ""
	}
	b, err := c.read(f)
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}

// open opens member f for streaming, enforcing encryption, method and the
// decompression limits.
func (c *zipContainer) open(f *zip.File) (io.ReadCloser, error) {
	if f.Flags&0x1 != 0 || f.Method == 99 {
		return nil, &Error{Format: c.p.format, Op: "read member " + f.Name, Err: fmt.Errorf("%w: member is password protected", ErrEncrypted)}
	}
	if f.Method != zip.Store && f.Method != zip.Deflate {
		return nil, &Error{Format: c.p.format, Op: "read member " + f.Name, Err: fmt.Errorf("%w: compression method %d", ErrUnsupported, f.Method)}
	}
	if err := c.p.j.checkDeclared(int64(min(f.UncompressedSize64, 1<<62)), int64(min(f.CompressedSize64, 1<<62))); err != nil {
		return nil, &Error{Format: c.p.format, Op: "read member " + f.Name, Err: err}
	}
	rc, err := f.Open()
	if err != nil {
		return nil, &Error{Format: c.p.format, Op: "read member " + f.Name, Err: c.p.j.classify(err)}
	}
	return readCloser{c.p.j.inflate(rc, int64(min(f.CompressedSize64, 1<<62))), rc}, nil
}

type readCloser struct {
	io.Reader
	io.Closer
}

// read reads member f whole.
func (c *zipContainer) read(f *zip.File) ([]byte, error) {
	rc, err := c.open(f)
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	b, err := c.p.j.readAllHint(rc, int64(min(f.UncompressedSize64, 1<<62)))
	if err != nil {
		return b, &Error{Format: c.p.format, Op: "read member " + f.Name, Err: c.p.j.classify(err)}
	}
	return b, nil
}

// readNamed reads the member called name; a missing member is nil, nil.
func (c *zipContainer) readNamed(name string) ([]byte, error) {
	f := c.files[name]
	if f == nil {
		return nil, nil
	}
	return c.read(f)
}

// rawSum hashes the stored (compressed, maybe encrypted) bytes of f.
func rawSum(f *zip.File) *[32]byte {
	r, err := f.OpenRaw()
	if err != nil {
		return nil
	}
	h := sha256.New()
	if _, err := io.Copy(h, r); err != nil {
		return nil
	}
	var sum [32]byte
	h.Sum(sum[:0])
	return &sum
}

// members extracts every file of the archive as a child.
func (c *zipContainer) members() {
	p := c.p
	for _, f := range c.zr.File {
		if strings.HasSuffix(f.Name, "/") || f.Mode()&(fs.ModeDir|fs.ModeSymlink|fs.ModeDevice|fs.ModeNamedPipe) != 0 {
			continue
		}
		if !p.admit() {
			return
		}
		name := cleanName(zipName(f))
		data, err := c.read(f)
		if err != nil {
			p.failedChild(name, mediaByExt(name), int64(min(f.UncompressedSize64, 1<<62)), rawSum(f), err)
			continue
		}
		p.child(name, "", data)
		p.j.release(int64(cap(data))) // charged as it was read
	}
}

// zipName returns the member's name as UTF-8: names not flagged as UTF-8
// that are not valid UTF-8 are CP437, the ZIP default.
func zipName(f *zip.File) string {
	if utf8.ValidString(f.Name) {
		return f.Name
	}
	if s, err := charmap.CodePage437.NewDecoder().String(f.Name); err == nil {
		return s
	}
	return strings.ToValidUTF8(f.Name, "\uFFFD")
}

// cleanName makes a member path relative and clean: backslashes become
// slashes and ".." cannot climb above the archive root.
func cleanName(name string) string {
	name = strings.ReplaceAll(name, `\`, "/")
	name = strings.TrimPrefix(path.Clean("/"+name), "/")
	if name == "" || name == "." {
		return "unnamed"
	}
	return name
}

// mediaByExt guesses the media type of a member that could not be read,
// from its extension only.
func mediaByExt(name string) string {
	switch strings.ToLower(path.Ext(name)) {
	case ".pdf":
		return mediaPDF
	case ".docx":
		return mediaDOCX
	case ".xlsx":
		return mediaXLSX
	case ".pptx":
		return mediaPPTX
	case ".odt":
		return mediaODT
	case ".ods":
		return mediaODS
	case ".odp":
		return mediaODP
	case ".zip":
		return mediaZIP
	case ".tar":
		return mediaTAR
	case ".gz", ".tgz":
		return mediaGZIP
	case ".rtf":
		return mediaRTF
	case ".eml":
		return mediaEML
	case ".htm", ".html":
		return mediaHTML
	case ".txt", ".text", ".log":
		return mediaText
	case ".md":
		return mediaMarkdown
	case ".csv":
		return mediaCSV
	}
	return ""
}

// parseTAR extracts the members of a tar archive as children.
func parseTAR(p *parser, data []byte) { tarMembers(p, bytes.NewReader(data)) }

// tarMembers extracts the regular files read from r as children.
func tarMembers(p *parser, r io.Reader) {
	tr := tar.NewReader(r)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return
		}
		if err != nil {
			p.fail("read header", err)
			return
		}
		switch h.Typeflag {
		case tar.TypeReg, tar.TypeCont, tar.TypeGNUSparse, '\x00':
		default:
			continue // directories, links, devices, metadata
		}
		if !p.admit() {
			return
		}
		name := cleanName(h.Name)
		var mr io.Reader = tr
		if isSparse(h) {
			// Holes expand like a decompression: charge them.
			mr = p.j.inflate(tr, 1<<62)
		}
		data, err := p.j.readAllHint(mr, min(h.Size, 64<<20))
		if err != nil {
			err = p.j.classify(err)
			// A tar stream is unusable past a broken member.
			p.failedChild(name, mediaByExt(name), h.Size, nil, &Error{Format: "tar", Op: "read member " + h.Name, Err: err})
			p.fail("read member", err)
			return
		}
		p.child(name, "", data)
		p.j.release(int64(cap(data))) // charged as it was read
	}
}

func isSparse(h *tar.Header) bool {
	if h.Typeflag == tar.TypeGNUSparse {
		return true
	}
	for k := range h.PAXRecords {
		if strings.HasPrefix(k, "GNU.sparse.") {
			return true
		}
	}
	return false
}

// parseGZIP decompresses a gzip stream: a tar inside makes the tar's
// members the children, anything else becomes the single child.
func parseGZIP(p *parser, data []byte) {
	zr, err := gzip.NewReader(bytes.NewReader(data))
	if err != nil {
		p.fail("open", err)
		return
	}
	inner := zr.Name
	if inner == "" {
		inner = strings.TrimSuffix(path.Base(p.d.Name), path.Ext(p.d.Name))
		switch strings.ToLower(path.Ext(p.d.Name)) {
		case ".tgz", ".taz":
			inner += ".tar"
		}
	}
	if !zr.ModTime.IsZero() {
		p.d.Meta.Modified = zr.ModTime
	}
	decompressed(p, p.j.inflate(zr, int64(len(data))), inner)
}

// parseBZIP2 decompresses a bzip2 stream like parseGZIP.
func parseBZIP2(p *parser, data []byte) {
	inner := strings.TrimSuffix(path.Base(p.d.Name), path.Ext(p.d.Name))
	decompressed(p, p.j.inflate(bzip2.NewReader(bytes.NewReader(data)), int64(len(data))), inner)
}

// decompressed extracts a decompressed stream: as tar members if it is a
// tar, else as one child called name.
func decompressed(p *parser, r io.Reader, name string) {
	br := bufio.NewReaderSize(r, 64<<10)
	head, _ := br.Peek(512)
	if isTAR(head) {
		p.d.setExtra("archive", "tar")
		tarMembers(p, br)
		return
	}
	if !p.admit() {
		return
	}
	if name == "" || name == "." || name == "/" {
		name = "content"
	}
	data, err := p.j.readAllHint(br, -1)
	if err != nil {
		p.fail("decompress", err)
		if errors.Is(err, ErrBomb) || errors.Is(err, ErrTimeout) || len(data) == 0 {
			return
		}
	}
	p.child(cleanName(name), "", data)
	p.j.release(int64(cap(data))) // charged as it was read
}
