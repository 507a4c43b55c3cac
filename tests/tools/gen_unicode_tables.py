#!/usr/bin/env python3
"""gen_unicode_tables.py - writes src/text/unicode_tables.c, the character classes
the tokenizer's pre-tokenizer needs, as sorted inclusive code point ranges.

    python3 tests/tools/gen_unicode_tables.py > src/text/unicode_tables.c

Input: the Unicode Character Database as installed by Debian's `unicode-data`
package (/usr/share/unicode, or the directory given as the first argument):
  * Letter (\\p{L}) = general categories Lu Ll Lt Lm Lo   (UnicodeData.txt)
  * Number (\\p{N}) = general categories Nd Nl No         (UnicodeData.txt)
  * Mark (\\p{M}) = general categories Mn Mc Me           (UnicodeData.txt)
  * Punctuation (\\p{P}) = Pc Pd Ps Pe Pi Pf Po           (UnicodeData.txt)
  * Symbol (\\p{S}) = Sm Sc Sk So                         (UnicodeData.txt)
  * Whitespace (\\s) = the White_Space property           (PropList.txt)
This is what llama.cpp's regex split uses for \\s: ASCII 0x09-0x0D and 0x20 (C
locale isspace) plus every non-ASCII White_Space code point; 0x1C-0x1F are
not whitespace there (Python's str.isspace would say they are).
Ranges in UnicodeData.txt given as "<..., First>" / "<..., Last>" pairs
(CJK ideographs, Hangul, ...) are expanded. Standard library only."""
import os
import re
import sys

ucd = sys.argv[1] if len(sys.argv) > 1 else "/usr/share/unicode"


def unicode_version():
    with open(os.path.join(ucd, "ReadMe.txt"), encoding="utf-8") as f:
        text = f.read()
    m = re.search(r"Version (\d+\.\d+\.\d+)", text) or re.search(r"Unicode (\d+\.\d+\.\d+)", text)
    if m:
        return m.group(1)
    with open(os.path.join(ucd, "PropList.txt"), encoding="utf-8") as f:
        m = re.search(r"PropList-(\d+\.\d+\.\d+)\.txt", f.readline())
    return m.group(1) if m else "unknown"


def categories():
    cat = {}
    first = None
    with open(os.path.join(ucd, "UnicodeData.txt"), encoding="utf-8") as f:
        for line in f:
            fields = line.split(";")
            cp, name, gc = int(fields[0], 16), fields[1], fields[2]
            if name.endswith(", First>"):
                first = cp
                continue
            if name.endswith(", Last>"):
                for c in range(first, cp + 1):
                    cat[c] = gc
                first = None
                continue
            cat[cp] = gc
    return cat


def white_space():
    out = set()
    with open(os.path.join(ucd, "PropList.txt"), encoding="utf-8") as f:
        for line in f:
            line = line.split("#")[0].strip()
            if not line:
                continue
            cps, prop = [x.strip() for x in line.split(";")]
            if prop != "White_Space":
                continue
            if ".." in cps:
                a, b = [int(x, 16) for x in cps.split("..")]
            else:
                a = b = int(cps, 16)
            out.update(range(a, b + 1))
    return out


def class_runs(cat, spaces):
    """Maximal runs of code points of one class, as (start, class): every code
    point from a run's start up to the next run's start has its class."""
    code = {"L": 1, "N": 2, "M": 4, "P": 5, "S": 6}
    runs = []
    prev = -1
    for c in range(0x110000):
        k = 3 if c in spaces else code.get(cat.get(c, "Cn")[0], 0)
        if k != prev:
            runs.append((c, k))
            prev = k
    return runs


cat = categories()
runs = class_runs(cat, white_space())

print("/* unicode_tables.c - GENERATED, do not edit.")
print(" *")
print(" * Made by: python3 tests/tools/gen_unicode_tables.py > src/text/unicode_tables.c")
print(" * From the Unicode Character Database %s (Debian package unicode-data," % unicode_version())
print(" * UnicodeData.txt and PropList.txt). */")
print('#include "unicode.h"')
print()
print("/* The class of every code point, as runs: entry i is (first code point << 3) |")
print(" * UCLASS_*, and the class holds up to the next entry's first code point.")
print(" * Classes: letter = general category L*, number = N*, mark = M*, punctuation")
print(" * = P*, symbol = S*, space = the White_Space property (which wins), other =")
print(" * the rest (C*, unassigned). %d runs. */" % len(runs))
print("const uint32_t unicode_class_runs[] = {")
line = "   "
for c, k in runs:
    item = " 0x%X," % (c << 3 | k)
    if len(line) + len(item) > 100:
        print(line)
        line = "   "
    line += item
print(line)
print("};")
print("const int unicode_class_runs_count = %d;" % len(runs))
