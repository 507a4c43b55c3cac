#!/bin/sh
# t_prompt_cache.sh - `pith run --prompt-cache FILE` (engine/prompt_cache.c):
# a prompt continued from a cached prefix gives the greedy ids of the same
# prompt computed from scratch, for each KV type; a file of another model,
# KV type or layout, truncated at every 4 KiB boundary, with flipped bytes,
# empty, or not writable, gives one note and the correct answer; a model
# with recurrent layers says the cache is not for it yet.
. tests/lib.sh
M=$FIX/models/tiny-qwen3-f32.gguf
P1="Tell me a story about a cat and a dog who live in a small house by the sea."
P2="Tell me a story about a cat and a dog who met on a train."

# ids MODEL PROMPT [ARGS...]: greedy ids, stderr in $TMP/err
ids() { m=$1 p=$2; shift 2; $PITH run "$m" -p "$p" -n 12 --temp 0 -t 1 --print-ids "$@" 2>"$TMP/err"; }
cached() { sed -n 's/^prompt: [0-9]* tokens (\([0-9]*\) cached).*/\1/p' "$TMP/err"; }

for kv in f16 f32 q8_0; do
    C=$TMP/cache-$kv.bin
    want1=$(ids "$M" "$P1" --kv-type $kv); want2=$(ids "$M" "$P2" --kv-type $kv)
    got=$(ids "$M" "$P1" --kv-type $kv --prompt-cache "$C")
    [ -n "$want1" ] && [ "$got" = "$want1" ] && [ -s "$C" ] && [ "$(cached)" = 0 ] \
        && ok "--kv-type $kv: a first run writes the cache and gives the same ids" \
        || not_ok "--kv-type $kv first run: $got vs $want1 ($(head -c 200 "$TMP/err"))"
    got=$(ids "$M" "$P1" --kv-type $kv --prompt-cache "$C"); n=$(cached)
    [ "$got" = "$want1" ] && [ "${n:-0}" -gt 20 ] && ok "--kv-type $kv: the same prompt again: $n ids from the cache, the same ids" \
        || not_ok "--kv-type $kv again: $got vs $want1, cached '$n' ($(head -c 200 "$TMP/err"))"
    got=$(ids "$M" "$P2" --kv-type $kv --prompt-cache "$C"); n=$(cached)
    [ "$got" = "$want2" ] && [ "${n:-0}" -gt 5 ] && ok "--kv-type $kv: a prompt sharing a prefix: $n ids from the cache, its own ids" \
        || not_ok "--kv-type $kv shared prefix: $got vs $want2, cached '$n' ($(head -c 200 "$TMP/err"))"
done

# chat: the conversation's state is saved at the end; the same conversation
# again feeds only the first message's last id, and replies the same
printf 'Hello there\nHow are you?\n' | $PITH chat "$M" -n 8 --temp 0 -t 1 --prompt-cache "$TMP/chat.bin" \
    --ids-out "$TMP/ids1" >/dev/null 2>"$TMP/err1"
printf 'Hello there\nHow are you?\n' | $PITH chat "$M" -n 8 --temp 0 -t 1 --prompt-cache "$TMP/chat.bin" \
    --ids-out "$TMP/ids2" >/dev/null 2>"$TMP/err"
[ -s "$TMP/ids1" ] && cmp -s "$TMP/ids1" "$TMP/ids2" && grep -q "turn 1: prefilled 1 new tokens" "$TMP/err" \
    && ok "chat --prompt-cache: the same conversation again computes one id of its first message, the same replies" \
    || not_ok "chat --prompt-cache: $(grep turn "$TMP/err1" "$TMP/err" | tr '\n' ' ')"

# What is not used: one note, then the answer computed from scratch (a
# short prompt and reply: a cache of 14 positions, 56 KiB)
P0="Hi there"
ids0() { $PITH run "$M" -p "$P0" -n 2 --temp 0 -t 1 --print-ids "$@" 2>"$TMP/err"; }
ids0 --prompt-cache "$TMP/good.bin" >/dev/null
want=$(ids0)
# not_used NAME FILE [ARGS...]: the note, the right ids, nothing cached
not_used() {
    name=$1 file=$2; shift 2
    got=$(ids0 --prompt-cache "$file" "$@")
    if [ "$got" = "$want" ] && [ "$(cached)" = 0 ] && grep -q "^note: prompt cache" "$TMP/err"; then ok "$name: $(grep '^note' "$TMP/err" | head -n 1 | cut -c1-120)"
    else not_ok "$name: ids $got (want $want), cached '$(cached)', $(head -c 300 "$TMP/err")"; fi
}
$PITH run "$FIX/models/stories260K.gguf" -p "Once upon a time" -n 4 --temp 0 --prompt-cache "$TMP/other.bin" >/dev/null 2>&1
not_used "a cache of another model" "$TMP/other.bin"
cp "$TMP/good.bin" "$TMP/kv.bin"; not_used "a cache of another --kv-type" "$TMP/kv.bin" --kv-type q8_0
: >"$TMP/empty.bin"; not_used "an empty file" "$TMP/empty.bin"
# every truncation at a 4 KiB boundary (and one byte short)
size=$(wc -c <"$TMP/good.bin"); bad=0 n=0
for cut in $(seq 4096 4096 "$size") $((size - 1)); do
    [ "$cut" -lt "$size" ] || continue
    head -c "$cut" "$TMP/good.bin" >"$TMP/cut.bin"
    got=$(ids0 --prompt-cache "$TMP/cut.bin"); n=$((n + 1))
    { [ "$got" = "$want" ] && [ "$(cached)" = 0 ] && grep -q "^note: prompt cache" "$TMP/err"; } || { bad=$((bad + 1)); echo "# cut at $cut: $got $(head -c 200 "$TMP/err")"; }
done
[ "$bad" = 0 ] && [ "$n" -ge 10 ] && ok "truncated at each of $n places: a note each, the right ids" || not_ok "truncations: $bad of $n wrong"
# a flipped byte in the header, the ids, the first, a middle and the last byte of the state
for at in 0 9 60 81 200 $((size / 2)) $((size - 1)); do
    cp "$TMP/good.bin" "$TMP/flip.bin"
    b=$(od -An -tu1 -j "$at" -N1 "$TMP/flip.bin" | tr -d ' ')
    printf "$(printf '\\%03o' $(((b + 1) % 256)))" | dd of="$TMP/flip.bin" bs=1 seek="$at" conv=notrunc 2>/dev/null
    not_used "byte $at flipped" "$TMP/flip.bin"
done
# a cache made with another -b holds rings of another size only for
# windowed models; here the same file works with any -b
got=$(ids0 --prompt-cache "$TMP/good.bin" -b 7)
[ "$got" = "$want" ] && [ "$(cached)" -gt 5 ] && ok "a cache made with -b 64 serves -b 7" || not_ok "-b 7: $got $(head -c 200 "$TMP/err")"
# not writable: a note, the right ids
got=$(ids0 --prompt-cache "$TMP/no/such/dir/cache.bin")
[ "$got" = "$want" ] && grep -q "^note: prompt cache not saved" "$TMP/err" && ok "an unwritable path: a note, the right ids" \
    || not_ok "unwritable: $got $(head -c 200 "$TMP/err")"
got=$(ids0 --prompt-cache "$TMP")
[ "$got" = "$want" ] && grep -q "^note: prompt cache" "$TMP/err" && ok "a directory as the cache: a note, the right ids" \
    || not_ok "directory: $got $(head -c 200 "$TMP/err")"
ls "$TMP" | grep -q '\.tmp\.' && not_ok "a temporary file was left behind" || ok "no temporary file left behind"
# a model with recurrent layers: not yet (no checkpoints of their state)
build/rel/tools/mkmodel "$TMP/q35.gguf" --arch qwen35 --layers 4 --embd 128 --ff 256 --heads 2 --kv-heads 1 --head-dim 64 \
    --ssm-state 32 >/dev/null 2>&1
$PITH run "$TMP/q35.gguf" -p "$P1" -n 2 --prompt-cache "$TMP/q35.bin" >/dev/null 2>"$TMP/err"
[ $? = 0 ] && grep -q "^note: --prompt-cache: not for a model with recurrent layers" "$TMP/err" && [ ! -e "$TMP/q35.bin" ] \
    && ok "a model with recurrent layers: a note, no cache" || not_ok "qwen35 --prompt-cache: $(head -c 200 "$TMP/err")"
finish
