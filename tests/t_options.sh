# The parser, `pith help` and README's option rows come from one table per
# command (src/cli/cli.h): the tables keep their own rules (optdoc --check),
# README's option blocks are what the tables make of them
# (tests/tools/readme_options.sh) and hold every command's options; every
# option of a command's help is given to the binary, which must not call it
# unknown, and an unknown one is refused.
. tests/lib.sh
OPTDOC=${OPTDOC:-build/asan/tools/optdoc}
# options TEXT...: the -x/--long words in the text, one per line, sorted.
options() { grep -oE '(^|[^a-z0-9-])--?[a-z0-9][-a-z0-9]*' | sed 's/^[^-]*//' | sort -u; }
cmds=$(./pith --help | sed -n 's/^  \([a-z][a-z]*\)  .*/\1/p' | grep -vx help)
[ -n "$cmds" ] || { not_ok "no commands in pith --help"; finish; }

$OPTDOC --check 2>"$TMP/err" && ok "the option tables keep their rules" || not_ok "optdoc --check: $(head -c 600 "$TMP/err")"

if grep -q '^<!-- options: ' README.md; then
    OPTDOC=$OPTDOC sh tests/tools/readme_options.sh --check README.md >"$TMP/diff" 2>&1 \
        && ok "README's option blocks are the tables' rows" || not_ok "README: $(tail -n 1 "$TMP/diff"): $(head -c 600 "$TMP/diff")"
    $OPTDOC --coverage README.md 2>"$TMP/err" && ok "README's option blocks hold every command's options" \
        || not_ok "README: $(head -c 600 "$TMP/err")"
else
    # No blocks yet: README's tables (first column, from "### `pith CMD" to
    # the next heading) name the help's options.
    for c in $cmds; do
        awk -v h="### \`pith $c " 'index($0, h) == 1 { on = 1; next } /^##/ { on = 0 } on && /^\| / && !/^\|---/' README.md |
            sed 's/\\|//g' | awk -F'|' '$2 !~ /^ *option *$/ { print $2 }' | options >"$TMP/readme"
        ./pith help "$c" | sed -n 's/^  \(-.\{0,24\}\).*/\1/p' | options | grep -vxE -- '-h|--help' >"$TMP/help"
        d=$(diff "$TMP/readme" "$TMP/help" | sed -n 's/^</README only:/p; s/^>/help only:/p' | tr '\n' ' ')
        [ -s "$TMP/help" ] && [ -z "$d" ] && ok "$c: README's options = the help's ($(wc -l <"$TMP/help"))" || not_ok "$c: $d"
    done
fi

for c in $cmds; do
    ./pith help "$c" | sed -n 's/^  \(-.\{0,24\}\).*/\1/p' | options | grep -vxE -- '-h|--help' >"$TMP/help"
    $OPTDOC "$c" | sed -n 's/^| `\([^`]*\)`.*/\1/p' | options >"$TMP/rows"
    [ -s "$TMP/help" ] && cmp -s "$TMP/help" "$TMP/rows" && ok "$c: the help's options = the table's ($(wc -l <"$TMP/help"))" \
        || not_ok "$c: help and optdoc differ: $(diff "$TMP/help" "$TMP/rows" | tr '\n' ' ')"
    # Each option alone after a missing model: any complaint but "unknown option".
    bad=
    for o in $(cat "$TMP/help"); do
        ./pith "$c" "$TMP/none.gguf" "$o" </dev/null >/dev/null 2>"$TMP/err" # the release build: 150 starts
        grep -q 'unknown option' "$TMP/err" && bad="$bad $o"
    done
    [ -z "$bad" ] && ok "$c accepts every option of its help" || not_ok "$c rejects:$bad"
    $PITH "$c" "$TMP/none.gguf" --no-such-option </dev/null >/dev/null 2>"$TMP/err"
    grep -q "unknown option for $c" "$TMP/err" && ok "$c rejects an unknown option" || not_ok "$c --no-such-option: $(cat "$TMP/err")"
done
finish
