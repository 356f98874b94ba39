package export

import (
	"bufio"
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"

	"github.com/simdex/simdex/index"
)

// Format is an export file format.
type Format string

// Formats.
const (
	CSV   Format = "csv"
	JSONL Format = "jsonl"
	DAT   Format = "dat"
)

// Formats lists the supported formats, for flag help.
var Formats = []Format{CSV, JSONL, DAT}

// ErrFormat reports an unknown format name.
var ErrFormat = errors.New("unknown export format")

// ParseFormat returns the format named s ("csv", "jsonl", "dat").
func ParseFormat(s string) (Format, error) {
	switch f := Format(strings.ToLower(strings.TrimSpace(s))); f {
	case CSV, JSONL, DAT:
		return f, nil
	}
	return "", fmt.Errorf("%w %q (want csv, jsonl or dat)", ErrFormat, s)
}

// Concordance defaults of DATOptions.
const (
	DefaultSeparator = '\u0014' // ASCII 20, shown as ¶ in code page 437
	DefaultQuote     = 'þ'      // U+00FE, ASCII 254
	DefaultNewline   = '®'      // U+00AE, ASCII 174
)

// DATOptions configure the DAT format; the zero value is the Concordance
// default described in the package documentation.
type DATOptions struct {
	// Separator separates fields (default U+0014).
	Separator rune
	// Quote wraps every field (default þ U+00FE).
	Quote rune
	// Newline stands for a line break inside a field (default ® U+00AE).
	Newline rune
	// OmitBOM leaves out the UTF-8 byte-order mark.
	OmitBOM bool
}

func (o DATOptions) withDefaults() DATOptions {
	if o.Separator == 0 {
		o.Separator = DefaultSeparator
	}
	if o.Quote == 0 {
		o.Quote = DefaultQuote
	}
	if o.Newline == 0 {
		o.Newline = DefaultNewline
	}
	return o
}

// Validate reports delimiters that could break a record: equal ones, line
// breaks, or invalid or replacement runes.
func (o DATOptions) Validate() error {
	o = o.withDefaults()
	var errs []error
	for name, r := range map[string]rune{"separator": o.Separator, "quote": o.Quote, "newline": o.Newline} {
		if !utf8.ValidRune(r) || r == utf8.RuneError || r == '\r' || r == '\n' {
			errs = append(errs, fmt.Errorf("dat %s %U cannot delimit fields", name, r))
		}
	}
	if o.Separator == o.Quote || o.Separator == o.Newline || o.Quote == o.Newline {
		errs = append(errs, fmt.Errorf("dat separator %U, quote %U and newline %U must differ", o.Separator, o.Quote, o.Newline))
	}
	return errors.Join(errs...)
}

// Options configure Export.
type Options struct {
	// Format is the file format (required).
	Format Format
	// Thresholds decide the pairs and families (default
	// index.DefaultThresholds).
	Thresholds *index.Thresholds
	// Include restricts the export, e.g. to a legal matter's documents
	// (see OnlyDocs); nil exports every document. Family, pivot and
	// duplicate ids may name documents left out.
	Include Filter
	// DAT configures the DAT format.
	DAT DATOptions
}

// RowWriter writes rows in one format. Rows are buffered: call Flush at
// the end and check its error.
type RowWriter interface {
	// Write writes one row.
	Write(*Row) error
	// Flush writes buffered rows to the underlying writer.
	Flush() error
}

// NewWriter returns a RowWriter of format f over w. CSV and DAT writers
// write their header row (and DAT its byte-order mark) first.
func NewWriter(w io.Writer, f Format, dat DATOptions) (RowWriter, error) {
	switch f {
	case CSV:
		return newCSVWriter(w), nil
	case JSONL:
		return newJSONLWriter(w), nil
	case DAT:
		if err := dat.Validate(); err != nil {
			return nil, err
		}
		return newDATWriter(w, dat.withDefaults()), nil
	}
	return nil, fmt.Errorf("%w %q", ErrFormat, f)
}

// Export analyses eng and writes every document that opts.Include keeps to
// w in opts.Format. It returns the number of rows written.
func Export(ctx context.Context, eng Engine, w io.Writer, opts Options) (int, error) {
	th := index.DefaultThresholds()
	if opts.Thresholds != nil {
		th = *opts.Thresholds
	}
	rw, err := NewWriter(w, opts.Format, opts.DAT)
	if err != nil {
		return 0, fmt.Errorf("export %s: %w", opts.Format, err)
	}
	an, err := eng.Analyse(ctx, th)
	if err != nil {
		return 0, fmt.Errorf("export %s: %w", opts.Format, err)
	}
	return WriteAnalysis(ctx, eng, an, th, rw, opts)
}

// WriteAnalysis writes the rows of an (made with thresholds th) that
// opts.Include keeps to rw and flushes it, for callers that already hold an
// analysis. It returns the number of rows written.
func WriteAnalysis(ctx context.Context, eng Engine, an *index.Analysis, th index.Thresholds, rw RowWriter, opts Options) (int, error) {
	n := 0
	var werr error
	err := Rows(ctx, eng, an, th, opts.Include, func(r *Row) error {
		if werr = rw.Write(r); werr != nil {
			werr = fmt.Errorf("export %s: write row %d: %w", opts.Format, n+1, werr)
			return werr
		}
		n++
		return nil
	})
	if werr != nil {
		return n, werr
	}
	if err != nil {
		return n, fmt.Errorf("export %s: %w", opts.Format, err)
	}
	if err := rw.Flush(); err != nil {
		return n, fmt.Errorf("export %s: flush after %d rows: %w", opts.Format, n, err)
	}
	return n, nil
}

const bufSize = 64 << 10

// csvWriter writes RFC 4180 CSV.
type csvWriter struct {
	cw     *csv.Writer
	fields []string
}

func newCSVWriter(w io.Writer) *csvWriter {
	c := &csvWriter{cw: csv.NewWriter(bufio.NewWriterSize(w, bufSize))}
	c.cw.Write(Columns) // an error sticks and is reported by Write or Flush
	return c
}

func (c *csvWriter) Write(r *Row) error {
	c.fields = r.AppendValues(c.fields[:0])
	neutraliseText(c.fields, -1)
	for i, f := range c.fields {
		if !utf8.ValidString(f) {
			c.fields[i] = replaceInvalid(f)
		}
	}
	if err := c.cw.Write(c.fields); err != nil {
		return err
	}
	return c.cw.Error()
}

// Flush flushes the csv.Writer and so the buffer beneath it, which
// csv.NewWriter uses as is.
func (c *csvWriter) Flush() error {
	c.cw.Flush()
	return c.cw.Error()
}

// replaceInvalid replaces every byte of s that is not part of valid UTF-8
// with U+FFFD, as encoding/json and the DAT writer do.
func replaceInvalid(s string) string {
	var b strings.Builder
	b.Grow(len(s) + 8)
	for _, r := range s {
		b.WriteRune(r) // an invalid byte decodes as utf8.RuneError
	}
	return b.String()
}

// jsonRow is a Row as a JSON object.
type jsonRow struct {
	DocID           index.DocID `json:"DOCID"`
	Key             string      `json:"Key"`
	Name            string      `json:"Name"`
	Source          string      `json:"Source"`
	VersionID       string      `json:"VersionID,omitempty"`
	ParentDocID     index.DocID `json:"ParentDocID,omitempty"`
	TopLevelDocID   index.DocID `json:"TopLevelDocID"`
	AttachmentPath  string      `json:"AttachmentPath,omitempty"`
	MediaType       string      `json:"MediaType,omitempty"`
	NativeSHA256    string      `json:"Native_SHA_256,omitempty"`
	NativeSize      int64       `json:"NativeSize"`
	TextSize        int64       `json:"TextSize"`
	ModTime         string      `json:"ModTime,omitempty"`
	IndexedAt       string      `json:"IndexedAt,omitempty"`
	ExtractionError string      `json:"ExtractionError,omitempty"`
	NDFamilyID      index.DocID `json:"ND_FamilyID,omitempty"`
	NDPivotID       index.DocID `json:"ND_PivotID,omitempty"`
	NDIsPivot       *bool       `json:"ND_IsPivot,omitempty"`
	NDSimilarity    *float64    `json:"ND_Similarity,omitempty"`
	NDContainment   *float64    `json:"ND_Containment,omitempty"`
	ExactDupGroup   index.DocID `json:"ExactDupGroup,omitempty"`
	From            string      `json:"From,omitempty"`
	To              string      `json:"To,omitempty"`
	Cc              string      `json:"Cc,omitempty"`
	Date            string      `json:"Date,omitempty"`
	Subject         string      `json:"Subject,omitempty"`
	MessageID       string      `json:"MessageID,omitempty"`
	EmailThreadID   string      `json:"EmailThreadID,omitempty"`
	Inclusive       *bool       `json:"Inclusive,omitempty"`
	InclusiveReason string      `json:"InclusiveReason,omitempty"`
	DeletedAtSource string      `json:"DeletedAtSource,omitempty"`
	DeletedAtEvent  string      `json:"DeletedAtSourceEvent,omitempty"`
	// OriginMetadata is an object here, not the load files' JSON text.
	OriginMetadata map[string]string `json:"OriginMetadata,omitempty"`
}

// jsonlWriter writes one JSON object per line. encoding/json replaces
// invalid UTF-8 with U+FFFD and escapes line breaks.
type jsonlWriter struct {
	bw  *bufio.Writer
	enc *json.Encoder
}

func newJSONLWriter(w io.Writer) *jsonlWriter {
	bw := bufio.NewWriterSize(w, bufSize)
	enc := json.NewEncoder(bw)
	enc.SetEscapeHTML(false)
	return &jsonlWriter{bw: bw, enc: enc}
}

func (j *jsonlWriter) Write(r *Row) error {
	o := jsonRow{
		DocID: r.DocID, Key: r.Key, Name: r.Name, Source: r.Source, VersionID: r.VersionID,
		ParentDocID: r.ParentDocID, TopLevelDocID: r.TopLevelDocID, AttachmentPath: r.AttachmentPath,
		MediaType: r.MediaType, NativeSHA256: sha(r.NativeSHA256), NativeSize: r.NativeSize, TextSize: r.TextSize,
		ModTime: stamp(r.ModTime), IndexedAt: stamp(r.IndexedAt), ExtractionError: r.ExtractionError,
		ExactDupGroup: r.ExactDupGroup,
		From:          r.From, To: r.To, Cc: r.Cc, Date: r.Date, Subject: r.Subject, MessageID: r.MessageID,
		DeletedAtSource: r.DeletedAtSource, DeletedAtEvent: r.DeletedAtSourceEvent,
		OriginMetadata: r.OriginMetadata,
	}
	if r.EmailThreadID != "" {
		inclusive := r.Inclusive
		o.EmailThreadID, o.Inclusive, o.InclusiveReason = r.EmailThreadID, &inclusive, r.InclusiveReason
	}
	if r.InFamily {
		pivot, sim, cont := r.NDIsPivot, roundPercent(r.NDSimilarity), roundPercent(r.NDContainment)
		o.NDFamilyID, o.NDPivotID, o.NDIsPivot, o.NDSimilarity, o.NDContainment = r.NDFamilyID, r.NDPivotID, &pivot, &sim, &cont
	}
	return j.enc.Encode(&o) // Encode ends the object with a newline
}

func (j *jsonlWriter) Flush() error { return j.bw.Flush() }

// datWriter writes a Concordance DAT load file.
type datWriter struct {
	bw     *bufio.Writer
	o      DATOptions
	fields []string
	err    error
}

func newDATWriter(w io.Writer, o DATOptions) *datWriter {
	d := &datWriter{bw: bufio.NewWriterSize(w, bufSize), o: o}
	if !o.OmitBOM {
		d.bw.WriteString("\uFEFF")
	}
	d.record(Columns)
	return d
}

func (d *datWriter) Write(r *Row) error {
	d.fields = r.AppendValues(d.fields[:0])
	neutraliseText(d.fields, d.o.Newline)
	return d.record(d.fields)
}

func (d *datWriter) record(fields []string) error {
	if d.err != nil {
		return d.err
	}
	for i, f := range fields {
		if i > 0 {
			d.bw.WriteRune(d.o.Separator)
		}
		d.bw.WriteRune(d.o.Quote)
		escapeDAT(d.bw, f, d.o)
		d.bw.WriteRune(d.o.Quote)
	}
	_, d.err = d.bw.WriteString("\r\n")
	return d.err
}

func (d *datWriter) Flush() error {
	if d.err != nil {
		return d.err
	}
	return d.bw.Flush()
}

// runeWriter is what escapeDAT writes to.
type runeWriter interface {
	WriteRune(rune) (int, error)
	WriteString(string) (int, error)
}

// escapeDAT writes the escaped content of one DAT field (without its
// enclosing quotes) to w: invalid UTF-8 and the separator become U+FFFD,
// the quote is doubled, and CR, LF and CRLF become o.Newline. o must have
// been completed with its defaults.
func escapeDAT(w runeWriter, s string, o DATOptions) {
	clean := true
	for _, r := range s {
		if r == utf8.RuneError || r == '\r' || r == '\n' || r == o.Separator || r == o.Quote {
			clean = false
			break
		}
	}
	if clean {
		w.WriteString(s)
		return
	}
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch r {
		case '\r':
			if i+1 < len(s) && s[i+1] == '\n' {
				size = 2
			}
			w.WriteRune(o.Newline)
		case '\n':
			w.WriteRune(o.Newline)
		case o.Separator:
			w.WriteRune(utf8.RuneError)
		case o.Quote:
			w.WriteRune(o.Quote)
			w.WriteRune(o.Quote)
		default:
			w.WriteRune(r) // writes U+FFFD for an invalid byte
		}
		i += size
	}
}
