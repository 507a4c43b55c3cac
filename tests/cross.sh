#!/bin/sh
# cross.sh - every static target and board build, run under qemu-user with an
# explicit CPU (the oldest and the newest core each binary must serve), on
# the fixtures: --version (the CPU features it finds must be the emulated
# CPU's), inspect, tokenizer vectors, greedy ids and logits within the
# fixtures' tolerances (their README, section 6). Builds what it needs first. Prints ok/not ok lines
# and a last line "N passed, N failed"; exit status 0 only if all passed.
#
#   sh tests/cross.sh            (or: make cross-test)
#   CROSS_ONLY=armv6 sh tests/cross.sh    only the configurations matching
#
# Not part of `make test` (a few minutes of emulation); .ci/run calls it.
cd "$(dirname "$0")/.." || exit 1
. tests/lib.sh
export OMP_WAIT_POLICY=passive
# the comparison is arithmetic on data: the release cmplogits gives the same
# verdicts (t_logits.sh runs the ASan one)
CMP=${CMP:-build/rel/tools/cmplogits}
M=$FIX/models
T=$FIX/tokenizer
JOBS=${JOBS:-$(nproc 2>/dev/null || echo 2)}
start=$(date +%s)
: >"$TMP/log"
# as in lib.sh, and counted for the totals line
ok()     { echo "ok - $*" | tee -a "$TMP/log"; }
not_ok() { echo "not ok - $*" | tee -a "$TMP/log"; failures=$((failures + 1)); }

# ---- build ------------------------------------------------------------------
TARGETS="x86_64-linux-musl aarch64-linux-musl armv7-linux-musleabihf armv6-linux-musleabi"
BOARDS="rpi-zero rpi-zero2w rpi3 rpi4 rpi5 x86_64"
build() { # NAME MAKE-ARGS...
    name=$1; shift
    if make -s -j"$JOBS" "$@" >"$TMP/build" 2>&1; then ok "build $name"
    else not_ok "build $name: $(grep -m3 -E 'error|Error' "$TMP/build" | tr '\n' ' ' | head -c 400)"; fi
}
build "native ./pith, cmplogits and mkmodel" pith "$CMP" build/rel/tools/mkmodel
for t in $TARGETS; do build "$t" TARGET="$t"; done
build "aarch64 test_forward" TARGET=aarch64-linux-musl build/aarch64-linux-musl/tests/test_forward
for b in $BOARDS; do build "board $b" BOARD="$b"; done
# The host build (glibc, dynamic) is the reference for inspect's output; a
# private copy, so a rebuild of ./pith during the run cannot disturb it.
cp ./pith "$TMP/native" 2>/dev/null
NATIVE=$TMP/native
cp "$CMP" "$TMP/cmplogits" 2>/dev/null && CMP=$TMP/cmplogits
echo "# builds done after $(($(date +%s) - start)) s"

# The whole forward pass on the A76 (tests/test_forward.c: every fixture
# case's logits and greedy ids with their tolerances, threads, steps, the
# read backend, caches, two sequences, synthetic models of every
# architecture; about 150 CPU s of qemu), started now beside the suites
# below, which run one program at a time; its result is the A76 suite's
# (kind forward). It writes its gemma3 and lfm2 models with the host's
# mkmodel.
FWD_LABEL="aarch64 cortex-a76" FWD_PID=
if [ -z "${CROSS_ONLY:-}" ] || echo "$FWD_LABEL" | grep -q -- "$CROSS_ONLY"; then
    PITH_MKMODEL=build/rel/tools/mkmodel qemu-aarch64-static -cpu cortex-a76 build/aarch64-linux-musl/tests/test_forward \
        >"$TMP/fwd.out" 2>&1 &
    FWD_PID=$!
fi
forward_result() { # LABEL
    if [ -z "$FWD_PID" ]; then not_ok "$1: test_forward was not started"; return; fi
    wait "$FWD_PID"
    st=$?
    n_ok=$(grep -c '^ok - ' "$TMP/fwd.out")
    n_bad=$(grep -c '^not ok - ' "$TMP/fwd.out")
    if [ "$st" -eq 0 ] && [ "$n_bad" -eq 0 ] && [ "$n_ok" -gt 0 ]; then
        ok "$1: test_forward (every fixture case's logits and greedy ids, threads, steps, caches, two sequences, synthetic models): $n_ok checks pass"
    else not_ok "$1: test_forward: status $st, $n_bad failed: $(grep -m5 '^not ok' "$TMP/fwd.out" | tr '\n' '|')"; fi
}

# ---- one-time facts about each target binary ------------------------------------
mkvar() { make -s --no-print-directory TARGET="$1" "print-$2"; }
for t in $TARGETS; do
    bin=build/$t/pith
    [ -x "$bin" ] || continue
    if file "$bin" | grep -q 'statically linked'; then ok "$t: statically linked"
    else not_ok "$t: not static: $(file "$bin")"; fi
    if readelf -rW "$bin" | grep -q IRELATIVE; then not_ok "$t: has IRELATIVE relocations"
    else ok "$t: no IFUNC relocations (musl would not resolve them)"; fi
    if nm "$bin" | grep -q ' T GOMP_parallel$'; then ok "$t: OpenMP linked in"
    else not_ok "$t: no GOMP_parallel in the binary"; fi
    # dist size: stripped, under 640 KiB (512 KiB until the Jinja interpreter of issue 34)
    if $(mkvar "$t" CROSS_STRIP) -o "$TMP/stripped" "$bin" 2>"$TMP/err"; then
        size=$(stat -c %s "$TMP/stripped")
        if [ "$size" -le 655360 ]; then ok "$t: stripped size $size bytes (<= 640 KiB)"
        else not_ok "$t: stripped size $size bytes > 640 KiB"; fi
    else not_ok "$t: strip: $(head -c 200 "$TMP/err")"; fi
    # the glue's implicit tasks (port/musl_gomp_task.c, in place of libgomp's
    # task.o) against the real task.o of the target's libgomp.a
    objcopy=$(mkvar "$t" CROSS_STRIP | sed 's/strip$/objcopy/')
    if sh tests/static/gomp_task.sh "$(mkvar "$t" CROSS_CC) $(mkvar "$t" TARGET_CFLAGS)" "$objcopy" \
        $(mkvar "$t" QEMU) >"$TMP/gt" 2>&1; then ok "$t: gomp_init_task/gomp_end_task of the glue equal task.o's: $(cat "$TMP/gt")"
    else not_ok "$t: gomp_task: $(cat "$TMP/gt")"; fi
    # ARM: loadable segments aligned for 16 KiB (Pi 5) and 64 KiB pages
    case $t in
        x86_64*) ;;
        *) aligns=$(readelf -lW "$bin" | awk '$1 == "LOAD" { print $NF }')
           small=0
           for a in $aligns; do [ $((a)) -ge 65536 ] || small=1; done
           if [ -n "$aligns" ] && [ $small -eq 0 ]; then ok "$t: LOAD segments aligned to 64 KiB (loads on 16 KiB-page kernels)"
           else not_ok "$t: LOAD segment alignments $(echo $aligns), below 64 KiB"; fi ;;
    esac
done

# ---- helpers for the per-CPU suites -------------------------------------------------
field() { awk -F'\t' -v c="$1" -v k="$2" '$1 == c { print $k }' "$FIX/cases.tsv"; }
note() { field "$1" 6 | tr ';' '\n' | sed -n "s/^$2=//p"; }

# Splits the tokenizer vector into $TMP/vec/NNN (texts) once; .out gives the ids.
mkdir -p "$TMP/vec"
inp=$(cd "$T" && pwd)/ggml-vocab-qwen2.gguf.inp
(cd "$TMP/vec" && csplit -s -f p -n 3 "$inp" '/^__ggml_vocab_test__$/' '{*}')
n_vec=0
for p in "$TMP"/vec/p*; do
    [ "$(basename "$p")" = p000 ] && first=1 || first=0
    if [ "$first" -eq 1 ]; then head -c -1 "$p"; else tail -n +2 "$p" | head -c -1; fi >"$TMP/vec/t$(basename "$p" | cut -c2-)"
    rm -f "$p"
done
# the last piece is the final separator alone: not a text
last=$(ls "$TMP"/vec/t* | tail -1); rm -f "$last"
n_vec=$(ls "$TMP"/vec/t* | wc -l)
if [ "$n_vec" -eq "$(wc -l <"$T/ggml-vocab-qwen2.gguf.out")" ] && [ "$n_vec" -eq 46 ]; then ok "tokenizer vector split into $n_vec texts"
else not_ok "tokenizer vector: $n_vec texts, $(wc -l <"$T/ggml-vocab-qwen2.gguf.out") expected lines"; fi

GREEDY="pub_tq3_f32_greedy_once pub_tq3_untied_f16_greedy_r08 pub_tq3_Q8_0_greedy_r08 pub_tq3_Q4_0_greedy_r01
        pub_tq3_Q4_K_M_greedy_r08 pub_tq3_Q6_K_greedy_r08 pub_stories_greedy_once pub_stories_f16_greedy_lily"
LOGITS="pub_tq3_f32_logits_r16 pub_tq3_untied_f16_logits_r05 pub_tq3_Q8_0_logits_r05 pub_tq3_Q4_0_logits_r05
        pub_tq3_Q4_K_M_logits_r05 pub_tq3_Q6_K_logits_r05 pub_stories_logits_tom_ball pub_stories_f16_logits_tom_ball"

# every weight type, five positions each
LOGITS_SHORT="pub_tq3_f32_logits_r05 pub_tq3_untied_f16_logits_r05 pub_tq3_Q8_0_logits_r05 pub_tq3_Q4_0_logits_r05
        pub_tq3_Q4_K_M_logits_r05 pub_tq3_Q6_K_logits_r05 pub_stories_logits_tom_ball pub_stories_f16_logits_tom_ball"

greedy() { # LABEL CASE [pith options...]
    label=$1 c=$2; shift 2
    prefix=$(note "$c" exact_prefix)
    want=$(field "$c" 5 | cut -d, -f1-"$prefix")
    got=$($RUN run "$M/$(field "$c" 2)" --prompt-ids "$(field "$c" 4)" -n 32 --temp 0 --kv-type f32 --print-ids "$@" \
        2>"$TMP/err")
    if [ "$prefix" -ge 1 ] && [ "$(echo "$got" | cut -d, -f1-"$prefix")" = "$want" ]; then
        ok "$label: greedy $c: first $prefix ids equal the reference"
    else not_ok "$label: greedy $c (prefix $prefix): got '$got' want '$want' $(head -c 200 "$TMP/err")"; fi
}
logits() { # LABEL CASE [pith options...]
    label=$1 c=$2; shift 2
    rm -f "$TMP/l.f32"
    if $RUN logits "$M/$(field "$c" 2)" --prompt-ids "$(field "$c" 4)" --out "$TMP/l.f32" --kv-type f32 "$@" \
        >/dev/null 2>"$TMP/err" && "$CMP" "$c" "$TMP/l.f32" >"$TMP/cmp" 2>&1; then
        ok "$label: logits $(cat "$TMP/cmp")"
    else not_ok "$label: logits $c $*: $(head -c 200 "$TMP/err") $(cat "$TMP/cmp" 2>/dev/null)"; fi
}
has_word() { echo " $1 " | grep -q " $2 "; }

# suite LABEL BIN QEMU CPU TARGET FOUND NOT_FOUND KIND
#   QEMU "-" runs natively; FOUND/NOT_FOUND: CPU features --version must
#   report (or not); KIND: full (every check), forward (full, with
#   test_forward on that CPU in place of the fixture cases' greedy ids and
#   logits: it checks every one of them with the same objects, and more),
#   kernels (logits of every
#   weight type, two greedy runs, threads), quick (one greedy, two logits),
#   version (--version only).
suite() {
    label=$1 bin=$2 qemu=$3 cpu=$4 target=$5 found=$6 notfound=$7 kind=$8
    if [ -n "${CROSS_ONLY:-}" ] && ! echo "$label" | grep -q -- "$CROSS_ONLY"; then return; fi
    if [ ! -x "$bin" ]; then not_ok "$label: $bin was not built"; return; fi
    if [ "$qemu" = - ]; then RUN=$bin; else RUN="$qemu -cpu $cpu $bin"; fi
    t0=$(date +%s)

    # --version: target, and features found = the emulated CPU's
    if $RUN --version >"$TMP/ver" 2>"$TMP/err"; then
        have=$(sed -n 's/^features found: //p' "$TMP/ver")
        compiled=$(sed -n 's/^features compiled in: \([^(]*\).*/\1/p' "$TMP/ver")  # the words before the note in parentheses
        bad=
        grep -q "^target: $target " "$TMP/ver" || bad="$bad target-line"
        for f in $found; do has_word "$have" "$f" || bad="$bad missing:$f"; done
        for f in $notfound; do has_word "$have" "$f" && bad="$bad unexpected:$f"; done
        for f in $compiled; do [ "$f" = sse2 ] || has_word "$have" "$f" || bad="$bad compiled-but-absent:$f"; done
        if [ -z "$bad" ]; then ok "$label: --version finds '$have' (compiled in: $compiled)"
        else not_ok "$label: --version:$bad: $(tr '\n' '|' <"$TMP/ver")"; fi
    else not_ok "$label: --version: $(head -c 300 "$TMP/err")"; return; fi
    [ "$kind" = version ] && return

    if [ "$kind" = full ] || [ "$kind" = forward ]; then
        # inspect: the same report as the native build, for every model and vocab
        nbad=0 n=0
        for f in "$M"/*.gguf "$T"/*.gguf; do
            n=$((n + 1))
            if $RUN inspect "$f" --tensors >"$TMP/a" 2>"$TMP/err" && $NATIVE inspect "$f" --tensors >"$TMP/b" 2>/dev/null &&
                cmp -s "$TMP/a" "$TMP/b"; then :
            else
                nbad=$((nbad + 1))
                not_ok "$label: inspect $(basename "$f") differs from the native build: $(head -c 200 "$TMP/err")"
            fi
        done
        [ $nbad -eq 0 ] && ok "$label: inspect --tensors of all $n fixture models and vocabs equals the native build's"
        if $RUN inspect "$M/tiny-qwen3-Q4_K_M.gguf" --no-mmap --tensors >"$TMP/a" 2>"$TMP/err" &&
            $NATIVE inspect "$M/tiny-qwen3-Q4_K_M.gguf" --tensors >"$TMP/b" && cmp -s "$TMP/a" "$TMP/b"; then
            ok "$label: inspect --no-mmap"
        else not_ok "$label: inspect --no-mmap: $(head -c 200 "$TMP/err")"; fi
        # tokenizer: every text of the qwen2 vector gives llama.cpp's ids
        i=0 nbad=0
        for txt in "$TMP"/vec/t*; do
            i=$((i + 1))
            want=$(sed -n "${i}p" "$T/ggml-vocab-qwen2.gguf.out" | sed 's/^ //')
            got=$($RUN tokenize "$T/ggml-vocab-qwen2.gguf" --file "$txt" 2>"$TMP/err")
            if [ "$got" != "$want" ]; then
                nbad=$((nbad + 1))
                [ $nbad -le 3 ] && echo "# $label: vector text $i: got '$got' want '$want' $(head -c 200 "$TMP/err")"
            fi
        done
        if [ $nbad -eq 0 ]; then ok "$label: tokenize: all $i texts of the qwen2 vector give the reference ids"
        else not_ok "$label: tokenize: $nbad of $i texts differ"; fi
        want=$(tr ',' ' ' <"$FIX/chat/pub_chat_multi_turn_think.ids" | tr -d '\n')
        got=$($RUN tokenize "$T/qwen3-vocab.gguf" --file "$FIX/chat/pub_chat_multi_turn_think.txt" --no-mmap 2>"$TMP/err")
        if [ "$got" = "$want" ]; then ok "$label: tokenize chat rendering (special tokens, --no-mmap)"
        else not_ok "$label: tokenize chat rendering: $(head -c 200 "$TMP/err")"; fi
        if [ "$kind" = full ]; then
            for c in $GREEDY; do greedy "$label" "$c" -t 1; done
            for c in $LOGITS; do logits "$label" "$c" -t 1; done
        else forward_result "$label"; fi
        # OpenMP threads, the read backend and small steps
        logits "$label" pub_tq3_Q4_K_M_logits_r16 -t 3 --no-mmap -b 5
        greedy "$label" pub_tq3_Q8_0_greedy_r01 -t 2
    elif [ "$kind" = kernels ]; then
        # the matmul kernels only, on short prompts: qemu emulates AVX2 about
        # 20 times slower than SSE2 (a 32-step F32 greedy run takes 40 s)
        for c in $LOGITS_SHORT; do logits "$label" "$c" -t 1; done
        greedy "$label" pub_tq3_Q4_K_M_greedy_r08 -t 1
        greedy "$label" pub_stories_f16_greedy_lily -t 2
        logits "$label" pub_tq3_Q4_K_M_logits_r16 -t 3 --no-mmap -b 5
    else
        greedy "$label" pub_tq3_f32_greedy_once -t 2
        logits "$label" pub_tq3_Q4_K_M_logits_r05 -t 2
        logits "$label" pub_stories_f16_logits_tom_ball -t 1
    fi
    echo "# $label: $(($(date +%s) - t0)) s"
}

host_flags=
for f in avx2 fma f16c; do grep -qw "$f" /proc/cpuinfo && host_flags="$host_flags $f"; done
host_lacks=
for f in avx2 fma f16c; do has_word "$host_flags" "$f" || host_lacks="$host_lacks $f"; done

X=build/x86_64-linux-musl/pith A=build/aarch64-linux-musl/pith
V7=build/armv7-linux-musleabihf/pith V6=build/armv6-linux-musleabi/pith
#     label                     binary  qemu                 cpu         target                  found                    not found            kind
suite "x86_64 native"           $X      -                    host        x86_64-linux-musl       "$host_flags"            "$host_lacks"        full
suite "x86_64 Nehalem"          $X      qemu-x86_64-static   Nehalem     x86_64-linux-musl       ""                       "avx2 fma f16c"      full
suite "x86_64 Haswell"          $X      qemu-x86_64-static   Haswell     x86_64-linux-musl       "avx2 fma f16c"          "avx512vnni"         kernels
suite "aarch64 cortex-a53"      $A      qemu-aarch64-static  cortex-a53  aarch64-linux-musl      "neon"                   "dotprod fp16 i8mm"  full
suite "aarch64 cortex-a76"      $A      qemu-aarch64-static  cortex-a76  aarch64-linux-musl      "neon dotprod fp16"      "i8mm"               forward
suite "aarch64 max"             $A      qemu-aarch64-static  max         aarch64-linux-musl      "neon dotprod fp16 i8mm" ""                   version
suite "armv7 cortex-a7"         $V7     qemu-arm-static      cortex-a7   armv7-linux-musleabihf  "vfp vfpv4 neon"         "dotprod i8mm"       full
suite "armv6 arm1176"           $V6     qemu-arm-static      arm1176     armv6-linux-musleabi    "vfp"                    "vfpv4 neon"         full
# Larger pages, as a Pi 5 kernel (16 KiB) or an ARM server (64 KiB) has:
# qemu -p sets the page size the program sees (AT_PAGESZ, mmap granularity).
suite "aarch64 cortex-a53, 64 KiB pages" $A "qemu-aarch64-static -p 65536" cortex-a53 aarch64-linux-musl "neon" "dotprod" quick
suite "armv7 cortex-a7, 16 KiB pages" $V7 "qemu-arm-static -p 16384" cortex-a7 armv7-linux-musleabihf "neon vfpv4" "" quick

# Board builds: tuned, never more than their target allows, so each runs on
# the oldest CPU of its target (the rpi5 build on a Cortex-A53 too).
board() { # BOARD QEMU CPU TARGET NAME-LINE [LABEL-SUFFIX]
    blabel="board $1 on $3${6:-}"
    suite "$blabel" "build/$1/pith" "$2" "$3" "$4" "" "" quick
    if [ -n "${CROSS_ONLY:-}" ] && ! echo "$blabel" | grep -q -- "$CROSS_ONLY"; then return; fi
    if grep -q "^board: $5$" "$TMP/ver"; then ok "$blabel: --version shows '$5'"
    else not_ok "$blabel: --version board line: $(grep '^board' "$TMP/ver")"; fi
}
board rpi-zero   qemu-arm-static     arm1176    armv6-linux-musleabi "rpi-zero (threads 1, context 1024, memory 320 MiB)"
board rpi-zero2w qemu-aarch64-static cortex-a53 aarch64-linux-musl   "rpi-zero2w (threads 4, context 2048, memory 320 MiB)"
board rpi3       qemu-aarch64-static cortex-a53 aarch64-linux-musl   "rpi3 (threads 4, context 4096, memory 640 MiB)"
board rpi4       qemu-aarch64-static cortex-a72 aarch64-linux-musl   "rpi4 (threads 4, context 4096, memory 75% of RAM)"
board rpi5       "qemu-aarch64-static -p 16384" cortex-a76 aarch64-linux-musl "rpi5 (threads 4, context 8192, memory 75% of RAM)" \
    ", 16 KiB pages"
board rpi5       qemu-aarch64-static cortex-a53 aarch64-linux-musl   "rpi5 (threads 4, context 8192, memory 75% of RAM)"
board x86_64     qemu-x86_64-static  Nehalem    x86_64-linux-musl    "x86_64 (threads all [0-9]* cores, context 4096, memory 75% of RAM)"

passed=$(grep -c '^ok - ' "$TMP/log")
failed=$(grep -c '^not ok - ' "$TMP/log")
echo "cross: finished in $(($(date +%s) - start)) s"
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
