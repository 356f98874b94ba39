package tests

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// dockerfile is what the tests read from the repository's Dockerfile. No
// Docker engine runs in CI, so the image is checked statically.
type dockerfile struct {
	stages []stage
	// env, user, expose, volume, entrypoint and cmd are those of the
	// final stage, in order.
	env        [][2]string
	user       string
	expose     []string
	volume     []string
	entrypoint string
	cmd        string
}

type stage struct {
	from   string // image reference
	name   string // AS name
	instrs []instr
}

type instr struct {
	op   string // upper case: RUN, COPY, ...
	args string
}

// parseDockerfile reads the instructions of the repository's Dockerfile,
// joining continuation lines and dropping comments.
func parseDockerfile(t *testing.T) *dockerfile {
	t.Helper()
	data := readRepoFile(t, "Dockerfile")
	var lines []string
	var cur strings.Builder
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if strings.HasPrefix(line, "#") || (line == "" && cur.Len() == 0) {
			continue
		}
		if strings.HasSuffix(line, "\\") {
			cur.WriteString(strings.TrimSuffix(line, "\\"))
			cur.WriteString(" ")
			continue
		}
		cur.WriteString(line)
		lines = append(lines, cur.String())
		cur.Reset()
	}
	df := &dockerfile{}
	for _, l := range lines {
		op, args, _ := strings.Cut(l, " ")
		op = strings.ToUpper(op)
		args = strings.TrimSpace(args)
		if op == "FROM" {
			f := strings.Fields(args)
			s := stage{}
			for _, w := range f {
				if !strings.HasPrefix(w, "--") {
					s.from = w
					break
				}
			}
			if len(f) >= 3 && strings.EqualFold(f[len(f)-2], "AS") {
				s.name = f[len(f)-1]
			}
			df.stages = append(df.stages, s)
			continue
		}
		if len(df.stages) == 0 {
			if op != "ARG" {
				t.Fatalf("Dockerfile: %s before FROM", op)
			}
			continue
		}
		last := &df.stages[len(df.stages)-1]
		last.instrs = append(last.instrs, instr{op: op, args: args})
	}
	if len(df.stages) == 0 {
		t.Fatal("Dockerfile: no FROM")
	}
	for _, in := range df.stages[len(df.stages)-1].instrs {
		switch in.op {
		case "ENV":
			df.env = append(df.env, parseEnv(t, in.args)...)
		case "USER":
			df.user = in.args
		case "EXPOSE":
			df.expose = append(df.expose, strings.Fields(in.args)...)
		case "VOLUME":
			df.volume = append(df.volume, jsonOrFields(t, in.args)...)
		case "ENTRYPOINT":
			df.entrypoint = in.args
		case "CMD":
			df.cmd = in.args
		}
	}
	return df
}

// parseEnv reads ENV's KEY=VALUE pairs (values without spaces or quotes)
// or its legacy KEY VALUE form.
func parseEnv(t *testing.T, args string) [][2]string {
	t.Helper()
	var out [][2]string
	if !strings.Contains(strings.Fields(args)[0], "=") {
		k, v, _ := strings.Cut(args, " ")
		return [][2]string{{k, strings.TrimSpace(v)}}
	}
	for _, f := range strings.Fields(args) {
		k, v, ok := strings.Cut(f, "=")
		if !ok {
			t.Fatalf("Dockerfile ENV %q: want KEY=VALUE", f)
		}
		out = append(out, [2]string{k, strings.Trim(v, `"`)})
	}
	return out
}

func jsonOrFields(t *testing.T, args string) []string {
	t.Helper()
	if strings.HasPrefix(args, "[") {
		var out []string
		if err := json.Unmarshal([]byte(args), &out); err != nil {
			t.Fatalf("Dockerfile: %q is not a JSON array: %v", args, err)
		}
		return out
	}
	return strings.Fields(args)
}

func (d *dockerfile) envValue(key string) string {
	v := ""
	for _, kv := range d.env {
		if kv[0] == key {
			v = kv[1]
		}
	}
	return v
}

// imageUID is the numeric user the image runs as.
func imageUID(t *testing.T) int64 {
	t.Helper()
	user, _, _ := strings.Cut(parseDockerfile(t).user, ":")
	uid, err := strconv.ParseInt(user, 10, 64)
	if err != nil {
		t.Fatalf("Dockerfile USER %q is not numeric", user)
	}
	return uid
}

// pinned reports whether an image reference has an explicit tag or digest
// other than latest.
func pinned(ref string) bool {
	if strings.Contains(ref, "@sha256:") {
		return true
	}
	i := strings.LastIndex(ref, ":")
	return i > strings.LastIndex(ref, "/") && ref[i+1:] != "latest"
}

// TestDockerfile checks the image statically: a pinned Go builder that
// builds ./cmd/simdex as a static binary, a pinned non-root runtime, the
// data volume, the HTTP port, and `simdex serve --config ...` as its
// process.
func TestDockerfile(t *testing.T) {
	df := parseDockerfile(t)
	if len(df.stages) < 2 {
		t.Fatalf("want a multi-stage build, have %d stage(s)", len(df.stages))
	}
	names := map[string]bool{}
	for _, s := range df.stages {
		if s.name != "" {
			names[s.name] = true
		}
	}
	for _, s := range df.stages {
		if !names[s.from] && !pinned(s.from) {
			t.Errorf("FROM %s: pin a tag or digest", s.from)
		}
	}

	builder := df.stages[0]
	if !strings.HasPrefix(builder.from, "golang:1.26") {
		t.Errorf("builder FROM %s, want golang:1.26.x", builder.from)
	}
	build := ""
	for _, in := range builder.instrs {
		if in.op == "RUN" && strings.Contains(in.args, "go build") {
			build = in.args
		}
	}
	for _, want := range []string{"CGO_ENABLED=0", "-trimpath", `-ldflags "-s -w"`, "./cmd/simdex"} {
		if !strings.Contains(build, want) {
			t.Errorf("builder's go build %q lacks %s", build, want)
		}
	}

	final := df.stages[len(df.stages)-1]
	distroless := final.from == "gcr.io/distroless/static-debian12:nonroot" || strings.HasPrefix(final.from, "gcr.io/distroless/static-debian12:nonroot@")
	debian := strings.HasPrefix(final.from, "debian:12")
	if !distroless && !debian && final.from != "scratch" {
		t.Errorf("runtime FROM %s, want distroless static nonroot, debian:12-slim or scratch", final.from)
	}
	if needsPoppler(t) {
		if distroless || final.from == "scratch" {
			t.Error("scripts/install-deps.sh installs poppler-utils (pdftotext), which a distroless or scratch image cannot carry")
		}
		if !slices.ContainsFunc(final.instrs, func(in instr) bool {
			return in.op == "RUN" && strings.Contains(in.args, "poppler-utils") && strings.Contains(in.args, "--no-install-recommends")
		}) {
			t.Error("runtime stage does not install poppler-utils with --no-install-recommends")
		}
	}

	if uid := imageUID(t); uid == 0 {
		t.Error("USER is root")
	}
	if !slices.Contains(df.expose, "8080") && !slices.Contains(df.expose, "8080/tcp") {
		t.Errorf("EXPOSE %v, want 8080", df.expose)
	}
	if !slices.Contains(df.volume, "/var/lib/simdex") {
		t.Errorf("VOLUME %v, want /var/lib/simdex", df.volume)
	}
	if v := df.envValue("SIMDEX_DATA_DIR"); v != "/var/lib/simdex" {
		t.Errorf("ENV SIMDEX_DATA_DIR=%q, want /var/lib/simdex", v)
	}
	if v := df.envValue("SIMDEX_HTTP_ADDR"); v != "0.0.0.0:8080" {
		t.Errorf("ENV SIMDEX_HTTP_ADDR=%q, want 0.0.0.0:8080", v)
	}

	var entrypoint, cmd []string
	if err := json.Unmarshal([]byte(df.entrypoint), &entrypoint); err != nil {
		t.Errorf("ENTRYPOINT %q: want the exec (JSON) form: %v", df.entrypoint, err)
	}
	if !slices.Equal(entrypoint, []string{"/simdex", "serve"}) {
		t.Errorf("ENTRYPOINT %q, want [\"/simdex\", \"serve\"]", entrypoint)
	}
	if err := json.Unmarshal([]byte(df.cmd), &cmd); err != nil {
		t.Errorf("CMD %q: want the exec (JSON) form: %v", df.cmd, err)
	}
	if !slices.Equal(cmd, []string{"--config", "/etc/simdex/config.yaml"}) {
		t.Errorf("CMD %q, want [\"--config\", \"/etc/simdex/config.yaml\"]", cmd)
	}
	copied := false
	for _, in := range final.instrs {
		if in.op == "COPY" && regexp.MustCompile(`(^|\s)config\.yaml\s+/etc/simdex/config\.yaml$`).MatchString(in.args) {
			copied = true
		}
	}
	if !copied {
		t.Error("runtime stage does not COPY config.yaml to /etc/simdex/config.yaml, which CMD names")
	}
}

// needsPoppler reports whether scripts/install-deps.sh installs poppler's
// pdftotext, which the PDF extractor then runs.
func needsPoppler(t *testing.T) bool {
	data, err := os.ReadFile(filepath.Join(repoRoot, "scripts", "install-deps.sh"))
	if os.IsNotExist(err) {
		return false
	}
	if err != nil {
		t.Fatal(err)
	}
	return bytes.Contains(data, []byte("poppler-utils"))
}

// TestDockerignore checks that .dockerignore leaves in what the build
// needs: go.mod, go.sum, config.yaml and every directory of Go sources.
func TestDockerignore(t *testing.T) {
	var patterns []string
	for _, l := range strings.Split(string(readRepoFile(t, ".dockerignore")), "\n") {
		l = strings.TrimSpace(l)
		if l != "" && !strings.HasPrefix(l, "#") && !strings.HasPrefix(l, "!") {
			patterns = append(patterns, strings.TrimPrefix(strings.TrimSuffix(l, "/"), "/"))
		}
	}
	need := []string{"go.mod", "go.sum", "config.yaml", "cmd/simdex"}
	entries, err := os.ReadDir(repoRoot)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if !e.IsDir() || strings.HasPrefix(e.Name(), ".") || e.Name() == "charts" {
			continue
		}
		if hasGo, _ := filepath.Glob(filepath.Join(repoRoot, e.Name(), "*.go")); len(hasGo) > 0 {
			need = append(need, e.Name())
		}
		sub, _ := filepath.Glob(filepath.Join(repoRoot, e.Name(), "*", "*.go"))
		if len(sub) > 0 {
			need = append(need, e.Name())
		}
	}
	for _, p := range need {
		for _, pat := range patterns {
			first, _, _ := strings.Cut(p, "/")
			if m, _ := filepath.Match(pat, p); m || pat == first {
				t.Errorf(".dockerignore pattern %q leaves %s out of the build", pat, p)
			}
		}
	}
}
