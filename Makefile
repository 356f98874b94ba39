# simdex build, test and benchmark entry points. `make test` is what CI runs
# on a fresh machine: it installs everything it needs (tools, MinIO) and
# reads only the repository (testdata/corpora holds the real documents its
# tests read). `make test-corpora`, `make eval` and `make bench` read the
# full corpora at SIMDEX_CORPORA.
SHELL := /bin/bash
CACHE ?= $(HOME)/.cache/simdex
export SIMDEX_CACHE := $(CACHE)
TOOLS := $(CACHE)/bin
STATICCHECK_VERSION := v0.8.2
GOLANGCI_LINT_VERSION := v2.15.0
MINIO_VERSION := v0.0.0-20260212201848-7aac2a2c5b7c
export SIMDEX_MINIO_BIN ?= $(TOOLS)/minio
FUZZTIME ?= 10s
# The full corpora (README "Tests"): by default the shared/corpora folder
# beside the checkout.
SIMDEX_CORPORA ?= $(CURDIR)/../shared/corpora

.PHONY: all build test test-corpora corpora lint golangci-lint unit fuzz chart peers oracles browser bench eval tools minio postgres serve clean

all: build

build:
	go build -o bin/simdex ./cmd/simdex

# The first build downloads modules and compiles for minutes: say so, and
# show the packages as they compile, rather than sit silent.
serve:
	@if [ ! -x bin/simdex ]; then echo "make serve: first build of simdex: downloading Go modules and compiling (3 to 10 minutes on 2 cores)..."; fi
	set -o pipefail; go build -v -o bin/simdex ./cmd/simdex 2>&1 | sed -u "s/^/  /"
	./bin/simdex serve

tools: $(TOOLS)/staticcheck $(TOOLS)/golangci-lint

$(TOOLS)/staticcheck:
	GOBIN=$(TOOLS) go install honnef.co/go/tools/cmd/staticcheck@$(STATICCHECK_VERSION)

$(TOOLS)/golangci-lint:
	GOBIN=$(TOOLS) go install github.com/golangci/golangci-lint/v2/cmd/golangci-lint@$(GOLANGCI_LINT_VERSION)

# .golangci.yml's linters (errorlint, revive's documentation rules,
# ineffassign, unused) over both modules; part of `lint`.
golangci-lint: $(TOOLS)/golangci-lint
	$(TOOLS)/golangci-lint run ./...
	cd tools && $(TOOLS)/golangci-lint run --config ../.golangci.yml ./...

minio: $(SIMDEX_MINIO_BIN)

$(SIMDEX_MINIO_BIN):
	scripts/install-minio.sh $(MINIO_VERSION) $(TOOLS)

lint: tools
	@unformatted=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$unformatted" ]; then echo "gofmt needed: $$unformatted"; exit 1; fi
	go mod tidy -diff
	cd charts/simdex/tests && go mod tidy -diff
	go vet ./...
	# The corpus suite's build (tag corpora) differs only in corpustest.
	go vet -tags corpora ./internal/corpustest/
	# 32-bit platforms build too: an int constant that overflows there is a bug.
	GOARCH=386 go vet ./...
	$(TOOLS)/staticcheck ./...
	# The tools module (evaluation, benchmark peers, corpus generator) is
	# held to the same checks.
	cd tools && go mod tidy -diff && go vet ./... && $(TOOLS)/staticcheck ./...
	$(MAKE) --no-print-directory golangci-lint

peers:
	scripts/install-peers.sh

# antiword and xls2csv, the references of extract's TestLegacyOracles.
oracles:
	scripts/install-oracles.sh

# Debian's PostgreSQL, for the PostgreSQL stores' tests (internal/pgtest).
postgres:
	scripts/install-postgres.sh

# Debian's Chromium, for the web UI's headless browser tests.
browser:
	scripts/install-chromium.sh

# The unit tests read nothing outside the repository: SIMDEX_CORPORA is
# unset for them, so a test that reaches for the full corpora fails here.
unit: minio postgres peers oracles browser
	env -u SIMDEX_CORPORA go test -race -count=1 -timeout 60m ./...
	# The race detector's shadow memory inflates RSS several times: the
	# memory tests assert their bound on peak RSS in a build without it.
	env -u SIMDEX_CORPORA go test -count=1 -run 'MemoryBounded' ./ingest/ ./api/
	cd tools && env -u SIMDEX_CORPORA go test -race -count=1 -timeout 30m ./...

chart:
	scripts/chart-test.sh

fuzz:
	scripts/fuzz.sh $(FUZZTIME)

test: lint unit fuzz chart

# Fails, naming SIMDEX_CORPORA, when the full corpora are not there.
corpora:
	@if [ ! -d "$(SIMDEX_CORPORA)" ]; then echo "SIMDEX_CORPORA=$(SIMDEX_CORPORA): the full corpora are not there (set SIMDEX_CORPORA; default ../shared/corpora beside the checkout)" >&2; exit 1; fi

# The corpus suite: the tests that read the full corpora (they call
# corpustest.Suite; scripts/test-corpora.sh finds and runs them).
test-corpora: corpora minio postgres peers
	SIMDEX_CORPORA="$(SIMDEX_CORPORA)" scripts/test-corpora.sh -race

bench: corpora build
	SIMDEX_CORPORA="$(SIMDEX_CORPORA)" scripts/bench.sh

eval: corpora build
	SIMDEX_CORPORA="$(SIMDEX_CORPORA)" scripts/eval.sh

clean:
	rm -rf bin
