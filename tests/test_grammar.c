/* test_grammar.c - the GBNF parser (good and bad grammars, with their
 * line:column errors), the byte matcher (whole strings, UTF-8 split
 * across pieces, the end only at accept states), and the vocabulary mask
 * on the real Qwen3 and stories260K vocabularies: the sorted prefix walk
 * must give exactly the tokens that running each token's bytes alone
 * through the matcher gives, tokens straddling grammar elements included. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../port/port.h"
#include "../src/arena/arena.h"
#include "../src/gguf/gguf.h"
#include "../src/text/grammar.h"
#include "../src/text/json_schema.h"
#include "../src/text/tokenizer.h"
#include "check.h"

static Grammar G;
static void *g_mem;

static uint64_t g_bytes;

static void grammar_setup(uint32_t max_piece, int32_t n_vocab)
{
    uint64_t bytes = g_bytes = grammar_bytes(max_piece, n_vocab);
    g_mem = port_arena_map((size_t)bytes);
    Arena a;
    arena_init(&a, g_mem, bytes);
    if (grammar_init(&G, &a, max_piece, n_vocab) != 0) {
        printf("not ok - grammar_init\n");
        exit(1);
    }
}

static int compile(const char *text, char *err, size_t cap)
{
    err[0] = '\0';
    return grammar_compile(&G, text, strlen(text), "g", err, cap);
}

/* Feeds s in pieces of `step` bytes; returns 1 if all accepted. */
static int matches_prefix(const char *s, size_t step)
{
    grammar_reset(&G);
    size_t n = strlen(s);
    for (size_t i = 0; i < n; i += step) {
        size_t k = n - i < step ? n - i : step;
        if (grammar_accept(&G, s + i, k) != 0) return 0;
    }
    return 1;
}

static int matches(const char *s, size_t step)
{
    return matches_prefix(s, step) && grammar_can_end(&G);
}

/* s with control bytes escaped, for test names */
static const char *shown(const char *s)
{
    static char buf[4][256];
    static int k;
    char *o = buf[k++ & 3];
    size_t n = 0;
    for (; *s && n < 240; s++) {
        if ((unsigned char)*s < 32) n += (size_t)snprintf(o + n, 256 - n, "\\x%02x", (unsigned char)*s);
        else o[n++] = *s;
    }
    o[n] = '\0';
    return o;
}

static void good_grammars(void)
{
    char err[300];
    static const struct {
        const char *g;
        const char *yes[4];
        const char *no[4];
    } cases[] = {
        {"root ::= \"yes\" | \"no\"", {"yes", "no"}, {"y", "yess", "maybe", ""}},
        {"root ::= [a-c]+ # comment\n", {"a", "abcabc"}, {"", "abd", "d"}},
        {"root ::= [^\"\\\\]* \"!\"", {"!", "hello world!", "héllo!"}, {"a\"!", "back\\slash!", "x"}},
        {"root ::= x{2,3}\nx ::= \"ab\"", {"abab", "ababab"}, {"ab", "abababab"}},
        {"root ::= \"a\"{3}", {"aaa"}, {"aa", "aaaa"}},
        {"root ::= \"a\"{2,} \"b\"?", {"aa", "aaaab", "aab"}, {"ab", "b"}},
        {"root ::= ( \"x\" | \"y\" z )* \"end\"\nz ::= [0-9]", {"end", "xy1xend", "y9y8end"}, {"yend", "xen"}},
        {"root ::= .\n", {"a", "\xe2\x82\xac"}, {"", "ab"}},
        {"root ::= \"\\u20ac\" \"\\x41\" \"\\n\"", {"\xe2\x82\xac" "A\n"}, {"A\n"}},
        {"# leading comment\n\nroot ::=\n  item\n  | \"(\" root \")\"\nitem ::= [a-z]", {"q", "((q))"}, {"(q", "()"}},
        {"root ::= [a-z-]+", {"a-b"}, {"A"}},
        {"root ::= \"\"", {""}, {"a"}},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        int rc = compile(cases[i].g, err, sizeof err);
        CHECK(rc == 0, "grammar %zu compiles (%s)", i, err);
        if (rc != 0) continue;
        for (int k = 0; k < 4 && cases[i].yes[k]; k++) {
            CHECK(matches(cases[i].yes[k], 1000), "grammar %zu matches '%s' whole", i, shown(cases[i].yes[k]));
            CHECK(matches(cases[i].yes[k], 1), "grammar %zu matches '%s' byte by byte", i, shown(cases[i].yes[k]));
        }
        for (int k = 0; k < 4 && cases[i].no[k]; k++)
            CHECK(!matches(cases[i].no[k], 1), "grammar %zu refuses '%s'", i, shown(cases[i].no[k]));
    }
    /* a prefix is no sentence: the end only at accept states */
    compile("root ::= \"{\" [0-9]+ \"}\"", err, sizeof err);
    CHECK(matches_prefix("{12", 2) && !grammar_can_end(&G), "a prefix cannot end");
    CHECK(matches_prefix("{12}", 2) && grammar_can_end(&G) && grammar_finished(&G), "the whole can end, nothing follows");
    /* a UTF-8 character split over pieces */
    compile("root ::= [\\u00e0-\\u00ff] \"x\"", err, sizeof err);
    grammar_reset(&G);
    CHECK(grammar_accept(&G, "\xc3", 1) == 0 && !grammar_can_end(&G), "half a character is taken and cannot end");
    CHECK(grammar_accept(&G, "\xa9x", 2) == 0 && grammar_can_end(&G), "its second byte completes it");
    grammar_reset(&G);
    CHECK(grammar_accept(&G, "\xc2", 1) != 0, "a lead byte no allowed character starts with is refused");
    CHECK(grammar_accept(&G, "\xc3\x28", 2) != 0, "a broken sequence is refused");
    /* only well-formed UTF-8: overlong forms, surrogates, beyond U+10FFFF */
    compile("root ::= \"m\" | [\\U00010000-\\U0010ffff] | [\\u0800-\\uffff]", err, sizeof err);
    grammar_reset(&G);
    CHECK(grammar_try(&G, "\xf0", 1) && grammar_try(&G, "\xe0", 1), "4- and 3-byte leads may start allowed characters");
    CHECK(!grammar_try(&G, "\xf0\x80", 2), "an overlong 4-byte form is refused at its second byte");
    CHECK(!grammar_try(&G, "\xe0\x81", 2), "an overlong 3-byte form is refused at its second byte");
    CHECK(!grammar_try(&G, "\xed\xa0", 2), "a surrogate is refused at its second byte");
    CHECK(!grammar_try(&G, "\xf4\x90", 2), "above U+10FFFF is refused at its second byte");
    CHECK(grammar_try(&G, "\xf0\x9f\x98\x80", 4) && grammar_try(&G, "\xed\x9f\xbf", 3), "valid 4- and 3-byte characters pass");
    compile("root ::= \"m\"", err, sizeof err);
    grammar_reset(&G);
    CHECK(!grammar_try(&G, "\xf0", 1) && !grammar_try(&G, "\xc1", 1), "a lead byte whose well-formed characters cannot be 'm' is refused (F0 80 81 AD would be an overlong 'm')");
    /* deep nesting within the bound */
    compile("root ::= \"[\" root? \"]\"", err, sizeof err);
    char deep[200];
    int d = 40;
    for (int i = 0; i < d; i++) deep[i] = '[', deep[2 * d - 1 - i] = ']';
    deep[2 * d] = '\0';
    CHECK(matches(deep, 3), "nesting 40 deep matches");
    for (int i = 0; i < 150; i++) deep[i] = '[';
    deep[150] = '\0';
    CHECK(!matches_prefix(deep, 1), "nesting beyond GRAMMAR_MAX_DEPTH is not offered");
}

static void bad_grammars(void)
{
    static const struct {
        const char *g;
        const char *want;
    } cases[] = {
        {"", "empty"},
        {"root ::= \"a\"\nroot ::= \"b\"", "g: 2:1: rule 'root' is defined twice"},
        {"root ::= foo", "g: 1:10: undefined rule 'foo'"},
        {"start ::= \"a\"", "no rule 'root'"},
        {"root ::= \"abc", "g: 1:10: unterminated string literal"},
        {"root ::= [abc", "g: 1:10: unterminated character class"},
        {"root ::= (\"a\" | \"b\"", "unclosed '('"},
        {"root ::= \"a\" )", "g: 1:14: unmatched ')'"},
        {"root ::= * \"a\"", "g: 1:10: '*' follows nothing it could repeat"},
        {"root ::= \"a\"{3,1}", "{m,n} with n < m"},
        {"root ::= \"a\"{5000}", "repetition count above 1000"},
        {"root ::= root \"a\" | \"b\"", "left recursion: rule 'root'"},
        {"root ::= x\nx ::= y \"a\"\ny ::= \"b\"? x", "left recursion: rule 'x'"},
        {"root ::= (\"a\"?)*", "left recursion"},
        {"root ::= \"\\q\"", "g: 1:11: unknown escape"},
        {"root ::= [z-a]", "range end before its start"},
        {"root = \"a\"", "g: 1:5: expected '::=' after the rule name"},
        {"root ::= \"a\" @", "g: 1:14: unexpected character '@'"},
        {"root ::= \"\\uD800x\" \"\\U00110000\"", "above U+10FFFF"},
        {"root ::= [\xff]", "invalid UTF-8"},
    };
    char err[300];
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        int rc = compile(cases[i].g, err, sizeof err);
        CHECK(rc != 0 && strstr(err, cases[i].want), "bad grammar %zu refused: want '%s', got '%s'", i, cases[i].want,
              err);
    }
    /* huge alternations: beyond the stack bound, refused up front */
    static char big[200000];
    size_t n = (size_t)snprintf(big, sizeof big, "root ::= ");
    for (int i = 0; i < 600; i++) n += (size_t)snprintf(big + n, sizeof big - n, "%s\"w%d\"", i ? " | " : "", i);
    int rc = compile(big, err, sizeof err);
    CHECK(rc != 0 && strstr(err, "alternatives are open at one point"), "600 alternatives refused: %s", err);
    /* too many elements */
    n = (size_t)snprintf(big, sizeof big, "root ::= ");
    for (int i = 0; i < 40; i++) n += (size_t)snprintf(big + n, sizeof big - n, "[a-z]{1000} ");
    rc = compile(big, err, sizeof err);
    CHECK(rc != 0 && strstr(err, "too large"), "40,000 elements refused: %s", err);
}

/* ---- JSON Schema ---- */

static char schema_gbnf[GRAMMAR_MAX_TEXT + 1];

static void schemas(void)
{
    static const struct {
        const char *schema;
        const char *yes[4];
        const char *no[5];
    } cases[] = {
        {"{\"type\":\"object\",\"properties\":{\"a\":{\"type\":\"integer\"},\"b\":{\"type\":\"string\"}},\"required\":[\"a\"]}",
         {"{\"a\": -12}", "{\"a\":0, \"b\": \"x\\\"y\"}", "{\n  \"a\": 5\n}"},
         {"{}", "{\"b\": \"x\"}", "{\"a\": 01}", "{\"a\": 1.5}", "{\"a\": 1, \"c\": 2}"}},
        {"{\"type\":\"object\",\"properties\":{\"x\":{\"type\":\"boolean\"},\"y\":{\"type\":\"null\"}},\"additionalProperties\":false}",
         {"{}", "{\"y\": null}", "{\"x\": true, \"y\": null}"},
         {"{\"y\": null, \"x\": true}", "{\"x\": 1}", "{,}"}},
        {"{\"type\":\"array\",\"items\":{\"enum\":[\"red\",\"green\",7,null]},\"minItems\":1,\"maxItems\":2}",
         {"[\"red\"]", "[7, null]"},
         {"[]", "[\"blue\"]", "[7, 7, 7]"}},
        {"{\"anyOf\":[{\"type\":\"number\"},{\"const\":{\"k\":[1,2]}}]}",
         {"-1.5e3", "3", "{\"k\": [1, 2]}"},
         {"\"3\"", "{\"k\": [1]}", "1e"}},
        {"{\"type\":\"string\",\"minLength\":2,\"maxLength\":3}",
         {"\"ab\"", "\"abc\"", "\"\\u00e9x\""},
         {"\"a\"", "\"abcd\"", "\"\n\""}},
        {"{\"$defs\":{\"node\":{\"type\":\"object\",\"properties\":{\"kids\":{\"type\":\"array\",\"items\":{\"$ref\":\"#/$defs/node\"}}},\"required\":[\"kids\"]}},\"$ref\":\"#/$defs/node\"}",
         {"{\"kids\": []}", "{\"kids\": [{\"kids\": []}, {\"kids\": [{\"kids\": []}]}]}"},
         {"{\"kids\": [{}]}", "{}"}},
        {"{\"type\":[\"integer\",\"null\"],\"minimum\":0,\"title\":\"t\",\"description\":\"d\"}",
         {"0", "42", "null"},
         {"-1", "1.5"}},
        {"{\"type\":\"object\",\"additionalProperties\":{\"type\":\"integer\"}}",
         {"{}", "{\"any\": 1, \"other\": -2}"},
         {"{\"a\": \"s\"}"}},
        {"true", {"[1, {\"a\": null}]", "\"s\""}, {"nul"}},
    };
    char err[400];
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        int64_t n = json_schema_grammar(cases[i].schema, strlen(cases[i].schema), "schema", schema_gbnf, sizeof schema_gbnf,
                                        err, sizeof err);
        CHECK(n > 0, "schema %zu translates (%s)", i, n > 0 ? "" : err);
        if (n <= 0) continue;
        int rc = grammar_compile(&G, schema_gbnf, (size_t)n, "schema grammar", err, sizeof err);
        CHECK(rc == 0, "schema %zu's grammar compiles (%s)", i, rc ? err : "");
        if (rc) continue;
        for (int k = 0; k < 4 && cases[i].yes[k]; k++)
            CHECK(matches(cases[i].yes[k], 3), "schema %zu takes %s", i, shown(cases[i].yes[k]));
        for (int k = 0; k < 5 && cases[i].no[k]; k++)
            CHECK(!matches(cases[i].no[k], 3), "schema %zu refuses %s", i, shown(cases[i].no[k]));
    }
    static const struct {
        const char *schema, *want;
    } bad[] = {
        {"{\"type\":\"string\",\"pattern\":\"^a\"}", "schema: byte 17: unsupported keyword 'pattern'"},
        {"{\"type\":\"string\",\"format\":\"date\"}", "unsupported keyword 'format'"},
        {"{\"type\":\"integer\",\"maximum\":3}", "unsupported keyword 'maximum'"},
        {"{\"type\":\"integer\",\"minimum\":3}", "minimum: only 0 is supported"},
        {"{\"type\":\"object\",\"properties\":{\"a\":{}},\"required\":[\"b\"]}", "required: 'b' is not in properties"},
        {"{\"type\":\"thing\"}", "unknown type 'thing'"},
        {"{\"$ref\":\"#/$defs/none\"}", "'#/$defs/none' is not defined"},
        {"{\"$ref\":\"http://x/y\"}", "only \"#\""},
        {"{\"allOf\":[{},{}]}", "allOf: only one schema"},
        {"{\"type\":\"array\",\"maxItems\":5000}", "more than pith's bound of 1000"},
        {"{\"type\":\"array\",\"minItems\":3,\"maxItems\":2}", "maxItems is less than minItems"},
        {"{\"not\":{}}", "unsupported keyword 'not'"},
        {"false", "matches nothing"},
        {"[1]", "a schema must be an object or a boolean"},
        {"{\"type\":", "schema: byte 8"},
        {"{\"items\":[{},{}],\"type\":\"array\"}", "tuples"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        err[0] = '\0';
        int64_t n = json_schema_grammar(bad[i].schema, strlen(bad[i].schema), "schema", schema_gbnf, sizeof schema_gbnf,
                                        err, sizeof err);
        CHECK(n < 0 && strstr(err, bad[i].want), "schema refused: want '%s', got '%s'", bad[i].want, err);
    }
    /* deep nesting: refused by the JSON reader's depth, or translated within bounds */
    static char deep[4096];
    size_t n = 0;
    for (int i = 0; i < 100; i++) n += (size_t)snprintf(deep + n, sizeof deep - n, "{\"items\":");
    n += (size_t)snprintf(deep + n, sizeof deep - n, "{}");
    for (int i = 0; i < 100; i++) deep[n++] = '}';
    deep[n] = '\0';
    int64_t r = json_schema_grammar(deep, n, "schema", schema_gbnf, sizeof schema_gbnf, err, sizeof err);
    CHECK(r < 0 && strstr(err, "deep"), "a schema nested 100 deep is refused: %s", err);
    /* the json_object grammar */
    int rc = grammar_compile(&G, json_schema_object_grammar, strlen(json_schema_object_grammar), "object", err, sizeof err);
    CHECK(rc == 0 && matches("{\"a\": [1, {\"b\": null}]}", 2) && !matches("[1]", 1), "json_object grammar");
    /* the string schemas Qwen3.5's calls write as raw text (json_schema_is_text), and the rest */
    static const struct {
        const char *schema;
        int text;
    } kinds[] = {
        {"{\"type\":\"string\",\"description\":\"d\"}", 1},
        {"{\"type\":\"string\",\"maxLength\":3}", 1},
        {"{\"enum\":[\"a\",\"b c\"]}", 1},
        {"{\"const\":\"x\"}", 1},
        {"{\"enum\":[\"a\",1]}", 0},
        {"{\"enum\":[\"a<b\"]}", 0},
        {"{\"type\":[\"string\",\"null\"]}", 0},
        {"{\"type\":\"integer\"}", 0},
        {"{\"anyOf\":[{\"type\":\"string\"}]}", 0},
        {"{\"$ref\":\"#/$defs/s\"}", 0},
        {"{}", 0},
        {"true", 0},
    };
    for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++)
        CHECK(json_schema_is_text(kinds[i].schema, strlen(kinds[i].schema)) == kinds[i].text, "%s is %sraw text",
              shown(kinds[i].schema), kinds[i].text ? "" : "not ");
    /* Qwen3.5's parameter blocks need an object at the top */
    static const char *const tops[] = {"{\"anyOf\":[{\"type\":\"object\"}]}", "{\"type\":[\"object\",\"null\"]}",
                                       "{\"type\":\"string\"}", "true"};
    for (size_t i = 0; i < sizeof tops / sizeof tops[0]; i++) {
        int next = 0, top;
        size_t used = 0;
        err[0] = '\0';
        rc = json_schema_rules(tops[i], strlen(tops[i]), "p", 1, &next, &top, schema_gbnf, sizeof schema_gbnf, &used, err,
                               sizeof err);
        CHECK(rc < 0 && strstr(err, "Qwen3.5's <function=...> calls need"), "parameters %s refused: %s", shown(tops[i]), err);
    }
}

/* ---- the mask on a real vocabulary ---- */

typedef struct {
    Gguf g;
    Tokenizer t;
    GrammarVocab v;
    void *base;
    uint64_t size;
} Vocab;

static int load_vocab(Vocab *l, const char *path)
{
    GgufError err;
    memset(l, 0, sizeof *l);
    if (gguf_open(&l->g, path, 1, NULL, &err) != 0) return -1;
    Plan plan;
    plan_init(&plan);
    gguf_plan(&l->g, &plan);
    if (tokenizer_plan(&l->g, 4096, &plan, &err) != 0) return -1;
    grammar_vocab_plan((int32_t)100000000, &plan); /* over-planned: the test does not know n_vocab yet */
    l->size = plan.total;
    l->base = port_arena_map((size_t)plan.total);
    Arena a;
    arena_init(&a, l->base, plan.total);
    if (gguf_index(&l->g, &a, &err) != 0) return -1;
    if (tokenizer_load(&l->t, &l->g, 4096, &a, &err) != 0) return -1;
    return grammar_vocab_build(&l->v, &a, &l->t);
}

/* grammar_mask against grammar_allows for every token, at each prefix of text. */
static void mask_exact(Vocab *l, const char *label, const char *grammar, const char *text)
{
    char err[300];
    int rc = compile(grammar, err, sizeof err);
    CHECK(rc == 0, "%s: compiles (%s)", label, err);
    if (rc) return;
    int32_t nv = tokenizer_n_vocab(&l->t);
    float *logits = malloc((size_t)nv * sizeof *logits);
    grammar_reset(&G);
    size_t n = strlen(text);
    int all_same = 1, steps = 0, eog_ok = 1;
    long allowed_total = 0;
    double t_mask = 0;
    for (size_t i = 0; i <= n; i++) {
        for (int32_t k = 0; k < nv; k++) logits[k] = 1.0f;
        double t0 = port_seconds();
        int allowed = grammar_mask(&G, &l->v, &l->t, logits, err, sizeof err);
        t_mask += port_seconds() - t0;
        int count = 0;
        for (int32_t k = 0; k < nv; k++) {
            int want = grammar_allows(&G, &l->t, k);
            int got = logits[k] > -INFINITY;
            count += got;
            if (want != got) {
                if (all_same) {
                    size_t pl;
                    const char *pc = tokenizer_piece(&l->t, k, &pl);
                    printf("# %s at %zu: token %d '%.*s' allows %d, mask %d\n", label, i, k, (int)pl, pc, want, got);
                }
                all_same = 0;
            }
            if (tokenizer_is_eog(&l->t, k) && got != grammar_can_end(&G)) eog_ok = 0;
        }
        if (allowed != count) all_same = 0;
        allowed_total += count;
        steps++;
        if (i < n && grammar_accept(&G, text + i, 1) != 0) {
            CHECK(0, "%s: the text itself matches (byte %zu)", label, i);
            break;
        }
    }
    CHECK(all_same, "%s: the mask equals each token run alone, at all %d prefixes (%ld allowed in all; %.2f ms per mask)",
          label, steps, allowed_total, 1e3 * t_mask / steps);
    CHECK(eog_ok, "%s: end-of-generation allowed exactly where the grammar can end", label);
    CHECK(grammar_can_end(&G), "%s: the whole text can end", label);
    free(logits);
}

/* A token that straddles two grammar elements ("\"," closes a string and
 * opens the next member) is allowed, one that crosses into what cannot
 * follow is not. */
static void straddle(Vocab *l)
{
    char err[300];
    compile("root ::= \"{\" \"\\\"\" [a-z]+ \"\\\"\" \",\" \" \" \"}\"", err, sizeof err);
    grammar_reset(&G);
    grammar_accept(&G, "{\"ab", 4);
    int32_t quote_comma = tokenizer_find(&l->t, "\",");
    int32_t quote_colon = tokenizer_find(&l->t, "\":");
    if (quote_comma >= 0 && quote_colon >= 0) {
        CHECK(grammar_allows(&G, &l->t, quote_comma), "token '\",' straddling string end and comma is allowed");
        CHECK(!grammar_allows(&G, &l->t, quote_colon), "token '\":' is refused where ',' must follow");
        int32_t nv = tokenizer_n_vocab(&l->t);
        float *logits = malloc((size_t)nv * sizeof *logits);
        for (int32_t k = 0; k < nv; k++) logits[k] = 0;
        grammar_mask(&G, &l->v, &l->t, logits, err, sizeof err);
        CHECK(logits[quote_comma] == 0 && logits[quote_colon] == -INFINITY, "the mask agrees on both");
        free(logits);
    }
}

/* The cache of allowed sets: a state seen again (inside a string) is a hit
 * with the same set a fresh walk gives; a new grammar starts empty. */
static void cache(Vocab *l, const char *json_grammar)
{
    char err[300];
    int32_t nv = tokenizer_n_vocab(&l->t);
    size_t words = ((size_t)nv + 63) / 64;
    uint64_t *first = malloc(words * sizeof *first);
    const uint64_t *bits;
    compile(json_grammar, err, sizeof err);
    grammar_accept(&G, "{\"k\": \"ab", 9);
    uint32_t hits = G.cache_hits, misses = G.cache_misses;
    int n1 = grammar_allowed(&G, &l->v, &l->t, 1, &bits, err, sizeof err);
    CHECK(n1 == 0 && G.cache_misses == misses, "cache: a new state is not at hand without a walk");
    n1 = grammar_allowed(&G, &l->v, &l->t, 0, &bits, err, sizeof err);
    memcpy(first, bits, words * sizeof *first);
    CHECK(n1 > 0 && G.cache_misses == misses + 1, "cache: the first time walks (%d allowed)", n1);
    grammar_accept(&G, "cd", 2); /* still inside the string: the same state */
    int n2 = grammar_allowed(&G, &l->v, &l->t, 1, &bits, err, sizeof err);
    CHECK(n2 == n1 && G.cache_hits == hits + 1 && memcmp(bits, first, words * sizeof *first) == 0,
          "cache: the same state again is a hit with the same set");
    grammar_accept(&G, "\"", 1);
    int n3 = grammar_allowed(&G, &l->v, &l->t, 0, &bits, err, sizeof err);
    CHECK(n3 > 0 && n3 != n1 && G.cache_misses == misses + 2, "cache: another state walks (%d allowed)", n3);
    /* a new grammar: nothing of the old one's sets is used */
    compile("root ::= \"x\"", err, sizeof err);
    uint32_t h = G.cache_hits;
    int n4 = grammar_allowed(&G, &l->v, &l->t, 0, &bits, err, sizeof err);
    CHECK(G.cache_hits == h && n4 >= 1 && n4 < 50, "cache: a new grammar starts empty (%d allowed)", n4);
    /* more states than entries: the oldest go, answers stay right */
    compile(json_grammar, err, sizeof err);
    const char *doc = "{\"a\": [1, 22, 333], \"b\": {\"c\": true}}";
    int right = 1;
    for (int round = 0; round < 2; round++) {
        grammar_reset(&G);
        for (size_t i = 0; doc[i]; i++) {
            int n = grammar_allowed(&G, &l->v, &l->t, 0, &bits, err, sizeof err);
            for (int32_t k = 0; k < nv && n > 0; k += 97)
                if ((int)(bits[k >> 6] >> (k & 63) & 1) != grammar_allows(&G, &l->t, k)) right = 0;
            grammar_accept(&G, doc + i, 1);
        }
    }
    CHECK(right, "cache: sets right through a document, twice (%u hits, %u walks)", G.cache_hits, G.cache_misses);
    free(first);
}

int main(void)
{
    grammar_setup(256, 0);
    good_grammars();
    bad_grammars();
    schemas();
    port_arena_unmap(g_mem, (size_t)g_bytes);

    static const char *json_grammar =
        "root ::= ws value ws\n"
        "value ::= object | array | string | number | (\"true\" | \"false\" | \"null\")\n"
        "object ::= \"{\" ws ( string ws \":\" ws value ( ws \",\" ws string ws \":\" ws value )* )? ws \"}\"\n"
        "array ::= \"[\" ws ( value ( ws \",\" ws value )* )? ws \"]\"\n"
        "string ::= \"\\\"\" ( [^\"\\\\\\x00-\\x1f] | \"\\\\\" ([\"\\\\/bfnrt] | \"u\" [0-9a-fA-F]{4}) )* \"\\\"\"\n"
        "number ::= \"-\"? ([0-9] | [1-9] [0-9]{1,15}) (\".\" [0-9]{1,15})? ([eE] [-+]? [0-9]{1,3})?\n"
        "ws ::= [ \\t\\n]{0,4}\n";
    /* the real Qwen3 vocabulary (151,669 tokens), the tiny model's and stories260K's SPM one */
    const char *models[] = {"tokenizer/qwen3-vocab.gguf", "models/tiny-qwen3-Q8_0.gguf", "models/stories260K.gguf"};
    for (int m = 0; m < 3; m++) {
        char path[1024];
        snprintf(path, sizeof path, "%s/%s", FIXTURES_DIR, models[m]);
        static Vocab l;
        if (load_vocab(&l, path) != 0) {
            CHECK(0, "load %s", path);
            continue;
        }
        grammar_setup(l.v.max_piece, tokenizer_n_vocab(&l.t));
        char label[128];
        snprintf(label, sizeof label, "%s json", models[m]);
        mask_exact(&l, label, json_grammar,
                   m == 0 ? "{\"é\": [1.5e3, \"a\"]}" : "{\"name\": \"Zoë\", \"tags\": [1, -2.5e3, true, null], \"x\": {}}");
        snprintf(label, sizeof label, "%s utf8", models[m]);
        mask_exact(&l, label, "root ::= [\\u00c0-\\u024f]+ \" \" [^a-z]{1,3}", "\xc3\xa9\xc8\x80 ZZ");
        snprintf(label, sizeof label, "%s words", models[m]);
        mask_exact(&l, label, "root ::= (\"hello\" | \"help\" | \"world\") (\" \" (\"hello\" | \"world\"))*",
                   "hello world hello");
        straddle(&l);
        cache(&l, json_grammar);
        port_arena_unmap(g_mem, (size_t)g_bytes);
        gguf_close(&l.g);
        port_arena_unmap(l.base, (size_t)l.size);
    }
    CHECK_DONE();
}
