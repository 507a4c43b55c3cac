# pith - one Makefile, no other build system.
#
#   make            ./pith for this machine
#   make static     ./pith-static, fully static against musl (OpenMP included)
#   make test       builds with ASan+UBSan and runs every test
#   make demo       writes a small random Qwen3 model and runs it
#
# Sources are found by wildcard: src/*.c is the core, port/*.c the
# portability layer, tests/test_*.c unit tests, tests/tools/*.c tools.

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

CORE_SRC = $(sort $(wildcard src/*.c))
PORT_SRC = $(sort $(wildcard port/*.c))
TEST_SRC = $(sort $(wildcard tests/test_*.c))
TOOL_SRC = $(sort $(wildcard tests/tools/*.c))
HEADERS  = $(wildcard src/*.h port/*.h tests/*.h tests/tools/*.h)

# ---- one build directory per configuration --------------------------------
# $(call objs,DIR,SOURCES)
objs = $(patsubst %.c,$(1)/%.o,$(2))

REL = build/rel
ASAN = build/asan

.PHONY: all static test demo clean bench check-core
all: pith

$(REL)/src/%.o: src/%.c $(HEADERS)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS_COMMON) $(CORE_DEFS) $(CFLAGS) -c $< -o $@
$(REL)/port/%.o: port/%.c $(HEADERS)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS_COMMON) $(PORT_DEFS) $(OMPFLAGS) $(CFLAGS) -c $< -o $@
$(ASAN)/src/%.o: src/%.c $(HEADERS)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS_COMMON) $(SAN) $(CORE_DEFS) $(CFLAGS) -c $< -o $@
$(ASAN)/port/%.o: port/%.c $(HEADERS)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS_COMMON) $(SAN) $(PORT_DEFS) $(OMPFLAGS) $(CFLAGS) -c $< -o $@
$(ASAN)/tests/%.o: tests/%.c $(HEADERS)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS_COMMON) $(SAN) $(PORT_DEFS) $(CFLAGS) -c $< -o $@

REL_OBJS  = $(call objs,$(REL),$(CORE_SRC) $(PORT_SRC))
ASAN_LIB  = $(call objs,$(ASAN),$(CORE_SRC) $(filter-out port/main.c,$(PORT_SRC)))
ASAN_MAIN = $(ASAN)/port/main.o

pith: $(REL_OBJS)
	$(CC) $(CFLAGS_COMMON) $(OMPFLAGS) $(LDFLAGS) -o $@ $^ $(LDLIBS)

$(ASAN)/pith: $(ASAN_LIB) $(ASAN_MAIN)
	$(CC) $(CFLAGS_COMMON) $(SAN) $(OMPFLAGS) -o $@ $^ $(LDLIBS)

# Unit tests link the whole library (everything but main).
$(ASAN)/tests/test_%: $(ASAN)/tests/test_%.o $(ASAN_LIB) $(call objs,$(ASAN),$(filter-out tests/tools/main_%.c,$(TOOL_SRC)))
	$(CC) $(CFLAGS_COMMON) $(SAN) $(OMPFLAGS) -o $@ $^ $(LDLIBS)

# Tools with their own main() are named tests/tools/main_NAME.c.
$(ASAN)/tools/%: $(ASAN)/tests/tools/main_%.o $(ASAN_LIB) $(call objs,$(ASAN),$(filter-out tests/tools/main_%.c,$(TOOL_SRC)))
	@mkdir -p $(@D)
	$(CC) $(CFLAGS_COMMON) $(SAN) $(OMPFLAGS) -o $@ $^ $(LDLIBS)

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

TEST_BINS = $(patsubst tests/%.c,$(ASAN)/tests/%,$(TEST_SRC))
TOOL_BINS = $(patsubst tests/tools/main_%.c,$(ASAN)/tools/%,$(filter tests/tools/main_%.c,$(TOOL_SRC)))

test: $(ASAN)/pith $(TEST_BINS) $(TOOL_BINS) pith
	@sh tests/run.sh

# The core must reach the OS only through port/: checked on the objects.
check-core: $(call objs,$(REL),$(CORE_SRC))
	@sh tests/check_core.sh $^

clean:
	rm -rf build pith pith-static

.SECONDARY:

# ---- static and cross builds ----------------------------------------------
# make static            -> ./pith-static (x86_64-linux-musl)
# make TARGET=triple     -> build/TRIPLE/pith (issue: cross builds)
STATIC_TARGET ?= x86_64-linux-musl
TARGET ?=
TGT = $(if $(TARGET),$(TARGET),$(STATIC_TARGET))
include toolchains/$(TGT).mk
TDIR = build/$(TGT)

$(TDIR)/src/%.o: src/%.c $(HEADERS)
	@mkdir -p $(@D)
	$(CROSS_CC) $(CFLAGS_COMMON) $(TARGET_CFLAGS) $(CORE_DEFS) -c $< -o $@
$(TDIR)/port/%.o: port/%.c $(HEADERS)
	@mkdir -p $(@D)
	$(CROSS_CC) $(CFLAGS_COMMON) $(TARGET_CFLAGS) $(PORT_DEFS) $(TARGET_DEFS) $(OMPFLAGS) -c $< -o $@
$(TDIR)/pith: $(call objs,$(TDIR),$(CORE_SRC) $(PORT_SRC))
	$(CROSS_CC) $(CFLAGS_COMMON) $(TARGET_CFLAGS) $(OMPFLAGS) $(TARGET_LDFLAGS) -o $@ $^ $(LDLIBS)

static: build/$(STATIC_TARGET)/pith
	cp $< pith-static
	@file pith-static | grep -q 'statically linked' && echo "pith-static: statically linked, $$(stat -c %s pith-static) bytes"
