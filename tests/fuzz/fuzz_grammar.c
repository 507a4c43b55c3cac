/* fuzz_grammar - the GBNF parser and the JSON Schema translator on
 * arbitrary bytes. The first byte chooses: even, the rest is a grammar;
 * odd, the rest is a schema whose grammar is then compiled. A grammar that
 * compiles is driven with its own text's bytes as generated text (accept,
 * try, can_end) from the start. Properties: no crash, no sanitizer report,
 * errors are one line naming line and column (or byte); a translated schema
 * always compiles. */
#include "../../src/text/grammar.h"
#include "../../src/text/json_schema.h"
#include "../../port/port.h"

#include "fuzz_common.h"

static Grammar g;
static char gbnf[GRAMMAR_MAX_TEXT + 1];

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static int ready;
    if (!ready) {
        uint64_t bytes = grammar_bytes(64, 256);
        Arena a;
        arena_init(&a, port_arena_map((size_t)bytes), bytes);
        if (grammar_init(&g, &a, 64, 256) != 0) abort();
        ready = 1;
    }
    if (size < 1) return 0;
    const char *text = (const char *)data + 1;
    size_t len = size - 1;
    char err[400];
    if (data[0] & 1) {
        int64_t n = json_schema_grammar(text, len, "schema", gbnf, sizeof gbnf, err, sizeof err);
        if (n < 0) {
            if (!strchr(err, ':') || strchr(err, '\n')) abort();
            return 0;
        }
        if (grammar_compile(&g, gbnf, (size_t)n, "schema grammar", err, sizeof err) != 0) {
            /* a translated schema may only fail on the planned bounds */
            if (!strstr(err, "too large") && !strstr(err, "alternatives") && !strstr(err, "rules")) {
                fprintf(stderr, "translated schema does not compile: %s\n%s\n", err, gbnf);
                abort();
            }
        }
        return 0;
    }
    if (grammar_compile(&g, text, len, "grammar", err, sizeof err) != 0) {
        if (strncmp(err, "grammar: ", 9) != 0 || strchr(err, '\n')) abort();
        return 0;
    }
    grammar_reset(&g);
    for (size_t i = 0; i < len; i += 3) {
        size_t k = len - i < 3 ? len - i : 3;
        (void)grammar_try(&g, text + i, k);
        if (grammar_accept(&g, text + i, k) != 0) break;
        (void)grammar_can_end(&g);
    }
    return 0;
}
