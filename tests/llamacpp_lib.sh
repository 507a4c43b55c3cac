# llamacpp_lib.sh - sourced after tests/lib.sh: llama.cpp's references
# (node-llama-cpp, installed by tests/llamacpp/install.sh) from one node
# process per script (tests/llamacpp/refs.mjs) instead of one per model,
# which cost about 2 CPU seconds each to start.
#   ref_logits MODEL IDS OUT      llama.cpp's logits of every position into OUT
#   ref_greedy MODEL IDS N OUT    its N greedy tokens "id:gap,..." into OUT
#   ref_tokenize VOCAB TEXTS.json OUT   its ids of each text (special tokens parsed), a line each
#   ref_info VOCAB OUT            "bos B eos E add_bos A eog ID...", as tokenize_files --info
#   ref_detokenize VOCAB IDS.json OUT   its text of each list of ids (IDS.json: an array
#                                 of arrays; special tokens as text), a JSON string a line
# Each returns 0, or 1 with the reason in $TMP/ref.err.
#   greedy NAME THRESHOLD [ARGS]  ok/not_ok: pith's greedy ids against llama.cpp's (below)
NODE_DIR=${NODE_DIR:-build/node-llama-cpp}
REF_PID=
ref_start() {
    mkfifo "$TMP/refs.in" "$TMP/refs.out" || return 1
    # (timeout: a node that hangs ends, and the shell's read with it)
    timeout 3600 node "$NODE_DIR/refs.mjs" <"$TMP/refs.in" >"$TMP/refs.out" 2>"$TMP/refs.log" &
    REF_PID=$!
    trap 'kill "$REF_PID" 2>/dev/null; rm -rf "$TMP"' EXIT
    # held open until the script ends: then node reads the end of its input
    # and exits; its answers, a line per request, are read from fd 7
    exec 8>"$TMP/refs.in" 7<"$TMP/refs.out"
}
# ref_request OUT LINE: sends one request and waits for its answer (a
# blocking read, not a poll: on a machine where starting a process costs
# milliseconds, a sleep every 50 ms while llama.cpp computes added up)
ref_request() {
    out=$1
    [ -n "$REF_PID" ] || ref_start || { echo "cannot start $NODE_DIR/refs.mjs" >"$TMP/ref.err"; return 1; }
    rm -f "$out"
    # (writing to a pipe nobody reads would end the script)
    kill -0 "$REF_PID" 2>/dev/null || { echo "refs.mjs has ended: $(tail -c 300 "$TMP/refs.log")" >"$TMP/ref.err"; return 1; }
    printf '%s\n' "$2" >&8
    answer=
    while [ "${answer#refs: }" = "$answer" ]; do
        if ! IFS= read -r answer <&7; then
            echo "refs.mjs ended without answering: $(tail -c 300 "$TMP/refs.log")" >"$TMP/ref.err"; return 1
        fi
    done
    [ "$answer" = "refs: ok" ] && return 0
    echo "${answer#refs: }" >"$TMP/ref.err"
    return 1
}
ref_logits() { ref_request "$3" "$(printf 'logits\t%s\t%s\t%s' "$1" "$2" "$3")"; }
ref_greedy() { ref_request "$4" "$(printf 'greedy\t%s\t%s\t%s\t%s' "$1" "$2" "$3" "$4")"; }
ref_tokenize() { ref_request "$3" "$(printf 'tokenize\t%s\t%s\t%s' "$1" "$2" "$3")"; }
ref_info() { ref_request "$2" "$(printf 'info\t%s\t%s' "$1" "$2")"; }
ref_detokenize() { ref_request "$3" "$(printf 'detokenize\t%s\t%s\t%s' "$1" "$2" "$3")"; }

# greedy NAME THRESHOLD ["PITH ARGS"]: 24 tokens generated greedily by
# llama.cpp and by $FWD (the release pith) from $TMP/NAME.gguf after the ids
# $IDS; they must agree up to the first step whose reference gap (best -
# second logit) is below THRESHOLD (tests/t_llamacpp_arch.sh, _moe.sh).
greedy() {
    name=$1 thr=$2 pargs=${3:-}
    model=$TMP/$name.gguf
    if ! ref_greedy "$model" "$IDS" 24 "$TMP/greedy.ref"; then
        not_ok "$name greedy: llama.cpp failed: $(tail -c 300 "$TMP/ref.err")"; return
    fi
    # shellcheck disable=SC2086
    if ! "$FWD" run "$model" --prompt-ids "$IDS" --print-ids -n 24 --temp 0 --ignore-eos --kv-type f32 $pargs \
            >"$TMP/greedy.out" 2>"$TMP/err"; then
        not_ok "$name greedy: pith failed: $(head -c 300 "$TMP/err")"; return
    fi
    verdict=$(awk -v thr="$thr" -F, 'NR == 1 { n = split($0, ref, ","); next }
        { m = split($0, ours, ",") }
        END {
            for (k = 1; k <= n; k++) {
                split(ref[k], p, ":")
                if (k > m) { print "FAIL pith stopped after " m " tokens"; exit }
                if (ours[k] != p[1]) {
                    if (p[2] + 0 < thr) { print "agree on " k - 1 " tokens, then a near-tie (gap " p[2] ")"; exit }
                    print "FAIL token " k ": " ours[k] " vs " p[1] " (gap " p[2] ")"; exit
                }
            }
            print "agree on all " n " tokens"
        }' "$TMP/greedy.ref" "$TMP/greedy.out")
    case "$verdict" in
        FAIL*) not_ok "$name greedy vs llama.cpp: $verdict" ;;
        *) ok "$name greedy vs llama.cpp: $verdict" ;;
    esac
}

# The comparisons of t_llamacpp_moe.sh and t_llamacpp_gemma4.sh (t_llamacpp_arch.sh
# has its own, with pith options per case): $FWD, $MK, $CMP, $IDS, $TMP set.
vocab_of() { "$FWD" inspect "$1" --tensors | awk '$1 == "token_embd.weight" { print $4 }'; }

# ours NAME MODEL B OUT [ARGS]: pith's logits of every position in steps of B
ours() {
    # shellcheck disable=SC2086
    "$FWD" logits "$2" --prompt-ids "$IDS" --out "$4" --kv-type f32 -b "$3" $5 >"$TMP/out" 2>"$TMP/err" ||
        { not_ok "$1 -b $3: pith failed: $(head -c 300 "$TMP/err")"; return 1; }
}

# compare NAME CLASS MKMODEL_ARGS...: one model, pith in three batch
# shapes against llama.cpp
compare() {
    name=$1 class=$2; shift 2
    model=$TMP/$name.gguf
    if ! "$MK" "$model" "$@" >"$TMP/mk.out" 2>&1; then not_ok "$name: mkmodel failed: $(head -c 300 "$TMP/mk.out")"; return; fi
    if ! ref_logits "$model" "$IDS" "$TMP/$name.ref.f32"; then
        not_ok "$name: llama.cpp failed: $(tail -c 300 "$TMP/ref.err")"; return
    fi
    vocab=$(vocab_of "$model")
    for b in 64 7 1; do
        ours "$name" "$model" $b "$TMP/$name.f32" || continue
        if "$CMP" --ref "$TMP/$name.ref.f32" --class "$class" --vocab "$vocab" "$TMP/$name.f32" >"$TMP/cmp" 2>&1; then
            ok "$name -b $b vs llama.cpp: $(sed 's/^[^ ]* //' "$TMP/cmp")"
        else
            not_ok "$name -b $b vs llama.cpp: $(cat "$TMP/cmp")"
        fi
    done
}

# outside NAME CLASS MODEL WHAT: pith's logits of MODEL (NAME's file with a
# feature taken out) must be outside CLASS of llama.cpp's logits of NAME
outside() {
    ours "$1" "$3" 64 "$TMP/edited.f32" || return
    if "$CMP" --ref "$TMP/$1.ref.f32" --class "$2" --vocab "$(vocab_of "$3")" "$TMP/edited.f32" >"$TMP/cmp" 2>&1; then
        not_ok "$1: $4 made no difference: $(head -c 200 "$TMP/cmp")"
    else
        ok "$1: $4, outside the class ($(sed 's/^[^ ]* //' "$TMP/cmp" | head -c 120))"
    fi
}
