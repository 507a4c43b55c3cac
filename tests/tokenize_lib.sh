# tokenize_lib.sh - sourced after tests/lib.sh by the tests that compare
# pith's tokenizer with llama.cpp's (node-llama-cpp) on a vocabulary file.
#   llamacpp_install          puts node-llama-cpp in NODE_DIR (ends the test if it cannot)
#   tokenize_each NAME VOCAB TEXTS_JSON
#                             a result per text of TEXTS_JSON (a JSON array of
#                             strings): `pith tokenize VOCAB` gives the ids
#                             llama.cpp's tokenize.mjs gives on the same file
NODE_DIR=build/node-llama-cpp
llamacpp_install() {
    if sh tests/llamacpp/install.sh 2>"$TMP/install.err"; then ok "llama.cpp from node-llama-cpp (tests/llamacpp/install.sh)"
    else not_ok "$(cat "$TMP/install.err")"; finish; fi
}
tokenize_each() {
    name=$1 vocab=$2 texts=$3
    if ! node "$NODE_DIR/tokenize.mjs" "$vocab" "$texts" >"$TMP/ref" 2>"$TMP/err"; then
        not_ok "llama.cpp tokenize failed: $(tail -c 300 "$TMP/err")"; return
    fi
    node -e 'for (const t of JSON.parse(require("fs").readFileSync(process.argv[1], "utf8"))) console.log(JSON.stringify(t))' \
        "$texts" >"$TMP/texts.lines"
    i=0
    while IFS= read -r line; do
        i=$((i + 1))
        node -e 'process.stdout.write(JSON.parse(process.argv[1]))' "$line" >"$TMP/text"
        want=$(sed -n "${i}p" "$TMP/ref")
        got=$("$PITH" tokenize "$vocab" --file "$TMP/text" 2>"$TMP/err")
        if [ "$got" = "$want" ]; then ok "$name tokenize $line: $want"
        else not_ok "$name tokenize $line: pith '$got' llama.cpp '$want' $(head -c 200 "$TMP/err")"; fi
    done <"$TMP/texts.lines"
}
