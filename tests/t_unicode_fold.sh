#!/bin/sh
# t_unicode_fold.sh - the Unicode data of pith's BERT normalizer (WordPiece:
# src/text/unicode_fold.c, made by tests/tools/gen_unicode_fold.py from
# Debian's UCD, and the mark and space classes of unicode_tables.c) against
# llama.cpp's own tables (src/unicode-data.cpp at de3ff81, from the git
# bundle tests/llamacpp_src.sh clones): for every code point, the simple
# lowercase, the one-code-point NFD base, and whether it is control
# (\p{C} without Cn), punctuation, a mark or white space.
. tests/lib.sh
if SRC=$(sh tests/llamacpp_src.sh 2>"$TMP/err"); then ok "llama.cpp's source (tests/llamacpp_src.sh)"
else not_ok "$(cat "$TMP/err")"; finish; fi
if git -C "$SRC" show de3ff815ea7d559ee917f063901b8986f038abc6:src/unicode-data.cpp >"$TMP/unicode-data.cpp" 2>"$TMP/err"
then ok "llama.cpp's src/unicode-data.cpp"
else not_ok "git show src/unicode-data.cpp: $(head -c 300 "$TMP/err")"; finish; fi
${UNICODE_FOLD:-build/asan/tools/unicode_fold} >"$TMP/pith" 2>"$TMP/err" ||
    { not_ok "unicode_fold: $(head -c 300 "$TMP/err")"; finish; }
# llama.cpp's tables as the same lines (unicode-data.cpp's flags: 0x10
# mark, 0x20 punctuation, 0x80 control; its white space is a list)
node -e '
const fs = require("fs"), src = fs.readFileSync(process.argv[1], "utf8");
const table = name => { const i = src.indexOf(name); return src.slice(i, src.indexOf("};", i)); };
const hex = s => parseInt(s, 16);
const flags = [...table("unicode_ranges_flags").matchAll(/\{0x([0-9A-F]+), 0x([0-9A-F]+)\}/g)].map(m => [hex(m[1]), hex(m[2])]);
const space = new Set([...table("unicode_set_whitespace").matchAll(/0x([0-9A-F]+)/g)].map(m => hex(m[1])));
const lower = new Map([...table("unicode_map_lowercase").matchAll(/\{0x([0-9A-F]+), 0x([0-9A-F]+)\}/g)].map(m => [hex(m[1]), hex(m[2])]));
const nfd = new Map();
for (const m of table("unicode_ranges_nfd").matchAll(/\{0x([0-9A-F]+), 0x([0-9A-F]+), 0x([0-9A-F]+)\}/g))
    for (let c = hex(m[1]); c <= hex(m[2]); c++) nfd.set(c, hex(m[3]));
const out = [];
for (let r = 0; r + 1 < flags.length; r++)
    for (let cp = flags[r][0]; cp < flags[r + 1][0]; cp++) {
        const f = flags[r][1], lo = lower.has(cp) ? lower.get(cp) : cp, base = nfd.has(cp) ? nfd.get(cp) : cp;
        const k = (f & 0x80 ? 1 : 0) | (f & 0x20 ? 2 : 0) | (f & 0x10 ? 4 : 0) | (space.has(cp) ? 8 : 0);
        if (lo !== cp || base !== cp || k) out.push(`${cp.toString(16).toUpperCase()} ${lo.toString(16).toUpperCase()} ${base.toString(16).toUpperCase()} ${k}\n`);
    }
process.stdout.write(out.join(""));' "$TMP/unicode-data.cpp" >"$TMP/llama" 2>"$TMP/err" ||
    { not_ok "reading unicode-data.cpp: $(head -c 300 "$TMP/err")"; finish; }
n=$(wc -l <"$TMP/llama")
[ "$n" -gt 30000 ] && ok "llama.cpp's tables: $n code points with a mapping or a class" ||
    not_ok "llama.cpp's tables: only $n code points read"
if diff "$TMP/llama" "$TMP/pith" >"$TMP/diff"; then ok "pith's tables give llama.cpp's for every code point ($n lines)"
else not_ok "$(grep -c '^[<>]' "$TMP/diff") lines differ (< llama.cpp, > pith): $(grep '^[<>]' "$TMP/diff" | head -8 | tr '\n' ' ')"; fi
finish
