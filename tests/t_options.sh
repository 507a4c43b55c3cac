# README's option tables, the binary's help and the argument parsers must
# name the same options for every command, so none can drift from the
# others: for each command, the options of its README section (first column
# of its tables), of `pith help COMMAND`, and of the strcmp literals in
# src/cli/cmd_COMMAND.c (plus cli_session_option's, for the commands that
# call it) are compared both ways; then every option of the help is given
# to the binary, which must not call it unknown.
. tests/lib.sh
# options TEXT...: the -x/--long words in the text, one per line, sorted.
options() { grep -oE '(^|[^a-z0-9-])--?[a-z0-9][-a-z0-9]*' | sed 's/^[^-]*//' | sort -u; }
cmds=$(./pith --help | sed -n 's/^  \([a-z][a-z]*\)  .*/\1/p' | grep -vx help)
[ -n "$cmds" ] || { not_ok "no commands in pith --help"; finish; }
session=$(awk '/^int cli_session_option/,/^}/' src/cli/cli_args.c | grep -oE 'strcmp\(a, "-[^"]*"\)' | options)
for c in $cmds; do
    # README: from "### `pith CMD" to the next heading, table rows' first column.
    awk -v h="### \`pith $c " 'index($0, h) == 1 { on = 1; next } /^##/ { on = 0 } on && /^\| / && !/^\|---/' README.md |
        sed 's/\\|//g' | awk -F'|' '$2 !~ /^ *option *$/ { print $2 }' | options >"$TMP/readme"
    ./pith help "$c" | sed -n 's/^  \(-.\{0,24\}\).*/\1/p' | options | grep -vxE -- '-h|--help' >"$TMP/help"
    f=src/cli/cmd_$c.c
    { grep -oE 'strcmp\((a|argv\[i\]), "-[^"]*"\)' "$f" | options
      grep -q 'cli_session_option(' "$f" && echo "$session"; } | sort -u >"$TMP/src"
    [ -s "$TMP/readme" ] && [ -s "$TMP/help" ] && [ -s "$TMP/src" ] || { not_ok "$c: an empty option list"; continue; }
    d=$(diff "$TMP/readme" "$TMP/help" | sed -n 's/^</README only:/p; s/^>/help only:/p' | tr '\n' ' ')
    [ -z "$d" ] && ok "$c: README's options = the help's ($(wc -l <"$TMP/help"))" || not_ok "$c: $d"
    d=$(diff "$TMP/src" "$TMP/help" | sed -n 's/^</parser only:/p; s/^>/help only:/p' | tr '\n' ' ')
    [ -z "$d" ] && ok "$c: the parser's options = the help's" || not_ok "$c: $d"
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
