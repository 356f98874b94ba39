package extract

import (
	"bytes"
	"mime"
	"net/http"
	"path"
	"strings"
)

// kind is a sniffed format: its short name (Error.Format), its media type
// and its parser (nil: unsupported).
type kind struct {
	format string
	media  string
	parse  func(p *parser, data []byte)
}

// Media types of the formats extracted.
const (
	mediaText     = "text/plain"
	mediaHTML     = "text/html"
	mediaXHTML    = "application/xhtml+xml"
	mediaXML      = "application/xml"
	mediaMarkdown = "text/markdown"
	mediaCSV      = "text/csv"
	mediaTSV      = "text/tab-separated-values"
	mediaPDF      = "application/pdf"
	mediaRTF      = "application/rtf"
	mediaEML      = "message/rfc822"
	mediaMBOX     = "application/mbox"
	mediaZIP      = "application/zip"
	mediaTAR      = "application/x-tar"
	mediaGZIP     = "application/gzip"
	mediaBZIP2    = "application/x-bzip2"
	mediaDOCX     = "application/vnd.openxmlformats-officedocument.wordprocessingml.document"
	mediaXLSX     = "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"
	mediaPPTX     = "application/vnd.openxmlformats-officedocument.presentationml.presentation"
	mediaODT      = "application/vnd.oasis.opendocument.text"
	mediaODS      = "application/vnd.oasis.opendocument.spreadsheet"
	mediaODP      = "application/vnd.oasis.opendocument.presentation"
	mediaEPUB     = "application/epub+zip"
	mediaCFB      = "application/x-cfb"
	mediaBinary   = "application/octet-stream"
)

// formatOf returns the short format name of a media type.
func formatOf(media string) string {
	switch media {
	case mediaText:
		return "text"
	case mediaHTML, mediaXHTML:
		return "html"
	case mediaXML:
		return "xml"
	case mediaMarkdown:
		return "markdown"
	case mediaCSV, mediaTSV:
		return "csv"
	case mediaPDF:
		return "pdf"
	case mediaRTF:
		return "rtf"
	case mediaEML:
		return "eml"
	case mediaMBOX:
		return "mbox"
	case mediaZIP:
		return "zip"
	case mediaTAR:
		return "tar"
	case mediaGZIP:
		return "gzip"
	case mediaBZIP2:
		return "bzip2"
	case mediaDOCX:
		return "docx"
	case mediaXLSX:
		return "xlsx"
	case mediaPPTX:
		return "pptx"
	case mediaODT:
		return "odt"
	case mediaODS:
		return "ods"
	case mediaODP:
		return "odp"
	case mediaEPUB:
		return "epub"
	case mediaPST:
		return "pst"
	}
	if strings.HasPrefix(media, "application/vnd.oasis.opendocument.") {
		return "odf"
	}
	return ""
}

func textKind(media string) kind {
	k := kind{format: formatOf(media), media: media}
	switch media {
	case mediaHTML, mediaXHTML:
		k.parse = parseHTML
	case mediaXML:
		k.parse = parseXML
	case mediaMarkdown:
		k.parse = parseMarkdown
	case mediaCSV:
		k.parse = parseCSV
	case mediaTSV:
		k.parse = parseTSV
	case mediaEML:
		k.parse = parseEML
	case mediaMBOX:
		k.parse = parseMBOX
	default:
		k.parse = parseText
	}
	return k
}

func unsupported(media string) kind { return kind{format: formatOf(media), media: media} }

// Magic numbers.
var (
	magicPDF   = []byte("%PDF-")
	magicCFB   = []byte{0xD0, 0xCF, 0x11, 0xE0, 0xA1, 0xB1, 0x1A, 0xE1}
	magicGZIP  = []byte{0x1F, 0x8B}
	magicBZIP2 = []byte("BZh")
	magicRTF   = []byte(`{\rtf`)
	magicUTF8  = []byte{0xEF, 0xBB, 0xBF}
)

// binary signatures that net/http does not know, with their media types.
var binarySigs = []struct {
	magic string
	media string
}{
	{"\x7fELF", "application/x-elf"},
	{"\xfe\xed\xfa\xce", "application/x-mach-binary"},
	{"\xfe\xed\xfa\xcf", "application/x-mach-binary"},
	{"\xce\xfa\xed\xfe", "application/x-mach-binary"},
	{"\xcf\xfa\xed\xfe", "application/x-mach-binary"},
	{"\xca\xfe\xba\xbe", "application/java-vm"},
	{"\xfd7zXZ\x00", "application/x-xz"},
	{"\x28\xb5\x2f\xfd", "application/zstd"},
	{"7z\xbc\xaf\x27\x1c", "application/x-7z-compressed"},
	{"Rar!\x1a\x07", "application/vnd.rar"},
	{"SQLite format 3\x00", "application/vnd.sqlite3"},
	{"\x00asm", "application/wasm"},
	{"MSCF\x00\x00\x00\x00", "application/vnd.ms-cab-compressed"},
	{"!<arch>\n", "application/x-archive"},
	{"\x89HDF\r\n\x1a\n", "application/x-hdf5"},
	{"\x1f\x9d", "application/x-compress"},
	{"\x04\x22\x4d\x18", "application/x-lz4"},
	{"\x00\x00\x01\x00", "image/vnd.microsoft.icon"},
	{"II*\x00", "image/tiff"},
	{"MM\x00*", "image/tiff"},
	{"8BPS", "image/vnd.adobe.photoshop"},
	{"\x00\x00\x00\x0cjP  ", "image/jp2"},
	{"MZ", "application/vnd.microsoft.portable-executable"},
}

// sniff chooses the format of data from its content; name and declared
// content type only break ties between text formats.
func sniff(data []byte, name, declared string) kind {
	head := data[:min(len(data), 1024)]
	switch {
	case len(data) == 0:
		return textKind(hintedText(name, declared))
	case bytes.Contains(head, magicPDF):
		return kind{format: "pdf", media: mediaPDF, parse: parsePDF}
	case bytes.HasPrefix(data, magicCFB):
		return kind{format: "cfb", media: mediaCFB, parse: parseCFB}
	case bytes.HasPrefix(data, magicPST):
		return kind{format: "pst", media: mediaPST, parse: parsePST}
	case isZIP(data):
		return kind{format: "zip", media: mediaZIP, parse: parseZIP}
	case bytes.HasPrefix(data, magicGZIP) && len(data) > 2 && data[2] == 8:
		return kind{format: "gzip", media: mediaGZIP, parse: parseGZIP}
	case bytes.HasPrefix(data, magicBZIP2) && len(data) >= 10 && data[3] >= '1' && data[3] <= '9' && string(data[4:10]) == "1AY&SY":
		return kind{format: "bzip2", media: mediaBZIP2, parse: parseBZIP2}
	case isTAR(data):
		return kind{format: "tar", media: mediaTAR, parse: parseTAR}
	case bytes.HasPrefix(bytes.TrimLeft(bytes.TrimPrefix(head, magicUTF8), " \t\r\n"), magicRTF):
		return kind{format: "rtf", media: mediaRTF, parse: parseRTF}
	}
	for _, s := range binarySigs {
		if bytes.HasPrefix(data, []byte(s.magic)) {
			return unsupported(s.media)
		}
	}
	if enc := bomEncoding(data); enc != "" {
		// UTF-16/32 text: classify the decoded head.
		return textKind(classifyText(decodeHead(data, enc), name, declared))
	}
	ct := http.DetectContentType(data)
	ctBase, _, _ := mime.ParseMediaType(ct)
	switch {
	case strings.HasPrefix(ctBase, "image/"), strings.HasPrefix(ctBase, "audio/"), strings.HasPrefix(ctBase, "video/"),
		strings.HasPrefix(ctBase, "font/"), ctBase == "application/ogg", ctBase == "application/vnd.ms-fontobject",
		ctBase == "application/x-rar-compressed", ctBase == "application/wasm":
		return unsupported(ctBase)
	}
	if utf16NoBOM(data) != "" {
		return textKind(classifyText(decodeHead(data, utf16NoBOM(data)), name, declared))
	}
	if looksBinary(data) {
		return unsupported(mediaBinary)
	}
	return textKind(classifyText(head, name, declared))
}

func isZIP(data []byte) bool {
	return bytes.HasPrefix(data, []byte("PK\x03\x04")) || bytes.HasPrefix(data, []byte("PK\x05\x06")) ||
		bytes.HasPrefix(data, []byte("PK\x07\x08PK\x03\x04"))
}

// isTAR recognises a POSIX/GNU header by its magic or, for old V7
// archives, by the header checksum.
func isTAR(data []byte) bool {
	if len(data) < 512 {
		return false
	}
	if string(data[257:262]) == "ustar" {
		return true
	}
	return tarChecksumOK(data[:512])
}

func tarChecksumOK(h []byte) bool {
	var stored int64
	field := bytes.TrimRight(bytes.TrimLeft(h[148:156], " "), " \x00")
	if len(field) == 0 {
		return false
	}
	for _, c := range field {
		if c < '0' || c > '7' {
			return false
		}
		stored = stored*8 + int64(c-'0')
	}
	var sum int64
	for i, c := range h {
		if i >= 148 && i < 156 {
			c = ' '
		}
		sum += int64(c)
	}
	// An all-zero header sums to 256 with the blank checksum field.
	return sum == stored && sum != 256 && h[0] != 0
}

// looksBinary reports content that is not text in any ASCII-compatible
// charset: NUL bytes or many control characters in the first 8 KiB.
func looksBinary(data []byte) bool {
	head := data[:min(len(data), 8192)]
	ctl := 0
	for _, c := range head {
		switch {
		case c == 0:
			return true
		case c < 0x20 && c != '\n' && c != '\r' && c != '\t' && c != '\f' && c != 0x1b && c != '\b' && c != 0x0b:
			ctl++
		}
	}
	return ctl*10 > len(head)
}

// classifyText tells the text formats apart from the (ASCII-compatible)
// head of the content, using name and declared type as tie-breakers.
func classifyText(head []byte, name, declared string) string {
	h := bytes.TrimLeft(bytes.TrimPrefix(head, magicUTF8), " \t\r\n")
	lower := bytes.ToLower(h[:min(len(h), 512)])
	hint := hintedText(name, declared)
	switch {
	case isMBOX(h):
		return mediaMBOX
	case hasPrefixFold(lower, "<!doctype html"), hasPrefixFold(lower, "<html"):
		if bytes.Contains(lower, []byte("xhtml")) {
			return mediaXHTML
		}
		return mediaHTML
	case hasPrefixFold(lower, "<?xml"):
		if bytes.Contains(lower, []byte("<html")) || bytes.Contains(lower, []byte("xhtml")) {
			return mediaXHTML
		}
		return mediaXML
	case isEML(h):
		return mediaEML
	case hint == mediaHTML && len(h) > 0 && h[0] == '<':
		return mediaHTML
	case hint != mediaText:
		return hint
	}
	// Untyped text that opens like an HTML fragment.
	if len(h) > 0 && h[0] == '<' {
		for _, tag := range []string{"<head", "<body", "<!--", "<div", "<p>", "<p ", "<table", "<h1", "<h2", "<title", "<meta", "<style", "<script"} {
			if hasPrefixFold(lower, tag) {
				return mediaHTML
			}
		}
	}
	return mediaText
}

func hasPrefixFold(b []byte, prefix string) bool {
	return len(b) >= len(prefix) && string(b[:len(prefix)]) == prefix
}

// hintedText returns the text media type that name or declared suggests.
func hintedText(name, declared string) string {
	if mt, _, err := mime.ParseMediaType(declared); err == nil {
		switch mt {
		case "text/html", mediaXHTML:
			return mediaHTML
		case "text/markdown", "text/x-markdown":
			return mediaMarkdown
		case "text/csv":
			return mediaCSV
		case mediaTSV:
			return mediaTSV
		case "message/rfc822":
			return mediaEML
		case mediaMBOX:
			return mediaMBOX
		}
	}
	switch strings.ToLower(path.Ext(name)) {
	case ".htm", ".html", ".xhtml", ".xht":
		return mediaHTML
	case ".md", ".markdown", ".mdown", ".mkd":
		return mediaMarkdown
	case ".csv":
		return mediaCSV
	case ".tsv", ".tab":
		return mediaTSV
	case ".eml":
		return mediaEML
	case ".mbox", ".mbx":
		return mediaMBOX
	}
	return mediaText
}

// isMBOX recognises a "From " separator line followed by a header.
func isMBOX(h []byte) bool {
	if !bytes.HasPrefix(h, []byte("From ")) {
		return false
	}
	i := bytes.IndexByte(h, '\n')
	if i < 0 {
		return false
	}
	return isEML(h[i+1:])
}

// mailHeaders are header fields that make a header block an e-mail.
var mailHeaders = []string{
	"from", "to", "cc", "subject", "date", "message-id", "received", "return-path", "mime-version",
	"delivered-to", "reply-to", "sender", "in-reply-to", "references", "x-mailer", "content-type",
	"dkim-signature", "arc-seal", "authentication-results", "thread-topic", "envelope-to",
}

// isEML recognises an RFC 822 header block: the first lines are header
// fields (or folded continuations) and at least two are mail fields, one
// of them From, Date, Subject, Message-ID or Received.
func isEML(h []byte) bool {
	known, strong := 0, false
	lines := 0
	for len(h) > 0 && lines < 64 {
		i := bytes.IndexByte(h, '\n')
		var line []byte
		if i < 0 {
			line, h = h, nil
		} else {
			line, h = h[:i], h[i+1:]
		}
		line = bytes.TrimSuffix(line, []byte("\r"))
		if len(line) == 0 {
			break
		}
		lines++
		if line[0] == ' ' || line[0] == '\t' {
			if lines == 1 {
				return false
			}
			continue
		}
		colon := bytes.IndexByte(line, ':')
		if colon <= 0 || !isFieldName(line[:colon]) {
			if h == nil { // a line cut by the sniffing window
				break
			}
			return false
		}
		f := strings.ToLower(string(line[:colon]))
		for _, m := range mailHeaders {
			if f == m {
				known++
				switch f {
				case "from", "date", "subject", "message-id", "received":
					strong = true
				}
				break
			}
		}
	}
	return known >= 2 && strong
}

func isFieldName(b []byte) bool {
	for _, c := range b {
		if c <= ' ' || c > '~' {
			return false
		}
	}
	return true
}
