package main

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// words returns a text of n words that no other seed shares.
func words(seed string, n int) []byte {
	var b strings.Builder
	for i := range n {
		b.WriteString(seed)
		b.WriteString(string(rune('a' + i%26)))
		b.WriteString(string(rune('a' + i/26%26)))
		b.WriteByte(' ')
	}
	return []byte(b.String())
}

// TestScanRefusesAMissingArgument: scan /nonexistent said its error was
// "recorded in the index for manual review", recorded nothing, and ended
// "1 of 0 files could not be fully indexed". A missing or unusable
// argument is one error naming it, before anything is opened.
func TestScanRefusesAMissingArgument(t *testing.T) {
	dir := t.TempDir()
	write(t, filepath.Join(dir, "a.txt"), words("alpha", 200))
	pipe := filepath.Join(t.TempDir(), "pipe")
	if err := syscall.Mkfifo(pipe, 0o644); err != nil {
		t.Fatal(err)
	}
	idx := filepath.Join(t.TempDir(), "idx.db")
	missing := filepath.Join(dir, "nonexistent")
	for _, args := range [][]string{{missing}, {dir, missing}, {pipe}} {
		out, code, err := run(t, append([]string{"scan", "--index", idx}, args...)...)
		bad := args[len(args)-1]
		if code != 2 || err == nil || out != "" || !strings.Contains(err.Error(), "scan "+bad+": ") ||
			strings.Contains(err.Error(), "\n") || strings.Contains(err.Error(), "recorded") {
			t.Errorf("scan %v: exit %d, %v, printed %q; want exit 2 and one line naming %s", args, code, err, out, bad)
		}
	}
	if _, err := os.Stat(idx); !os.IsNotExist(err) {
		t.Errorf("a refused scan created the index: %v", err)
	}
}

// TestScanSummarySaysWhatChanged: a re-scan printed "299 files, 301
// documents indexed" without saying that nothing had changed; the summary
// counts new, changed and unchanged files. Files an earlier scan indexed
// were named by their key (fs:/abs/path) beside this scan's paths; the
// text names both as paths, while the JSON keeps its names. Counts of one
// are singular.
func TestScanSummarySaysWhatChanged(t *testing.T) {
	root := t.TempDir()
	t.Chdir(root)
	write(t, filepath.Join("d1", "one.txt"), words("alpha", 300))
	write(t, filepath.Join("d1", "two.txt"), words("beta", 300))
	idx := filepath.Join(t.TempDir(), "idx.db")
	scan := func(want string, args ...string) string {
		t.Helper()
		out, code, err := run(t, append([]string{"scan", "--index", idx}, args...)...)
		if code != 0 || !strings.HasPrefix(out, want) {
			t.Errorf("scan %v: exit %d, %v; want a summary starting %q:\n%s", args, code, err, want, out)
		}
		return out
	}
	scan("2 files: 2 new, 0 changed, 0 unchanged (already indexed); 2 documents, ", "d1")
	scan("2 files: 0 new, 0 changed, 2 unchanged (already indexed); 2 documents, ", "d1")
	write(t, filepath.Join("d1", "two.txt"), words("gamma", 300))
	write(t, filepath.Join("d1", "three.txt"), words("delta", 300))
	scan("3 files: 1 new, 1 changed, 1 unchanged (already indexed); 3 documents, ", "d1")

	edited := words("alpha", 300)
	copy(edited[len(edited)-12:], "edited here ")
	write(t, filepath.Join("d2", "one-edited.txt"), edited)
	out := scan("1 file: 1 new, 0 changed, 0 unchanged (already indexed); 1 document, ", "--pairs", "d2")
	for _, want := range []string{"1 link,", "../d1/one.txt ~ one-edited.txt"} {
		if !strings.Contains(out, want) {
			t.Errorf("scan of d2 lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "fs:") || strings.Contains(out, "1 links") || strings.Contains(out, "1 files") {
		t.Errorf("scan of d2 names files two ways or says 1 links:\n%s", out)
	}
	// One file scanned alone is named in its folder, not "." (the JSON's
	// name for it, relative to itself).
	out = scan("1 file: 0 new, 0 changed, 1 unchanged", "--pairs", filepath.Join("d2", "one-edited.txt"))
	if !strings.Contains(out, "one-edited.txt ~ ../d1/one.txt") {
		t.Errorf("scan of one file names it or its copy otherwise:\n%s", out)
	}
	jsonOut := scan("{", "--json", "d2")
	if abs, _ := filepath.Abs(filepath.Join("d1", "one.txt")); !strings.Contains(jsonOut, `"fs:`+filepath.ToSlash(abs)+`"`) {
		t.Errorf("the JSON report no longer names an earlier scan's file by its key:\n%s", jsonOut)
	}
}

// TestScanErrorsSayWhatWasRecorded: a file that could not be extracted is
// recorded in the index with its error; a path the scan could not read
// (a pipe) is not, and is marked so. The exit error is one line that
// counts both.
func TestScanErrorsSayWhatWasRecorded(t *testing.T) {
	dir := t.TempDir()
	write(t, filepath.Join(dir, "good.txt"), words("alpha", 200))
	write(t, filepath.Join(dir, "empty.txt"), nil)
	if err := syscall.Mkfifo(filepath.Join(dir, "pipe"), 0o644); err != nil {
		t.Fatal(err)
	}
	out, code, err := run(t, "scan", "--index", filepath.Join(t.TempDir(), "idx.db"), dir)
	if code != 1 || err == nil {
		t.Fatalf("scan: exit %d, %v", code, err)
	}
	for _, want := range []string{"2 files: 2 new", "; 2 errors\n", "unless marked not indexed", "  empty.txt: ", "  pipe: not a regular file", "(not indexed)\n"} {
		if !strings.Contains(out, want) {
			t.Errorf("report lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "empty text (not indexed)") {
		t.Errorf("the recorded file is marked not indexed:\n%s", out)
	}
	if want := "1 of 2 files could not be fully indexed, 1 path not indexed (listed in the report)"; err.Error() != want {
		t.Errorf("exit error %q, want %q", err, want)
	}
}
