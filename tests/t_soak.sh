# Soak: `pith chat` generates 20,000 tokens over 100 turns in a context of
# 128 positions, so the KV cache shifts well over a hundred times, and
# memory must not grow: VmRSS after the first 10 turns (cache filled and
# shifted, every page touched) and after all 100 differ by at most 64 KiB
# (stdio buffers; the arena is mapped once), VmHWM too. No error may occur.
# Runs the release binary ./pith (ASan's shadow memory and quarantine
# would measure the sanitizer, not pith), on the Q8_0 fixture model: what
# is soaked (the session, the chat template, the context shifts of an F16
# cache, the memory) does not depend on the weights' type, and its 20,000
# tokens cost a quarter of the F32 model's CPU time (6 s, not 26, on a Xeon).
. tests/lib.sh
P=./pith
M=$FIX/models/tiny-qwen3-Q8_0.gguf
TURNS=100
REPLY=200
[ -x "$P" ] || { not_ok "soak: ./pith is not built (make pith)"; finish; }

kib() { sed -n "s/^$1:[[:space:]]*\([0-9]*\) kB/\1/p" "/proc/$2/status"; }
turns_done() { grep -c '^\[turn ' "$TMP/soak.err"; }
start=$(date +%s)
wait_turns() { # N: wait until N turns are done (or the process ended, or 10 minutes passed: a hang)
    while [ "$(turns_done)" -lt "$1" ] && kill -0 $pid 2>/dev/null; do
        if [ $(($(date +%s) - start)) -gt 600 ]; then kill $pid; not_ok "soak: no progress after 10 minutes"; break; fi
        sleep 0.2
    done
}

mkfifo "$TMP/in"
$P chat "$M" -c 128 -n $REPLY --ignore-eos --temp 1 --seed 11 -t 1 --kv-type f16 <"$TMP/in" >"$TMP/soak.out" 2>"$TMP/soak.err" &
pid=$!
exec 3>"$TMP/in"
i=1
while [ $i -le 10 ]; do echo "Tell me about the weather, number $i." >&3; i=$((i + 1)); done
wait_turns 10
rss0=$(kib VmRSS $pid); hwm0=$(kib VmHWM $pid)
while [ $i -le $TURNS ]; do echo "Tell me about the weather, number $i." >&3; i=$((i + 1)); done
wait_turns $TURNS
rss1=$(kib VmRSS $pid); hwm1=$(kib VmHWM $pid)
exec 3>&-
wait $pid; st=$?

generated=$(sed -n 's/.* \([0-9]*\) generated at .*/\1/p' "$TMP/soak.err" | awk '{ s += $1 } END { print s + 0 }')
shifts=$(grep -c '^\[context full: dropped' "$TMP/soak.err")
[ $st -eq 0 ] && ok "soak: chat exits cleanly after $TURNS turns" || not_ok "soak: status $st: $(grep -v '^\[' "$TMP/soak.err" | head -3)"
[ "$generated" -eq $((TURNS * REPLY)) ] && ok "soak: $generated tokens generated" || not_ok "soak: $generated tokens generated"
[ "$shifts" -ge 100 ] && ok "soak: $shifts context shifts" || not_ok "soak: only $shifts context shifts"
others=$(grep -v -e '^\[turn ' -e '^\[context full: dropped' "$TMP/soak.err" | head -3)
[ -z "$others" ] && ok "soak: no error or warning on stderr" || not_ok "soak: stderr: $others"
if [ -n "$rss0" ] && [ -n "$rss1" ] && [ $((rss1 - rss0)) -le 64 ] && [ $((hwm1 - hwm0)) -le 64 ]; then
    ok "soak: memory flat (VmRSS $rss0 -> $rss1 kB, VmHWM $hwm0 -> $hwm1 kB)"
else not_ok "soak: memory grew (VmRSS $rss0 -> $rss1 kB, VmHWM $hwm0 -> $hwm1 kB)"; fi
finish
