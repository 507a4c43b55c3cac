/* test_memplan.c - the planner's decisions (src/model/memplan.c) on a synthetic
 * model whose plan is simple arithmetic, so every threshold is known:
 * mmap when it fits to the byte, stream one byte below, read only without
 * mmap, the largest context that fits, the floor, the refusal, and the
 * stream window grown with what the budget leaves (whole layers only). */
#include <string.h>

#include "../port/port.h"
#include "../src/model/memplan.h"
#include "check.h"

/* The synthetic model: 10 layers of 1 MiB, a context costs 4 KiB per
 * position, the rest of the arena is 64 KiB. Streaming needs two slots of
 * a layer; each layer the window holds beyond them is resident. */
#define LAYER ((uint64_t)1 << 20)
#define N_LAYER 10
#define PER_POS 4096
#define BASE 65536
#define FILE_BYTES (N_LAYER * LAYER + 8192)

static void fake_plan(void *ctx, LoadMode load, uint32_t n_ctx, uint64_t window, Plan *p)
{
    plan_add(p, "base", BASE);
    plan_add(p, "kv cache", (uint64_t)n_ctx * PER_POS);
    if (load == LOAD_READ) plan_add(p, "weights", N_LAYER * LAYER);
    if (load == LOAD_READ && ctx) plan_add(p, "more for read", *(const uint64_t *)ctx); /* read needing more than mmap */
    if (load == LOAD_STREAM) {
        uint64_t resident = window > 2 * LAYER ? (window - 2 * LAYER) / LAYER : 0;
        if (resident > N_LAYER) resident = N_LAYER;
        plan_add(p, "stream slots", 2 * LAYER);
        if (resident) plan_add(p, "resident layers", resident * LAYER);
    }
}

static MemRequest request(int load, int mmap_ok, uint32_t n_ctx, uint32_t min_ctx)
{
    MemRequest r;
    memset(&r, 0, sizeof r);
    r.plan = fake_plan;
    r.model_path = "fake.gguf";
    r.file_bytes = FILE_BYTES;
    r.load = load;
    r.mmap_ok = mmap_ok;
    r.n_ctx = n_ctx;
    r.min_ctx = min_ctx;
    return r;
}

static MemBudget budget(uint64_t bytes)
{
    MemBudget b;
    mem_budget_init(&b, bytes);
    return b;
}

int main(void)
{
    const uint64_t oh = port_memory_overhead();
    const uint64_t mmap_need = BASE + 1024 * PER_POS + FILE_BYTES + oh;
    const uint64_t read_need = BASE + 1024 * PER_POS + N_LAYER * LAYER + oh;
    const uint64_t stream_need = BASE + 1024 * PER_POS + 2 * LAYER + oh;
    const uint64_t floor_need = BASE + 64 * PER_POS + 2 * LAYER + oh;
    MemRequest r = request(-1, 1, 1024, 0);
    MemDecision d;
    MemBudget b;

    b = budget(mmap_need);
    CHECK(mem_decide(&b, &r, &d) == 0 && d.load == LOAD_MMAP && d.n_ctx == 1024 && d.total == mmap_need,
          "budget = mmap's need: mmap, total %llu", (unsigned long long)d.total);
    CHECK(d.need[0] == mmap_need && d.need[1] == read_need && d.need[2] == stream_need && d.need_floor == floor_need,
          "what each mode needs, and the floor");
    CHECK(d.mapped == FILE_BYTES && d.overhead == oh && d.total == d.plan.total + d.mapped + d.overhead,
          "total = arena + mapped file + overhead");

    b = budget(mmap_need - 1);
    CHECK(mem_decide(&b, &r, &d) == 0 && d.load == LOAD_STREAM && d.n_ctx == 1024 && d.mapped == 0,
          "one byte less: stream at the full context");
    /* mmap_need - 1 - stream_need = the file minus 2 layers, 8 layers and 8191 bytes: 8 whole layers resident */
    CHECK(d.stream_window == 2 * LAYER + 8 * LAYER && d.total == stream_need + 8 * LAYER && d.total <= b.bytes,
          "the stream window takes what the budget leaves, whole layers (window %llu)",
          (unsigned long long)d.stream_window);

    r = request(LOAD_STREAM, 1, 1024, 0);
    CHECK(mem_decide(&b, &r, &d) == 0 && d.load == LOAD_STREAM && d.stream_window == 0 && d.total == stream_need,
          "--load stream keeps the smallest window");
    r = request(-1, 1, 1024, 0);
    r.stream_window = 3 * LAYER;
    CHECK(mem_decide(&b, &r, &d) == 0 && d.load == LOAD_STREAM && d.stream_window == 3 * LAYER &&
              d.total == stream_need + LAYER,
          "a window given by the user is kept");

    r = request(-1, 0, 1024, 0);
    b = budget(read_need);
    CHECK(mem_decide(&b, &r, &d) == 0 && d.load == LOAD_READ && d.need[0] == 0, "no mmap: read when it fits");
    b = budget(read_need - 1);
    CHECK(mem_decide(&b, &r, &d) == 0 && d.load == LOAD_STREAM, "no mmap: stream when read does not fit");

    /* kernels that read repacked weights (read_first): read, then mmap, then stream */
    r = request(-1, 1, 1024, 0);
    r.read_first = 1;
    b = budget(read_need);
    CHECK(mem_decide(&b, &r, &d) == 0 && d.load == LOAD_READ && d.mapped == 0 && d.total == read_need,
          "read_first: read when it fits, though mmap would too");
    b = budget(mmap_need);
    CHECK(mem_decide(&b, &r, &d) == 0 && d.load == LOAD_READ, "read_first: read with room to spare");
    b = budget(read_need - 1);
    CHECK(mem_decide(&b, &r, &d) == 0 && d.load == LOAD_STREAM, "read_first: stream when neither fits whole");
    char note[512];
    mem_notice(&b, &r, &d, note, sizeof note);
    CHECK(strstr(note, "read would need") != NULL, "read_first: the notice names read (%s)", note);
    uint64_t more = 2 * FILE_BYTES; /* now read needs more than mmap */
    r.ctx = &more;
    b = budget(mmap_need);
    CHECK(mem_decide(&b, &r, &d) == 0 && d.load == LOAD_MMAP && d.total == mmap_need,
          "read_first: mmap when read does not fit but mmap does");
    r.ctx = NULL;
    r.load = LOAD_MMAP;
    CHECK(mem_decide(&b, &r, &d) == 0 && d.load == LOAD_MMAP, "read_first: --load mmap is kept");
    r = request(-1, 0, 1024, 0);
    r.read_first = 1;
    b = budget(read_need);
    CHECK(mem_decide(&b, &r, &d) == 0 && d.load == LOAD_READ, "read_first without mmap: read");

    r = request(-1, 1, 1024, 0);
    b = budget(stream_need);
    CHECK(mem_decide(&b, &r, &d) == 0 && d.load == LOAD_STREAM && d.n_ctx == 1024 && d.stream_window == 0,
          "budget = stream's need: full context, smallest window");
    b = budget(stream_need - 1);
    CHECK(mem_decide(&b, &r, &d) == 0 && d.load == LOAD_STREAM && d.n_ctx == 1023, "one byte less: 1023 positions");
    b = budget(stream_need - 100 * PER_POS - 1);
    CHECK(mem_decide(&b, &r, &d) == 0 && d.n_ctx == 923 && d.total <= b.bytes, "largest context that fits: %u",
          d.n_ctx);
    b = budget(floor_need);
    CHECK(mem_decide(&b, &r, &d) == 0 && d.n_ctx == 64 && d.total == floor_need, "budget = floor's need: 64");
    b = budget(floor_need - 1);
    CHECK(mem_decide(&b, &r, &d) == -1 && !d.fits && d.load == LOAD_STREAM && d.n_ctx == 64 && d.total == floor_need,
          "one byte less: nothing fits; the least plan is described");
    char line[1024];
    mem_refusal(&b, &r, &d, line, sizeof line);
    CHECK(strstr(line, "fake.gguf: does not fit the memory budget of") && strstr(line, "(--mem)") &&
              strstr(line, "with --load stream and a context of 64") && strstr(line, "stream slots 2.0 MiB") &&
              !strchr(line, '\n'),
          "refusal: one line with the budget, the need and its parts: %s", line);

    r = request(-1, 1, 1024, 300);
    b = budget(floor_need);
    CHECK(mem_decide(&b, &r, &d) == -1 && d.floor == 300 && d.n_ctx == 300, "min_ctx raises the floor");
    r = request(-1, 1, 32, 0);
    b = budget(floor_need);
    CHECK(mem_decide(&b, &r, &d) == 0 && d.n_ctx == 32 && d.floor == 32, "a context below 64 is its own floor");

    r = request(LOAD_MMAP, 1, 1024, 0);
    b = budget(mmap_need - PER_POS);
    CHECK(mem_decide(&b, &r, &d) == 0 && d.load == LOAD_MMAP && d.n_ctx == 1023, "--load mmap: the context shrinks");
    b = budget(FILE_BYTES);
    CHECK(mem_decide(&b, &r, &d) == -1 && d.load == LOAD_MMAP && d.mapped == FILE_BYTES, "--load mmap: refused");
    mem_refusal(&b, &r, &d, line, sizeof line);
    CHECK(strstr(line, "with --load mmap and a context of 64 (model file ") != NULL, "mmap refusal counts the file");

    r = request(-1, 1, 1024, 0);
    b = budget(stream_need - 1);
    mem_decide(&b, &r, &d);
    mem_notice(&b, &r, &d, line, sizeof line);
    CHECK(strstr(line, "note: fake.gguf: budget") && strstr(line, "streaming the weights") &&
              strstr(line, "context shrunk from 1024 to 1023 positions"),
          "notice: %s", line);
    b = budget(mmap_need);
    mem_decide(&b, &r, &d);
    mem_notice(&b, &r, &d, line, sizeof line);
    CHECK(line[0] == '\0', "no notice when the model is mapped at the asked context");

    CHECK(mem_load_parse("mmap") == LOAD_MMAP && mem_load_parse("read") == LOAD_READ &&
              mem_load_parse("stream") == LOAD_STREAM && mem_load_parse("Stream") == -1,
          "load mode names");
    b = budget(12345);
    CHECK(b.bytes == 12345 && strcmp(b.source, "--mem") == 0, "--mem is the budget");
    b = budget(0);
    CHECK(b.bytes > 0 && b.source[0], "default budget: %llu bytes (%s)", (unsigned long long)b.bytes, b.source);
    CHECK_DONE();
}
