# topolayer — the commands a developer needs. `make help` lists them.

SHELL := /usr/bin/env bash
GO ?= go
BIN := bin/topolayer

# The shared corpus of real operator outputs; tests that need it skip when it is absent.
TOPOLAYER_CORPUS ?= $(abspath ../shared/corpus)
export TOPOLAYER_CORPUS

# The real upstream operator binaries (../shared/operators, unpacked by .ci/run into
# .cache/operators); tests that need them skip when it is unset or absent.
TOPOLAYER_OPERATORS ?= $(wildcard $(abspath .cache/operators))
export TOPOLAYER_OPERATORS

# kube-apiserver and etcd for the e2e tests and the dev environment: hack/envtest-assets.sh
# builds them from the Go module proxy the first time (minutes), then prints the cached
# directory (a KUBEBUILDER_ASSETS that holds them already is kept as is). Expanded only by
# the targets that export it (test, demo), at most once per make run: `make help` or `make
# lint` builds nothing.
envtest_assets = $(eval envtest_assets := $$(shell ./hack/envtest-assets.sh))$(envtest_assets)
test demo: export KUBEBUILDER_ASSETS = $(envtest_assets)

FUZZTIME ?= 60s
# `make fuzz` runs every fuzz target of the module, as `go test -list` finds them: a list kept
# by hand drifted (a target that moved to another package ran nothing, and nine never ran).
FUZZ_LIST := $(GO) test -list '^Fuzz' ./... | awk '/^Fuzz/ { names = names " " $$1; next } /^ok/ { n = split(names, a, " "); for (i = 1; i <= n; i++) print $$2 ":" a[i]; names = "" }'

.PHONY: help build test compat demo bench fuzz soak lint docs examples default-discovery envtest-assets

help: ## list the targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | sed 's/:.*## /\t/' | column -t -s $$'\t'

# hack/ is a module of its own (github.com/topolayer/topolayer/hack), so that what only the
# tools need (gonum's plots) stays out of topolayer's go.mod: its programs run with go -C hack.
build: ## build bin/topolayer, bin/topolayer-devenv, the sample operators and the sample operand
	$(GO) build -o bin/ ./cmd/topolayer ./cmd/topolayer-devenv ./cmd/sample-operator ./cmd/sample-operand ./cmd/sample-audit-operator

test: lint compat ## run every test (lint, compat at both dependency sets, then unit, corpus, e2e)
	@[[ -n "$$KUBEBUILDER_ASSETS" ]] || { echo "make: hack/envtest-assets.sh found no kube-apiserver and etcd (see above)" >&2; exit 1; }
	$(GO) test -count=1 -timeout 60m ./...
	$(GO) -C hack test -count=1 ./...
	@# The hosted engine plans on every core: its parallel plan, and the streaming planner that
	@# parses parked bodies again in its parallel rewrite, under the race detector.
	$(GO) test -count=1 -race -run 'TestParallelPlan|TestPlannerStreams' ./internal/translate

# What an embedder imports must build and pass its unit tests at the oldest versions go.mod
# requires (an embedder such as HyperShift pins those or newer) and at the newest releases.
compat: ## build and unit-test what an embedding imports at the dependency floor and at the newest releases
	@./hack/compat.sh

demo: build ## run both sample operators through topolayer, hosted then standalone, on local API servers
	@$(GO) -C hack run ./demo -bin $(CURDIR)/bin -examples $(CURDIR)/examples

bench: export KUBEBUILDER_ASSETS = $(envtest_assets)
bench: build ## Go benchmarks, then hack/bench: bench/REPORT.md and its plots (~20 min)
	@[[ -n "$$KUBEBUILDER_ASSETS" ]] || { echo "make: hack/envtest-assets.sh found no kube-apiserver and etcd (see above)" >&2; exit 1; }
	@mkdir -p bench
	$(GO) test -run '^$$' -bench . -benchmem ./internal/translate ./namespaces ./contract | tee bench/gobench.txt
	$(GO) -C hack run ./bench -out $(CURDIR)/bench -bin $(CURDIR)/bin -assets "$$KUBEBUILDER_ASSETS"

# The directory fuzzers write a tree per input: on tmpfs they run several times faster.
# Minimizing a new input may take FUZZMINIMIZETIME, during which no exec is counted.
FUZZMINIMIZETIME ?= 5s
FUZZTMP := $(shell test -w /dev/shm && echo /dev/shm)

fuzz: ## run every fuzz target of the module (go test -list) for FUZZTIME each (default 60s)
	@set -eo pipefail; tmp=$$(mktemp -d $${FUZZTMP:+-p $(FUZZTMP)}); trap 'rm -rf "$$tmp"' EXIT; \
	targets=$$($(FUZZ_LIST)); \
	[[ -n "$$targets" ]] || { echo "make fuzz: go test -list found no fuzz target" >&2; exit 1; }; \
	for t in $$targets; do \
		pkg=$${t%%:*}; fn=$${t##*:}; \
		echo "== $$fn ($$pkg, $(FUZZTIME))"; \
		TMPDIR=$$tmp $(GO) test -run '^$$' -fuzz "^$$fn$$" -fuzztime $(FUZZTIME) -fuzzminimizetime $(FUZZMINIMIZETIME) $$pkg 2>&1 | grep -E 'execs:|PASS|FAIL|ok|---' | tail -3; \
	done

soak: ## run topolayer for SOAK (default 10m) under random input churn: goroutines and heap within 10%, final state = a fresh run's
	TOPOLAYER_SOAK=$(or $(SOAK),10m) KUBEBUILDER_ASSETS=$$(./hack/envtest-assets.sh) $(GO) test ./e2e/ -run '^TestSoak$$' -count=1 -v -timeout 40m

lint: ## gofmt, go vet and the length of source files, of both modules (topolayer and hack)
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi
	@# A file a newcomer reads whole: no non-test Go file over 600 lines.
	@out=$$(git ls-files '*.go' ':!:*_test.go' | xargs wc -l | awk '$$2 != "total" && $$1 > 600'); if [ -n "$$out" ]; then echo "Go files over 600 lines:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...
	$(GO) -C hack vet ./...

docs: examples ## regenerate docs/cli.md, docs/devenv.md and the docs' pictures (needs graphviz: apt-get install graphviz)
	$(GO) generate ./cmd/topolayer ./cmd/topolayer-devenv

examples: ## regenerate examples/outputs/sample-operator (what the docs plan) from the sample operator
	$(GO) test ./cmd/topolayer -run '^TestExampleOutputs$$' -count=1 -update

envtest-assets: ## build kube-apiserver and etcd from the Go module proxy (cached)
	@./hack/envtest-assets.sh

default-discovery: ## regenerate contract's embedded default discovery from a real kube-apiserver
	KUBEBUILDER_ASSETS=$$(./hack/envtest-assets.sh) $(GO) -C hack run ./gen-default-discovery -to $(CURDIR)/contract/defaultdiscovery
