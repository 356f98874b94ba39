package eval

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// ErrPeerMissing reports that a peer tool is not installed.
var ErrPeerMissing = errors.New("peer tool not installed (scripts/eval.sh installs the Debian packages ssdeep and tlsh-tools)")

// Peer tools, as Debian 12 packages them.
const (
	// SsdeepBin is ssdeep (package ssdeep): context-triggered piecewise
	// hashes, scored 0–100, higher is more similar.
	SsdeepBin = "ssdeep"
	// TLSHBin is tlsh (package tlsh-tools): locality-sensitive hashes
	// compared by a distance, lower is more similar.
	TLSHBin = "tlsh"
)

// PeerVersions returns the version lines of the peer tools, or
// ErrPeerMissing.
func PeerVersions(ctx context.Context) (map[string]string, error) {
	out := map[string]string{}
	for _, t := range []struct{ bin, arg string }{{SsdeepBin, "-V"}, {TLSHBin, "-version"}} {
		p, err := exec.LookPath(t.bin)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", t.bin, ErrPeerMissing)
		}
		v, err := exec.CommandContext(ctx, p, t.arg).CombinedOutput()
		if err != nil {
			return nil, fmt.Errorf("%s %s: %w", t.bin, t.arg, err)
		}
		out[t.bin] = strings.TrimSpace(string(v))
	}
	return out, nil
}

// checkPairs verifies that peer output names only the n files written.
func checkPairs(tool string, ps []Scored[int], n int) error {
	for _, p := range ps {
		if int(p.A) >= n || int(p.B) >= n {
			return fmt.Errorf("%s: output names file %d of %d", tool, max(p.A, p.B), n)
		}
	}
	return nil
}

// writeFiles writes files[i] as dir/<i><ext[i]> and returns dir's file
// names by position.
func writeFiles(dir string, files [][]byte, ext []string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("write peer input: %w", err)
	}
	for i, b := range files {
		if err := os.WriteFile(filepath.Join(dir, peerName(i, ext[i])), b, 0o644); err != nil {
			return fmt.Errorf("write peer input: %w", err)
		}
	}
	return nil
}

func peerName(i int, ext string) string { return fmt.Sprintf("%06d%s", i, ext) }

// peerIndex parses the position out of a peer file name ("./000012.txt").
func peerIndex(name string) (int32, error) {
	base := filepath.Base(name)
	if k := strings.IndexByte(base, '.'); k >= 0 {
		base = base[:k]
	}
	n, err := strconv.ParseInt(base, 10, 32)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("peer output names unknown file %q", name)
	}
	return int32(n), nil
}

func run(ctx context.Context, dir, bin string, args ...string) ([]byte, error) {
	p, err := exec.LookPath(bin)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", bin, ErrPeerMissing)
	}
	cmd := exec.CommandContext(ctx, p, args...)
	cmd.Dir = dir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w: %s", bin, strings.Join(args, " "), err, bytes.TrimSpace(stderr.Bytes()))
	}
	return out, nil
}

var ssdeepMatch = regexp.MustCompile(`^.*:([^:]+) matches .*:([^:]+) \((\d+)\)$`)

// Ssdeep hashes every file of dir (named by position) and compares all
// pairs; it returns each unordered pair with a score above zero once,
// with the higher of its two scores.
func Ssdeep(ctx context.Context, dir string) ([]Scored[int], error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("ssdeep: %w", err)
	}
	if len(ents) < 2 {
		return nil, nil
	}
	sigs, err := run(ctx, dir, SsdeepBin, "-s", "-b", "-r", ".")
	if err != nil {
		return nil, err
	}
	sigFile := dir + ".ssdeep"
	if err := os.WriteFile(sigFile, sigs, 0o644); err != nil {
		return nil, fmt.Errorf("ssdeep: %w", err)
	}
	out, err := run(ctx, dir, SsdeepBin, "-s", "-x", sigFile)
	if err != nil {
		return nil, err
	}
	return parseSsdeep(out)
}

// parseSsdeep parses the output of `ssdeep -s -x`: lines
// `<sigs>:<name> matches <sigs>:<name> (<score>)`, blank lines between
// groups. Each unordered pair is returned once, with its higher score.
func parseSsdeep(out []byte) ([]Scored[int], error) {
	best := map[Pair]int{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if line == "" {
			continue
		}
		m := ssdeepMatch.FindStringSubmatch(line)
		if m == nil {
			return nil, fmt.Errorf("ssdeep: unexpected output line %q", line)
		}
		a, err := peerIndex(m[1])
		if err != nil {
			return nil, fmt.Errorf("ssdeep: %w", err)
		}
		b, err := peerIndex(m[2])
		if err != nil {
			return nil, fmt.Errorf("ssdeep: %w", err)
		}
		s, err := strconv.Atoi(m[3])
		if err != nil || s > 100 {
			return nil, fmt.Errorf("ssdeep: unexpected score in %q", line)
		}
		if a == b {
			continue
		}
		if a > b {
			a, b = b, a
		}
		best[Pair{a, b}] = max(best[Pair{a, b}], s)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("ssdeep: %w", err)
	}
	res := make([]Scored[int], 0, len(best))
	for p, s := range best {
		res = append(res, Scored[int]{p, s})
	}
	slices.SortFunc(res, func(x, y Scored[int]) int { return cmp.Or(cmp.Compare(x.A, y.A), cmp.Compare(x.B, y.B)) })
	return res, nil
}

// TLSH hashes every file of dir (named by position) and returns the
// distance of every unordered pair of hashable files, and how many files
// could not be hashed (tlsh 3.4 refuses files under 256 bytes and files
// without enough variety).
func TLSH(ctx context.Context, dir string) ([]Scored[int], int, error) {
	digests, err := run(ctx, dir, TLSHBin, "-r", ".")
	if err != nil {
		return nil, 0, err
	}
	list := dir + ".tlsh"
	if err := os.WriteFile(list, digests, 0o644); err != nil {
		return nil, 0, fmt.Errorf("tlsh: %w", err)
	}
	hashed := bytes.Count(digests, []byte("\n"))
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, 0, fmt.Errorf("tlsh: %w", err)
	}
	if hashed < 2 {
		return nil, len(ents) - hashed, nil
	}
	out, err := run(ctx, dir, TLSHBin, "-l", list, "-xref")
	if err != nil {
		return nil, 0, err
	}
	res, err := parseTLSH(out)
	return res, len(ents) - hashed, err
}

// parseTLSH parses the output of `tlsh -xref`: lines
// `<name>\t<name>\t<distance>`.
func parseTLSH(out []byte) ([]Scored[int], error) {
	var res []Scored[int]
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for sc.Scan() {
		f := strings.Split(sc.Text(), "\t")
		if len(f) != 3 {
			return nil, fmt.Errorf("tlsh: unexpected output line %q", sc.Text())
		}
		a, err := peerIndex(f[0])
		if err != nil {
			return nil, fmt.Errorf("tlsh: %w", err)
		}
		b, err := peerIndex(f[1])
		if err != nil {
			return nil, fmt.Errorf("tlsh: %w", err)
		}
		d, err := strconv.Atoi(f[2])
		if err != nil || d < 0 {
			return nil, fmt.Errorf("tlsh: unexpected output line %q", sc.Text())
		}
		if a == b {
			continue
		}
		if a > b {
			a, b = b, a
		}
		res = append(res, Scored[int]{Pair{a, b}, d})
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("tlsh: %w", err)
	}
	return res, nil
}
