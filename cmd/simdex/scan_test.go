package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/simdex/simdex/internal/corpustest"
	"github.com/spf13/cobra"
)

// run executes the simdex command line in-process and returns its
// standard output and exit status (0, or exitError's code).
func run(t *testing.T, args ...string) (string, int, error) {
	t.Helper()
	cmd := newRootCmd()
	var out, errOut bytes.Buffer
	cmd.SetOut(&out)
	cmd.SetErr(&errOut)
	cmd.SetArgs(args)
	err := cmd.ExecuteContext(context.Background())
	if err == nil {
		return out.String(), 0, nil
	}
	var ee *exitError
	if errors.As(err, &ee) {
		return out.String(), ee.code, err
	}
	return out.String(), 2, err
}

func readCorpus(t *testing.T, name string) []byte {
	t.Helper()
	return corpustest.Read(t, "spdx/text/"+name)
}

func write(t *testing.T, path string, data []byte) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

type scanReport struct {
	Files     int
	Documents int
	Errors    []struct{ Path, Error string }
	Identical [][]string
	Families  []struct {
		Pivot   string
		Members []string
	}
	Pairs []struct {
		A, B          string
		Resemblance   float64
		ContainmentAB float64 `json:"containment_ab"`
		ContainmentBA float64 `json:"containment_ba"`
		BytesInCommon int64   `json:"bytes_in_common"`
		Hamming       int
		Exact         bool
	}
}

// TestScanReportsCopiesAndEveryBadFile: a directory of real licence texts
// with an identical copy, an edited version, an excerpt and every kind of
// bad file. Copies and near-copies are reported with the JSON contract;
// each bad file has its own error in the report and the exit status is 1;
// nothing indexed before is lost.
func TestScanReportsCopiesAndEveryBadFile(t *testing.T) {
	t.Setenv("SIMDEX_EXTRACT_MAX_OBJECT_SIZE", "100000")
	dir := t.TempDir()
	idx := filepath.Join(t.TempDir(), "idx.db")
	gpl := readCorpus(t, "GPL-3.0-only.txt")
	apache := readCorpus(t, "Apache-2.0.txt")
	write(t, filepath.Join(dir, "gpl.txt"), gpl)
	write(t, filepath.Join(dir, "copies", "gpl copy.txt"), gpl)
	edited := bytes.Replace(gpl, []byte("software"), []byte("programs"), 5)
	write(t, filepath.Join(dir, "drafts", "gpl-edited.txt"), edited)
	write(t, filepath.Join(dir, "apache.txt"), apache)
	write(t, filepath.Join(dir, "excerpt.txt"), gpl[len(gpl)/3:len(gpl)/2])

	out, code, err := run(t, "scan", "--index", idx, "--json", dir)
	if code != 0 {
		t.Fatalf("clean scan: exit %d: %v\n%s", code, err, out)
	}
	var rep scanReport
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("scan --json: %v\n%s", err, out)
	}
	if rep.Files != 5 || len(rep.Errors) != 0 {
		t.Fatalf("files %d, errors %v", rep.Files, rep.Errors)
	}
	if len(rep.Identical) != 1 || strings.Join(rep.Identical[0], ",") != "copies/gpl copy.txt,gpl.txt" {
		t.Errorf("identical sets %v", rep.Identical)
	}
	found := map[string]bool{}
	for _, p := range rep.Pairs {
		found[p.A+" ~ "+p.B] = true
		found[p.B+" ~ "+p.A] = true
		if strings.Contains(p.A+p.B, "apache") {
			t.Errorf("unrelated pair reported: %+v", p)
		}
		if (p.A == "excerpt.txt" && p.ContainmentAB < 0.8) || (p.B == "excerpt.txt" && p.ContainmentBA < 0.8) {
			t.Errorf("excerpt containment not found: %+v", p)
		}
	}
	for _, want := range []string{"drafts/gpl-edited.txt ~ gpl.txt", "excerpt.txt ~ gpl.txt"} {
		if !found[want] {
			t.Errorf("pair %s not reported; pairs %+v", want, rep.Pairs)
		}
	}
	if len(rep.Families) == 0 {
		t.Errorf("no family reported")
	}

	// Now every kind of bad file, next to the good ones.
	write(t, filepath.Join(dir, "bad", "empty.txt"), nil)
	write(t, filepath.Join(dir, "bad", "blob.bin"), []byte{0x7f, 'E', 'L', 'F', 2, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 2, 3})
	write(t, filepath.Join(dir, "bad", "huge.txt"), bytes.Repeat([]byte("a large file of words "), 10000))
	write(t, filepath.Join(dir, "bad", "invalid-utf8.txt"), []byte("caf\xc3 \xff\xfe\x00\x00 broken \xed\xa0\x80 surrogates"))
	if err := os.Symlink(filepath.Join(dir, "missing.txt"), filepath.Join(dir, "bad", "dangling.txt")); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(dir, "bad", "pipe"), 0o644); err != nil {
		t.Fatal(err)
	}
	out, code, err = run(t, "scan", "--index", idx, "--json", dir)
	if code != 1 || err == nil || !strings.Contains(err.Error(), "could not be fully indexed") {
		t.Fatalf("scan with bad files: exit %d, %v", code, err)
	}
	rep = scanReport{}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("scan --json: %v\n%s", err, out)
	}
	errs := map[string]string{}
	for _, e := range rep.Errors {
		errs[strings.TrimPrefix(e.Path, dir+"/")] = e.Error
	}
	for file, want := range map[string]string{
		"bad/empty.txt":        "empty",
		"bad/blob.bin":         "unsupported",
		"bad/huge.txt":         "too large",
		"bad/invalid-utf8.txt": "",
		"bad/dangling.txt":     "no such file",
		"bad/pipe":             "not a regular file",
	} {
		got, ok := errs[file]
		if !ok || !strings.Contains(got, want) {
			t.Errorf("%s: error %q (reported %v), want one mentioning %q", file, got, ok, want)
		}
	}
	if len(rep.Identical) != 1 || !found["drafts/gpl-edited.txt ~ gpl.txt"] {
		t.Errorf("the good files' results changed: identical %v", rep.Identical)
	}

	// similar by file and by id, against the same index.
	out, code, err = run(t, "similar", "--index", idx, "--json", filepath.Join(dir, "drafts", "gpl-edited.txt"))
	if code != 0 {
		t.Fatalf("similar FILE: exit %d: %v", code, err)
	}
	var sim struct {
		Matches []struct {
			ID            int64
			Name          string
			Resemblance   float64
			ContainmentAB float64 `json:"containment_ab"`
			Exact         bool
		}
	}
	if err := json.Unmarshal([]byte(out), &sim); err != nil {
		t.Fatalf("similar --json: %v\n%s", err, out)
	}
	names := map[string]bool{}
	for _, m := range sim.Matches {
		names[m.Name] = true
	}
	for _, want := range []string{"gpl.txt", "copies/gpl copy.txt", "drafts/gpl-edited.txt", "excerpt.txt"} {
		if !names[want] {
			t.Errorf("similar FILE: %s missing from %+v", want, sim.Matches)
		}
	}
	if names["apache.txt"] {
		t.Errorf("similar FILE: unrelated apache.txt reported")
	}
	var id int64
	for _, m := range sim.Matches {
		if m.Name == "gpl.txt" {
			id = m.ID
		}
	}
	out, code, err = run(t, "similar", "--index", idx, "--json", idString(id))
	if code != 0 || !strings.Contains(out, `"copies/gpl copy.txt"`) {
		t.Fatalf("similar ID: exit %d, %v\n%s", code, err, out)
	}
	if _, code, err = run(t, "similar", "--index", idx, "999999"); code == 0 {
		t.Errorf("similar of an unknown id succeeded")
	} else if !strings.Contains(err.Error(), "not found") {
		t.Errorf("similar of an unknown id: %v", err)
	}
	if _, code, _ = run(t, "similar", "--index", idx, filepath.Join(dir, "bad", "blob.bin")); code == 0 {
		t.Errorf("similar of a binary file succeeded")
	}
	if _, code, _ = run(t, "scan", "--index", idx, "--threshold", "1.5", dir); code != 2 {
		t.Errorf("threshold 1.5: exit %d, want 2", code)
	}
}

func idString(id int64) string {
	b, _ := json.Marshal(id)
	return string(b)
}

// A budget of bytes in flight smaller than any file still scans every file
// (one at a time), with the same report.
func TestScanWithTinyInFlightBudget(t *testing.T) {
	dir := t.TempDir()
	gpl := readCorpus(t, "GPL-3.0-only.txt")
	write(t, filepath.Join(dir, "gpl.txt"), gpl)
	write(t, filepath.Join(dir, "copy.txt"), gpl)
	write(t, filepath.Join(dir, "excerpt.txt"), gpl[len(gpl)/3:len(gpl)/2])
	write(t, filepath.Join(dir, "empty.txt"), nil)
	var reports []scanReport
	for _, flags := range [][]string{{"--in-flight-bytes", "100", "--workers", "3"}, {}} {
		args := append([]string{"scan", "--index", filepath.Join(t.TempDir(), "idx.db"), "--json"}, flags...)
		out, code, err := run(t, append(args, dir)...)
		if code != 1 {
			t.Fatalf("scan %v: exit %d (want 1 for the empty file): %v", flags, code, err)
		}
		var rep scanReport
		if err := json.Unmarshal([]byte(out), &rep); err != nil {
			t.Fatal(err)
		}
		reports = append(reports, rep)
	}
	a, b := reports[0], reports[1]
	if a.Files != 4 || len(a.Errors) != 1 || len(a.Identical) != 1 || len(a.Pairs) != len(b.Pairs) || len(a.Pairs) < 2 {
		t.Errorf("tiny budget: %+v\ndefault: %+v", a, b)
	}
}

// Nonsensical concurrency flags are refused before anything is opened.
func TestScanRefusesBadConcurrencyFlags(t *testing.T) {
	dir := t.TempDir()
	idx := filepath.Join(t.TempDir(), "idx.db")
	for _, flags := range [][]string{{"--workers", "0"}, {"--workers", "-3"}, {"--in-flight-bytes", "0"}, {"--in-flight-bytes", "-1"}} {
		_, code, err := run(t, append([]string{"scan", "--index", idx}, append(flags, dir)...)...)
		if code != 2 || err == nil || !strings.Contains(err.Error(), "must be at least 1") {
			t.Errorf("scan %v: exit %d, %v; want exit 2 and a clear error", flags, code, err)
		}
	}
	if _, err := os.Stat(idx); !os.IsNotExist(err) {
		t.Errorf("an index was created for a refused scan: %v", err)
	}
}

// TestScanPrintsASummary: 2,494 files printed 84,055 lines; the text
// report is now a summary, and the pairs come with --pairs, cut by
// --limit and --min-score.
func TestScanPrintsASummary(t *testing.T) {
	dir := t.TempDir()
	gpl := readCorpus(t, "GPL-3.0-only.txt")
	apache := readCorpus(t, "Apache-2.0.txt")
	for i := range 3 {
		write(t, filepath.Join(dir, fmt.Sprintf("gpl-%d.txt", i)), gpl)
		write(t, filepath.Join(dir, fmt.Sprintf("apache-%d.txt", i)), apache)
	}
	write(t, filepath.Join(dir, "gpl-edited.txt"), bytes.Replace(gpl, []byte("software"), []byte("programs"), 5))
	write(t, filepath.Join(dir, "apache-edited.txt"), bytes.Replace(apache, []byte("License"), []byte("Licence"), 5))
	idx := filepath.Join(t.TempDir(), "idx.db")

	out, code, err := run(t, "scan", "--index", idx, "--limit", "1", dir)
	if code != 0 {
		t.Fatalf("scan: exit %d: %v\n%s", code, err, out)
	}
	for _, want := range []string{"8 files", "Identical sets: 2", "3 copies of ", "… and 1 more", "Near-copy families: 2", "--pairs lists every"} {
		if !strings.Contains(out, want) {
			t.Errorf("summary lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "Near-copy pairs") || strings.Count(out, "\n") > 15 {
		t.Errorf("the summary lists pairs or runs long:\n%s", out)
	}

	out, _, _ = run(t, "scan", "--index", idx, "--pairs", dir)
	if !strings.Contains(out, "Near-copy pairs: ") || !strings.Contains(out, "gpl-edited.txt") {
		t.Errorf("--pairs lists no pairs:\n%s", out)
	}
	out, _, _ = run(t, "scan", "--index", idx, "--pairs", "--min-score", "1.01", dir)
	if strings.Contains(out, "Near-copy pairs") {
		t.Errorf("--min-score 1.01 kept pairs:\n%s", out)
	}
}

// newRootCmd is the root command with globals of its own.
func newRootCmd() *cobra.Command { return newRoot(&globals{}) }
