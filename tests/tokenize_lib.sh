# tokenize_lib.sh - sourced after tests/lib.sh by the tests that compare
# pith's tokenizer with llama.cpp's (node-llama-cpp) on a vocabulary file.
#   llamacpp_install          puts node-llama-cpp in NODE_DIR (ends the test if it cannot)
#   tokenize_each NAME VOCAB TEXTS_JSON
#                             a result per text of TEXTS_JSON (a JSON array of
#                             strings): pith's ids equal those llama.cpp's
#                             tokenize.mjs gives on the same file
NODE_DIR=build/node-llama-cpp
TOKF=${TOKF:-build/asan/tools/tokenize_files}
llamacpp_install() {
    if sh tests/llamacpp/install.sh 2>"$TMP/install.err"; then ok "llama.cpp from node-llama-cpp (tests/llamacpp/install.sh)"
    else not_ok "$(cat "$TMP/install.err")"; finish; fi
}
# Every text in one process (tokenize_files: pith tokenize's calls, the
# vocabulary loaded once; Gemma 3's has 262,144 pieces), one line of ids per
# text, and `pith tokenize --file` itself on the first text (as
# t_tokenize_bpe.sh): on a machine where a process start costs milliseconds,
# a node and an ASan pith per text cost more than the tokenizing.
tokenize_each() {
    name=$1 vocab=$2 texts=$3
    if ! node "$NODE_DIR/tokenize.mjs" "$vocab" "$texts" >"$TMP/ref" 2>"$TMP/err"; then
        not_ok "llama.cpp tokenize failed: $(tail -c 300 "$TMP/err")"; return
    fi
    # each text into its file, and its JSON into texts.lines (for the messages)
    rm -f "$TMP"/text.*
    node -e 'const fs = require("fs"), texts = JSON.parse(fs.readFileSync(process.argv[1], "utf8"));
        texts.forEach((t, i) => fs.writeFileSync(process.argv[2] + "/text." + (i + 1), t));
        fs.writeFileSync(process.argv[2] + "/texts.lines", texts.map(t => JSON.stringify(t) + "\n").join(""))' \
        "$texts" "$TMP" || { not_ok "$name: the texts of $texts"; return; }
    n=$(wc -l <"$TMP/texts.lines")
    files=$(i=0; while [ "$i" -lt "$n" ]; do i=$((i + 1)); printf '%s ' "$TMP/text.$i"; done)
    # shellcheck disable=SC2086 # files: words
    "$TOKF" "$vocab" $files >"$TMP/got" 2>"$TMP/err" || { not_ok "$name: tokenize_files: $(head -c 300 "$TMP/err")"; return; }
    while IFS= read -r line <&3 && IFS= read -r want <&4 && IFS= read -r got <&5; do
        if [ "$got" = "$want" ]; then ok "$name tokenize $line: $want"
        else not_ok "$name tokenize $line: pith '$got' llama.cpp '$want'"; fi
    done 3<"$TMP/texts.lines" 4<"$TMP/ref" 5<"$TMP/got"
    [ "$(wc -l <"$TMP/ref")" -eq "$n" ] && [ "$(wc -l <"$TMP/got")" -eq "$n" ] ||
        not_ok "$name: $n texts, $(wc -l <"$TMP/ref") lines from llama.cpp, $(wc -l <"$TMP/got") from tokenize_files"
    got=$("$PITH" tokenize "$vocab" --file "$TMP/text.1" 2>"$TMP/err")
    if [ "$got" = "$(sed -n 1p "$TMP/ref")" ]; then ok "$name: pith tokenize --file on the first text"
    else not_ok "$name text 1: pith tokenize --file '$(echo "$got" | cut -c1-200)' $(head -c 200 "$TMP/err")"; fi
}
