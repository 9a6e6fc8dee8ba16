# swift-pjsua — the two commands a new user runs are `make demo` and `make test`.
# Both provision what they need first (Debian packages, pjproject); a second run
# finds everything in place and goes straight to the build.
#
# PJPROJECT=VERSION (2.17, 2.12.1, 2.17-noipv6: 2.17 built without IPv6, 2.17-ios: 2.17
# with the pinned iOS xcframework's limits and codecs, see scripts/ios-like-pass.sh, or
# 2.17-asan: 2.17 built with AddressSanitizer, see `make asan`) builds and
# tests against that pjproject in its own prefix (/opt/swift-pjsua/pjproject-VERSION) and
# its own build folder (.build-pjproject-VERSION), leaving the default build alone:
#     make test PJPROJECT=2.12.1

SWIFT ?= swift
CONFIG ?= debug
PJPROJECT ?=
# Extra arguments for `swift test`, e.g. TEST_ARGS='--filter Kamailio'.
TEST_ARGS ?=
# A sanitizer for the Swift build (`swift build --sanitize=...`), e.g. SANITIZE=address.
SANITIZE ?=

ifeq ($(PJPROJECT),)
SCRATCH := .build
PROVISION_ARGS :=
PKGCONF := pkg-config
else
PJ_PREFIX := /opt/swift-pjsua/pjproject-$(PJPROJECT)
SCRATCH := .build-pjproject-$(PJPROJECT)
PROVISION_ARGS := --pjproject $(PJPROJECT)
export PKG_CONFIG_PATH := $(PJ_PREFIX)/lib/pkgconfig
export PKG_CONFIG_LIBDIR := $(PJ_PREFIX)/lib/pkgconfig
# $(shell) does not see exported variables before GNU make 4.4: spell them out there.
PKGCONF := PKG_CONFIG_PATH=$(PJ_PREFIX)/lib/pkgconfig PKG_CONFIG_LIBDIR=$(PJ_PREFIX)/lib/pkgconfig pkg-config
endif

# The libraries pkg-config names are found at run time where they were linked, not
# wherever the dynamic linker looks first: every pjproject names them libpj*.so.2.
# (Recursive `=`: evaluated after the provision step has installed pjproject.)
PJ_LIBDIR = $(shell $(PKGCONF) --variable=libdir libpjproject 2>/dev/null)
LINK_FLAGS = $(if $(PJ_LIBDIR),-Xlinker -rpath -Xlinker $(PJ_LIBDIR))
SWIFT_FLAGS = --scratch-path $(SCRATCH) -c $(CONFIG) $(LINK_FLAGS) $(if $(SANITIZE),--sanitize=$(SANITIZE))

.PHONY: all provision scratch snippets build demo test docs-check format-check asan bench format clean

all: build

provision:
	@bash scripts/provision.sh $(PROVISION_ARGS)

# SwiftPM does not notice when the headers of the system-library module CPJSIP change
# (pjproject moved to another version, prefix or config_site.h, or Sources/CPJSIP/CPJSIP.h
# edited): it recompiles CPJSUAShim's .c files, whose dependency files list those headers,
# but the Swift targets keep the module cache built on the old structs. A stamp of them
# starts the build folder afresh when one changed. CPJSUAShim's own header needs no stamp:
# SwiftPM rebuilds what imports it when it changes.
PJ_STAMP = $(shell { $(PKGCONF) --modversion libpjproject; $(PKGCONF) --variable=libdir libpjproject; \
	cat "$$($(PKGCONF) --variable=includedir libpjproject)/pj/config_site.h" Sources/CPJSIP/CPJSIP.h; } \
	2>/dev/null | sha256sum | cut -c1-16)

scratch: provision
	@echo "pjproject $$($(PKGCONF) --modversion libpjproject) from $(PJ_LIBDIR)"
	@stamp=$(SCRATCH)/pjproject.stamp; \
	if { [ -f $$stamp ] && [ "$$(cat $$stamp)" != "$(PJ_STAMP)" ]; } || \
	   { [ ! -f $$stamp ] && { [ -d $(SCRATCH)/debug ] || [ -d $(SCRATCH)/release ]; }; }; then \
		echo "pjproject or CPJSIP changed since $(SCRATCH) was built: building it afresh"; rm -rf $(SCRATCH); \
	fi; mkdir -p $(SCRATCH) && echo "$(PJ_STAMP)" > $$stamp

# The tool is also built with the Swift runtime and Foundation linked in, in
# $(SCRATCH)/tool: it loads 15 fewer libraries at exec, so its signal handler is in place
# about 10 ms after launch instead of 15-20 (a SIGTERM before that kills the process).
# The tests run that copy (SWIFTPJSUA_TOOL). Not with a sanitizer (no static runtimes).
TOOL_SCRATCH = $(SCRATCH)/tool
STATIC_TOOL = $(if $(SANITIZE),,$(abspath $(TOOL_SCRATCH))/$(CONFIG)/swiftpjsua)

# Every ```swift block of the README and the DocC articles becomes a function of the
# DocSnippetTests target, compiled (never run) by `swift test`: a block that stops
# compiling fails `make test` with the Markdown file and line. The file is generated before
# every build rather than checked in, so what compiles is always the docs as they are now
# (nothing to forget to regenerate); it is rewritten only when a block changed.
snippets:
	@python3 scripts/doc-snippets.py

build: scratch snippets
	$(SWIFT) build $(SWIFT_FLAGS)
	$(if $(STATIC_TOOL),$(SWIFT) build --scratch-path $(TOOL_SCRATCH) -c $(CONFIG) $(LINK_FLAGS) --static-swift-stdlib --product swiftpjsua)

demo: build
	$(SCRATCH)/$(CONFIG)/swiftpjsua demo

# `make test` checks the formatting and the docs first (a few seconds), not under a sanitizer.
test: build $(if $(SANITIZE),,format-check docs-check)
	$(if $(STATIC_TOOL),SWIFTPJSUA_TOOL=$(STATIC_TOOL)) $(SWIFT) test $(SWIFT_FLAGS) $(TEST_ARGS)

# Every public symbol of SwiftPJSUA and SwiftPJSUAKit has a doc comment, and DocC builds
# both catalogs offline with no warning (an unresolved ``symbol`` link, an undocumented
# parameter): scripts/docs-check.py. The symbol graphs come from the modules `make build`
# compiled (dump-symbol-graph with the same flags builds nothing); the built documentation
# is left in $(SCRATCH)/docs/<Module>.doccarchive.
DOC_MODULES := SwiftPJSUA SwiftPJSUAKit SwiftPJSUAKitTesting
# dump-symbol-graph also tries the test modules and fails on them before `swift test` has
# built them: its log is shown only when the libraries' graphs are missing.
docs-check: build
	@rm -rf $(SCRATCH)/*/symbolgraph && mkdir -p $(SCRATCH)/docs
	@$(SWIFT) package $(SWIFT_FLAGS) dump-symbol-graph --minimum-access-level public \
		> $(SCRATCH)/docs/dump-symbol-graph.log 2>&1 || true
	@python3 scripts/docs-check.py $(SCRATCH) $(DOC_MODULES)

# AddressSanitizer over every test that feeds the engine malformed, oversized or hostile
# input: pjproject 2.17 built with -fsanitize=address (provisioned into its own prefix on
# the first run, a few minutes) and the Swift side built with --sanitize=address, in
# .build-pjproject-2.17-asan. Not part of `make test` or CI (about ten minutes on 2 cores).
# LeakSanitizer runs too, with two suppressions for leaks of the toolchain's own
# libraries at exit (XCTest's suite objects, Foundation.Process's weak reference), written
# into .build-asan-lsan.supp; ASAN_OPTIONS and LSAN_OPTIONS override the defaults.
ASAN_TESTS ?= rfc hugeAccountDurationsThrow hugeDTMFDurationThrows badMediaIndexThrows unknownTransportThrows \
	hugeTimersThrow badRegisterHeaderThrows outOfDialogRequestsAnswered tooManyAccountsThrow emptyCodecIDThrows \
	longAndNULURIs transferReplacingItselfThrows cliInvalidDTMFIsUsageError unreadableTLSFilesThrow \
	infoWithInvalidDigit transferWhenNotRunningThrows invitesRacingAccountRemoval customHeaders \
	misuseThrowsTypedErrors accountValidation lineBreaksRejected pjString
empty :=
space := $(empty) $(empty)
ASAN_FILTER = $(subst $(space),|,$(strip $(ASAN_TESTS)))
ASAN_OPTIONS ?= detect_leaks=1:halt_on_error=1:print_summary=1
ASAN_SUPPRESSIONS := .build-asan-lsan.supp
LSAN_OPTIONS ?= suppressions=$(CURDIR)/$(ASAN_SUPPRESSIONS):print_suppressions=1
asan:
	@printf '%s\n' 'leak:libXCTest.so' 'leak:Foundation7ProcessC3run' > $(ASAN_SUPPRESSIONS)
	ASAN_OPTIONS='$(ASAN_OPTIONS)' LSAN_OPTIONS='$(LSAN_OPTIONS)' $(MAKE) test PJPROJECT=2.17-asan SANITIZE=address \
		TEST_ARGS="--filter '$(ASAN_FILTER)' $(TEST_ARGS)"

# The repo's .swift-format, checked: `swift format lint --strict` (what the formatter would
# change is an error) and every line within its lineLength, which lint alone does not
# enforce on string literals and comments (scripts/line-width.py). `make format` fixes the
# first; the second is for a person to wrap.
FORMAT_PATHS := Sources Tests Examples Package.swift
format-check:
	@$(SWIFT) format lint --strict --recursive $(FORMAT_PATHS)
	@python3 scripts/line-width.py $(FORMAT_PATHS)

format:
	$(SWIFT) format --in-place --recursive $(FORMAT_PATHS)

clean:
	rm -rf .build .build-pjproject-*

# Benchmarks against the C pjsua app of the same pjproject tree (not part of `make test`;
# ~20 minutes). Builds the tool optimized, then runs Benchmarks/bench.py; extra harness
# arguments in BENCH_ARGS (e.g. BENCH_ARGS=--smoke, BENCH_ARGS=--only=rates). A full run
# writes its results into docs/BENCHMARKS.md.
bench: scratch
	$(SWIFT) build --scratch-path $(SCRATCH) -c release $(LINK_FLAGS) --product swiftpjsua
	python3 Benchmarks/bench.py --swiftpjsua $(SCRATCH)/release/swiftpjsua --docs docs/BENCHMARKS.md $(BENCH_ARGS)
