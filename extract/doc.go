// Package extract turns an object's bytes into text, metadata and child
// documents (attachments, archive members, embedded objects), choosing the
// reader by the sniffed content rather than the name: plain text and HTML
// in any charset, PDF, RTF, OOXML and ODF, legacy Word, Excel and
// PowerPoint, e-mail (EML, MSG, mbox), Outlook PST/OST mailboxes, and ZIP,
// TAR and gzip archives.
//
// Limits are enforced while reading (size, decompressed size, compression
// ratio, depth, children, text size and time), so a hostile object costs a
// bounded amount of memory and time. A failure is a typed *Error whose
// sentinel (ErrTooLarge, ErrBomb, ErrMalformed, …) callers test with
// errors.Is; the document is still returned with what could be read, so
// that the index records it and reviewers see what needs manual handling.
package extract
