# CS Benchmark. `make help` lists the targets.
SHELL := /bin/bash
.DEFAULT_GOAL := help

# A Go in /usr/local/go comes first (make setup puts go.mod's there when the
# distribution's is too old to fetch it itself).
export PATH := $(if $(wildcard /usr/local/go/bin/go),/usr/local/go/bin:)$(PATH)

LAB ?= netns
PROFILE ?= quick
export LAB PROFILE

SH_FILES := $(shell git ls-files '*.sh' '*.bats' 'tests/*.bash' 2>/dev/null) .ci/run
GO_PKGS := ./...

.PHONY: help setup build demo test test-go test-bats check-generated lint lab-up lab-down report clean

help: ## list the targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | sed 's/:.*## /\t/' | expand -t 14

setup: ## install what is missing, Go >= go.mod's among it (Debian/Ubuntu; needs root)
	bash scripts/setup.sh

build: ## build the Go commands into bin/
	bash scripts/build.sh

demo: build ## every phase with PROFILE=quick on LAB=netns (make demo LAB=local needs no root)
	bash scripts/demo.sh

test: build ## everything: lint, Go tests, generated files, bats (library + end to end on netns labs; scripts/test.sh -h)
	bash scripts/test.sh

test-go: ## Go unit tests
	go test -count=1 $(GO_PKGS)

check-generated: build ## the committed summaries, reports and charts are what bin/csb makes of their raw files
	bash scripts/check-generated.sh

test-bats: build ## bats alone, one file after another: library, bad input, end to end
	bats --timing --print-output-on-failure tests/

lint: ## gofmt, go vet, shellcheck (scripts and the manual's code blocks), the docs' relative links, committed results' size
	@out=$$(gofmt -l $$(git ls-files '*.go') 2>&1); if [ -n "$$out" ]; then echo "gofmt: $$out"; exit 1; fi
	go vet $(GO_PKGS)
	@# Every script that sources lib/init.sh makes shellcheck read the whole library (~5 s): two at once.
	printf '%s\n' $(SH_FILES) | xargs -P 2 -n 6 shellcheck -x
	bash scripts/check-manual.sh
	bash scripts/check-links.sh
	bash scripts/check-sizes.sh

lab-up: ## build the netns lab (root)
	lab/netns.sh up

lab-down: ## remove the netns lab (root)
	lab/netns.sh down

report: build ## your cross-phase report from the latest run of each phase: runs/report/ (git ignores runs/; RESULTS_ROOT=DIR: DIR/report/)
	bin/csb report -root $(or $(RESULTS_ROOT),runs) -out $(or $(RESULTS_ROOT),runs)/report

clean: ## remove bin/
	rm -rf bin
