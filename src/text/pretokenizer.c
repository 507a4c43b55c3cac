/* pretokenizer.c - llama.cpp's pre-tokenizers as data, one matcher for
 * their regexes, and hand-written splitters for the common ones (see
 * pretokenizer.h). */
#include "pretokenizer.h"

#include <string.h>

#include "unicode.h"

/* ---- the table: llama.cpp's regexes for each tokenizer.ggml.pre ------------
 * As llama-vocab.cpp (de3ff81) lists them, already in the form it runs
 * (case-insensitive groups written out as [sS] ...). */
#define CONTRACTIONS "(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])"
#define RE_GPT2 "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)"
#define RE_LLAMA3_WITH(digits)                                                                              \
    CONTRACTIONS "|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|" digits "| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|" \
                 "\\s+(?!\\S)|\\s+"
#define RE_LLAMA3 RE_LLAMA3_WITH("\\p{N}{1,3}")
#define RE_QWEN2 RE_LLAMA3_WITH("\\p{N}")
#define RE_QWEN35                                                                                             \
    CONTRACTIONS "|[^\\r\\n\\p{L}\\p{N}]?[\\p{L}\\p{M}]+|\\p{N}| ?[^\\s\\p{L}\\p{M}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|" \
                 "\\s+(?!\\S)|\\s+"
/* GPT-4o's regex as llama.cpp rewrites it: "upper" (?=\p{L})[^a-z], "lower" (?=\p{L})[^A-Z] */
#define UPPER "((?=[\\p{L}])([^a-z]))"
#define LOWER "((?=[\\p{L}])([^A-Z]))"
#define RE_GPT4O_WITH(contractions, digits)                                                                   \
    "[^\\r\\n\\p{L}\\p{N}]?" UPPER "*" LOWER "+" contractions "|[^\\r\\n\\p{L}\\p{N}]?" UPPER "+" LOWER "*" \
    contractions "|" digits "| ?[^\\s\\p{L}\\p{N}]+[\\r\\n/]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+"
#define RE_GPT4O RE_GPT4O_WITH(CONTRACTIONS "?", "\\p{N}{1,3}")
#define RE_TEKKEN RE_GPT4O_WITH("", "\\p{N}")
/* DeepSeek's: the CJK and Hangul runs */
#define RE_CJK "[\u4E00-\u9FA5\u0800-\u4E00\uAC00-\uD7FF]+"
#define RE_CJK_KANA "[\u4E00-\u9FA5\u3040-\u309F\u30A0-\u30FF]+"
#define RE_DEEPSEEK3_WORDS                                                                                   \
    "[!\"#$%&'()*+,\\-./:;<=>?@\\[\\\\\\]^_`{|}~][A-Za-z]+|[^\r\n\\p{L}\\p{P}\\p{S}]?[\\p{L}\\p{M}]+| ?[\\p{P}\\p{S}]+" \
    "[\r\n]*|\\s*[\r\n]+|\\s+(?!\\S)|\\s+"

static const char *const re_gpt2[] = {RE_GPT2, NULL};
static const char *const re_digits_gpt2[] = {"\\p{N}", RE_GPT2, NULL};
static const char *const re_falcon[] = {"[\\p{P}\\$\\+<=>\\^~\\|`]+", RE_GPT2, "[0-9][0-9][0-9]", NULL};
static const char *const re_default[] = {"[\\p{P}\\$\\+<=>\\^~\\|]+", RE_GPT2, "\\p{N}+", "[0-9][0-9][0-9]", NULL};
static const char *const re_llama3[] = {RE_LLAMA3, NULL};
static const char *const re_qwen2[] = {RE_QWEN2, NULL};
static const char *const re_qwen35[] = {RE_QWEN35, NULL};
static const char *const re_gpt4o[] = {RE_GPT4O, NULL};
static const char *const re_tekken[] = {RE_TEKKEN, NULL};
static const char *const re_deepseek_llm[] = {
    "[\r\n]",
    "\\s?[A-Za-z\u00B5\u00C0-\u00D6\u00D8-\u00F6\u00F8-\u01BA\u01BC-\u01BF\u01C4-\u0293\u0295-\u02AF\u0370-\u0373"
    "\u0376\u0377\u037B-\u037D\u037F\u0386\u0388-\u038A\u038C\u038E-\u03A1\u03A3-\u03F5\u03F7-\u0481\u048A-\u052F"
    "\u0531-\u0556\u10A0-\u10C5\u13A0-\u13F5\u13F8-\u13FD\u1C90-\u1CBA\u1CBD-\u1CBF\u1D00-\u1D2B\u1D6B-\u1D77"
    "\u1D79-\u1D9A\u1E00-\u1F15\u1F18-\u1F1D\u1F20-\u1F45\u1F48-\u1F4D\u1F50-\u1F57\u1F59\u1F5B\u1F5D\u1F5F-\u1F7D"
    "\u1F80-\u1FB4\u1FB6-\u1FBC\u1FBE\u1FC2-\u1FC4\u1FC6-\u1FCC\u1FD0-\u1FD3\u1FD6-\u1FDB\u1FE0-\u1FEC\u1FF2-\u1FF4"
    "\u1FF6-\u1FFC\u2102\u2107\u210A-\u2113\u2115\u2119-\u211D\u2124\u2126\u2128\u212A-\u212D\u212F-\u2134\u2139"
    "\u213C-\u213F\u2145-\u2149\u214E\u2183\u2184\u2C00-\u2C7B\u2C7E-\u2CE4\u2CEB-\u2CEE\u2CF2\u2CF3\uA640-\uA66D"
    "\uA680-\uA69B\uA722-\uA76F\uA771-\uA787\uA78B-\uA78E\uAB70-\uABBF\uFB00-\uFB06\uFB13-\uFB17\uFF21-\uFF3A"
    "\uFF41-\uFF5A\U00010400-\U0001044F\U000104B0-\U000104D3\U000104D8-\U000104FB\U00010C80-\U00010CB2"
    "\U00010CC0-\U00010CF2\U000118A0-\U000118DF\U0001E900-\U0001E943]+",
    "\\s?[!-/:-~\uFF01-\uFF0F\uFF1A-\uFF5E\u2018-\u201F\u3000-\u3002]+",
    "\\s+$",
    RE_CJK,
    "\\p{N}+",
    NULL};
static const char *const re_deepseek_coder[] = {"[\r\n]", "\\s?\\p{L}+", "\\s?\\p{P}+", RE_CJK, "\\p{N}", NULL};
static const char *const re_deepseek3[] = {"\\p{N}{1,3}", RE_CJK_KANA, RE_DEEPSEEK3_WORDS, NULL};
static const char *const re_seed_coder[] = {
    CONTRACTIONS "|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1}| ?[^\\s\\p{L}\\p{N}\\r\\n]+|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+",
    NULL};
static const char *const re_minicpm5[] = {"\\p{N}{1,3}", RE_LLAMA3_WITH("\\p{N}+"), NULL};
static const char *const re_youtu[] = {
    "[\uAC00-\uD7A3\u3131-\u318E]+|[\uFF01\u2026\u201C\u201D\u2018\u2019\u2014\uFF1A\uFF1B\uFF0C\u3001-\u303F"
    "\uFE30-\uFE4F]+|[\u3105-\u312F]+|" RE_CJK_KANA,
    "[^\\r\\n\\p{L}\\p{N}]?[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]*[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]+" CONTRACTIONS
    "?|[^\\r\\n\\p{L}\\p{N}]?[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]+[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]*" CONTRACTIONS
    "?|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n/]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+",
    NULL};

enum { IGNORE_MERGES = 1, ADD_BOS = 2 };

typedef struct {
    const char *name;            /* value of tokenizer.ggml.pre */
    const char *const *regexes;  /* applied in order */
    int flags;                   /* IGNORE_MERGES, ADD_BOS: llama.cpp's settings for the name */
} PretokRow;

/* Names llama.cpp maps to the same regexes are rows of their own: a file
 * names one of them. Models that use each: docs/models.md. */
static const PretokRow pretok_rows[] = {
    {"default", re_default, 0}, /* also a BPE file without tokenizer.ggml.pre */
    {"gpt-2", re_gpt2, 0},
    {"phi-2", re_gpt2, 0},
    {"mpt", re_gpt2, 0},
    {"olmo", re_gpt2, 0},
    {"jais", re_gpt2, 0},
    {"trillion", re_gpt2, 0},
    {"granite-docling", re_gpt2, 0},
    {"exaone4", re_gpt2, 0},
    {"a.x-4.0", re_gpt2, 0},
    {"gigachat", re_gpt2, 0},
    {"mellum", re_gpt2, 0},
    {"starcoder", re_digits_gpt2, 0},
    {"refact", re_digits_gpt2, 0},
    {"command-r", re_digits_gpt2, 0},
    {"smollm", re_digits_gpt2, 0},
    {"codeshell", re_digits_gpt2, 0},
    {"exaone", re_digits_gpt2, 0},
    {"minerva-7b", re_digits_gpt2, 0},
    {"mellum2", re_digits_gpt2, 0},
    {"falcon", re_falcon, 0},
    {"llama3", re_llama3, IGNORE_MERGES | ADD_BOS},
    {"llama-v3", re_llama3, IGNORE_MERGES | ADD_BOS},
    {"llama-bpe", re_llama3, IGNORE_MERGES | ADD_BOS},
    {"falcon3", re_llama3, IGNORE_MERGES | ADD_BOS},
    {"falcon-h1", re_llama3, IGNORE_MERGES | ADD_BOS},
    {"pixtral", re_llama3, IGNORE_MERGES | ADD_BOS},
    {"midm-2.0", re_llama3, IGNORE_MERGES | ADD_BOS},
    {"lfm2", re_llama3, IGNORE_MERGES | ADD_BOS},
    {"smaug-bpe", re_llama3, 0},
    {"dbrx", re_llama3, 0},
    {"qwen2", re_qwen2, 0},
    {"deepseek-r1-qwen", re_qwen2, 0},
    {"megrez", re_qwen2, 0},
    {"stablelm2", re_qwen2, 0},
    {"hunyuan", re_qwen2, 0},
    {"solar-open", re_qwen2, 0},
    {"grok-2", re_qwen2, 0},
    {"kormo", re_qwen2, 0},
    {"qwen35", re_qwen35, 0},
    {"gpt-4o", re_gpt4o, 0},
    {"llama4", re_gpt4o, 0},
    {"kanana2", re_gpt4o, 0},
    {"minimax-m2", re_gpt4o, 0},
    {"tekken", re_tekken, IGNORE_MERGES | ADD_BOS},
    {"deepseek-llm", re_deepseek_llm, 0},
    {"deepseek-coder", re_deepseek_coder, 0},
    {"deepseek-v3", re_deepseek3, 0},
    {"hunyuan-dense", re_deepseek3, 0},
    {"joyai-llm", re_deepseek3, 0},
    {"hy_v4", re_deepseek3, 0},
    {"seed-coder", re_seed_coder, 0},
    {"minicpm5", re_minicpm5, IGNORE_MERGES},
    {"youtu", re_youtu, IGNORE_MERGES},
};
#define N_ROWS ((int)(sizeof pretok_rows / sizeof pretok_rows[0]))

int pretok_find(const char *name)
{
    if (!name) return 0; /* llama.cpp's "default" */
    for (int i = 0; i < N_ROWS; i++)
        if (strcmp(name, pretok_rows[i].name) == 0) return i;
    return -1;
}

int pretok_ignore_merges(const Pretokenizer *p) { return (pretok_rows[p->row].flags & IGNORE_MERGES) != 0; }
int pretok_add_bos(const Pretokenizer *p) { return (pretok_rows[p->row].flags & ADD_BOS) != 0; }
const char *pretok_name(const Pretokenizer *p) { return pretok_rows[p->row].name; }

/* ---- hand-written splitters ------------------------------------------------
 * llama.cpp runs its own code instead of std::regex for the GPT-2, Llama 3,
 * Qwen2 and Qwen3.5 regexes (unicode_regex_split_custom); pith has such
 * splitters for those and GPT-4o's. Each returns the end of the piece that
 * starts at p, the first alternative that matches, as a backtracking regex
 * engine picks it. */
typedef struct {
    const uint8_t *s;
    size_t end;       /* the piece of text ends here: the regex's end of text */
    int marks;        /* marks are UCLASS_MARK (qwen35), else UCLASS_OTHER */
} Text;

/* Class and length (1..4) of the character at p: letter, number, space or
 * other (a mark is its own class only where x->marks says so). */
static int char_at(const Text *x, size_t p, int *cls)
{
    uint32_t cp;
    int l = utf8_next(x->s + p, x->end - p, &cp);
    int c = unicode_category(cp);
    if (c == UCLASS_PUNCT || c == UCLASS_SYMBOL || (c == UCLASS_MARK && !x->marks)) c = UCLASS_OTHER;
    *cls = c;
    return l > 0 ? l : 1;
}

static int is_crlf(const Text *x, size_t p) { return x->s[p] == '\r' || x->s[p] == '\n'; }

static int lower(uint8_t c) { return c >= 'A' && c <= 'Z' ? c + 32 : c; }

/* End of the whitespace run starting at p; *last = start of its last char. */
static size_t space_run(const Text *x, size_t p, size_t *last)
{
    int cls;
    *last = p;
    while (p < x->end) {
        int l = char_at(x, p, &cls);
        if (cls != UCLASS_SPACE) break;
        *last = p;
        p += (size_t)l;
    }
    return p;
}

/* End of the run of characters of class cls starting at q. */
static size_t class_run(const Text *x, size_t q, int cls)
{
    int c;
    while (q < x->end) {
        int l = char_at(x, q, &c);
        if (c != cls) break;
        q += (size_t)l;
    }
    return q;
}

/* End of the run of letters (and marks, where they are told apart) from q. */
static size_t letter_run(const Text *x, size_t q)
{
    int c;
    while (q < x->end) {
        int l = char_at(x, q, &c);
        if (c != UCLASS_LETTER && c != UCLASS_MARK) break;
        q += (size_t)l;
    }
    return q;
}

/* \p{N}{1,max_digits} from the number at p (l bytes long). */
static size_t digit_run(const Text *x, size_t p, int l, int max_digits)
{
    int cls;
    size_t q = p + (size_t)l;
    for (int d = 1; d < max_digits && q < x->end; d++) {
        int lq = char_at(x, q, &cls);
        if (cls != UCLASS_NUMBER) break;
        q += (size_t)lq;
    }
    return q;
}

/* \s*[\r\n]+ | \s+(?!\S) | \s+ from p: up to the last CR/LF of the
 * whitespace run; else all of it at the end of text, all but its last
 * character before a non-space, or all of a one-character run (p if
 * there is no whitespace at p). */
static size_t space_piece(const Text *x, size_t p)
{
    size_t last, j = space_run(x, p, &last);
    for (size_t k = j; k > p; k--)
        if (is_crlf(x, k - 1)) return k;
    if (j == x->end) return j;
    if (last > p) return last;
    return j;
}

/* End of a contraction '[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD] at p, or p. */
static size_t contraction_end(const Text *x, size_t p)
{
    size_t n = x->end - p;
    if (n < 2 || x->s[p] != '\'') return p;
    int a = lower(x->s[p + 1]), b = n >= 3 ? lower(x->s[p + 2]) : 0;
    if (a == 's' || a == 't' || a == 'm' || a == 'd') return p + 2;
    if ((a == 'r' && b == 'e') || (a == 'v' && b == 'e') || (a == 'l' && b == 'l')) return p + 3;
    return p;
}

/* llama3 family: end of the pre-token that starts at p (the first
 * alternative that matches, as a backtracking regex engine picks it). */
static size_t llama3_next(const Text *x, size_t p, int max_digits)
{
    int cls, cls2;
    size_t c = contraction_end(x, p); /* (?i:'s|'t|'re|'ve|'m|'ll|'d) */
    if (c > p) return c;
    int l = char_at(x, p, &cls);
    /* [^\r\n\p{L}\p{N}]?\p{L}+ (qwen35: [\p{L}\p{M}]+; a mark is itself such a run) */
    size_t q = p;
    if (cls == UCLASS_MARK) return letter_run(x, p);
    if (cls != UCLASS_LETTER && cls != UCLASS_NUMBER && !is_crlf(x, p) && p + (size_t)l < x->end) q = p + (size_t)l;
    if (q < x->end && char_at(x, q, &cls2) > 0 && (cls2 == UCLASS_LETTER || cls2 == UCLASS_MARK))
        return letter_run(x, q);
    if (cls == UCLASS_NUMBER) return digit_run(x, p, l, max_digits);
    /* ?[^\s\p{L}\p{N}]+[\r\n]* */
    q = x->s[p] == ' ' ? p + 1 : p;
    if (q < x->end && char_at(x, q, &cls2) > 0 && cls2 == UCLASS_OTHER) {
        q = class_run(x, q, UCLASS_OTHER);
        while (q < x->end && is_crlf(x, q)) q++;
        return q;
    }
    if (cls == UCLASS_SPACE) return space_piece(x, p);
    return p + (size_t)l; /* not reached: every character is L, N, space or other */
}

/* gpt2 family: 's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)
 * (case-sensitive contractions; the optional prefix is the space U+0020
 * only). Text no alternative matches - a lone whitespace character before
 * a non-space - becomes a piece by itself, as "\s+" would make it. */
static size_t gpt2_next(const Text *x, size_t p)
{
    size_t n = x->end - p;
    if (x->s[p] == '\'' && n >= 2) {
        uint8_t a = x->s[p + 1], b = n >= 3 ? x->s[p + 2] : 0;
        if (a == 's' || a == 't' || a == 'm' || a == 'd') return p + 2;
        if ((a == 'r' && b == 'e') || (a == 'v' && b == 'e') || (a == 'l' && b == 'l')) return p + 3;
    }
    int cls;
    int l = char_at(x, p, &cls);
    size_t q = p;
    if (x->s[p] == ' ' && p + 1 < x->end) {
        q = p + 1; /* " ?" then the class of the next character decides */
        char_at(x, q, &cls);
    }
    if (cls == UCLASS_LETTER || cls == UCLASS_NUMBER || cls == UCLASS_OTHER) return class_run(x, q, cls);
    /* whitespace at p: \s+(?!\S) keeps the last one for the next piece
     * unless the run reaches the end of the text */
    size_t last, j = space_run(x, p, &last);
    if (j > p && j < x->end && last > p) return last;
    if (j > p) return j;
    return p + (size_t)l; /* not reached */
}

/* gpt-4o family (o200k; Phi-4-mini). The tokenizer.json regex is
 *   [^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|...)?
 *   |[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|...)?
 *   |\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+
 * but llama.cpp runs its own rewrite, "upper" = (?=\p{L})[^a-z] and
 * "lower" = (?=\p{L})[^A-Z], through std::regex on a copy of the text
 * where each non-ASCII character is replaced by one byte standing for its
 * class. So only ASCII letters have a case (a non-ASCII letter is both
 * upper and lower), and a mark (\p{M}) is not part of a word but
 * punctuation. These are the pieces that backtracking regex gives. */


/* End of the word at q (a letter): the letters alternatives of the regex.
 * An "upper" run (anything but a-z) is taken greedily; a "lower" run
 * (anything but A-Z) must follow. If the next character is not a-z, the
 * regex backtracks to the last non-ASCII letter of the run, which serves
 * as the lower run; with none there (capitals only) the second
 * alternative takes the capitals. */
/* End of the run from e of ASCII letters in [lo, hi] and non-ASCII letters;
 * *after_wide: the end of its last non-ASCII letter (unchanged if none). */
static size_t case_run(const Text *x, size_t e, uint8_t lo, uint8_t hi, size_t *after_wide)
{
    int cls;
    while (e < x->end) {
        uint8_t c = x->s[e];
        if (c >= lo && c <= hi) {
            e++;
            continue;
        }
        if (c < 0x80) break;
        int l = char_at(x, e, &cls);
        if (cls != UCLASS_LETTER) break;
        e += (size_t)l;
        *after_wide = e;
    }
    return e;
}

static size_t gpt4o_word_end(const Text *x, size_t q)
{
    size_t after_last_wide = 0, ignored;
    size_t e = case_run(x, q, 'A', 'Z', &after_last_wide); /* the upper run */
    if (e < x->end && x->s[e] >= 'a' && x->s[e] <= 'z') e = case_run(x, e, 'a', 'z', &ignored); /* the lower run */
    else if (after_last_wide) e = after_last_wide;
    return contraction_end(x, e);
}

static size_t gpt4o_next(const Text *x, size_t p, int max_digits)
{
    int cls, cls2;
    int l = char_at(x, p, &cls);
    /* [^\r\n\p{L}\p{N}]? then the letters alternatives */
    size_t q = p;
    if (cls != UCLASS_LETTER && cls != UCLASS_NUMBER && !is_crlf(x, p) && p + (size_t)l < x->end) q = p + (size_t)l;
    if (char_at(x, q, &cls2) > 0 && cls2 == UCLASS_LETTER) return gpt4o_word_end(x, q);
    if (cls == UCLASS_NUMBER) return digit_run(x, p, l, max_digits);
    /*  ?[^\s\p{L}\p{N}]+[\r\n/]* */
    q = x->s[p] == ' ' ? p + 1 : p;
    if (q < x->end && char_at(x, q, &cls2) > 0 && cls2 == UCLASS_OTHER) {
        q = class_run(x, q, UCLASS_OTHER);
        while (q < x->end && (is_crlf(x, q) || x->s[q] == '/')) q++;
        return q;
    }
    /* \s*[\r\n]+ | \s+(?!\S) | \s+ : as in the llama3 family */
    size_t j = space_piece(x, p);
    return j > p ? j : p + (size_t)l;
}


/* gpt2_next with the splitters' common signature */
static size_t gpt2_piece(const Text *x, size_t p, int max_digits)
{
    (void)max_digits;
    return gpt2_next(x, p);
}

typedef size_t (*Splitter)(const Text *x, size_t p, int max_digits);

static const struct {
    const char *regex; /* the regex it stands for, exactly as in the table */
    Splitter next;
    int max_digits;
    int marks;
} builtins[] = {
    {RE_GPT2, gpt2_piece, 0, 0},
    {RE_LLAMA3, llama3_next, 3, 0},
    {RE_QWEN2, llama3_next, 1, 0},
    {RE_QWEN35, llama3_next, 1, 1},
    {RE_GPT4O, gpt4o_next, 3, 0},
};
#define N_BUILTINS ((int)(sizeof builtins / sizeof builtins[0]))

/* ---- the regex compiler ------------------------------------------------------
 * The subset of ECMAScript regexes llama.cpp's patterns use: alternation,
 * groups ( ) and (?: ), greedy ? * + {n} {n,} {n,m}, classes [...] and
 * [^...] with ranges, \s \S \d \D \p{L} \p{N} \p{P} \p{S} \p{M} (\p{Lu},
 * \p{Ll}, \p{Lt}, \p{Lm}, \p{Lo} are \p{L}: llama.cpp maps them so), the
 * escapes \r \n \t \f \v and escaped punctuation, $, and look-aheads (?= )
 * and (?! ) of one character class. The pattern is parsed into a tree,
 * then emitted as Pike VM instructions. */

enum { OP_SET, OP_SPLIT, OP_JMP, OP_END, OP_LOOK, OP_MATCH };
enum { N_SET, N_CAT, N_ALT, N_REPEAT, N_LOOK, N_END };

/* PretokSet.classes: bit UCLASS_* for \p{..} (bits 1..6), and these two */
#define SET_SPACE 0x80 /* \s */
#define SET_DIGIT 0x01 /* \d (bit 0, UCLASS_OTHER, is never named) */
#define SET_NAMED_CLASSES 0x7E
#define MAX_NODES 320
#define REPEAT_INF 0xFFFF

typedef struct {
    uint8_t kind;
    uint8_t negate;         /* N_LOOK */
    uint16_t set;           /* N_SET, N_LOOK */
    uint16_t min, max;      /* N_REPEAT */
    int16_t child, next;    /* first child (N_CAT, N_ALT, N_REPEAT), next sibling */
} Node;

typedef struct {
    Pretokenizer *p;
    const char *s;          /* the pattern, at the parse position */
    Node node[MAX_NODES];
    int n_node;
    int pc0;                /* first instruction of this regex */
    int failed;
} Compiler;

static int new_node(Compiler *c, int kind)
{
    if (c->n_node >= MAX_NODES) {
        c->failed = 1;
        return 0;
    }
    Node *n = &c->node[c->n_node];
    memset(n, 0, sizeof *n);
    n->kind = (uint8_t)kind;
    n->child = n->next = -1;
    return c->n_node++;
}

/* Reads one UTF-8 character of the pattern. */
static uint32_t pattern_char(Compiler *c)
{
    uint32_t cp;
    int l = utf8_next((const uint8_t *)c->s, strlen(c->s), &cp);
    if (l < 0) c->failed = 1;
    c->s += l > 0 ? l : 1;
    return cp;
}

static void set_add_range(Compiler *c, PretokSet *set, uint32_t lo, uint32_t hi)
{
    Pretokenizer *p = c->p;
    if (p->n_range >= PRETOK_MAX_RANGES || lo > hi) {
        c->failed = 1;
        return;
    }
    p->range[p->n_range][0] = lo, p->range[p->n_range][1] = hi;
    p->n_range++;
    set->count++;
}

/* \p{..}: the class bit, or 0 for a name llama.cpp does not map. */
static int class_name(Compiler *c)
{
    static const struct { const char *name; int cls; } names[] = {
        {"L}", UCLASS_LETTER}, {"Lu}", UCLASS_LETTER}, {"Ll}", UCLASS_LETTER}, {"Lt}", UCLASS_LETTER},
        {"Lm}", UCLASS_LETTER}, {"Lo}", UCLASS_LETTER}, {"N}", UCLASS_NUMBER}, {"P}", UCLASS_PUNCT},
        {"S}", UCLASS_SYMBOL}, {"M}", UCLASS_MARK},
    };
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        size_t n = strlen(names[i].name);
        if (strncmp(c->s, names[i].name, n) == 0) {
            c->s += n;
            return 1 << names[i].cls;
        }
    }
    c->failed = 1;
    return 0;
}

/* After a backslash: adds the escape to set; returns 1 if it was a class
 * escape (\s \d \p{..}), 0 if it stands for the character *cp. */
static int escape(Compiler *c, PretokSet *set, uint32_t *cp)
{
    char e = *c->s++;
    switch (e) {
    case 's': set->classes |= SET_SPACE; return 1;
    case 'd': set->classes |= SET_DIGIT; return 1;
    case 'p':
        if (*c->s++ != '{') c->failed = 1;
        set->classes |= (uint8_t)class_name(c);
        return 1;
    case 'r': *cp = '\r'; return 0;
    case 'n': *cp = '\n'; return 0;
    case 't': *cp = '\t'; return 0;
    case 'f': *cp = '\f'; return 0;
    case 'v': *cp = '\v'; return 0;
    default:
        /* an escaped punctuation character stands for itself */
        if (e == '\0' || (e >= '0' && e <= '9') || (e >= 'a' && e <= 'z') || (e >= 'A' && e <= 'Z')) c->failed = 1;
        *cp = (uint8_t)e;
        return 0;
    }
}

static int new_set(Compiler *c, PretokSet **out)
{
    Pretokenizer *p = c->p;
    if (p->n_set >= PRETOK_MAX_SETS) {
        c->failed = 1;
        *out = &p->set[0];
        return 0;
    }
    PretokSet *set = &p->set[p->n_set];
    memset(set, 0, sizeof *set);
    set->first = (uint16_t)p->n_range;
    *out = set;
    return p->n_set++;
}

/* [...] after the '[' */
static int parse_class(Compiler *c)
{
    PretokSet *set;
    int k = new_set(c, &set);
    if (*c->s == '^') set->negate = 1, c->s++;
    while (!c->failed && *c->s && *c->s != ']') {
        uint32_t lo;
        if (*c->s == '\\') {
            c->s++;
            if (escape(c, set, &lo)) continue;
        } else {
            lo = pattern_char(c);
        }
        uint32_t hi = lo;
        if (c->s[0] == '-' && c->s[1] && c->s[1] != ']') {
            c->s++;
            if (*c->s == '\\') {
                c->s++;
                if (escape(c, set, &hi)) c->failed = 1; /* a class cannot end a range */
            } else {
                hi = pattern_char(c);
            }
        }
        set_add_range(c, set, lo, hi);
    }
    if (*c->s != ']') c->failed = 1;
    else c->s++;
    return k;
}

/* One character set outside a class: \s, \S, \d, \D, \p{..}, an escaped or a plain character. */
static int parse_set_atom(Compiler *c)
{
    if (*c->s == '[') {
        c->s++;
        return parse_class(c);
    }
    PretokSet *set;
    int k = new_set(c, &set);
    uint32_t cp;
    if (*c->s == '\\') {
        c->s++;
        char e = *c->s;
        if (e == 'S' || e == 'D') {
            set->negate = 1;
            set->classes = e == 'S' ? SET_SPACE : SET_DIGIT;
            c->s++;
            return k;
        }
        if (escape(c, set, &cp)) return k;
    } else {
        cp = pattern_char(c);
    }
    set_add_range(c, set, cp, cp);
    return k;
}

static int parse_alt(Compiler *c);

static int parse_atom(Compiler *c)
{
    if (c->s[0] == '(' && c->s[1] == '?' && (c->s[2] == '=' || c->s[2] == '!')) {
        int n = new_node(c, N_LOOK);
        c->node[n].negate = c->s[2] == '!';
        c->s += 3;
        c->node[n].set = (uint16_t)parse_set_atom(c);
        if (*c->s++ != ')') c->failed = 1;
        return n;
    }
    if (*c->s == '(') {
        c->s += c->s[1] == '?' && c->s[2] == ':' ? 3 : 1;
        int n = parse_alt(c);
        if (*c->s++ != ')') c->failed = 1;
        return n;
    }
    if (*c->s == '$') {
        c->s++;
        return new_node(c, N_END);
    }
    if (*c->s == ')' || *c->s == '|' || *c->s == '*' || *c->s == '+' || *c->s == '?' || *c->s == '{' ||
        *c->s == '.' || *c->s == '^')
        c->failed = 1; /* not in the subset (or misplaced) */
    int n = new_node(c, N_SET);
    c->node[n].set = (uint16_t)parse_set_atom(c);
    return n;
}

static unsigned parse_count(Compiler *c)
{
    unsigned v = 0;
    if (*c->s < '0' || *c->s > '9') c->failed = 1;
    while (*c->s >= '0' && *c->s <= '9' && v < 1000) v = v * 10 + (unsigned)(*c->s++ - '0');
    return v;
}

/* An atom and its quantifier. */
static int parse_piece(Compiler *c)
{
    int atom = parse_atom(c);
    unsigned min = 1, max = 1;
    if (*c->s == '?') min = 0, max = 1;
    else if (*c->s == '*') min = 0, max = REPEAT_INF;
    else if (*c->s == '+') min = 1, max = REPEAT_INF;
    else if (*c->s == '{') {
        c->s++;
        min = max = parse_count(c);
        if (*c->s == ',') {
            c->s++;
            max = *c->s == '}' ? REPEAT_INF : parse_count(c);
        }
        if (*c->s != '}' || max < min) c->failed = 1;
    } else {
        return atom;
    }
    c->s++;
    if (*c->s == '?' || *c->s == '+') c->failed = 1; /* lazy and possessive forms are not used */
    int n = new_node(c, N_REPEAT);
    c->node[n].min = (uint16_t)min, c->node[n].max = (uint16_t)max;
    c->node[n].child = (int16_t)atom;
    return n;
}

/* A sequence of pieces up to '|', ')' or the end. */
static int parse_seq(Compiler *c)
{
    int n = new_node(c, N_CAT), last = -1;
    while (!c->failed && *c->s && *c->s != '|' && *c->s != ')') {
        int k = parse_piece(c);
        if (last < 0) c->node[n].child = (int16_t)k;
        else c->node[last].next = (int16_t)k;
        last = k;
    }
    return n;
}

static int parse_alt(Compiler *c)
{
    int first = parse_seq(c);
    if (*c->s != '|') return first;
    int n = new_node(c, N_ALT), last = first;
    c->node[n].child = (int16_t)first;
    while (!c->failed && *c->s == '|') {
        c->s++;
        int k = parse_seq(c);
        c->node[last].next = (int16_t)k;
        last = k;
    }
    return n;
}

static int emit(Compiler *c, int op, int set, int x, int y)
{
    Pretokenizer *p = c->p;
    if (p->n_instr >= PRETOK_MAX_INSTRS || p->n_instr - c->pc0 >= PRETOK_PROG_MAX) {
        c->failed = 1;
        return p->n_instr > 0 ? p->n_instr - 1 : 0;
    }
    PretokInstr *in = &p->instr[p->n_instr];
    in->op = (uint8_t)op, in->flag = 0, in->set = (uint16_t)set, in->x = (uint16_t)x, in->y = (uint16_t)y;
    return p->n_instr++;
}

static void generate(Compiler *c, int n)
{
    if (c->failed) return;
    const Node *node = &c->node[n];
    Pretokenizer *p = c->p;
    switch (node->kind) {
    case N_SET: emit(c, OP_SET, node->set, 0, 0); break;
    case N_END: emit(c, OP_END, 0, 0, 0); break;
    case N_LOOK: p->instr[emit(c, OP_LOOK, node->set, 0, 0)].flag = node->negate; break;
    case N_CAT:
        for (int k = node->child; k >= 0; k = c->node[k].next) generate(c, k);
        break;
    case N_ALT: {
        /* SPLIT next, try the next alternative; each ends with a JMP to the end */
        int jumps[64], n_jumps = 0;
        for (int k = node->child; k >= 0 && !c->failed; k = c->node[k].next) {
            int split = c->node[k].next >= 0 ? emit(c, OP_SPLIT, 0, 0, 0) : -1;
            if (split >= 0) p->instr[split].x = (uint16_t)(split + 1);
            generate(c, k);
            if (split < 0) break;
            if (n_jumps == 64) c->failed = 1;
            else jumps[n_jumps++] = emit(c, OP_JMP, 0, 0, 0);
            p->instr[split].y = (uint16_t)p->n_instr;
        }
        for (int j = 0; j < n_jumps; j++) p->instr[jumps[j]].x = (uint16_t)p->n_instr;
        break;
    }
    case N_REPEAT: {
        for (unsigned i = 0; i < node->min; i++) generate(c, node->child);
        if (node->max == REPEAT_INF) { /* L: SPLIT body, out; body; JMP L */
            int split = emit(c, OP_SPLIT, 0, 0, 0);
            p->instr[split].x = (uint16_t)(split + 1);
            generate(c, node->child);
            emit(c, OP_JMP, 0, split, 0);
            p->instr[split].y = (uint16_t)p->n_instr;
        } else { /* (x(x)?)? nested: every SPLIT skips to the end */
            int splits[16], n_splits = 0;
            for (unsigned i = node->min; i < node->max && !c->failed; i++) {
                if (n_splits == 16) {
                    c->failed = 1;
                    break;
                }
                int split = emit(c, OP_SPLIT, 0, 0, 0);
                p->instr[split].x = (uint16_t)(split + 1);
                splits[n_splits++] = split;
                generate(c, node->child);
            }
            for (int j = 0; j < n_splits; j++) p->instr[splits[j]].y = (uint16_t)p->n_instr;
        }
        break;
    }
    }
}

/* Compiles one regex as the next stage of p. */
static int compile_stage(Pretokenizer *p, const char *regex, int use_builtin)
{
    if (p->n_stages >= PRETOK_MAX_STAGES) return -1;
    PretokStage *st = &p->stage[p->n_stages];
    st->builtin = -1;
    for (int i = 0; use_builtin && i < N_BUILTINS; i++)
        if (strcmp(regex, builtins[i].regex) == 0) st->builtin = i;
    Compiler c;
    c.p = p, c.s = regex, c.n_node = 0, c.pc0 = p->n_instr, c.failed = 0;
    /* llama.cpp matches by class when the regex names one, else by code point */
    st->by_class = strstr(regex, "\\p{") != NULL;
    for (const char *q = regex; *q; q++)
        if ((uint8_t)*q >= 0x80 && st->by_class) return -1; /* refused there too */
    int root = parse_alt(&c);
    if (*c.s != '\0') c.failed = 1;
    generate(&c, root);
    emit(&c, OP_MATCH, 0, 0, 0);
    if (c.failed) return -1;
    st->pc = (uint16_t)c.pc0;
    st->n_instr = (uint16_t)(p->n_instr - c.pc0);
    p->n_stages++;
    return 0;
}

int pretok_compile(Pretokenizer *p, int row, int use_builtins)
{
    memset(p, 0, sizeof *p);
    if (row < 0 || row >= N_ROWS) return -1;
    p->row = row;
    for (const char *const *r = pretok_rows[row].regexes; *r; r++)
        if (compile_stage(p, *r, use_builtins) != 0) return -1;
    return 0;
}

int pretok_rows_count(void) { return N_ROWS; }

int pretok_compile_regex(Pretokenizer *p, const char *regex, int use_builtin)
{
    memset(p, 0, sizeof *p);
    return compile_stage(p, regex, use_builtin);
}

/* ---- the matcher: a Pike VM ---------------------------------------------------
 * All threads advance together one character at a time, in priority order
 * (the order a backtracking engine would try them in); a thread that reaches
 * an instruction already taken at this position by a thread before it is
 * dropped, since it would do the same from there. So the match is the one
 * ECMAScript's backtracking finds, in time linear in the text. A search
 * starts a new thread at each position until a match is found: leftmost
 * first. */

typedef struct {
    uint32_t eff;   /* the code point as the regex sees it */
    int cls;        /* its class */
    int at_end;     /* no character: the end of the piece */
} Char;

/* The character at q as llama.cpp's regex sees it: non-ASCII whitespace is
 * 0x0B (so \s matches it and nothing else does); with by_class every other
 * non-ASCII character is only its class, a value no literal range holds. */
static int read_char(const uint8_t *s, size_t q, size_t end, int by_class, Char *ch)
{
    if (q >= end) {
        ch->at_end = 1, ch->eff = 0, ch->cls = UCLASS_OTHER;
        return 0;
    }
    uint32_t cp;
    int l = utf8_next(s + q, end - q, &cp);
    ch->at_end = 0;
    ch->cls = unicode_category(cp);
    ch->eff = cp;
    if (cp >= 0x80) {
        if (ch->cls == UCLASS_SPACE) ch->eff = 0x0B;
        else if (by_class) ch->eff = 0x110000u + (uint32_t)ch->cls;
    }
    return l > 0 ? l : 1;
}

static int set_has(const Pretokenizer *p, const PretokSet *set, const Char *ch)
{
    uint32_t e = ch->eff;
    int in = (set->classes & (1 << ch->cls) & SET_NAMED_CLASSES & ~(1 << UCLASS_SPACE)) ||
             ((set->classes & SET_SPACE) && (e == ' ' || (e >= 0x09 && e <= 0x0D))) ||
             ((set->classes & SET_DIGIT) && e >= '0' && e <= '9');
    for (int i = 0; !in && i < set->count; i++)
        in = e >= p->range[set->first + i][0] && e <= p->range[set->first + i][1];
    return in != set->negate;
}

typedef struct {
    uint16_t pc;
    uint32_t start;  /* offset of the thread's match start from the search start */
} Thread;

typedef struct {
    const Pretokenizer *p;
    int pc0;
    uint32_t seen[PRETOK_PROG_MAX]; /* generation in which a pc was added */
    uint32_t gen;
} Vm;

/* Adds pc and what it leads to without consuming a character, in priority
 * order, to list (the SET and MATCH instructions: they wait for a character). */
static void add_thread(Vm *vm, Thread *list, int *n, int pc, uint32_t start, const Char *next, int at_end_of_piece)
{
    int stack[2 * PRETOK_PROG_MAX + 2], top = 0;
    stack[top++] = pc;
    while (top > 0) {
        int k = stack[--top];
        if (vm->seen[k - vm->pc0] == vm->gen) continue;
        vm->seen[k - vm->pc0] = vm->gen;
        const PretokInstr *in = &vm->p->instr[k];
        switch (in->op) {
        case OP_JMP: stack[top++] = in->x; break;
        case OP_SPLIT:
            stack[top++] = in->y; /* the second choice is taken after the first */
            stack[top++] = in->x;
            break;
        case OP_END:
            if (at_end_of_piece) stack[top++] = k + 1;
            break;
        case OP_LOOK: {
            int ok = !next->at_end && set_has(vm->p, &vm->p->set[in->set], next);
            if (ok != in->flag) stack[top++] = k + 1;
            break;
        }
        default: /* OP_SET, OP_MATCH */
            list[*n].pc = (uint16_t)k, list[*n].start = start;
            (*n)++;
        }
    }
}

/* Finds the leftmost match in s[from..end): sets *ms, *me and returns 1, or 0. */
static int regex_search(const Pretokenizer *p, const PretokStage *st, const uint8_t *s, size_t from, size_t end,
                        size_t *ms, size_t *me)
{
    Vm vm;
    vm.p = p, vm.pc0 = st->pc, vm.gen = 0;
    memset(vm.seen, 0xFF, sizeof vm.seen);
    /* run: the threads at q; waiting: those that took the character at q
     * (read into run before it is written again) */
    Thread run[PRETOK_PROG_MAX], waiting[PRETOK_PROG_MAX];
    int n_waiting = 0, matched = 0;
    size_t q = from;
    for (;;) {
        Char ch;
        int len = read_char(s, q, end, st->by_class, &ch);
        vm.gen++;
        int n_run = 0;
        for (int i = 0; i < n_waiting; i++)
            add_thread(&vm, run, &n_run, waiting[i].pc + 1, waiting[i].start, &ch, ch.at_end);
        if (!matched && !ch.at_end) add_thread(&vm, run, &n_run, st->pc, (uint32_t)(q - from), &ch, 0);
        if (n_run == 0) break;
        n_waiting = 0;
        for (int i = 0; i < n_run; i++) {
            const PretokInstr *in = &p->instr[run[i].pc];
            if (in->op == OP_MATCH) {
                if (from + run[i].start == q) continue; /* an empty match: not a piece */
                matched = 1, *ms = from + run[i].start, *me = q;
                break; /* the threads after it have lower priority */
            }
            if (!ch.at_end && set_has(p, &p->set[in->set], &ch)) waiting[n_waiting++] = run[i];
        }
        if (ch.at_end || (matched && n_waiting == 0)) break;
        q += (size_t)len;
    }
    return matched;
}

/* ---- the walk over a text ------------------------------------------------------ */

typedef struct {
    const Pretokenizer *p;
    const uint8_t *s;
    PretokPiece piece;
    void *ctx;
} Walk;

/* Whether s[a..b) holds an overlong form of an ASCII character (C0 8A is a
 * newline to llama.cpp's decoder, as to utf8_next): the hand-written
 * splitters look at ASCII by its byte, so such text goes to the matcher. */
static int has_ascii_overlong(const uint8_t *s, size_t a, size_t b)
{
    for (size_t q = a; q < b; q++) {
        if (s[q] < 0xC0) continue;
        if (s[q] <= 0xC1 || (q + 1 < b && ((s[q] == 0xE0 && s[q + 1] < 0x82) || (s[q] == 0xF0 && s[q + 1] == 0x80))))
            return 1;
    }
    return 0;
}

/* Splits s[a..b) with stage k and hands each piece to the next stage. */
static int split_stage(const Walk *w, int k, size_t a, size_t b)
{
    if (a >= b) return 0;
    if (k == w->p->n_stages) return w->piece(w->ctx, a, b);
    const PretokStage *st = &w->p->stage[k];
    int r;
    if (st->builtin >= 0 && !has_ascii_overlong(w->s, a, b)) {
        Text x = {w->s, b, builtins[st->builtin].marks};
        for (size_t q = a; q < b;) {
            size_t e = builtins[st->builtin].next(&x, q, builtins[st->builtin].max_digits);
            if ((r = split_stage(w, k + 1, q, e)) != 0) return r;
            q = e;
        }
        return 0;
    }
    size_t q = a, ms, me;
    while (q < b && regex_search(w->p, st, w->s, q, b, &ms, &me)) {
        if ((r = split_stage(w, k + 1, q, ms)) != 0) return r; /* the text before the match */
        if ((r = split_stage(w, k + 1, ms, me)) != 0) return r;
        q = me;
    }
    return split_stage(w, k + 1, q, b);
}

int pretok_split(const Pretokenizer *p, const uint8_t *text, size_t from, size_t to, PretokPiece piece, void *ctx)
{
    Walk w = {p, text, piece, ctx};
    return split_stage(&w, 0, from, to);
}
