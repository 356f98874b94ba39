// Package chunk splits normalised text into content-defined chunks, the unit
// of the KDD'05 file–chunk graph: two documents that share a passage share
// the chunks inside it, whatever was inserted or removed around it, and the
// summed length of the shared chunks is a lower bound of the text in common.
//
// The algorithm is FastCDC (Xia et al., USENIX ATC 2016) with normalised
// chunking: a gear hash h = h<<1 + gear[b] rolls over the bytes, the first
// Min bytes of a chunk are skipped, a boundary is declared after the byte at
// which the top bits of h are all zero, with a stricter mask (log2(Avg)+2
// bits) before Avg bytes and a looser one (log2(Avg)-2 bits) after, and a
// chunk is cut at Max bytes if no boundary was found. The gear table is fixed
// (generated from a documented seed), so boundaries and chunk hashes are
// stable across runs, machines and releases; index/docs/format.md records
// how the table is generated, the masks and the parameters, because stored
// fingerprints depend on them.
//
// # Default parameters
//
// [DefaultParams] is Min 256, Avg 1024, Max 8192 bytes:
//
//   - Avg 1 KiB is the KDD'05 starting point ("~1000-byte chunks for a quick
//     look"): a shared passage of a few paragraphs contains whole chunks,
//     and the per-chunk record (a 64-bit hash and a length, 12 bytes) is
//     about 1 % of the text, within the paper's 1–3 % budget.
//   - Min 256 bounds the number of chunks of degenerate text (a long run of
//     one byte or a repeated short pattern produces chunks of Min bytes,
//     never tinier ones) and lets Cut skip a quarter of the expected chunk
//     without hashing it.
//   - Max 8 KiB bounds the damage of text without boundaries, such as long
//     runs of one character, to chunks eight times the average.
//
// With these parameters chunks of English text average about 1.2 KiB
// (see TestChunkSizes).
//
// The package is pure: no I/O, no logging, no global state; every function
// is safe for concurrent use and Cut allocates nothing.
package chunk
