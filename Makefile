# swift-pjsua — the two commands a new user runs are `make demo` and `make test`.
# Both provision what they need first (Debian packages, pjproject); a second run
# finds everything in place and goes straight to the build.

SWIFT ?= swift
CONFIG ?= debug

.PHONY: all provision build demo test bench format clean

all: build

provision:
	@bash scripts/provision.sh

build: provision
	$(SWIFT) build -c $(CONFIG)

demo: build
	.build/$(CONFIG)/swiftpjsua demo

test: build
	$(SWIFT) test -c $(CONFIG)

format:
	$(SWIFT) format --in-place --recursive Sources Tests Package.swift

clean:
	rm -rf .build

# Benchmarks against the C pjsua app (not part of `make test`; ~12 minutes). Builds the
# tool optimized, then runs Benchmarks/bench.py; extra harness arguments in BENCH_ARGS
# (e.g. BENCH_ARGS=--smoke, BENCH_ARGS=--only=rates). A full run writes its results into
# docs/BENCHMARKS.md.
bench: provision
	$(SWIFT) build -c release --product swiftpjsua
	python3 Benchmarks/bench.py --swiftpjsua .build/release/swiftpjsua --docs docs/BENCHMARKS.md $(BENCH_ARGS)
