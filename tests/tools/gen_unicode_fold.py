#!/usr/bin/env python3
"""gen_unicode_fold.py - writes src/text/unicode_fold.c, the Unicode data the
WordPiece tokenizer's normalizer needs (llama.cpp's BERT normalizer):

    python3 tests/tools/gen_unicode_fold.py > src/text/unicode_fold.c

Input: the Unicode Character Database as installed by Debian's `unicode-data`
package (/usr/share/unicode, or the directory given as the first argument),
UnicodeData.txt only. Standard library only.

  * lowercase: the simple lowercase mapping (field 13), as llama.cpp's
    unicode_tolower has it;
  * NFD base: the first code point of a code point's canonical decomposition
    (NFD), as llama.cpp's unicode_cpts_normalize_nfd maps it: ONE code point
    to ONE code point (e.g. U+00E9 -> U+0065, U+1E69 -> U+0073, a Hangul
    syllable -> its leading consonant, done by hand in unicode.h);
  * control: general categories Cc, Cf, Co, Cs (llama.cpp's \\p{C} flag;
    unassigned code points, Cn, are not control there).
Punctuation (P*) and marks (M*) come from unicode_tables.c's class runs.

Tables, compact for a static binary:
  * lowercase runs: u32 = start << 15 | (count - 1) << 8 | (stride - 1) << 7
    | index into unicode_lower_deltas; the run maps start + k * stride
    (k < count) to itself + delta. Runs do not interleave.
  * NFD base, outside the CJK compatibility blocks and Hangul: chunks of
    consecutive code points, two u32 each: start << 8 | (length - 1),
    page << 14 | offset; byte offset + i of unicode_nfd_bytes is 0 (no
    mapping) or base - page for code point start + i;
  * NFD base in the CJK compatibility ideograph blocks: a u16 per code point
    (0 = none), base = value, or 0x20000 + value where its bit in
    unicode_nfd_cjk_astral is set.
"""
import os
import re
import sys

ucd = sys.argv[1] if len(sys.argv) > 1 else "/usr/share/unicode"


def unicode_version():
    with open(os.path.join(ucd, "ReadMe.txt"), encoding="utf-8") as f:
        m = re.search(r"Version (\d+\.\d+\.\d+)", f.read())
    return m.group(1) if m else "unknown"


cat, decomp, ccc, lower = {}, {}, {}, {}
first = None
with open(os.path.join(ucd, "UnicodeData.txt"), encoding="utf-8") as f:
    for line in f:
        fl = line.rstrip("\n").split(";")
        cp, name = int(fl[0], 16), fl[1]
        if name.endswith(", First>"):
            first = cp
            continue
        if name.endswith(", Last>"):
            for c in range(first, cp + 1):
                cat[c] = fl[2]
            continue
        cat[cp] = fl[2]
        ccc[cp] = int(fl[3])
        if fl[5] and not fl[5].startswith("<"):  # canonical, not <compat> etc.
            decomp[cp] = [int(x, 16) for x in fl[5].split()]
        if fl[13]:
            lower[cp] = int(fl[13], 16)

HANGUL_FIRST, HANGUL_LAST = 0xAC00, 0xD7A3


def full_decomposition(cp):
    if HANGUL_FIRST <= cp <= HANGUL_LAST:
        s = cp - HANGUL_FIRST
        t = s % 28
        return [0x1100 + s // 588, 0x1161 + (s % 588) // 28] + ([0x11A7 + t] if t else [])
    if cp in decomp:
        return [x for d in decomp[cp] for x in full_decomposition(d)]
    return [cp]


def nfd_first(cp):
    """First code point of NFD(cp): full decomposition, then the canonical
    ordering of each run of non-starters (a stable sort by combining class)."""
    out, run = [], []
    for c in full_decomposition(cp) + [None]:
        if c is None or ccc.get(c, 0) == 0:
            out += sorted(run, key=lambda x: ccc.get(x, 0))
            run = []
            if c is not None:
                out.append(c)
        else:
            run.append(c)
    return out[0]


def ranges(cps):
    out = []
    for c in sorted(cps):
        if out and out[-1][1] == c - 1:
            out[-1][1] = c
        else:
            out.append([c, c])
    return out


def emit_ranges(name, rs, what):
    print(f"/* {what}: {len(rs)} ranges */")
    print(f"const uint32_t {name}[][2] = {{")
    line = ""
    for a, b in rs:
        item = f"{{0x{a:X}, 0x{b:X}}}, "
        if len(line) + len(item) > 100:
            print("    " + line.rstrip())
            line = ""
        line += item
    if line:
        print("    " + line.rstrip())
    print("};")
    print(f"const int {name}_count = {len(rs)};\n")


def emit_array(ctype, name, values, fmt, per_line):
    print(f"const {ctype} {name}[] = {{")
    for i in range(0, len(values), per_line):
        print("    " + " ".join(fmt(v) + "," for v in values[i:i + per_line]))
    print("};")


# ---- lowercase runs ----
runs = []  # [start, count, stride, delta]
for c in sorted(lower):
    d = lower[c] - c
    if runs:
        s, n, st, dd = runs[-1]
        if dd == d and n < 128 and ((n == 1 and c - s in (1, 2)) or (n > 1 and c == s + n * st)):
            runs[-1] = [s, n + 1, c - s if n == 1 else st, dd]
            continue
    runs.append([c, 1, 1, d])
deltas = sorted(set(r[3] for r in runs))
assert len(deltas) <= 128 and max(r[0] for r in runs) < 1 << 17
lower_words = [s << 15 | (n - 1) << 8 | (st - 1) << 7 | deltas.index(d) for s, n, st, d in runs]
for s, n, st, d in runs:  # the lookup takes the last run starting at or before a code point
    for k in range(n):
        assert lower[s + k * st] == s + k * st + d

# ---- NFD bases ----
nfd = {}
for cp in cat:
    b = nfd_first(cp)
    if b != cp:
        nfd[cp] = b
CJK_BLOCKS = [(0xF900, 0xFAFF), (0x2F800, 0x2FA1F)]


def in_cjk(c):
    return any(a <= c <= b for a, b in CJK_BLOCKS)


rest = {c: b for c, b in nfd.items() if not in_cjk(c) and not HANGUL_FIRST <= c <= HANGUL_LAST}
cjk = {c: b for c, b in nfd.items() if in_cjk(c)}
for c in range(HANGUL_FIRST, HANGUL_LAST + 1):  # unicode.h computes these
    assert nfd[c] == 0x1100 + (c - HANGUL_FIRST) // 588

# chunks: a new one where a gap would cost more holes than a chunk's 8
# bytes, or the bases span more than 255 values, or 256 code points
chunks = []  # [start, end, lo, hi]
for c in sorted(rest):
    b = rest[c]
    if chunks:
        s, e, lo, hi = chunks[-1]
        if c - e <= 8 and max(hi, b) - min(lo, b) < 255 and c - s < 256:
            chunks[-1] = [s, c, min(lo, b), max(hi, b)]
            continue
    chunks.append([c, c, b, b])
nfd_bytes, nfd_chunks = [], []
for s, e, lo, hi in chunks:
    page = lo - 1
    assert s < 1 << 24 and page < 1 << 18 and len(nfd_bytes) < 1 << 14
    nfd_chunks.append((s << 8 | (e - s), page << 14 | len(nfd_bytes)))
    nfd_bytes += [rest[c] - page if c in rest else 0 for c in range(s, e + 1)]

cjk_blocks = []
cjk_values, cjk_astral = [], []
for a, b in CJK_BLOCKS:
    last = max(c for c in cjk if a <= c <= b)
    cjk_blocks.append((a, last - a + 1))
    for c in range(a, last + 1):
        v = cjk.get(c, 0)
        assert v == 0 or 0x3400 <= v <= 0xFFFF or 0x20000 <= v <= 0x2FFFF
        cjk_values.append(v & 0xFFFF)
        cjk_astral.append(1 if v > 0xFFFF else 0)
        assert v == 0 or cjk_values[-1] != 0 or cjk_astral[-1]
astral_bytes = [sum(cjk_astral[i + k] << k for k in range(8) if i + k < len(cjk_astral))
                for i in range(0, len(cjk_astral), 8)]

# the word buffer of wordpiece.c holds 3 bytes per input byte: no code
# point may grow by more than half in UTF-8 through NFD base and lowercase
def utf8_len(c):
    return 1 if c < 0x80 else 2 if c < 0x800 else 3 if c < 0x10000 else 4


for c in range(0x110000):
    b = nfd.get(c, c)
    for x in (b, lower.get(c, c), lower.get(b, b)):
        assert 2 * utf8_len(x) <= 3 * utf8_len(c), hex(c)

control = ranges(c for c, g in cat.items() if g in ("Cc", "Cf", "Co", "Cs"))

print(f"""/* unicode_fold.c - GENERATED by tests/tools/gen_unicode_fold.py from the
 * Unicode Character Database {unicode_version()} (UnicodeData.txt); do not edit.
 * The data of llama.cpp's BERT normalizer (WordPiece): simple lowercase,
 * the one-code-point NFD base and control (Cc Cf Co Cs). The layouts are
 * described in the generator; the lookups are in unicode.h. */
#include "unicode.h"
""")
print(f"/* simple lowercase: {len(lower)} mappings in {len(runs)} runs */")
emit_array("uint32_t", "unicode_lower_runs", lower_words, lambda v: f"0x{v:08X}", 8)
print(f"const int unicode_lower_runs_count = {len(runs)};")
emit_array("int32_t", "unicode_lower_deltas", deltas, str, 12)
print()
print(f"/* NFD base: {len(rest)} code points (not CJK compatibility, not Hangul) in {len(chunks)} chunks */")
emit_array("uint32_t", "unicode_nfd_chunks", [w for c in nfd_chunks for w in c], lambda v: f"0x{v:08X}", 8)
print(f"const int unicode_nfd_chunks_count = {len(nfd_chunks)};")
emit_array("uint8_t", "unicode_nfd_bytes", nfd_bytes, str, 20)
print()
print(f"/* NFD base of the CJK compatibility ideographs: {len(cjk)} code points */")
print("const uint32_t unicode_nfd_cjk_blocks[2][2] = {" +
      ", ".join(f"{{0x{a:X}, {n}}}" for a, n in cjk_blocks) + "}; /* first code point, count */")
emit_array("uint16_t", "unicode_nfd_cjk", cjk_values, lambda v: f"0x{v:04X}", 12)
emit_array("uint8_t", "unicode_nfd_cjk_astral", astral_bytes, lambda v: f"0x{v:02X}", 16)
print()
emit_ranges("unicode_control_ranges", control, "control: general categories Cc Cf Co Cs")
