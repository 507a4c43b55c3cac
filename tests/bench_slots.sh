#!/bin/sh
# bench_slots.sh [MODEL ...] - aggregate generated tokens/s of `pith serve
# --slots 4` with 1, 2 and 4 clients at once (tests/serve/slots_bench.mjs),
# then llama.cpp on the same file right after: the native llama-server
# (--parallel 4, continuous batching, the same clients and requests) when
# $LLAMA_SERVER or ~/.cache/llamacpp-native/build/bin/llama-server exists
# (../shared/tools/llamacpp/build.sh's build dir configured with
# -DLLAMA_BUILD_SERVER=ON, target llama-server), else node-llama-cpp with
# 1, 2 and 4 sequences in one context (tests/llamacpp/slots.mjs, from
# tests/llamacpp/install.sh); and the worst gap between two tokens of a
# running reply while another client sends a 1,000-token prompt (both
# servers). 2 threads (THREADS=), 64 tokens per reply (GEN=). The CPU and
# the load average are printed next to each figure: the machine may be
# shared. A benchmark, not a test. Default models: make bench's
# Qwen3-0.6B-shaped Q4_0 and Q8_0 files.
THREADS=${THREADS:-2}
GEN=${GEN:-64}
REPS=${REPS:-3}
LLAMA_SERVER=${LLAMA_SERVER:-$HOME/.cache/llamacpp-native/build/bin/llama-server}
[ $# -gt 0 ] || set -- build/bench-qwen3-0.6b-q4_0.gguf build/bench-qwen3-0.6b-q8_0.gguf
[ -x "$LLAMA_SERVER" ] || sh tests/llamacpp/install.sh || exit 1
echo "# CPU: $(lscpu | sed -n 's/^Model name:[[:space:]]*//p'), $(nproc) cores"

# llama-server on MODEL: 4 slots of 1024 positions, THREADS threads, replies
# never stop at an end token (as pith's --ignore-eos); the same clients.
llama_server() {
    lport=$(node -e 'const s=require("net").createServer().listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})')
    "$LLAMA_SERVER" -m "$1" --host 127.0.0.1 --port "$lport" -t "$THREADS" -tb "$THREADS" --parallel 4 \
        --cont-batching -c 4096 --ignore-eos >/tmp/bench_slots.$$.llama 2>&1 &
    lpid=$!
    i=0
    until curl -sf -m 2 "http://127.0.0.1:$lport/health" >/dev/null 2>&1; do
        sleep 0.2
        i=$((i + 1))
        if [ $i -gt 600 ] || ! kill -0 $lpid 2>/dev/null; then
            echo "llama-server did not start:"; tail -n 5 /tmp/bench_slots.$$.llama; kill $lpid 2>/dev/null; return 1
        fi
    done
    echo "# llama-server: $("$LLAMA_SERVER" --version 2>&1 | grep -m1 version)"
    for n in 1 2 4; do
        echo "llama-server $n clients: $(node tests/serve/slots_bench.mjs "$lport" $n -n "$GEN" -r "$REPS" | sed 's/^pith [0-9]* clients: //') | load:$(uptime | sed 's/.*load average://')"
    done
    echo "llama-server: $(node tests/serve/slots_bench.mjs "$lport" 1 -n 48 -long 1000 | sed 's/^pith: //') | load:$(uptime | sed 's/.*load average://')"
    kill $lpid; wait $lpid 2>/dev/null
    rm -f /tmp/bench_slots.$$.llama
}

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
    if [ -x "$LLAMA_SERVER" ]; then
        llama_server "$m"
        continue
    fi
    for n in 1 2 4; do
        echo "$(node build/node-llama-cpp/slots.mjs "$m" $n -n "$GEN" -t "$THREADS" -r "$REPS") | load:$(uptime | sed 's/.*load average://')"
    done
done
