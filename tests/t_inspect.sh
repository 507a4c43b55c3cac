#!/bin/sh
# t_inspect.sh - `pith inspect` on the fixtures, on mkmodel output and on a
# malformed corpus (every bad file: exit 2, one stderr line "pith: ...").
. tests/lib.sh

# same_output NAME CMD1 -- CMD2: both succeed with identical stdout
for f in "$FIX"/models/*.gguf "$FIX"/tokenizer/*.gguf; do
    b=${f##*/}
    if $PITH inspect "$f" --tensors >"$TMP/a" 2>"$TMP/ea" && $PITH inspect "$f" --tensors --no-mmap >"$TMP/b" 2>"$TMP/eb" &&
        cmp -s "$TMP/a" "$TMP/b" && [ ! -s "$TMP/ea" ] && [ ! -s "$TMP/eb" ]; then
        ok "inspect $b: mmap and --no-mmap print the same"
    else
        not_ok "inspect $b: $(head -c 300 "$TMP/ea" "$TMP/eb")"
    fi
done

M=$FIX/models
out() { "$@" 2>"$TMP/err"; }
expect_line() { # NAME PATTERN COMMAND...
    name=$1 pat=$2; shift 2
    if out "$@" >"$TMP/out" && grep -q -- "$pat" "$TMP/out"; then ok "$name"; else not_ok "$name: $(head -c 300 "$TMP/err")"; fi
}
expect_line "Q4_K_M: tensor counts per type" "^tensor types: F32 x17 Q4_K x24 Q6_K x5$" $PITH inspect "$M/tiny-qwen3-Q4_K_M.gguf"
expect_line "Q4_0: tensor counts per type" "^tensor types: F32 x17 Q4_0 x28 Q6_K x1$" $PITH inspect "$M/tiny-qwen3-Q4_0.gguf"
expect_line "f32: 46 tensors" "^tensors: 46$" $PITH inspect "$M/tiny-qwen3-f32.gguf"
expect_line "f32: parameters" "^parameters: 4454144$" $PITH inspect "$M/tiny-qwen3-f32.gguf"
expect_line "f32: tensor bytes" "^tensor bytes: 17816576$" $PITH inspect "$M/tiny-qwen3-f32.gguf"
expect_line "f32: file facts" "^alignment: 32$" $PITH inspect "$M/tiny-qwen3-f32.gguf"
expect_line "f32: metadata listing" 'qwen3.block_count  *u32  *= 4$' $PITH inspect "$M/tiny-qwen3-f32.gguf"
expect_line "f32: arrays shown by type and length" 'tokenizer.ggml.tokens .*\[string x 2026\] "!", "\\"", ' \
    $PITH inspect "$M/tiny-qwen3-f32.gguf"
expect_line "--tensors: table row" "^  blk.0.attn_q.weight  *256 x 512  *Q4_K " $PITH inspect "$M/tiny-qwen3-Q4_K_M.gguf" --tensors
expect_line "--key u32" "^4$" $PITH inspect "$M/tiny-qwen3-f32.gguf" --key qwen3.block_count
expect_line "--key f32" "^1000000$" $PITH inspect "$M/tiny-qwen3-f32.gguf" --key qwen3.rope.freq_base
expect_line "--key string" "^qwen3$" $PITH inspect "$M/tiny-qwen3-f32.gguf" --key general.architecture
expect_line "--key bool" "^false$" $PITH inspect "$M/tiny-qwen3-f32.gguf" --key tokenizer.ggml.add_bos_token
# A missing key: the file where the format puts the file, then the key.
expect_fail2 "--key missing" $PITH inspect "$M/tiny-qwen3-f32.gguf" --key nope
grep -q "^pith: $M/tiny-qwen3-f32.gguf: no key 'nope'" "$TMP/err" && ok "--key missing names the file first" \
    || not_ok "--key missing: $(cat "$TMP/err")"
# --plan: what bug reports need besides the plan
check "--plan" $PITH inspect "$M/tiny-qwen3-f32.gguf" --plan
for l in '^board profile: ' '^memory budget: [0-9]* MiB' '^page size: [0-9]* bytes' '^kernels: '; do
    grep -q "$l" "$TMP/out" || not_ok "inspect --plan lacks '$l'"
done
ok "inspect --plan: board profile, budget in MiB, page size, kernels"
check "--version" $PITH --version
for l in '^board: ' 'features compiled in: .*run time' '^memory budget: [0-9]* MiB' '^page size: [0-9]* bytes' '^kernels: '; do
    grep -q "$l" "$TMP/out" || not_ok "--version lacks '$l'"
done
grep -q 'share of RAM' "$TMP/out" && not_ok "--version: the RAM share without its number"
ok "--version: board, run-time kernels, budget in MiB, page size"
expect_line "--plan" "gguf: tensor hash" $PITH inspect "$M/tiny-qwen3-f32.gguf" --plan
expect_line "--plan total" "^  total " $PITH inspect "$M/tiny-qwen3-f32.gguf" --plan --no-mmap

# --key prints a string raw and in full, arrays one item per line
if out $PITH inspect "$FIX/tokenizer/qwen3-vocab.gguf" --key tokenizer.chat_template >"$TMP/out" &&
    [ "$(wc -c <"$TMP/out")" -eq 4117 ] && grep -q "enable_thinking" "$TMP/out"; then
    ok "--key chat template in full (4116 bytes + newline)"
else not_ok "--key chat template: $(wc -c <"$TMP/out") bytes"; fi
if out $PITH inspect "$FIX/tokenizer/qwen3-vocab.gguf" --key tokenizer.ggml.tokens --no-mmap >"$TMP/out" &&
    [ "$(wc -l <"$TMP/out")" -eq 151936 ] && [ "$(sed -n 151644p "$TMP/out")" = '"<|endoftext|>"' ]; then
    ok "--key string array: 151936 lines, id 151643 is <|endoftext|>"
else not_ok "--key string array: $(wc -l <"$TMP/out") lines"; fi

# bad arguments
expect_fail2 "--key absent" $PITH inspect "$M/tiny-qwen3-f32.gguf" --key no.such.key
expect_fail2 "--key without value" $PITH inspect "$M/tiny-qwen3-f32.gguf" --key
expect_fail2 "no model" $PITH inspect
expect_fail2 "two models" $PITH inspect "$M/tiny-qwen3-f32.gguf" "$M/tiny-qwen3-f32.gguf"
expect_fail2 "unknown option" $PITH inspect "$M/tiny-qwen3-f32.gguf" --frobnicate
expect_fail2 "missing file" $PITH inspect "$TMP/none.gguf"
expect_fail2 "directory" $PITH inspect "$TMP"
: >"$TMP/empty.gguf"
expect_fail2 "empty file" $PITH inspect "$TMP/empty.gguf"

# byte surgery with shell tools on a copy of a fixture
cp "$M/stories260K-f16.gguf" "$TMP/s.gguf"
printf 'GGUX' | dd of="$TMP/s.gguf" bs=1 seek=0 conv=notrunc 2>/dev/null
expect_fail2 "bad magic" $PITH inspect "$TMP/s.gguf"
if grep -q "byte 0: not a GGUF file" "$TMP/err"; then ok "bad magic: names byte 0"; else not_ok "bad magic: $(cat "$TMP/err")"; fi
cp "$M/stories260K-f16.gguf" "$TMP/s.gguf"
printf '\004' | dd of="$TMP/s.gguf" bs=1 seek=4 conv=notrunc 2>/dev/null
expect_fail2 "version 4" $PITH inspect "$TMP/s.gguf" --no-mmap
cp "$M/stories260K-f16.gguf" "$TMP/s.gguf"
printf '\377\377\377\377\377\377\377\177' | dd of="$TMP/s.gguf" bs=1 seek=16 conv=notrunc 2>/dev/null
expect_fail2 "n_kv 2^63-1" $PITH inspect "$TMP/s.gguf"
for cut in 10 100 1000 30000 500000; do
    head -c $cut "$M/stories260K-f16.gguf" >"$TMP/s.gguf"
    expect_fail2 "cut at $cut" $PITH inspect "$TMP/s.gguf"
done

# the malformed corpus of tests/test_gguf.c
if [ -x build/asan/tests/test_gguf ]; then
    mkdir -p "$TMP/corpus"
    build/asan/tests/test_gguf --write-corpus "$TMP/corpus" >/dev/null 2>&1
    n=0
    for f in "$TMP"/corpus/*.gguf; do
        [ -e "$f" ] || continue
        n=$((n + 1))
        b=${f##*/}
        expect_fail2 "corpus $b" $PITH inspect "$f"
        expect_fail2 "corpus $b --no-mmap" $PITH inspect "$f" --no-mmap
    done
    if [ $n -gt 50 ]; then ok "corpus has $n files"; else not_ok "corpus has only $n files"; fi
else
    not_ok "build/asan/tests/test_gguf missing: build it to check the malformed corpus"
fi

# mkmodel writes models inspect accepts
MK=build/asan/tools/mkmodel
if [ -x $MK ]; then
    check "mkmodel default" $MK "$TMP/m.gguf"
    expect_line "mkmodel: 2 layers" "^2$" $PITH inspect "$TMP/m.gguf" --key qwen3.block_count
    expect_line "mkmodel: tied, 24 tensors" "^tensors: 24$" $PITH inspect "$TMP/m.gguf"
    expect_line "mkmodel: bos <|endoftext|>" '"<|endoftext|>"' $PITH inspect "$TMP/m.gguf" --key tokenizer.ggml.tokens
    check "mkmodel q8_0 untied" $MK "$TMP/q.gguf" --type q8_0 --untied --layers 3 --embd 128 --ff 256 --heads 4 \
        --kv-heads 2 --head-dim 32 --vocab 2000 --seed 7
    expect_line "mkmodel q8_0: types" "^tensor types: F32 x13 Q8_0 x23$" $PITH inspect "$TMP/q.gguf"
    expect_line "mkmodel q8_0: vocab padded to 2000" "\[string x 2000\]" $PITH inspect "$TMP/q.gguf"
    expect_line "mkmodel q8_0: output.weight" "^  output.weight  *128 x 2000  *Q8_0 " $PITH inspect "$TMP/q.gguf" --tensors
    check "mkmodel bf16 v2" $MK "$TMP/b.gguf" --type bf16 --version 2
    expect_line "mkmodel bf16: version 2" "^GGUF version: 2$" $PITH inspect "$TMP/b.gguf" --no-mmap
    check "mkmodel --tokenizer-from qwen3" $MK "$TMP/t.gguf" --tokenizer-from "$FIX/tokenizer/qwen3-vocab.gguf" --type f16
    expect_line "mkmodel --tokenizer-from: 151936 rows" "^  token_embd.weight  *64 x 151936 " $PITH inspect "$TMP/t.gguf" --tensors
    check "mkmodel --split 3" $MK "$TMP/sp.gguf" --split 3 --layers 3
    expect_line "split model: 3 files" "^split files: 3$" $PITH inspect "$TMP/sp-00001-of-00003.gguf"
    expect_line "split model: all 35 tensors" "^tensors: 35$" $PITH inspect "$TMP/sp-00001-of-00003.gguf" --no-mmap
    expect_fail2 "split model: second file refused" $PITH inspect "$TMP/sp-00002-of-00003.gguf"
    rm -f "$TMP/sp-00003-of-00003.gguf"
    expect_fail2 "split model: missing third file" $PITH inspect "$TMP/sp-00001-of-00003.gguf"
    $MK "$TMP/r1.gguf" --seed 5 && $MK "$TMP/r2.gguf" --seed 5 && $MK "$TMP/r3.gguf" --seed 6
    if cmp -s "$TMP/r1.gguf" "$TMP/r2.gguf" && ! cmp -s "$TMP/r1.gguf" "$TMP/r3.gguf"; then ok "mkmodel is deterministic per seed"
    else not_ok "mkmodel is deterministic per seed"; fi
    $MK "$TMP/x.gguf" --type q3_k 2>"$TMP/err"; st=$?
    if [ $st -eq 2 ] && [ "$(wc -l <"$TMP/err")" -eq 1 ]; then ok "mkmodel: bad type refused"; else not_ok "mkmodel: bad type: status $st"; fi
else
    not_ok "$MK missing: build it (make $MK)"
fi
finish
