# llamacpp_lib.sh - sourced after tests/lib.sh: llama.cpp's references
# (node-llama-cpp, installed by tests/llamacpp/install.sh) from one node
# process per script (tests/llamacpp/refs.mjs) instead of one per model,
# which cost about 2 CPU seconds each to start.
#   ref_logits MODEL IDS OUT      llama.cpp's logits of every position into OUT
#   ref_greedy MODEL IDS N OUT    its N greedy tokens "id:gap,..." into OUT
#   ref_tokenize VOCAB TEXTS.json OUT   its ids of each text (special tokens parsed), a line each
# Each returns 0, or 1 with the reason in $TMP/ref.err.
NODE_DIR=${NODE_DIR:-build/node-llama-cpp}
REF_PID=
ref_start() {
    mkfifo "$TMP/refs.fifo" || return 1
    node "$NODE_DIR/refs.mjs" <"$TMP/refs.fifo" >"$TMP/refs.log" 2>&1 &
    REF_PID=$!
    trap 'kill "$REF_PID" 2>/dev/null; rm -rf "$TMP"' EXIT
    # held open until the script ends: then node reads the end of its input and exits
    exec 8>"$TMP/refs.fifo"
}
# ref_request OUT LINE: sends one request, waits for OUT.done
ref_request() {
    out=$1
    [ -n "$REF_PID" ] || ref_start || { echo "cannot start $NODE_DIR/refs.mjs" >"$TMP/ref.err"; return 1; }
    rm -f "$out" "$out.done"
    # (writing to a pipe nobody reads would end the script)
    kill -0 "$REF_PID" 2>/dev/null || { echo "refs.mjs has ended: $(tail -c 300 "$TMP/refs.log")" >"$TMP/ref.err"; return 1; }
    printf '%s\n' "$2" >&8
    waited=0
    while [ ! -e "$out.done" ]; do
        if ! kill -0 "$REF_PID" 2>/dev/null || [ $waited -gt 12000 ]; then
            echo "refs.mjs ended or took over 600 s: $(tail -c 300 "$TMP/refs.log")" >"$TMP/ref.err"; return 1
        fi
        sleep 0.05
        waited=$((waited + 1))
    done
    if [ "$(cat "$out.done")" = ok ]; then return 0; fi
    cat "$out.done" >"$TMP/ref.err"
    return 1
}
ref_logits() { ref_request "$3" "$(printf 'logits\t%s\t%s\t%s' "$1" "$2" "$3")"; }
ref_greedy() { ref_request "$4" "$(printf 'greedy\t%s\t%s\t%s\t%s' "$1" "$2" "$3" "$4")"; }
ref_tokenize() { ref_request "$3" "$(printf 'tokenize\t%s\t%s\t%s' "$1" "$2" "$3")"; }
