# jget_lib.sh - sourced after tests/lib.sh (and serve_lib.sh) by the tests
# that read values out of JSON replies:
#   jget FILE EXPR   prints EXPR, JavaScript evaluated with r = FILE's JSON (a
#                    string as it is, anything else as JSON); status 1 and
#                    node's message on stderr when FILE or EXPR fails
# One node process (tests/jget.cjs) answers every lookup of the script,
# started here in the script's own shell (not lazily: a lookup inside $(...)
# runs in a subshell) and ending with it. Its requests go through fd 6,
# its answers come back through fd 5.
mkfifo "$TMP/jget.in" "$TMP/jget.out"
node tests/jget.cjs <"$TMP/jget.in" >"$TMP/jget.out" 2>"$TMP/jget.log" &
exec 6>"$TMP/jget.in" 5<"$TMP/jget.out"
# (one lookup at a time: never from two processes at once)
jget() {
    printf '%s' "$2" >"$TMP/jget.expr"
    printf '%s\t%s\t%s\n' "$1" "$TMP/jget.expr" "$TMP/jget.val" >&6
    if ! IFS= read -r _answer <&5; then echo "jget: node ended: $(tail -c 300 "$TMP/jget.log")" >&2; return 1; fi
    if [ "$_answer" != "jget: ok" ]; then echo "${_answer#jget: }" >&2; return 1; fi
    cat "$TMP/jget.val"
}
