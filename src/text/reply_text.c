/* The text of a reply (reply_text.h): stop strings cut it, and a model's
 * <think>...</think> goes to reasoning. Works on bytes as they are
 * generated, so streamed and whole replies are the same text. */
#include <string.h>

#include "reply_text.h"

#define THINK_OPEN "<think>"
#define THINK_CLOSE "</think>"

enum { T_START = 0, T_REASON_LEAD, T_REASON, T_AFTER, T_CONTENT };

static int is_space(char c)
{
    return c == ' ' || c == '\n' || c == '\r' || c == '\t';
}

void reply_text_init(ReplyText *t, int split_think, ReplyEmit emit, void *ctx)
{
    memset(t, 0, sizeof *t);
    reply_text_think(t, split_think);
    t->emit = emit;
    t->ctx = ctx;
}

void reply_text_think(ReplyText *t, int split_think)
{
    t->split_think = split_think;
    t->tstate = split_think == 2 ? T_REASON_LEAD : split_think ? T_START : T_CONTENT;
}

int reply_text_add_stop(ReplyText *t, const char *s, size_t n)
{
    if (n == 0 || n > REPLY_MAX_STOP_LEN || t->n_stops >= REPLY_MAX_STOPS) return -1;
    memcpy(t->stop[t->n_stops], s, n);
    t->stop_len[t->n_stops++] = n;
    return 0;
}

static void out(ReplyText *t, int kind, const char *p, size_t n)
{
    if (n) t->emit(t->ctx, kind, p, n);
}

/* Longest proper prefix of tag that ends hold[0..n). */
static size_t partial_tag(const char *hold, size_t n, const char *tag)
{
    size_t tl = strlen(tag);
    for (size_t k = (n < tl - 1 ? n : tl - 1); k > 0; k--)
        if (memcmp(hold + n - k, tag, k) == 0) return k;
    return 0;
}

/* The think split, one byte at a time (after the stop filter). */
static void think_byte(ReplyText *t, char b)
{
    switch (t->tstate) {
    case T_START: {
        t->hold[t->n_hold++] = b;
        size_t ol = strlen(THINK_OPEN);
        if (memcmp(t->hold, THINK_OPEN, t->n_hold) != 0) {
            t->tstate = T_CONTENT;
            out(t, REPLY_CONTENT, t->hold, t->n_hold);
            t->n_hold = 0;
        } else if (t->n_hold == ol) {
            t->tstate = T_REASON_LEAD;
            t->n_hold = 0;
        }
        return;
    }
    case T_REASON_LEAD:
        if (is_space(b)) return;
        t->tstate = T_REASON;
        /* fall through */
    case T_REASON: {
        /* hold = trailing whitespace, then a partial "</think>" */
        t->hold[t->n_hold++] = b;
        size_t cl = strlen(THINK_CLOSE);
        if (t->n_hold >= cl && memcmp(t->hold + t->n_hold - cl, THINK_CLOSE, cl) == 0) {
            size_t k = t->n_hold - cl; /* what precedes the tag in hold: whitespace or text */
            while (k > 0 && is_space(t->hold[k - 1])) k--;
            out(t, REPLY_REASONING, t->hold, k);
            t->n_hold = 0;
            t->tstate = T_AFTER;
            return;
        }
        size_t tag = partial_tag(t->hold, t->n_hold, THINK_CLOSE);
        size_t k = t->n_hold - tag;
        while (k > 0 && is_space(t->hold[k - 1])) k--;
        /* a very long run of whitespace is let through rather than held */
        if (t->n_hold >= sizeof t->hold - 1) k = t->n_hold - tag;
        out(t, REPLY_REASONING, t->hold, k);
        memmove(t->hold, t->hold + k, t->n_hold - k);
        t->n_hold -= k;
        return;
    }
    case T_AFTER:
        if (is_space(b)) return;
        t->tstate = T_CONTENT;
        /* fall through */
    default:
        out(t, REPLY_CONTENT, &b, 1);
    }
}

static void think_bytes(ReplyText *t, const char *p, size_t n)
{
    if (t->tstate == T_CONTENT) {
        out(t, REPLY_CONTENT, p, n);
        return;
    }
    for (size_t i = 0; i < n; i++) think_byte(t, p[i]);
}

/* Longest suffix of pend[0..n) that begins some stop string (shorter than it). */
static size_t stop_partial(const ReplyText *t, const char *p, size_t n)
{
    size_t best = 0;
    for (int s = 0; s < t->n_stops; s++) {
        size_t sl = t->stop_len[s];
        for (size_t k = (n < sl - 1 ? n : sl - 1); k > best; k--)
            if (memcmp(p + n - k, t->stop[s], k) == 0) {
                best = k;
                break;
            }
    }
    return best;
}

int reply_text_push(ReplyText *t, const char *bytes, size_t n)
{
    if (t->stopped) return 1;
    if (t->n_stops == 0) {
        think_bytes(t, bytes, n);
        return 0;
    }
    /* A run of bytes is passed on at once when nothing is pending. */
    size_t run = 0;
    for (size_t i = 0; i < n; i++) {
        /* pend holds what may begin a stop string; add one byte */
        t->pend[t->n_pend++] = bytes[i];
        /* the stop string that ends first wins; of those ending at the
         * same byte, the longest (it began first) */
        size_t hit = 0;
        for (int s = 0; s < t->n_stops; s++) {
            size_t sl = t->stop_len[s];
            if (sl > hit && t->n_pend >= sl && memcmp(t->pend + t->n_pend - sl, t->stop[s], sl) == 0) hit = sl;
        }
        if (hit) {
            think_bytes(t, bytes + i - run, run);
            think_bytes(t, t->pend, t->n_pend - hit);
            t->n_pend = 0;
            t->stopped = 1;
            return 1;
        }
        size_t keep = stop_partial(t, t->pend, t->n_pend);
        if (keep == 0 && t->n_pend == 1) {
            /* the byte begins nothing: it joins the run */
            t->n_pend = 0;
            run++;
            continue;
        }
        think_bytes(t, bytes + i - run, run);
        run = 0;
        think_bytes(t, t->pend, t->n_pend - keep);
        memmove(t->pend, t->pend + t->n_pend - keep, keep);
        t->n_pend = keep;
    }
    think_bytes(t, bytes + n - run, run);
    return 0;
}

void reply_text_finish(ReplyText *t)
{
    if (!t->stopped && t->n_pend) think_bytes(t, t->pend, t->n_pend);
    t->n_pend = 0;
    if (t->tstate == T_START) {
        out(t, REPLY_CONTENT, t->hold, t->n_hold);
    } else if (t->tstate == T_REASON) {
        size_t tag = partial_tag(t->hold, t->n_hold, THINK_CLOSE);
        if (tag) out(t, REPLY_REASONING, t->hold, t->n_hold); /* an unfinished tag is text */
    }
    t->n_hold = 0;
}
