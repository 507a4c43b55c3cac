#!/bin/sh
# bench_slots.sh [MODEL ...] - aggregate generated tokens/s of `pith serve
# --slots 4` with 1, 2 and 4 clients at once (tests/serve/slots_bench.mjs),
# then llama.cpp with 1, 2 and 4 sequences in one context on the same file
# right after (tests/llamacpp/slots.mjs, node-llama-cpp from
# tests/llamacpp/install.sh); and the worst gap between two tokens of a
# running reply while another client sends a 1,000-token prompt. 2 threads
# (THREADS=), 64 tokens per reply (GEN=). The CPU and the load average are
# printed next to each figure: the machine may be shared. A benchmark, not a
# test. Default models: make bench's Qwen3-0.6B-shaped Q4_0 and Q8_0 files.
THREADS=${THREADS:-2}
GEN=${GEN:-64}
REPS=${REPS:-3}
[ $# -gt 0 ] || set -- build/bench-qwen3-0.6b-q4_0.gguf build/bench-qwen3-0.6b-q8_0.gguf
sh tests/llamacpp/install.sh || exit 1
echo "# CPU: $(lscpu | sed -n 's/^Model name:[[:space:]]*//p'), $(nproc) cores"
for m in "$@"; do
    echo "## $m"
    ./pith serve "$m" --port 0 -t "$THREADS" --slots 4 -c 1024 --ignore-eos 2>/tmp/bench_slots.$$.err &
    pid=$!
    port=
    i=0
    while [ $i -lt 300 ] && [ -z "$port" ]; do
        sleep 0.1
        port=$(sed -n 's|^pith serve: .* on http://127\.0\.0\.1:\([0-9]*\)/v1 .*|\1|p' /tmp/bench_slots.$$.err)
        i=$((i + 1))
    done
    for n in 1 2 4; do
        echo "$(node tests/serve/slots_bench.mjs "$port" $n -n "$GEN" -r "$REPS") | load:$(uptime | sed 's/.*load average://')"
    done
    echo "$(node tests/serve/slots_bench.mjs "$port" 1 -n 48 -long 1000) | load:$(uptime | sed 's/.*load average://')"
    kill $pid; wait $pid 2>/dev/null
    rm -f /tmp/bench_slots.$$.err
    for n in 1 2 4; do
        echo "$(node build/node-llama-cpp/slots.mjs "$m" $n -n "$GEN" -t "$THREADS" -r "$REPS") | load:$(uptime | sed 's/.*load average://')"
    done
done
