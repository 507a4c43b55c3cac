#!/bin/sh
# t_tokenize_wpm.sh - pith's WordPiece tokenizer (tokenizer.ggml.model
# "bert": bge, nomic-embed-text, all-MiniLM) on llama.cpp's bge vocabulary
# (models/ggml-vocab-bert-bge.gguf, tests/llamacpp_src.sh):
#   1. llama.cpp's test vector for it (.inp/.out: add_special and
#      parse_special off, as test-tokenizer-0 made it), every case;
#   2. against llama.cpp itself (node-llama-cpp, special tokens parsed) on
#      71 texts: accented Latin in both cases, Greek and Cyrillic capitals,
#      CJK (and its compatibility ideographs), Hangul, emoji, punctuation
#      runs, ASCII and other symbols, control and format characters, tabs,
#      CRLF, Unicode spaces, words longer than the longest token, words
#      without a match ([UNK]), [CLS]/[SEP]/[MASK] written in the text,
#      combining marks, fullwidth forms, ...; on the file as it is (no
#      normalizer keys: lowercase and strip_accents on) and rewritten by
#      ggufedit with tokenizer.ggml.normalizer.lowercase / .strip_accents
#      set (lowercase off alone turns strip_accents off too, as llama.cpp);
#      and 150 random texts (seeded) the same five ways;
#   3. invalid UTF-8: each bad byte is U+FFFD and dropped, as in llama.cpp
#      (which is given U+FFFD itself: a JSON text cannot hold the bytes);
#   4. decoding: every token's piece is llama.cpp's (its llama_detokenize of
#      the token alone; that function's clean-up of spaces before ?!., and
#      around apostrophes, written here as there, is applied to pith's piece);
#   5. pith tokenize --pieces.
. tests/lib.sh
NODE_DIR=build/node-llama-cpp
if sh tests/llamacpp/install.sh 2>"$TMP/install.err"; then ok "llama.cpp from node-llama-cpp (tests/llamacpp/install.sh)"
else not_ok "$(cat "$TMP/install.err")"; finish; fi
. tests/llamacpp_lib.sh
if SRC=$(sh tests/llamacpp_src.sh 2>"$TMP/err"); then ok "llama.cpp's vocabularies (tests/llamacpp_src.sh)"
else not_ok "$(cat "$TMP/err")"; finish; fi
V=$SRC/models/ggml-vocab-bert-bge.gguf
TOKF=${TOKF:-build/asan/tools/tokenize_files}
EDIT=${EDIT:-build/asan/tools/ggufedit}

# ---- 1. the test vector ------------------------------------------------------
node -e 'const fs = require("fs"), parts = fs.readFileSync(process.argv[1], "utf8").split("\n__ggml_vocab_test__\n");
    parts.slice(0, -1).forEach((t, i) => fs.writeFileSync(process.argv[2] + "/case." + String(i).padStart(3, "0"), t));' \
    "$V.inp" "$TMP" || not_ok "cannot split $V.inp"
# shellcheck disable=SC2046 # file names: words
if "$TOKF" --no-special "$V" $(ls "$TMP"/case.*) >"$TMP/got" 2>"$TMP/err"; then
    sed 's/^ *//; s/ *$//' "$V.out" >"$TMP/want"
    n=$(wc -l <"$TMP/want")
    [ "$n" -eq 46 ] && [ "$(ls "$TMP"/case.* | wc -l)" -eq 46 ] && ok "bert-bge vector: 46 cases" ||
        not_ok "bert-bge vector: $n lines in .out, $(ls "$TMP"/case.* | wc -l) cases in .inp (46 expected)"
    i=0
    while IFS= read -r want <&3 && IFS= read -r got <&4; do
        if [ "$got" = "$want" ]; then ok "bert-bge vector case $i: $want"
        else not_ok "bert-bge vector case $i ($(head -c 60 "$TMP/case.$(printf %03d $i)" | tr '\n' ' ')): pith '$got' llama.cpp '$want'"; fi
        i=$((i + 1))
    done 3<"$TMP/want" 4<"$TMP/got"
else
    not_ok "tokenize_files --no-special: $(head -c 300 "$TMP/err")"
fi

# ---- 2. against llama.cpp ----------------------------------------------------
cat >"$TMP/texts.json" <<'JSON'
["Hello world", " Hello  world ", "ÉCOLE école Straße STRASSE ẞ ß", "ΑΘΗΝΑ Αθήνα ΣΟΦΙΑ σοφός ὈΔΥΣΣΕΎΣ Ὀδυσσεύς",
 "ПРИВЕТ Привет, МИР! Ѐ Ё Ї Й й ї", "naïve café déjà vu Ñandú São Paulo Øresund Łódź ǰ",
 "NAÏVE CAFÉ DÉJÀ VU ÑANDÚ SÃO PAULO ØRESUND ŁÓDŹ", "Ünïcödé tëxt wïth ümläüts ÀÁÂÃÄÅ àáâãäå",
 "東京は日本の首都です。", "中文测试：你好，世界！", "안녕하세요 세계 한국어", "emoji 🙂👍🏽 and ✨ 👨‍👩‍👧 🇫🇷!",
 "!!!???...,,,;;;::: --- ((())) [[]] {{}}", "$100 + 5% = <x> ^y `z` |w| ~v #tag @user &amp; *star* _under_ \\back/",
 "\u0001\u0002 control\u0007 bytes\u001b[0m \u007f del \u001c\u001d\u001e\u001f", "a\tb\r\nc\n\nd\u000be\u000cf",
 "a\u00a0b\u2003c\u3000d\u2028e\u0085f\u1680g\u202fh\u205fi", "zero\u200bwidth\u200djoiner\ufeffbom\u00adsoft\u2060wj",
 "supercalifragilisticexpialidocious", "pneumonoultramicroscopicsilicovolcanoconiosis antidisestablishmentarianism",
 "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
 "xqzjxqzjxqzj qqqqqqq zzzzzzzzzzzzzzzzzzzzzzzzzzzzz", "𝔘𝔫𝔦𝔠𝔬𝔡𝔢 𓀀𓀁 hello𝔘world",
 "[CLS] hello [SEP] world [MASK] [UNK] [PAD]", "[CLS]hello[SEP][MASK]x[UNK]", "e\u0301cole cafe\u0301 n\u0303o a\u0308\u0308b \u0301start",
 "ﬁ ﬂ ﬀ ﬃ", "Å Ω K Ⅻ ℃ ™", "ǅemal ǄEMAL ǆ ǈ", "İstanbul ı I i İİ", "ＡＢＣ　ｆｕｌｌｗｉｄｔｈ！",
 "豈 更 車 賈 丽 丸 𠄢 你 and 﨎 﨏", "½ ² ³ ¼ ⅓ ① ⑳", "Hello, World! How's it going? I'm fine; thanks.",
 "don't can't won't it's y'all 'quoted'", "e-mail: user@example.com http://x.y/z?q=1&r=2",
 "   leading and trailing   ", "", " ", "\n", "\t\t\n\n  ", "1234567890 3.14159 1,000,000 2025-11-29",
 "ა ბ გ Ⴀ Ⴁ ᲐᲑ", "Ⓐ ⓐ Ⓩ ⓩ", "שלום עולם שָׁלוֹם", "मराठी हिन्दी नमस्ते", "ไทย ภาษาไทย สวัสดีครับ",
 "العربية مَرْحَبًا", "tab\tseparated\tvalues\r\nwindows line\r\n", "€100 £50 ¥1000 ©2024 ®™ °C ±5 × ÷ §1 ¶",
 "«quoted» „German“ ‚single‘ ‹x› \"double\"", "em—dash en–dash … ellipsis · middle • bullet ‰ †‡",
 "WordPiece ##ing ##s ▁space ▁▁", "𠀀 𪛖 𫝀 a𫠠b a𫤀b 𬺰 𰀀", "control \u0085 next-line",
 "\u200e\u200f LRM RLM \u202a\u202c \u2066x\u2069", "private \ue000\uf8ff use \udb80\udc00",
 "NUL \u0000 inside", "\ufffd replacement \ufffdx\ufffd", "THE QUICK BROWN FOX JUMPS OVER THE LAZY DOG",
 "The quick brown fox jumps over the lazy dog. It was a bright cold day in April, and the clocks were striking thirteen.",
 "Ǆ ǅ ǆ Ǉ Ǌ ǋ Ȁ ȁ Ȃ ȃ Ṩ ṩ Ỳ ỳ ẞ", "Ά Έ Ή Ί Ό Ύ Ώ ΐ ΰ ϓ ϔ ᾼ ῌ ῼ", "Ⱥ Ⱦ ⱥ ⱦ Ɐ Ɒ Ᵽ", "ꙀꙁꚀꚁ Ꜳꜳ ꞪꞫ",
 "Ａ１！＠＃ ｶﾀｶﾅ カタカナ ひらがな ガギグ", "ᄀᄁ ᅡᅢ 가각 힣", "x\u0300\u0301\u0302\u0303\u0304y", "α\u0345 ᾳ ᾀ",
 "\u0340\u0341\u0343\u0344 \u0374 \u037e \u0387 \u1fef \u1ffd \u2000 \u2001 \u2126 \u212a \u212b \u2329 \u232a",
 "मक़ाम क़ ख़ ग़ ज़ ड़ ढ़ फ़ य़ ড় ঢ় য় ਲ਼ ਸ਼ ਖ਼ ଡ଼ ଢ଼ ཱི ཱུ ྲྀ"]
JSON
# compare NAME VOCAB TEXTS.json: pith's ids of each text equal llama.cpp's.
compare() {
    name=$1 vocab=$2 texts=$3
    if ! ref_tokenize "$vocab" "$texts" "$TMP/ref"; then
        not_ok "$name: llama.cpp tokenize failed: $(tail -c 300 "$TMP/ref.err")"; return
    fi
    rm -f "$TMP"/text.*
    node -e 'JSON.parse(require("fs").readFileSync(process.argv[1], "utf8")).forEach((t, i) =>
                 require("fs").writeFileSync(process.argv[2] + "/text." + String(i + 1).padStart(3, "0"), t))' "$texts" "$TMP"
    # shellcheck disable=SC2046 # file names: words
    "$TOKF" "$vocab" $(ls "$TMP"/text.*) >"$TMP/got" 2>"$TMP/err" ||
        { not_ok "$name: tokenize_files: $(head -c 300 "$TMP/err")"; return; }
    n=$(ls "$TMP"/text.* | wc -l) bad=0 i=0
    while IFS= read -r want <&3 && IFS= read -r got <&4; do
        i=$((i + 1))
        [ "$got" = "$want" ] && continue
        bad=$((bad + 1))
        not_ok "$name text $i ($(head -c 80 "$TMP/text.$(printf %03d $i)" | tr '\n' ' ')): pith '$(echo "$got" | cut -c1-200)'" \
            "llama.cpp '$(echo "$want" | cut -c1-200)'"
    done 3<"$TMP/ref" 4<"$TMP/got"
    if [ "$i" -ne "$n" ] || [ "$(wc -l <"$TMP/got")" -ne "$n" ]; then
        not_ok "$name: $n texts, $(wc -l <"$TMP/ref") lines from llama.cpp, $(wc -l <"$TMP/got") from pith"
    elif [ "$bad" -eq 0 ]; then ok "$name: all $n texts give llama.cpp's ids"; fi
    cp "$TMP/ref" "$TMP/ref.$name"
}
compare bge "$V" "$TMP/texts.json"
# random texts (seeded): code points from blocks with every class the
# normalizer tells apart, white space and special tokens between them
node -e '
let x = 20261129;
const rnd = n => { x = (x * 1103515245 + 12345) % 2147483648; return x % n; };
const blocks = [[0x20, 0x7E], [0, 0x1F], [0x80, 0x24F], [0x300, 0x36F], [0x370, 0x4FF], [0x1E00, 0x1FFF],
    [0x2000, 0x206F], [0x3000, 0x30FF], [0x4E00, 0x9FFF], [0xAC00, 0xD7A3], [0xF900, 0xFAFF], [0xFF00, 0xFFEF],
    [0x1F300, 0x1FAFF], [0x20000, 0x2FA1F], [0x10000, 0x10FFFF], [0xE000, 0xF8FF], [0x2B800, 0x2B93F],
    [0x1D100, 0x1D1FF], [0x900, 0xDFF], [0x10A0, 0x10FF], [0x2C00, 0x2C7F], [0xA640, 0xA7FF]];
const extra = [" ", "  ", "\t", "\n", "\r\n", " [CLS] ", "[SEP]", "[MASK]", "##", "\u2581"];
const texts = [];
for (let i = 0; i < 150; i++) {
    let t = "";
    for (let n = rnd(61); n > 0; n--) {
        if (rnd(100) < 15) t += extra[rnd(extra.length)];
        const [a, b] = blocks[rnd(blocks.length)], c = a + rnd(b - a + 1);
        if (c < 0xD800 || c > 0xDFFF) t += String.fromCodePoint(c);
    }
    texts.push(t);
}
process.stdout.write(JSON.stringify(texts));' >"$TMP/random.json"
compare bge-random "$V" "$TMP/random.json"
# normalizer variants: K=lowercase,strip_accents ("-": key absent)
for v in 0,- 1,0 0,1 0,0; do
    low=${v%,*} strip=${v#*,} args="--set-bool tokenizer.ggml.normalizer.lowercase $low"
    [ "$strip" = - ] || args="$args --set-bool tokenizer.ggml.normalizer.strip_accents $strip"
    # shellcheck disable=SC2086 # args: words
    if "$EDIT" "$V" "$TMP/bge-$low$strip.gguf" $args 2>"$TMP/err"; then
        compare "bge-lowercase$low-strip$strip" "$TMP/bge-$low$strip.gguf" "$TMP/texts.json"
        compare "bge-lowercase$low-strip$strip-random" "$TMP/bge-$low$strip.gguf" "$TMP/random.json"
    else not_ok "ggufedit $args: $(head -c 300 "$TMP/err")"; fi
done
# the keys matter to llama.cpp: each variant changes some texts' ids
for v in 0- 10 01; do
    n=$(paste -d'|' "$TMP/ref.bge" "$TMP/ref.bge-lowercase${v%?}-strip${v#?}" 2>/dev/null | awk -F'|' '$1 != $2' | wc -l)
    [ "$n" -gt 0 ] && ok "lowercase ${v%?} strip_accents ${v#?}: $n texts tokenize differently from the defaults" ||
        not_ok "lowercase ${v%?} strip_accents ${v#?}: no text changed (key not read?)"
done
cmp -s "$TMP/ref.bge-lowercase0-strip-" "$TMP/ref.bge-lowercase0-strip0" &&
    ok "lowercase off without strip_accents: strip_accents follows it (off)" ||
    not_ok "lowercase off without strip_accents differs from both off"

# ---- 3. invalid UTF-8 --------------------------------------------------------
# pith's text (printf escapes) | llama.cpp's (JSON): U+FFFD for each bad
# byte. An overlong form is a code point to llama.cpp's decoder (C1 81 is
# "A") and a surrogate is one (a control character there, dropped); a
# 4-byte form above U+10FFFF, on which llama.cpp throws, is 4 bad bytes here.
cat >"$TMP/bad.tsv" <<'TSV'
a\377b|a\ufffdb
caf\303|caf\ufffd
\303\251t\351 x|\u00e9t\ufffd x
x\360\237\230y z|x\ufffd\ufffd\ufffdy z
\200\277word\376\377|\ufffd\ufffdword\ufffd\ufffd
HELLO \301\201BC|HELLO ABC
\355\240\200 surrogate|\ufffd surrogate
\364\220\200\200 too big|\ufffd\ufffd\ufffd\ufffd too big
TSV
rm -f "$TMP"/bad.[0-9]*
i=0 json=
while IFS='|' read -r raw fffd; do
    i=$((i + 1))
    # shellcheck disable=SC2059 # the escapes are the point
    printf "$raw" >"$TMP/bad.$i"
    json="$json${json:+, }\"$fffd\""
done <"$TMP/bad.tsv"
echo "[$json]" >"$TMP/bad.json"
if ref_tokenize "$V" "$TMP/bad.json" "$TMP/ref"; then
    # shellcheck disable=SC2046 # file names: words
    "$TOKF" "$V" $(i=0; while [ "$i" -lt "$(wc -l <"$TMP/bad.tsv")" ]; do i=$((i + 1)); echo "$TMP/bad.$i"; done) \
        >"$TMP/got" 2>"$TMP/err" || not_ok "tokenize_files: $(head -c 300 "$TMP/err")"
    while IFS='|' read -r raw fffd <&3 && IFS= read -r want <&4 && IFS= read -r got <&5; do
        # (the bytes are not printed: echo would read the escapes)
        [ "$got" = "$want" ] && ok "invalid UTF-8 as '$(echo "$fffd" | tr '\\' /)': $got" ||
            not_ok "invalid UTF-8 as '$(echo "$fffd" | tr '\\' /)': pith '$got' llama.cpp '$want'"
    done 3<"$TMP/bad.tsv" 4<"$TMP/ref" 5<"$TMP/got"
else not_ok "llama.cpp tokenize failed: $(tail -c 300 "$TMP/ref.err")"; fi

# ---- 4. every token's piece ----------------------------------------------------
if "$TOKF" --pieces "$V" >"$TMP/pieces" 2>"$TMP/err"; then
    node -e 'const n = require("fs").readFileSync(process.argv[1], "utf8").split("\n").length - 1;
        process.stdout.write(JSON.stringify(Array.from({length: n}, (_, i) => [i])))' "$TMP/pieces" >"$TMP/ids.json"
    if ref_detokenize "$V" "$TMP/ids.json" "$TMP/detok"; then
        # llama_detokenize's clean_spaces (llama-vocab.cpp), byte for byte, in place as there
        node -e '
const fs = require("fs");
function clean(t) {
    let n = t.length, total = n ? 1 : 0;
    for (let i = 1; i < n; i++) {            // " ?", " !", " .", " ,": the space goes
        const x = t[i];
        if (t[i - 1] === 0x20 && (x === 0x3F || x === 0x21 || x === 0x2E || x === 0x2C)) total--;
        t[total++] = x;
    }
    n = total, total = n ? 1 : 0;
    for (let i = 1; i < n; i++) {            // an apostrophe between spaces: both spaces go
        const x = t[i];
        if (x === 0x27 && i + 1 < n && t[i - 1] === 0x20 && t[i + 1] === 0x20) { total--; t[++i] = 0; }
        t[total++] = x;
    }
    n = total, total = n ? 1 : 0;
    for (let i = 1; i < n; i++) {            // a space before an apostrophe and s, m, re, ve: the space goes
        const x = t[i];
        if (t[i - 1] === 0x20 && x === 0x27 && i + 1 < n) {
            const x1 = t[i + 1];
            if (x1 === 0x73 || x1 === 0x6D) total--;
            else if (x1 !== 0x74 && x1 !== 0x64 && i + 2 < n) {
                const x2 = t[i + 2];
                if ((x1 === 0x72 && x2 === 0x65) || (x1 === 0x76 && x2 === 0x65)) total--;
            }
        }
        t[total++] = x;
    }
    return t.subarray(0, total);
}
const got = fs.readFileSync(process.argv[1], "utf8").split("\n").slice(0, -1);
const want = fs.readFileSync(process.argv[2], "utf8").split("\n").slice(0, -1).map(l => JSON.parse(l));
let bad = 0, cleaned = 0;
if (got.length !== want.length) { console.log(`not ok - ${got.length} pieces from pith, ${want.length} from llama.cpp`); process.exit(0); }
got.forEach((hex, id) => {
    const raw = Buffer.from(hex, "hex"), piece = Buffer.from(clean(Buffer.from(raw)));
    if (!piece.equals(raw)) cleaned++;
    if (piece.toString("utf8") !== want[id] && bad++ < 10)
        console.log(`not ok - token ${id}: pith ${JSON.stringify(raw.toString("utf8"))} llama.cpp ${JSON.stringify(want[id])}`);
});
console.log(bad ? `not ok - ${bad} of ${got.length} pieces differ` :
    `ok - all ${got.length} pieces equal llama.cpp ones (${cleaned} after its clean-up of spaces)`);
' "$TMP/pieces" "$TMP/detok" >"$TMP/cmp" 2>&1
        while IFS= read -r line; do
            case "$line" in "ok - "*) ok "${line#ok - }" ;; "not ok - "*) not_ok "${line#not ok - }" ;; *) not_ok "$line" ;; esac
        done <"$TMP/cmp"
    else not_ok "llama.cpp detokenize failed: $(tail -c 300 "$TMP/ref.err")"; fi
else not_ok "tokenize_files --pieces: $(head -c 300 "$TMP/err")"; fi

# ---- 5. pith tokenize --pieces -------------------------------------------------
want="101 '[CLS]'
7592 ' hello'
1010 ' ,'
2088 ' world'
2003 ' is'
5925 ' abc'
8292 ' ce'
999 ' !'
102 '[SEP]'"
got=$("$PITH" tokenize "$V" --pieces "[CLS]Héllo, WORLD is  abc Cé! [SEP]" 2>"$TMP/err")
[ "$got" = "$want" ] && ok "pith tokenize --pieces: [CLS], words with U+2581 as a space, [SEP]" ||
    not_ok "pith tokenize --pieces: '$got' $(head -c 300 "$TMP/err")"
finish
