#!/bin/sh
# t_spec.sh - speculative decoding (--spec-type): the reply is plain
# decoding's, token for token, greedy and sampled (a seed draws the same
# numbers in the same order: slot.c), on every kind of state a step must
# undo: attention caches (qwen3, qwen3moe), sliding-window rings (gemma3 and
# gemma4, with a batch of 8 so that the rings wrap every few steps), short
# convolutions (lfm2) and DeltaNet states (qwen35); every load mode; a
# context that shifts. Random models made by mkmodel, small.
. tests/lib.sh
MK=${MK:-build/rel/tools/mkmodel}
# arithmetic on data: the release pith runs the long replies (the ASan one
# the short ones and the option checks)
FWD=${FWD:-./pith}
[ -x "$FWD" ] || not_ok "$FWD is not built (make pith)"

# a prompt that repeats itself, so that prompt lookup finds n-grams at once
IDS=5,80,300,17,250,9,120,66,200,31,5,80,300,17,250,9,120,66,200,31,4,77,1000,5,80,300,17,250

SAMPLED="--temp 1 --top-k 3 --seed 7"

# same NAME MODEL "ARGS" [all]: plain and speculative replies (SPEC's
# options, prompt lookup by default) equal, greedy
# and at temperature 1 (few candidates, so that drafts come, and are
# rejected); with all, at temperature 0.7 too
same() {
    name=$1 model=$2 args=$3
    samplings="--temp 0|$SAMPLED"
    [ "${4:-}" = all ] && samplings="$samplings|--temp 0.7 --top-k 2 --seed 8"
    IFS='|'
    set -- $samplings
    unset IFS
    for samp in "$@"; do
        # shellcheck disable=SC2086
        "$FWD" run "$model" --prompt-ids "$IDS" --print-ids $samp $args >"$TMP/plain" 2>"$TMP/plain.err"
        # shellcheck disable=SC2086
        "$FWD" run "$model" --prompt-ids "$IDS" --print-ids $samp $args ${SPEC:---spec-type ngram-simple} \
            >"$TMP/spec" 2>"$TMP/spec.err"
        stats=$(sed -n 's/.*; \(drafted [0-9]*, accepted [0-9]*\).*/\1/p' "$TMP/spec.err")
        if [ -s "$TMP/plain" ] && cmp -s "$TMP/plain" "$TMP/spec"; then ok "$name $samp: the same ids ($stats)"
        else not_ok "$name $samp: $(head -c 200 "$TMP/plain") vs $(head -c 200 "$TMP/spec") $(tail -c 300 "$TMP/spec.err")"; fi
    done
}

mk() { "$MK" "$TMP/$1.gguf" $2 >"$TMP/mk.out" 2>&1 || not_ok "$1: mkmodel failed: $(head -c 300 "$TMP/mk.out")"; }

same qwen3-q8_0 "$FIX/models/tiny-qwen3-Q8_0.gguf" "-n 60" all
mk qwen3moe "--arch qwen3moe --layers 2 --embd 128 --ff 256 --ff-exp 128 --experts 8 --experts-used 2 --heads 4 --kv-heads 1 --head-dim 64 --type q8_0 --seed 91"
same qwen3moe "$TMP/qwen3moe.gguf" "-n 60" all
mk gemma3 "--arch gemma3 --layers 6 --embd 256 --ff 512 --heads 4 --kv-heads 1 --head-dim 256 --window 16 --type q8_0 --seed 71"
same gemma3-b8 "$TMP/gemma3.gguf" "-n 60 -b 8" all
# gemma4: windowed rings of their own head size and kv heads, the last layers reading earlier layers' KV
mk gemma4 "--arch gemma4 --layers 8 --swa-pattern 3 --embd 256 --ff 512 --heads 4 --kv-heads 1 --kv-heads-swa 2 --head-dim 512 --head-dim-swa 256 --window 16 --shared-kv 2 --pe 64 --rope-partial 4 --type q8_0 --seed 72"
same gemma4-b8 "$TMP/gemma4.gguf" "-n 60 -b 8" all
mk lfm2 "--arch lfm2 --layers 6 --embd 256 --ff 512 --heads 4 --kv-heads 2 --head-dim 64 --type q8_0 --seed 81"
same lfm2 "$TMP/lfm2.gguf" "-n 60" all
mk qwen35 "--arch qwen35 --layers 4 --embd 256 --ff 512 --heads 2 --kv-heads 1 --head-dim 256 --rope-dim 64 --type q8_0 --seed 61"
same qwen35 "$TMP/qwen35.gguf" "-n 60" all
# the load modes, and a context that shifts (drops half every 32 tokens)
for mode in read stream; do same "qwen3-q8_0 --load $mode" "$FIX/models/tiny-qwen3-Q8_0.gguf" "-n 40 --load $mode"; done
same "qwen3-q8_0 -c 64 (shifts)" "$FIX/models/tiny-qwen3-Q8_0.gguf" "-n 60 -c 64"
same "lfm2 -c 64 (shifts)" "$TMP/lfm2.gguf" "-n 60 -c 64"

# a draft model (-md): the target's weights in Q4_0 drafting for it in Q8_0
# (mkmodel writes both from one seed), on an attention model and on the
# windowed one (its draft's rings rewound)
Q3="--arch qwen3 --layers 4 --embd 256 --ff 512 --heads 4 --kv-heads 1 --head-dim 64 --seed 5"
mk t8 "$Q3 --type q8_0"
mk d4 "$Q3 --type q4_0"
SPEC="-md $TMP/d4.gguf" same "qwen3 -md" "$TMP/t8.gguf" "-n 60" all
SPEC="-md $TMP/d4.gguf" same "qwen3 -md, target streamed" "$TMP/t8.gguf" "-n 40 --load stream"
mk gd4 "--arch gemma3 --layers 6 --embd 256 --ff 512 --heads 4 --kv-heads 1 --head-dim 256 --window 16 --type q4_0 --seed 71"
SPEC="-md $TMP/gd4.gguf" same "gemma3 -md" "$TMP/gemma3.gguf" "-n 60 -b 8"
FWD=$PITH SPEC="-md $TMP/d4.gguf" same "asan qwen3 -md" "$TMP/t8.gguf" "-n 24 -b 8"
"$PITH" run "$TMP/t8.gguf" -md "$TMP/d4.gguf" --plan -p hi >"$TMP/plan" 2>&1
if grep -q "^ *draft model (-md)" "$TMP/plan"; then ok "--plan shows the draft model's share"
else not_ok "--plan: no draft model row: $(head -c 300 "$TMP/plan")"; fi
# a grammar holds drafted tokens too: the same replies under one
printf 'root ::= ("hello" | " there" | " fr" | " one" | "x")+\n' >"$TMP/g.gbnf"
same "qwen3 --grammar" "$TMP/t8.gguf" "-n 40 --grammar $TMP/g.gbnf"
SPEC="-md $TMP/d4.gguf" same "qwen3 -md --grammar" "$TMP/t8.gguf" "-n 40 --grammar $TMP/g.gbnf"

# chat: two turns (the last token of a reply is fed), the same text and
# context with each drafter
for spec in "" "--spec-type ngram-simple" "-md $TMP/d4.gguf"; do
    # shellcheck disable=SC2086
    printf 'hello there hello there\nagain please\n' | "$FWD" chat "$TMP/t8.gguf" --temp 0 -n 40 $spec >"$TMP/chat.out" 2>"$TMP/chat.err"
    printf '%s %s\n' "$(cksum <"$TMP/chat.out")" "$(sed -n 's/.* \([0-9]* in context\).*/\1/p' "$TMP/chat.err" | tr '\n' ' ')" >>"$TMP/chats"
done
if [ "$(sort -u "$TMP/chats" | wc -l)" -eq 1 ] && grep -q "[0-9] in context [0-9]* in context" "$TMP/chats"; then ok "chat: two turns alike plain, with prompt lookup and with -md"
else not_ok "chat: $(cat "$TMP/chats") $(tail -c 200 "$TMP/chat.err")"; fi

# serve: two slots, two requests at once (their verifications share steps;
# qwen35's recurrent states fed again after both read their rows); the
# same completions as plain decoding, and timings.draft_n and
# draft_n_accepted as llama-server writes them
. tests/serve_lib.sh
b1='{"prompt":"hello there hello there hello","max_tokens":40,"temperature":0}'
b2='{"prompt":"one two three one two three one","max_tokens":40,"temperature":0}'
for spec in plain "--spec-type ngram-simple"; do
    [ "$spec" = plain ] && spec=
    # shellcheck disable=SC2086
    serve_start "$FWD" "$TMP/qwen35.gguf" -t 1 --slots 2 $spec
    curl -s -m 60 -H 'Content-Type: application/json' --data-binary "$b1" "$URL/v1/completions" >"$TMP/s1.json" &
    c1=$!
    curl -s -m 60 -H 'Content-Type: application/json' --data-binary "$b2" "$URL/v1/completions" >"$TMP/s2.json"
    wait $c1
    stop_server
    for f in s1 s2; do sed -n 's/.*"text":"\([^"]*\)".*/\1/p' "$TMP/$f.json" >>"$TMP/serve.${spec:+spec}text"; done
    cat "$TMP/s1.json" "$TMP/s2.json" >>"$TMP/serve.${spec:+spec}json"
done
if [ -s "$TMP/serve.text" ] && cmp -s "$TMP/serve.text" "$TMP/serve.spectext" &&
   [ "$(grep -c '"draft_n":[1-9][0-9]*,"draft_n_accepted":[0-9]' "$TMP/serve.specjson")" -eq 2 ]; then
    ok "serve: two requests at once, the same completions with prompt lookup, and their draft_n, draft_n_accepted"
else not_ok "serve: $(cat "$TMP/serve.text") vs $(head -c 600 "$TMP/serve.specjson")"; fi

# refusals: one line, exit 2
"$MK" "$TMP/other-vocab.gguf" $Q3 --type q4_0 --tokenizer-from "$FIX/models/tiny-qwen3-f32.gguf" >/dev/null 2>&1
expect_fail2 "-md: a draft of another vocabulary is refused" "$PITH" run "$TMP/t8.gguf" -md "$TMP/other-vocab.gguf" -p hi
expect_fail2 "-md: a draft with a recurrent state is refused" "$PITH" run "$TMP/t8.gguf" -md "$TMP/lfm2.gguf" -p hi
expect_fail2 "--spec-type draft-simple needs -md" "$PITH" run "$TMP/t8.gguf" --spec-type draft-simple -p hi
expect_fail2 "-md with --spec-type ngram-simple is refused" "$PITH" run "$TMP/t8.gguf" -md "$TMP/d4.gguf" --spec-type ngram-simple -p hi
expect_fail2 "--spec-type: an unknown type" "$PITH" run "$TMP/t8.gguf" --spec-type eagle -p hi

# the ASan pith: a short reply with each kind of state to undo
for m in "$TMP/gemma3.gguf" "$TMP/qwen35.gguf"; do FWD=$PITH same "asan $(basename "$m")" "$m" "-n 24 -b 8"; done

finish
