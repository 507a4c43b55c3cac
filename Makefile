# pith - one Makefile, no other build system.
#
#   make            ./pith for this machine
#   make static     ./pith-static, fully static against musl (OpenMP included)
#   make test       builds with ASan+UBSan and runs every test (in parallel)
#   make install    PREFIX/bin/pith and its man page (PREFIX=/usr/local, DESTDIR=)
#   make demo       writes a small random Qwen3 model and runs it
#
# Sources are found by wildcard: src/*/*.c is the core (one folder per
# concern, docs/architecture.md; src/kernels/ has a subfolder
# per instruction set, src/kernels/*/*.c), port/*.c the portability
# layer, tests/test_*.c unit tests, tests/tools/*.c tools.

CC      ?= cc
OPT     ?= -O2
WARN     = -std=c11 -Wall -Wextra -Werror -Wshadow -Wstrict-prototypes
CFLAGS_COMMON = $(WARN) $(OPT) -g -fno-strict-aliasing
# The core is plain C11; port/ may use POSIX and GNU extensions.
CORE_DEFS =
PORT_DEFS = -D_GNU_SOURCE
OMPFLAGS = -fopenmp
LDLIBS  = -lm

SAN      = -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all

CORE_SRC = $(sort $(wildcard src/*/*.c src/*/*/*.c))
PORT_SRC = $(sort $(wildcard port/*.c))
TEST_SRC = $(sort $(wildcard tests/test_*.c))
TOOL_SRC = $(sort $(wildcard tests/tools/*.c))
HEADERS  = $(wildcard src/*/*.h src/*/*/*.h port/*.h tests/*.h tests/tools/*.h)

# ---- one build directory per configuration --------------------------------
# $(call objs,DIR,SOURCES)
objs = $(patsubst %.c,$(1)/%.o,$(2))

REL = build/rel
ASAN = build/asan

.PHONY: all static test test-build demo clean bench bench-llamacpp bench-arm check-core
all: pith

$(REL)/src/%.o: src/%.c $(HEADERS)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS_COMMON) $(CORE_DEFS) $(CFLAGS) -c $< -o $@
$(REL)/port/%.o: port/%.c $(HEADERS)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS_COMMON) $(PORT_DEFS) $(OMPFLAGS) $(CFLAGS) -c $< -o $@
# The x86 kernels under ASan are half the ASan build's CPU time (their
# many-row AVX-512 paths: kernels_x86_rows.c 29 s, kernels_x86.c 10 on a
# Xeon). kernels_x86_rows.c at -O1 builds in 5 s, not 22, and test_forward,
# its heaviest user under ASan, runs 1.5 CPU s longer (15 s); the tests
# check the same results (the release build keeps -O2). Variable tracking,
# the debug information of local variables' locations, is a fifth of the
# ASan build's time: off there (the same code; ASan's reports use line
# numbers, kept): its objects 47.3 -> 36.4 CPU s (make -j2 test-build,
# Sapphire Rapids, 2026-11-27).
ASAN_FLAGS = $(SAN) -fno-var-tracking
$(ASAN)/src/kernels/x86/kernels_x86_rows.o: OPT = -O1
$(ASAN)/src/%.o: src/%.c $(HEADERS)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS_COMMON) $(ASAN_FLAGS) $(CORE_DEFS) $(CFLAGS) -c $< -o $@
$(ASAN)/port/%.o: port/%.c $(HEADERS)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS_COMMON) $(ASAN_FLAGS) $(PORT_DEFS) $(OMPFLAGS) $(CFLAGS) -c $< -o $@
$(ASAN)/tests/%.o: tests/%.c $(HEADERS)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS_COMMON) $(ASAN_FLAGS) $(PORT_DEFS) $(CFLAGS) -c $< -o $@

REL_OBJS  = $(call objs,$(REL),$(CORE_SRC) $(PORT_SRC))
ASAN_LIB  = $(call objs,$(ASAN),$(CORE_SRC) $(filter-out port/main.c,$(PORT_SRC)))
ASAN_MAIN = $(ASAN)/port/main.o

pith: $(REL_OBJS)
	$(CC) $(CFLAGS_COMMON) $(OMPFLAGS) $(LDFLAGS) -o $@ $^ $(LDLIBS)

# The ASan programs start thousands of times in `make test`: each start
# relocates the executable and each exit LeakSanitizer scans every module's
# globals, the two runtimes' (libasan and libubsan, each with its own
# 5-6 MB of zero .bss) too, a page fault per untouched page. Linked with the
# runtimes inside (one sanitizer runtime, one set of tables) and at a fixed
# address (no relocations), `pith --version` takes 2,360 page faults, not
# 4,465 (the same checks; on a VM where a fault costs 20 us, 100 -> 60 ms).
ASAN_LDFLAGS = -static-libasan -static-libubsan -no-pie
$(ASAN)/pith: $(ASAN_LIB) $(ASAN_MAIN)
	$(CC) $(CFLAGS_COMMON) $(SAN) $(ASAN_LDFLAGS) $(OMPFLAGS) -o $@ $^ $(LDLIBS)

# Unit tests link the whole library (everything but main).
$(ASAN)/tests/test_%: $(ASAN)/tests/test_%.o $(ASAN_LIB) $(call objs,$(ASAN),$(filter-out tests/tools/main_%.c,$(TOOL_SRC)))
	$(CC) $(CFLAGS_COMMON) $(SAN) $(ASAN_LDFLAGS) $(OMPFLAGS) -o $@ $^ $(LDLIBS)

# Tools with their own main() are named tests/tools/main_NAME.c.
$(ASAN)/tools/%: $(ASAN)/tests/tools/main_%.o $(ASAN_LIB) $(call objs,$(ASAN),$(filter-out tests/tools/main_%.c,$(TOOL_SRC)))
	@mkdir -p $(@D)
	$(CC) $(CFLAGS_COMMON) $(SAN) $(ASAN_LDFLAGS) $(OMPFLAGS) -o $@ $^ $(LDLIBS)

# Release builds of the tools (demo and benchmark models are written fast).
REL_LIB = $(call objs,$(REL),$(CORE_SRC) $(filter-out port/main.c,$(PORT_SRC)))
$(REL)/tests/%.o: tests/%.c $(HEADERS)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS_COMMON) $(PORT_DEFS) $(CFLAGS) -c $< -o $@
$(REL)/tools/%: $(REL)/tests/tools/main_%.o $(REL_LIB) $(call objs,$(REL),$(filter-out tests/tools/main_%.c,$(TOOL_SRC)))
	@mkdir -p $(@D)
	$(CC) $(CFLAGS_COMMON) $(OMPFLAGS) -o $@ $^ $(LDLIBS)

# A small Qwen3-architecture model with random weights, written by the
# project's own GGUF writer, run end to end: shows the pipeline and speed.
DEMO_MODEL = build/demo-qwen3-q8_0.gguf
demo: pith $(REL)/tools/mkmodel
	$(REL)/tools/mkmodel $(DEMO_MODEL) --layers 4 --embd 256 --ff 768 --heads 4 --kv-heads 2 --head-dim 64 --ctx 1024 --type q8_0 --seed 7
	@echo "== pith run on $(DEMO_MODEL) (random weights: the text is noise, the pipeline and speed are real)"
	./pith run $(DEMO_MODEL) -p "Tell me a story about a small robot." -n 48 --seed 1
	@if [ -f ../shared/fixtures/models/stories260K.gguf ]; then \
	  echo "== pith run on stories260K (real TinyStories weights, llama architecture)"; \
	  ./pith run ../shared/fixtures/models/stories260K.gguf --raw -p "Once upon a time" -n 96 --temp 0 || true; fi

# Random models with Qwen3-0.6B shapes in four weight types, written on
# demand into build/ (not committed; delete them to rewrite), then
# `pith bench` on each. q4_k_m: Q4_K with Q6_K token_embd and Q6_K
# attn_v/ffn_down in half the layers (tests/tools/main_mkmodel.c).
BENCH_SHAPE = --layers 28 --embd 1024 --ff 3072 --heads 16 --kv-heads 8 --head-dim 128 --vocab 151936 --ctx 4096 --tied --seed 1
BENCH_TYPES = q8_0 q4_0 q4_k_m f16
BENCH_THREADS ?= 2
BENCH_ARGS ?= -p 64 -n 64 -r 3
build/bench-qwen3-0.6b-%.gguf: | $(REL)/tools/mkmodel
	$(REL)/tools/mkmodel $@ $(BENCH_SHAPE) --type $*
bench: pith $(REL)/tools/mkmodel $(foreach t,$(BENCH_TYPES),build/bench-qwen3-0.6b-$(t).gguf)
	@for t in $(BENCH_TYPES); do ./pith bench build/bench-qwen3-0.6b-$$t.gguf -t $(BENCH_THREADS) $(BENCH_ARGS) || exit 1; echo; done

# A/B check for a refactor: ./pith against OLD=path/to/old/pith, logits and
# greedy ids byte for byte on every fixture case, in every load mode and
# step size (tests/ab_logits.sh; tests/ab_bench.sh compares their speed).
.PHONY: ab
ab: pith
	@if [ -z "$(OLD)" ]; then echo "usage: make ab OLD=path/to/old/pith" >&2; exit 2; fi
	@sh tests/ab_logits.sh "$(OLD)" ./pith

# The same, each file measured by pith and then by llama.cpp (npm's
# node-llama-cpp, installed into build/ by tests/llamacpp/install.sh).
bench-llamacpp: pith $(REL)/tools/mkmodel $(foreach t,$(BENCH_TYPES),build/bench-qwen3-0.6b-$(t).gguf)
	@sh tests/llamacpp/install.sh
	@for t in $(BENCH_TYPES); do \
	  ./pith bench build/bench-qwen3-0.6b-$$t.gguf -t $(BENCH_THREADS) $(BENCH_ARGS) || exit 1; \
	  node build/node-llama-cpp/bench.mjs build/bench-qwen3-0.6b-$$t.gguf -t $(BENCH_THREADS) $(BENCH_ARGS) || exit 1; \
	  echo; done

# Instructions per token of the aarch64 build under qemu's Pi 5 and Pi 4 CPU
# models next to llama.cpp's (tests/bench_arm.sh; needs armcount's setup).
bench-arm:
	@sh tests/bench_arm.sh

TEST_BINS = $(patsubst tests/%.c,$(ASAN)/tests/%,$(TEST_SRC))
TOOL_BINS = $(patsubst tests/tools/main_%.c,$(ASAN)/tools/%,$(filter tests/tools/main_%.c,$(TOOL_SRC)))
# test_forward makes a gemma3-shaped model with mkmodel (its rings with two sequences)
$(ASAN)/tests/test_forward: | $(ASAN)/tools/mkmodel

# make test-build: what `make test` runs, built, not run
# (the release mkmodel, cmplogits and ggufedit: for scripts that write or
# compare data, where ASan costs process starts and checks no more code)
test-build: $(ASAN)/pith $(TEST_BINS) $(TOOL_BINS) pith $(REL)/tools/mkmodel $(REL)/tools/cmplogits $(REL)/tools/ggufedit build/pith.1
test: test-build
	@sh tests/run.sh

# The core must reach the OS only through port/: checked on the objects.
check-core: $(call objs,$(REL),$(CORE_SRC))
	@sh tests/check_core.sh $^

# make install [PREFIX=/usr/local] [DESTDIR=]: the binary into PREFIX/bin and
# its man page (man/mkman.sh, made from the binary's own help) into
# PREFIX/share/man/man1. INSTALL_BIN= installs another build instead (e.g.
# build/rpi4/pith or dist/pith-aarch64-linux-musl); the man page still
# comes from ./pith's help, which is the same text.
PREFIX ?= /usr/local
DESTDIR ?=
INSTALL_BIN ?= pith
.PHONY: install uninstall
build/pith.1: pith man/mkman.sh
	@mkdir -p $(@D)
	sh man/mkman.sh ./pith >$@.tmp && mv $@.tmp $@
install: $(INSTALL_BIN) build/pith.1
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/share/man/man1
	install -m 755 $(INSTALL_BIN) $(DESTDIR)$(PREFIX)/bin/pith
	install -m 644 build/pith.1 $(DESTDIR)$(PREFIX)/share/man/man1/pith.1
uninstall:
	rm -f $(DESTDIR)$(PREFIX)/bin/pith $(DESTDIR)$(PREFIX)/share/man/man1/pith.1

clean:
	rm -rf build pith pith-static

.SECONDARY:

# ---- static and cross builds ----------------------------------------------
# make static              -> ./pith-static (x86_64-linux-musl)
# make TARGET=TRIPLE       -> build/TRIPLE/pith   (toolchains/TRIPLE.mk)
# make BOARD=NAME          -> build/NAME/pith     (boards/NAME.mk: target, tuning, defaults)
# make dist                -> dist/pith-TRIPLE for every target, stripped, and dist/SHA256SUMS
# make cross-test          -> builds every target, runs tests/cross.sh under qemu
# make ci-test             -> cross-test, then tests/ci/ (CI's stage after make test)
# Every one of these binaries is fully static against musl with OpenMP
# (port/musl_gomp.c), compiled for the oldest CPU of its target.
CROSS_TARGETS = x86_64-linux-musl aarch64-linux-musl armv7-linux-musleabihf armv6-linux-musleabi
STATIC_TARGET ?= x86_64-linux-musl
TARGET ?=
BOARD ?=
# Debian's libgomp.a is built against glibc: wrap what musl lacks (see
# port/musl_gomp.c); OpenMP threads get 1 MiB stacks (musl's default is 128 KiB).
# No RELRO: musl's static start-up never write-protects it, so it would only
# pad the file up to the segment alignment (34-46 KB on ARM). No separate
# code segment (x86-64 ld's default, the ARM linkers' already): it pads the
# ELF header and the read-only data out to their own pages, 4 KB of zeros.
# No .eh_frame (toolchains/discard_eh_frame.ld): our objects have no unwind
# tables, but libgomp.a, libc.a and the start files bring theirs, which only
# an unwinder would read and none is linked (8 KB on x86-64).
# common-page-size=64: ld otherwise may start the data segment on a fresh
# page of the file to save a page of memory, padding the file with up to
# 4 KB of zeros (2,752 bytes on x86-64 when measured); the page where code
# ends and data begins is then mapped twice instead.
MUSL_STATIC_LDFLAGS = -static -Wl,--wrap=pthread_create -Wl,--wrap=pthread_attr_destroy \
	-Wl,-z,stack-size=1048576 -Wl,--gc-sections -Wl,-z,norelro -Wl,-z,noseparate-code \
	-Wl,-T,toolchains/discard_eh_frame.ld -Wl,-z,common-page-size=64
# Size without speed cost: unused functions dropped by the linker, no
# unwind tables (C never unwinds; -g still gives debuggers .debug_frame).
SIZE_CFLAGS = -ffunction-sections -fdata-sections -fno-asynchronous-unwind-tables -fno-unwind-tables
ifneq ($(BOARD),)
include boards/$(BOARD).mk
endif
TGT = $(or $(TARGET),$(BOARD_TARGET),$(STATIC_TARGET))
include toolchains/$(TGT).mk
# Board builds go to build/BOARD (build/BOARD-TRIPLE when TARGET overrides
# the board's target), plain target builds to build/TRIPLE.
TDIR = build/$(if $(BOARD),$(BOARD)$(if $(TARGET),-$(TARGET)),$(TGT))
TCONF = Makefile toolchains/$(TGT).mk $(if $(BOARD),boards/$(BOARD).mk)
TARGET_ALL_DEFS = -DPITH_TARGET='"$(TGT)"' $(if $(BOARD),-DPITH_BOARD_NAME='"$(BOARD)"' \
	-DPITH_DEFAULT_THREADS=$(strip $(BOARD_THREADS)) -DPITH_DEFAULT_CTX=$(strip $(BOARD_CTX)) \
	'-DPITH_DEFAULT_MEM=($(strip $(BOARD_MEM_MIB))ULL << 20)')
TCFLAGS = $(CFLAGS_COMMON) $(SIZE_CFLAGS) $(TARGET_CFLAGS) $(BOARD_CFLAGS) $(TARGET_ALL_DEFS)
# Code that runs once per command, prompt or request (argument parsing, GGUF
# reading, tokenizer, chat templates, JSON, HTTP, memory planning, the
# engine's loading, prompt cache and draft bookkeeping (slot.c keeps -O2: its
# threads scan every logit of every step), the stream window's bookkeeping,
# quant.c's row converters: a row per token at most, the kernels have their
# own; the sampler: measured, generation speed unchanged; the context shift;
# kernels_pack.c, weights repacked at load; printf's formatting,
# src/base/format.c) is built with -Os: 44 KB less on x86-64, tokenizing
# about 5% slower. Everything else, and any new file, keeps $(OPT): the
# per-token code (forward pass, kernels) is there, and what every parallel
# region runs (port/threads.c, port/musl_gomp_task.c).
COLD_SRC = $(filter src/cli/%.c src/text/%.c src/gguf/%.c src/server/%.c src/arena/%.c \
	src/engine/engine.c src/engine/prompt_cache.c src/engine/draft.c src/engine/speculative.c \
	src/model/model.c src/model/memplan.c src/model/weight_stream.c src/model/context_shift.c \
	src/kernels/ref/quant.c src/kernels/kernels_pack.c src/base/format.c,$(CORE_SRC)) \
	$(filter-out port/threads.c port/musl_gomp_task.c,$(PORT_SRC))
# On x86-64 the reference kernels run only on CPUs without AVX2 (and in
# tests): there small wins. On ARM they are armv6's hot path: -O2.
ifeq ($(TGT),x86_64-linux-musl)
COLD_SRC += src/kernels/ref/kernels_ref.c
endif
# The static links are fixed-address executables (ET_EXEC), so the cold files
# drop the default position-independent code: absolute addresses in place of
# RIP-relative ones and GOT loads (x86_64 4,032 bytes less). The hot files
# keep the compiler's default code generation.
COLD_OPT = -Os -fno-pie
$(call objs,$(TDIR),$(COLD_SRC)): OPT = $(COLD_OPT)

# `make TARGET=...` / `make BOARD=...` alone builds that binary.
ifneq ($(TARGET)$(BOARD),)
.DEFAULT_GOAL := $(TDIR)/pith
endif

$(TDIR)/src/%.o: src/%.c $(HEADERS) $(TCONF)
	@mkdir -p $(@D)
	$(CROSS_CC) $(TCFLAGS) $(CORE_DEFS) -c $< -o $@
$(TDIR)/port/%.o: port/%.c $(HEADERS) $(TCONF)
	@mkdir -p $(@D)
	$(CROSS_CC) $(TCFLAGS) $(PORT_DEFS) $(TARGET_DEFS) $(OMPFLAGS) -c $< -o $@
# musl's static start-up never runs IFUNC resolvers: a binary with IRELATIVE
# relocations (e.g. from libatomic.a) would call the resolver instead of the
# function. Refuse it (see toolchains/armv6-linux-musleabi.mk).
$(TDIR)/pith: $(call objs,$(TDIR),$(CORE_SRC) $(PORT_SRC))
	$(CROSS_CC) $(TCFLAGS) $(OMPFLAGS) $(TARGET_LDFLAGS) -o $@.tmp $^ $(LDLIBS)
	@if ! readelf -rW $@.tmp >$@.relocs || grep -q IRELATIVE $@.relocs; then \
		echo "$@: IRELATIVE (IFUNC) relocations, which musl's static start-up would not resolve (or readelf failed)" >&2; \
		rm -f $@.tmp $@.relocs; exit 1; fi
	@rm -f $@.relocs
	@mv $@.tmp $@

# Test programs for a target, linked with its library objects
# (tests/ci/t_arm_kernels.sh runs them under qemu): make TARGET=T build/T/tests/test_NAME
$(TDIR)/tests/%.o: tests/%.c $(HEADERS) $(TCONF)
	@mkdir -p $(@D)
	$(CROSS_CC) $(WARN) -O2 -g -fno-strict-aliasing $(TARGET_CFLAGS) $(PORT_DEFS) -c $< -o $@
$(TDIR)/tests/test_%: $(TDIR)/tests/test_%.o $(call objs,$(TDIR),$(CORE_SRC) $(filter-out port/main.c,$(PORT_SRC)) \
		$(filter-out tests/tools/main_%.c,$(TOOL_SRC)))
	$(CROSS_CC) $(TARGET_CFLAGS) $(OMPFLAGS) $(TARGET_LDFLAGS) -o $@ $^ $(LDLIBS)

# Tools for a target (tests/tools/main_NAME.c; kbench is counted under qemu, docs/performance-arm.md):
# make TARGET=T build/T/tools/NAME
$(TDIR)/tools/%: $(TDIR)/tests/tools/main_%.o $(call objs,$(TDIR),$(CORE_SRC) $(filter-out port/main.c,$(PORT_SRC)) \
		$(filter-out tests/tools/main_%.c,$(TOOL_SRC)))
	@mkdir -p $(@D)
	$(CROSS_CC) $(TARGET_CFLAGS) $(OMPFLAGS) $(TARGET_LDFLAGS) -o $@ $^ $(LDLIBS)

static: build/$(STATIC_TARGET)/pith
	cp $< pith-static
	@file pith-static | grep -q 'statically linked' && echo "pith-static: statically linked, $$(stat -c %s pith-static) bytes"

# One stripped binary per target, their checksums, and each size.
.PHONY: dist dist-one cross-test
dist:
	@mkdir -p dist
	@for t in $(CROSS_TARGETS); do $(MAKE) --no-print-directory TARGET=$$t BOARD= dist-one || exit 1; done
	@cd dist && sha256sum $(addprefix pith-,$(CROSS_TARGETS)) >SHA256SUMS
	@for t in $(CROSS_TARGETS); do \
		f=dist/pith-$$t; \
		file $$f | grep -q 'statically linked' || { echo "$$f: not statically linked" >&2; exit 1; }; \
		n=$$(stat -c %s $$f); \
		printf '%-32s %7d bytes  static%s\n' $$f $$n "$$([ $$n -le 655360 ] || echo ', OVER the 640 KiB budget')"; \
	done
	@echo "dist/SHA256SUMS"
dist-one: $(TDIR)/pith
	$(CROSS_STRIP) -o dist/pith-$(TGT) $<

# Every target and board under qemu-user with explicit CPUs (tests/cross.sh
# builds them first).
cross-test:
	@sh tests/cross.sh

# CI's stage after make test: cross-test, then the scripts of tests/ci/ side
# by side (tests/run.sh): the NEON kernels on each emulated CPU (on
# cross.sh's builds), the static musl build, the fuzz harnesses. Each runs
# if one before fails.
.PHONY: ci-test
ci-test:
	@s=0; sh tests/cross.sh || s=1; sh tests/run.sh tests/ci/t_*.sh || s=1; exit $$s

# make -s TARGET=... print-VAR: a toolchain variable, for scripts.
print-%:
	@echo '$($*)'

# ---- fuzzing: libFuzzer harnesses under ASan+UBSan (tests/fuzz/) -----------
# make fuzz                 builds every harness and runs each for FUZZ_SECONDS
# make fuzz FUZZ_SECONDS=600
# make fuzz-build           only builds build/fuzz/fuzz_NAME
# Needs clang and its libFuzzer runtime (Debian: clang, libclang-rt-14-dev).
# Built without OpenMP (one thread) and without -Werror (clang warns
# differently from gcc; gcc's -Werror build is the one that guards style).
FUZZ_CC ?= clang
FUZZ_SECONDS ?= 10
FUZZ = build/fuzz
FUZZ_OPT = -O1
# Line tables are all the sanitizers' reports use (-g's full debug
# information: 8% of the build).
FUZZ_CFLAGS = -std=c11 -Wall -Wextra -gline-tables-only $(FUZZ_OPT) -fno-strict-aliasing -fno-omit-frame-pointer \
              -fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=all
FUZZ_HARNESS = $(sort $(wildcard tests/fuzz/fuzz_*.c))
FUZZ_BINS = $(patsubst tests/fuzz/%.c,$(FUZZ)/%,$(FUZZ_HARNESS))
FUZZ_LIB = $(call objs,$(FUZZ),$(CORE_SRC) $(filter-out port/main.c,$(PORT_SRC)))
# Harnesses that provide port/output.c's functions themselves (fuzz_cli).
FUZZ_OWN_OUTPUT = $(FUZZ)/fuzz_cli

.PHONY: fuzz fuzz-build
# The x86 kernels (AVX2, AVX-512) are 36 of the harnesses' 60 CPU seconds of
# build at -O1, 4 at -O0; only fuzz_model reaches them (a few steps of a
# tiny model), with the same sanitizers and coverage at either level.
$(FUZZ)/src/kernels/x86/kernels_x86.o $(FUZZ)/src/kernels/x86/kernels_x86_rows.o: FUZZ_OPT = -O0
$(FUZZ)/src/%.o: src/%.c $(HEADERS)
	@mkdir -p $(@D)
	$(FUZZ_CC) $(FUZZ_CFLAGS) $(CORE_DEFS) -c $< -o $@
$(FUZZ)/port/%.o: port/%.c $(HEADERS)
	@mkdir -p $(@D)
	$(FUZZ_CC) $(FUZZ_CFLAGS) $(PORT_DEFS) -c $< -o $@
$(FUZZ)/tests/fuzz/%.o: tests/fuzz/%.c tests/fuzz/fuzz_common.h $(HEADERS)
	@mkdir -p $(@D)
	$(FUZZ_CC) $(FUZZ_CFLAGS) $(PORT_DEFS) -c $< -o $@
$(FUZZ)/fuzz_%: $(FUZZ)/tests/fuzz/fuzz_%.o $(FUZZ_LIB)
	$(FUZZ_CC) $(FUZZ_CFLAGS) -fsanitize=fuzzer -o $@ \
	  $(filter-out $(if $(filter $@,$(FUZZ_OWN_OUTPUT)),$(FUZZ)/port/output.o),$^) -lm

fuzz-build: $(FUZZ_BINS)
fuzz: fuzz-build
	@sh tests/fuzz/run.sh $(FUZZ_SECONDS)
