package extract

import "errors"

// Sentinel errors. Every extraction failure is a *Error whose Err wraps
// exactly one of them; branch with errors.Is.
var (
	// ErrTooLarge: the object or its text is over MaxObjectSize or
	// MaxTextSize.
	ErrTooLarge = errors.New("too large")
	// ErrBomb: decompression went over MaxDecompressedSize for the tree or
	// over MaxCompressionRatio for one member or stream.
	ErrBomb = errors.New("decompression bomb")
	// ErrTooDeep: children nested deeper than MaxDepth were not opened.
	ErrTooDeep = errors.New("nested too deep")
	// ErrTooManyChildren: the tree reached MaxChildren; later children
	// were not extracted.
	ErrTooManyChildren = errors.New("too many children")
	// ErrTimeout: the object's extraction ran past Limits.Timeout.
	ErrTimeout = errors.New("timed out")
	// ErrEncrypted: the document or member is encrypted or password
	// protected.
	ErrEncrypted = errors.New("encrypted document")
	// ErrMalformed: the content is truncated or not valid for its format.
	ErrMalformed = errors.New("malformed content")
	// ErrUnsupported: the content is of a type that has no text to extract
	// here (images, executables, legacy binary Office files...).
	ErrUnsupported = errors.New("unsupported format")
)

// errTimeout is the context cause of an object's own deadline, which tells
// it apart from the caller's.
var errTimeout = errors.New("extract timeout")

// Error is a specific extraction failure.
type Error struct {
	// Format is the format being extracted, e.g. "pdf", "zip", "eml";
	// empty when the format is not known.
	Format string
	// Op is what was being attempted, e.g. "decrypt", "read member".
	Op string
	// Err wraps one of the sentinel errors.
	Err error
}

// Error returns a message like "pdf: decrypt: encrypted document".
func (e *Error) Error() string {
	s := e.Err.Error()
	if e.Op != "" {
		s = e.Op + ": " + s
	}
	if e.Format != "" {
		s = e.Format + ": " + s
	}
	return s
}

// Unwrap returns the wrapped error.
func (e *Error) Unwrap() error { return e.Err }
