# swift-pjsua — the two commands a new user runs are `make demo` and `make test`.
# Both provision what they need first (Debian packages, pjproject); a second run
# finds everything in place and goes straight to the build.

SWIFT ?= swift
CONFIG ?= debug

.PHONY: all provision build demo test format clean

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
