// Package eval measures simdex's near-copy engine against exact ground truth
// and against the algorithms and tools a user could pick instead, and
// writes the evidence for its defaults to docs/EVALUATION.md.
//
// It has four parts:
//
//   - a generator of controlled modifications, as in the seed studies: words
//     inserted or removed i times at random or evenly spread places, a
//     random span of up to 80 % of a file added or removed, the first k of n
//     sections of a file, and shared boilerplate added to unrelated files;
//   - the algorithms of the seed study side by side with the engine: Mod-n,
//     Min-n, Sketch-n, Winnow-n, BSW-n, whole-chunk hashes and 64-bit
//     SimHash, each with its window w and sampling parameter n;
//   - true similarity, computed exactly by brute force over word 5-gram
//     shingles, for a pair and for all pairs of a corpus (through an
//     inverted index of shingles). Its words are its own, not the engine's
//     normal form (TruthWords: runs of letters and digits after NFKC and
//     case folding, each letter of Han, kana and other unspaced scripts a
//     word, everything else a separator), so separators, quote markers and
//     markup cannot hide the engine's misses. An e-mail's text is read by
//     the evaluation itself (ReadMail: Subject and decoded inline text
//     parts); other documents' text is package extract's;
//   - experiments that draw the seed figures with gonum.org/v1/plot, and the
//     recall and false alarms of the engine, ssdeep and tlsh on the labelled
//     corpora in ../shared/corpora and the real mailing list mail-usrp
//     (split by quoting, see QuoteDepth), with the Debian manuals'
//     cross-format and chapter-in-book pairs listed one by one.
//
// [Run] does all of it; cmd/simdex-eval and `make eval` call it.
package eval
