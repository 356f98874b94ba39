// Package export writes the index's documents with their near-duplicate
// fields as load files for e-discovery platforms: CSV, JSON Lines and a
// Concordance-style DAT file. Every document version appears exactly once,
// ordered by DOCID, and rows are streamed to the io.Writer one at a time.
//
// # Near-duplicate fields
//
// Rows are built from index.Analysis. A document whose content belongs to a
// near-copy family (index.Family) carries:
//
//   - ND_FamilyID: the smallest DOCID of the family. Document ids are never
//     reused and only grow, so a family keeps its id across incremental
//     runs when documents join it; it changes only when its smallest member
//     is removed, or two families merge (the merged family keeps the older
//     of the two ids).
//   - ND_PivotID: the family's pivot (index.BetterPivot, the one definition
//     the API, the review UI and scan use too: the member whose summed
//     resemblance to the others is largest, an identical copy counting 1;
//     then the longer text, then the smaller id).
//   - ND_IsPivot: "yes" for the pivot itself, "no" for the other members
//     (identical copies of the pivot included).
//   - ND_Similarity: resemblance to the pivot as a percentage with one
//     decimal (100.0 for the pivot and its identical copies).
//   - ND_Containment: the percentage of the document's text found in the
//     pivot: simdex reports containment, which resemblance hides when a
//     short document sits inside a long one.
//
// Scores come from the analysis' pairs when the pair (member, pivot) was
// reported; otherwise one Similar query from the pivot per family scores
// the members it reaches, and members reached only through others (the
// family is a connected component) are scored from their stored sketches.
//
// ExactDupGroup is the smallest DOCID of the set of documents with
// identical normalised text, whether or not they have near copies; it is
// empty for a document whose text no other document shares. Documents that
// are in no family, or were stored with an extraction error, keep their ND
// fields empty.
//
// # Metadata
//
// From, To, Cc, Date, Subject and MessageID are simdex's own metadata
// (index.Doc.Meta), what extraction found in the document; EmailThreadID
// and DeletedAtSource come from it too. OriginMetadata is the metadata
// the origin delivered with the object (index.Doc.Origin), whatever its
// uploader chose: one JSON object, keys in order, in a CSV or DAT cell,
// and an object in JSONL.
//
// In CSV and DAT files every column a spreadsheet could read as a formula
// is neutralised (formula.go): only the columns simdex computes from
// numbers, hashes and timestamps it generated are written as they are, and
// a column added later is neutralised unless it is listed among those.
//
// # Formats
//
// CSV follows RFC 4180 as encoding/csv writes it: a header row, fields
// quoted when they need it, LF line ends, no byte-order mark; invalid UTF-8
// becomes U+FFFD.
//
// JSONL writes one JSON object per line with the same field names as the
// load-file columns; empty optional fields are left out.
//
// DAT follows the Concordance defaults that review platforms import
// without configuration: each field is wrapped in the quote character þ
// (U+00FE, ASCII 254), fields are separated by U+0014 (ASCII 20, shown as
// ¶ by the DOS code page, which is why guides name "¶" the field
// delimiter), a line break inside a field is written as ® (U+00AE, ASCII
// 174), and records end with CRLF. The file is UTF-8 with a byte-order
// mark, which is how platforms such as Relativity detect UTF-8 rather than
// the legacy code page. DATOptions changes the delimiters or drops the mark.
// Inside a field invalid UTF-8 becomes U+FFFD, the quote character is
// doubled (as CSV escapes its quote), the field separator becomes U+FFFD
// and CR, LF and CRLF become the newline character, so a field can never
// break its record: splitting a line on the separator always yields the
// fields.
package export
