package export

import "strings"

// Spreadsheets (Excel, LibreOffice Calc, Google Sheets) read a cell whose
// first character is one of formulaStarts as a formula, even from a CSV
// or DAT file: a file named `=HYPERLINK("…","open")+1.txt` would become
// a live link in the reviewer's spreadsheet. Following OWASP's CSV
// injection guidance (and ASVS 1.2.10, which adds NUL), the CSV and DAT
// writers prefix such a text cell with a single quote, which spreadsheets
// take as "this cell is text" and do not display.
const formulaStarts = "=+-@\t\r\n\x00"

// neutralise returns s with a single quote in front when a spreadsheet
// would read s as a formula, and s unchanged otherwise. newline is the
// DAT character that readers turn into a line break (-1 for CSV): a
// value starting with it starts with a line break once read.
func neutralise(s string, newline rune) string {
	if s == "" {
		return s
	}
	if strings.ContainsRune(formulaStarts, rune(s[0])) || newline >= 0 && strings.HasPrefix(s, string(newline)) {
		return "'" + s
	}
	return s
}

// ownColumns are the only columns whose values simdex computes itself
// from numbers, hashes and timestamps it generated, and from its own
// words: ids, sizes, percentages, hashes, the modification and indexing
// times, yes/no and the inclusive reason. None starts with a formula
// character but a negative number would, and numbers must stay numbers,
// so they are written as they are. Every other column is neutralised:
// keys, names, paths, media types, error messages, e-mail headers, the
// thread key and the deleted-at-source mark (both read from a document's
// metadata, where a document indexed by an older build may hold what its
// uploader put there), and the origin's metadata. A column added later is
// neutralised unless it is listed here.
var ownColumns = map[string]bool{
	"DOCID": true, "ParentDocID": true, "TopLevelDocID": true,
	"Native_SHA_256": true, "NativeSize": true, "TextSize": true,
	"ModTime": true, "IndexedAt": true,
	"ND_FamilyID": true, "ND_PivotID": true, "ND_IsPivot": true, "ND_Similarity": true, "ND_Containment": true,
	"ExactDupGroup": true, "Inclusive": true, "InclusiveReason": true,
}

// isText reports, by position in Columns, which columns are text.
var isText = func() []bool {
	out := make([]bool, len(Columns))
	for i, c := range Columns {
		out[i] = !ownColumns[c]
	}
	return out
}()

// neutraliseText neutralises the text columns of a row's fields, given in
// Columns order (see neutralise for newline).
func neutraliseText(fields []string, newline rune) {
	for i, f := range fields {
		if isText[i] {
			fields[i] = neutralise(f, newline)
		}
	}
}
