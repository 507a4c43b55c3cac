# pith serve --slots N: requests generated together in one forward pass per
# step. Each greedy reply given while N requests run at once must equal,
# byte for byte, the reply the same request gets alone (F32 KV cache; the
# batched step keeps each sequence's arithmetic, so it is bit for bit);
# prefix reuse goes to the slot holding the conversation; a client leaving
# mid-stream frees its slot; /slots, /metrics; the plan and its refusal.
#
# The replies alone (the references) come from the release build (./pith,
# as t_grammar.sh) with the same options: the same bytes as the ASan
# build's (the comparisons below hold between the two builds), where the
# ASan build spent a third of its time on them and checked no more code
# (one request at a time goes through it in t_serve.sh, and here whenever
# one of the requests at once is left alone); the requests at once stay
# on the ASan build.
. tests/lib.sh
. tests/serve_lib.sh
# The replies are read by jget's node, one for the script (a node per
# reading was 15 starts of ~0.17 CPU s); paths_json FILE... gives it the
# list of files as r.
. tests/jget_lib.sh
paths_json() { _j=; for _f; do _j=$_j${_j:+,}\"$_f\"; done; printf '[%s]' "$_j" >"$TMP/paths.json"; }
REL=${PITH_REL:-./pith}
[ -x "$REL" ] || { not_ok "$REL is not built (make pith)"; finish; }

start_server() { model=$1; shift; serve_start "$PITH" "$model" "$@"; } # MODEL [options]
# the release build's server, for the replies alone
alone_server() { model=$1; shift; serve_start "$REL" "$model" "$@"; } # MODEL [options]
post() { # OUT PATH JSON
    curl -s -m 60 -o "$1" -w '%{http_code}' -H 'Content-Type: application/json' --data-binary "$3" "$URL$2"
}
metric() { curl -s -m 10 "$URL/metrics" | sed -n "s/^$1 //p"; }

# The requests: chat and raw completions, streamed or not, of different
# lengths, so that prompts are prefilled while other slots decode.
LONG=$(printf 'the quick brown fox jumps over the lazy dog %.0s' $(seq 1 12))
req() { # I -> JSON
    case $1 in
    0) echo '{"messages":[{"role":"user","content":"Hi there"}],"temperature":0,"max_tokens":24}' ;;
    1) echo '{"prompt":"Once upon a time","temperature":0,"max_tokens":30,"stream":true}' ;;
    2) echo "{\"prompt\":\"$LONG\",\"temperature\":0,\"max_tokens\":20}" ;;
    3) echo '{"messages":[{"role":"system","content":"Be brief."},{"role":"user","content":"Count to ten"}],"temperature":0,"max_tokens":28,"stream":true}' ;;
    4) echo '{"prompt":"1, 2, 3,","temperature":0,"max_tokens":16}' ;;
    5) echo "{\"messages\":[{\"role\":\"user\",\"content\":\"$LONG\"}],\"temperature\":0,\"max_tokens\":22}" ;;
    esac
}
path() { case $1 in 1 | 2 | 4) echo /v1/completions ;; *) echo /v1/chat/completions ;; esac; }
# Replies' texts without ids and timings: content (or the stream's deltas)
# and finish_reason, one JSON string a line per FILE.
texts_of() { # FILE...
    paths_json "$@"
    jget "$TMP/paths.json" '
r.map(f => {
  try {
    const s = require("fs").readFileSync(f, "utf8");
    let out = "";
    if (s.startsWith("data: ")) {
      for (const l of s.split("\n")) {
        if (!l.startsWith("data: ") || l === "data: [DONE]") continue;
        const c = JSON.parse(l.slice(6)).choices[0];
        if (!c) continue;
        out += (c.delta ? (c.delta.content || "") + (c.delta.reasoning_content || "") : c.text || "") + (c.finish_reason ? "|" + c.finish_reason : "");
      }
    } else {
      const c = JSON.parse(s).choices[0];
      out = (c.message ? (c.message.reasoning_content || "") + c.message.content : c.text) + "|" + c.finish_reason;
    }
    return JSON.stringify(out);
  } catch (e) { return "ERROR " + f + ": " + e.message; }
}).join("\n") + "\n"'
}

for model in tiny-qwen3-f32.gguf tiny-qwen3-Q8_0.gguf; do
    M=$FIX/models/$model
    # alone: one request at a time
    alone_server "$M" --slots 4 -t 2 --kv-type f32 -c 512 --metrics
    [ -n "$PORT" ] || { not_ok "$model: release server did not start: $(cat "$TMP/server.err")"; continue; }
    for i in 0 1 2 3 4 5; do post "$TMP/alone$i" "$(path $i)" "$(req $i)" >/dev/null; done
    stop_server
    start_server "$M" --slots 4 -t 2 --kv-type f32 -c 512 --metrics
    [ -n "$PORT" ] || { not_ok "$model: server did not start: $(cat "$TMP/server.err")"; continue; }
    # all at once, twice (the first time on empty slots, the second with the
    # slots' caches holding other requests' prompts)
    s0=$(metric pith_forward_steps_total); g0=$(metric pith_tokens_generated_total)
    for round in a b; do
        pids=
        for i in 0 1 2 3 4 5; do post "$TMP/$round$i" "$(path $i)" "$(req $i)" >/dev/null & pids="$pids $!"; done
        for p in $pids; do wait "$p"; done
    done
    s1=$(metric pith_forward_steps_total); g1=$(metric pith_tokens_generated_total)
    same=0; diff=
    texts_of "$TMP"/alone[0-5] "$TMP"/a[0-5] "$TMP"/b[0-5] >"$TMP/texts"
    k=6
    for round in a b; do
        for i in 0 1 2 3 4 5; do
            k=$((k + 1)); a=$(sed -n "$((i + 1))p" "$TMP/texts"); b=$(sed -n "${k}p" "$TMP/texts")
            if [ -n "$a" ] && [ "$a" != '""' ] && [ "$a" = "$b" ]; then same=$((same + 1)); else diff="$diff $round$i:[$a] vs [$b]"; fi
        done
    done
    [ $same -eq 12 ] && ok "$model: 6 greedy requests at once on 4 slots (twice): every reply equals the same request alone" \
        || not_ok "$model: $same of 12 replies equal alone:$(echo "$diff" | head -c 600)"
    # batching happened: fewer forward steps than tokens generated
    steps=$((s1 - s0)); gen=$((g1 - g0))
    [ "$gen" -gt 0 ] && [ "$steps" -lt "$gen" ] && ok "$model: $gen tokens generated in $steps batched steps" \
        || not_ok "$model: $gen tokens in $steps steps: no batching"
    kill -0 "$SERVER" 2>/dev/null && ok "$model: server alive" || not_ok "$model: server died: $(tail -3 "$TMP/server.err")"
    if grep -q 'runtime error\|AddressSanitizer' "$TMP/server.err"; then not_ok "$model: sanitizer: $(grep -m1 'runtime error\|Sanitizer' "$TMP/server.err")"; fi
    stop_server
done

# Grammars and tool calls per slot: each slot holds its own grammar state,
# so two schema-held replies decode side by side, and a forced tool call runs
# beside a plain request. Every reply equals the same request alone; the
# schema replies parse and carry their required keys, the tool calls come
# back as message.tool_calls (or streamed deltas) with finish "tool_calls".
M=$FIX/models/tiny-qwen3-f32.gguf
PERSON='{"type":"object","properties":{"name":{"type":"string","maxLength":10},"age":{"type":"integer","minimum":0},"ok":{"type":"boolean"}},"required":["name","age","ok"],"additionalProperties":false}'
ENUMS='{"type":"object","properties":{"color":{"enum":["red","green","blue"]},"size":{"enum":[1,2,3,null]},"mode":{"const":"fast"}},"required":["color","size","mode"]}'
TOOLS='[{"type":"function","function":{"name":"get_weather","parameters":{"type":"object","properties":{"city":{"type":"string","maxLength":12},"unit":{"enum":["c","f"]}},"required":["city","unit"]}}},{"type":"function","function":{"name":"add","parameters":{"type":"object","properties":{"a":{"type":"integer"},"b":{"type":"integer"}},"required":["a","b"]}}}]'
greq() { # I -> JSON
    case $1 in
    0) echo "{\"messages\":[{\"role\":\"user\",\"content\":\"A person as JSON\"}],\"response_format\":{\"type\":\"json_schema\",\"json_schema\":{\"name\":\"person\",\"schema\":$PERSON}},\"temperature\":0,\"max_tokens\":200}" ;;
    1) echo "{\"messages\":[{\"role\":\"user\",\"content\":\"Pick a color\"}],\"response_format\":{\"type\":\"json_schema\",\"json_schema\":{\"name\":\"enums\",\"schema\":$ENUMS}},\"temperature\":0,\"max_tokens\":200,\"stream\":true}" ;;
    2) echo "{\"messages\":[{\"role\":\"user\",\"content\":\"Weather in Paris?\"}],\"tools\":$TOOLS,\"tool_choice\":\"required\",\"temperature\":0,\"max_tokens\":300}" ;;
    3) echo '{"messages":[{"role":"user","content":"Hi there"}],"temperature":0,"max_tokens":24}' ;;
    4) echo "{\"messages\":[{\"role\":\"user\",\"content\":\"Add two numbers\"}],\"tools\":$TOOLS,\"tool_choice\":{\"type\":\"function\",\"function\":{\"name\":\"add\"}},\"temperature\":0,\"max_tokens\":300,\"stream\":true}" ;;
    5) echo '{"prompt":"Once upon a time","temperature":0,"max_tokens":30,"stream":true}' ;;
    esac
}
gpath() { case $1 in 5) echo /v1/completions ;; *) echo /v1/chat/completions ;; esac; }
# Replies as one line each: content, reasoning, tool calls (name and
# arguments, ids left out), finish_reason.
shapes_of() { # FILE...
    paths_json "$@"
    jget "$TMP/paths.json" '
r.map(f => { try {
const s = require("fs").readFileSync(f, "utf8");
let content = null, reasoning = "", finish = null, calls = [];
if (s.startsWith("data: ")) {
  const ev = s.split("\n\n").filter(e => e.length);
  if (ev[ev.length - 1] !== "data: [DONE]") throw new Error("no [DONE]");
  for (const e of ev.slice(0, -1)) {
    const ch = JSON.parse(e.slice(6)).choices[0];
    if (!ch) continue;
    const d = ch.delta || {};
    const text = d.content !== undefined ? d.content : ch.text;
    if (typeof text === "string") content = (content || "") + text;
    reasoning += d.reasoning_content || "";
    for (const t of d.tool_calls || []) {
      const x = calls[t.index] ??= {name: "", arguments: ""};
      if (t.function.name) x.name += t.function.name;
      x.arguments += t.function.arguments || "";
    }
    if (ch.finish_reason) finish = ch.finish_reason;
  }
  if (content === "") content = null;
} else {
  const ch = JSON.parse(s).choices[0];
  content = ch.message ? ch.message.content : ch.text;
  if (content === "") content = null;
  reasoning = ch.message && ch.message.reasoning_content || "";
  calls = (ch.message && ch.message.tool_calls || []).map(t => {
    if (t.type !== "function" || !t.id) throw new Error("a tool call without id or type");
    return {name: t.function.name, arguments: t.function.arguments};
  });
  finish = ch.finish_reason;
}
return JSON.stringify({content, reasoning, calls, finish});
} catch (e) { return "ERROR " + f + ": " + e.message; } }).join("\n") + "\n"'
}
alone_server "$M" --slots 2 -t 1 --kv-type f32 -c 2048 --template qwen3
for i in 0 1 2 3 4 5; do post "$TMP/galone$i" "$(gpath $i)" "$(greq $i)" >/dev/null; done
stop_server
start_server "$M" --slots 2 -t 1 --kv-type f32 -c 2048 --template qwen3
if [ -z "$PORT" ]; then not_ok "grammar slots: server did not start: $(cat "$TMP/server.err")"; else
    # pairs at once on the 2 slots: two schemas; a forced call beside a plain reply (twice, streamed and not)
    for pair in "0 1" "2 3" "4 5"; do
        pids=
        for i in $pair; do post "$TMP/gpair$i" "$(gpath $i)" "$(greq $i)" >"$TMP/gcode$i" & pids="$pids $!"; done
        for p in $pids; do wait "$p"; done
    done
    same=0; diff=
    shapes_of "$TMP"/galone[0-5] "$TMP"/gpair[0-5] >"$TMP/shapes" 2>&1
    shape() { case $1 in alone*) sed -n "$((${1#alone} + 1))p" "$TMP/shapes" ;; *) sed -n "$((${1#pair} + 7))p" "$TMP/shapes" ;; esac; }
    for i in 0 1 2 3 4 5; do
        a=$(shape alone$i); b=$(shape pair$i)
        if [ "$(cat "$TMP/gcode$i")" = 200 ] && [ -n "$a" ] && [ "$a" = "$b" ]; then same=$((same + 1)); else diff="$diff $i:[$a] vs [$b]"; fi
    done
    [ $same -eq 6 ] && ok "grammar slots: 2 schema replies, a forced tool call beside a plain reply (streamed and not) at once equal each alone" \
        || not_ok "grammar slots: $same of 6 equal alone:$(echo "$diff" | head -c 900)"
    printf '[%s,%s]' "$(shape pair0)" "$(shape pair1)" >"$TMP/two.json"
    v=$(jget "$TMP/two.json" '
const a = r[0], b = r[1];
const pa = JSON.parse(a.content), pb = JSON.parse(b.content);
const okA = a.finish === "stop" && typeof pa.name === "string" && pa.name.length <= 10 && Number.isInteger(pa.age) && pa.age >= 0 && typeof pa.ok === "boolean" && Object.keys(pa).every(k => ["name","age","ok"].includes(k));
const okB = b.finish === "stop" && ["red","green","blue"].includes(pb.color) && [1,2,3,null].includes(pb.size) && pb.mode === "fast";
okA && okB ? "valid" : "invalid"' 2>&1)
    [ "$v" = valid ] && ok "grammar slots: both schema replies (one streamed) parse and validate" \
        || not_ok "grammar slots: schema replies $v: $(head -c 300 "$TMP/gpair0") $(head -c 300 "$TMP/gpair1")"
    printf '[%s,%s,%s]' "$(shape pair2)" "$(shape pair4)" "$(shape pair3)" >"$TMP/three.json"
    v=$(jget "$TMP/three.json" '
const [c, s, p] = r;
const args = x => { try { return typeof JSON.parse(x.arguments) === "object"; } catch (e) { return false; } };
const okC = c.finish === "tool_calls" && c.content === null && c.calls.length > 0 && c.calls.every(x => ["get_weather","add"].includes(x.name) && args(x));
const okS = s.finish === "tool_calls" && s.calls.length === 1 && s.calls[0].name === "add" && args(s.calls[0]) && Number.isInteger(JSON.parse(s.calls[0].arguments).a);
const okP = p.calls.length === 0 && typeof p.content === "string" && p.finish !== "tool_calls";
[okC, okS, okP].join(" ")' 2>&1)
    [ "$v" = "true true true" ] && ok "grammar slots: tool_calls with content null and finish tool_calls, streamed deltas of a named call, the plain reply beside them untouched" \
        || not_ok "grammar slots: tool calls $v: $(head -c 400 "$TMP/gpair2") $(head -c 400 "$TMP/gpair4")"
    kill -0 "$SERVER" 2>/dev/null && ok "grammar slots: server alive" || not_ok "grammar slots: server died: $(tail -3 "$TMP/server.err")"
    if grep -q 'runtime error\|AddressSanitizer' "$TMP/server.err"; then not_ok "grammar slots: sanitizer: $(grep -m1 'runtime error\|Sanitizer' "$TMP/server.err")"; fi
    stop_server
fi

# The architectures with per-sequence state beside (or instead of) a plain
# KV cache: their model made with mkmodel, served on 2 slots (-b 8, F32 KV),
# two prompts (one longer than gemma3's rings, one streamed) sent alone and
# then at once, twice: every greedy reply equals the same request alone.
# The second time each slot holds its prompt again: the caller checks what
# was reused ($c0, $c1: "cached/prompt" tokens of the second round).
W1=$(printf 'a long story about the sea and ships %.0s' $(seq 1 6))
W2=$(printf 'mountains rivers and old forests %.0s' $(seq 1 7))
wreq() { case $1 in
    0) echo "{\"prompt\":\"$W1\",\"temperature\":0,\"max_tokens\":30}" ;;
    1) echo "{\"prompt\":\"$W2\",\"temperature\":0,\"max_tokens\":4,\"stream\":true}" ;;
    esac; }
# cached FILE...: "cached/prompt" tokens of each reply (streamed or not),
# space separated
cached() { paths_json "$@"; jget "$TMP/paths.json" '
r.map(f => {
const s = require("fs").readFileSync(f, "utf8");
const u = s.startsWith("data: ") ? s.split("\n\n").filter(e => e.startsWith("data: {")).map(e => JSON.parse(e.slice(6))).filter(c => c.usage).pop().usage : JSON.parse(s).usage;
return u.prompt_tokens_details.cached_tokens + "/" + u.prompt_tokens; }).join(" ")'; }
# the models are data: the release mkmodel writes the same bytes, faster
# (t_inspect.sh runs the ASan one)
MK=${MK:-build/rel/tools/mkmodel}
slots_twice() { # NAME LABEL MIN_PROMPT_TOKENS MKMODEL_ARGS... -> 1 when mkmodel failed
    name=$1 label=$2 min_prompt=$3; shift 3
    model=$TMP/$name.gguf
    if ! "$MK" "$model" "$@" >"$TMP/mk.out" 2>&1; then not_ok "$name: mkmodel failed: $(head -c 300 "$TMP/mk.out")"; return 1; fi
    alone_server "$model" --slots 2 -b 8 -t 1 --kv-type f32 -c 256 --ignore-eos
    for i in 0 1; do post "$TMP/${name}alone$i" /v1/completions "$(wreq $i)" >/dev/null; done
    stop_server
    start_server "$model" --slots 2 -b 8 -t 1 --kv-type f32 -c 256 --ignore-eos
    for round in a b; do
        pids=
        for i in 0 1; do post "$TMP/$name$round$i" /v1/completions "$(wreq $i)" >/dev/null & pids="$pids $!"; done
        for p in $pids; do wait "$p"; done
    done
    same=0; diff=
    texts_of "$TMP/${name}alone0" "$TMP/${name}alone1" "$TMP/${name}a0" "$TMP/${name}a1" "$TMP/${name}b0" "$TMP/${name}b1" \
        >"$TMP/texts"
    k=2
    for f in a0 a1 b0 b1; do
        i=${f#?}; k=$((k + 1)); a=$(sed -n "$((i + 1))p" "$TMP/texts"); b=$(sed -n "${k}p" "$TMP/texts")
        if [ -n "$a" ] && [ "$a" != '""' ] && [ "$a" = "$b" ]; then same=$((same + 1)); else diff="$diff $f:[$a] vs [$b]"; fi
    done
    read -r n0 c0 c1 <<EOF
$(cached "$TMP/${name}alone0" "$TMP/${name}b0" "$TMP/${name}b1")
EOF
    n0=${n0#*/}
    [ $same -eq 4 ] && [ "$n0" -gt "$min_prompt" ] \
        && ok "$label: 2 slots at once, prompts of $n0+ tokens, twice: every reply equals alone" \
        || not_ok "$name slots: $same of 4 equal alone, prompt $n0 tokens (more than $min_prompt wanted):$(echo "$diff" | head -c 600)"
    grep -q 'runtime error\|AddressSanitizer' "$TMP/server.err" && not_ok "$name slots: sanitizer: $(grep -m1 'runtime error\|Sanitizer' "$TMP/server.err")"
    stop_server
}

# gemma3's sliding-window rings per slot: a window of 16 (rings of 16 + 8 - 1
# rows at -b 8), prompts longer than a ring. The second time a prompt is
# reused where the rings still hold the window (4 generated tokens) and fed
# from the start where they do not (30 generated tokens: seq_can_resume).
if slots_twice gemma3 "gemma3 (window 16, rings of 23 rows)" 23 --arch gemma3 --layers 6 --embd 256 --ff 512 --heads 4 \
    --kv-heads 1 --head-dim 256 --window 16 --type f32 --seed 71; then
    [ "${c0%/*}" = 0 ] && [ "${c1%/*}" = $((${c1#*/} - 1)) ] \
        && ok "gemma3 slots: a prompt again after 4 tokens is reused from the rings ($c1 cached), after 30 fed from the start ($c0)" \
        || not_ok "gemma3 slots: cached $c0 and $c1"
fi

# lfm2's convolution state per slot (10 short convolutions, 6 attention
# layers): the second time the slots' states have gone past the prompts, so
# they are fed from the start.
if slots_twice lfm2 "lfm2 (a convolution state per slot)" 0 --arch lfm2 --layers 16 --embd 256 --ff 512 --heads 4 \
    --kv-heads 2 --head-dim 64 --type f32 --seed 81; then
    [ "${c0%/*}" = 0 ] && [ "${c1%/*}" = 0 ] \
        && ok "lfm2 slots: a prompt again is fed from the start ($c0, $c1 cached): the states went past it" \
        || not_ok "lfm2 slots: cached $c0 and $c1"
fi

# qwen3moe: the two slots' tokens share a step, grouped by expert across
# the sequences (moe.h); each reply equals the same request alone.
slots_twice qwen3moe "qwen3moe (experts shared by the slots' tokens)" 0 --arch qwen3moe --layers 2 --embd 128 --ff 256 \
    --ff-exp 64 --experts 8 --experts-used 2 --heads 2 --kv-heads 1 --head-dim 64 --type q8_0 --seed 87

# qwen35's recurrent states per slot (6 DeltaNet layers, 2 attention),
# prompts in steps of 8. Sent again, a slot's state cannot be rewound to the
# end of the prompt: fed from the start (0 cached).
if slots_twice qwen35 "qwen35 (recurrent states)" 0 --arch qwen35 --layers 8 --embd 256 --ff 512 --heads 2 --kv-heads 1 \
    --head-dim 256 --rope-dim 64 --type f32 --seed 81; then
    [ "${c0%/*}" = 0 ] && [ "${c1%/*}" = 0 ] \
        && ok "qwen35 slots: a prompt again is fed from the start (states cannot rewind: $c0, $c1 cached)" \
        || not_ok "qwen35 slots: cached $c0 and $c1"
fi

# Prefix reuse: the conversation goes on in the slot that holds it.
M=$FIX/models/tiny-qwen3-f32.gguf
start_server "$M" --slots 2 -t 1 -c 4096 --ignore-eos
A1='{"messages":[{"role":"user","content":"Tell me about the sea"}],"temperature":0,"max_tokens":8}'
B1='{"messages":[{"role":"user","content":"Something else entirely, about mountains"}],"temperature":0,"max_tokens":8}'
post "$TMP/a1" /v1/chat/completions "$A1" >/dev/null
post "$TMP/b1" /v1/chat/completions "$B1" >/dev/null
reply=$(jget "$TMP/a1" 'JSON.stringify(r.choices[0].message.content)')
A2="{\"messages\":[{\"role\":\"user\",\"content\":\"Tell me about the sea\"},{\"role\":\"assistant\",\"content\":$reply},{\"role\":\"user\",\"content\":\"And more\"}],\"temperature\":0,\"max_tokens\":8}"
post "$TMP/a2" /v1/chat/completions "$A2" >/dev/null
post "$TMP/b2" /v1/chat/completions "$B1" >/dev/null
read -r ca cb <<EOF
$(cached "$TMP/a2" "$TMP/b2")
EOF
ca_n=${ca%/*}; cb_n=${cb%/*}; cb_all=${cb#*/}
[ "$ca_n" -gt 10 ] && [ "$cb_n" -eq $((cb_all - 1)) ] \
    && ok "prefix reuse per slot: the continued conversation reuses $ca cached, the repeated request $cb" \
    || not_ok "prefix reuse per slot: cached $ca and $cb"

# /slots, and a client leaving mid-stream frees its slot at the next step.
code=$(curl -s -o "$TMP/slots" -w '%{http_code}' "$URL/slots")
n=$(jget "$TMP/slots" 'String(r.length)+r.map(s=>s.state).join(",")')
[ "$code" = 200 ] && [ "$n" = "2idle,idle" ] && ok "/slots: two idle slots" || not_ok "/slots: $code $n"
# a client that reads the first event of a long stream, then closes
node -e '
const http = require("http");
const body = JSON.stringify({prompt: "Once", max_tokens: 3000, stream: true, temperature: 0});
const rq = http.request(process.argv[1] + "/v1/completions", {method: "POST", headers: {"Content-Type": "application/json"}}, res => {
  res.once("data", () => { rq.destroy(); });
});
rq.end(body);' "$URL"
# within a second (polled: it was a sleep of one second)
i=0
while :; do
    idle=$(curl -s "$URL/slots" | grep -o '"idle"' | wc -l)
    if { [ "$idle" -eq 2 ] && grep -q 'client gone' "$TMP/server.err"; } || [ $i -ge 10 ]; then break; fi
    sleep 0.1; i=$((i + 1))
done
[ "$idle" -eq 2 ] && grep -q 'client gone' "$TMP/server.err" \
    && ok "a client leaving mid-stream frees its slot at the next step" \
    || not_ok "disconnect: $idle idle slots, $(tail -2 "$TMP/server.err")"
code=$(curl -s -o /dev/null -w '%{http_code}' "$URL/metrics")
[ "$code" = 404 ] && ok "/metrics is off without --metrics" || not_ok "/metrics without --metrics: $code"
stop_server

start_server "$M" --slots 3 -t 1 -c 256 --metrics
post "$TMP/x" /v1/completions '{"prompt":"Hello","max_tokens":5,"temperature":0}' >/dev/null
curl -s "$URL/metrics" >"$TMP/metrics"
for m in pith_requests_total pith_prompt_tokens_total pith_tokens_generated_total pith_tokens_generated_per_second \
    pith_slots_busy pith_queue_length pith_kv_cache_used_positions pith_kv_cache_usage_ratio; do
    grep -q "^# TYPE $m " "$TMP/metrics" && grep -q "^$m [0-9.]*$" "$TMP/metrics" || not_ok "/metrics: $m missing"
done
[ "$(sed -n 's/^pith_slots //p' "$TMP/metrics")" = 3 ] && [ "$(sed -n 's/^pith_requests_total //p' "$TMP/metrics")" = 1 ] \
    && [ "$(sed -n 's/^pith_tokens_generated_total //p' "$TMP/metrics")" -ge 1 ] \
    && ok "/metrics (--metrics): Prometheus text with requests, tokens, slots, queue, KV use" \
    || not_ok "/metrics: $(head -c 400 "$TMP/metrics")"
stop_server

# The plan: a KV cache per slot; a count that cannot fit is refused with the numbers.
$PITH serve "$M" --slots 3 -c 256 --plan >"$TMP/plan" 2>&1
grep -q 'kv cache, sequence 2' "$TMP/plan" && ok "--plan lists a KV cache for each of 3 slots" \
    || not_ok "--plan: $(head -c 300 "$TMP/plan")"
expect_fail2 "serve: -b smaller than the slots is refused" $PITH serve "$M" --slots 4 -b 2 --port 0
expect_fail2 "serve: 16 slots do not fit --mem 12M" $PITH serve "$M" --slots 16 -c 4096 --mem 12M --port 0
grep -q -- '--slots 16' "$TMP/err" && grep -q 'MiB' "$TMP/err" && ok "the refusal names the slots and the sizes" \
    || not_ok "refusal: $(cat "$TMP/err")"
# --mem decides each slot's context: 3 slots of -c 4096 do not fit 70M, so
# the context is shrunk (the same for each), and the server serves
start_server "$M" --slots 3 -c 4096 --mem 70M -t 1
ctx=$(sed -n 's|^pith serve: .*(3 slots, context \([0-9]*\) each.*|\1|p' "$TMP/server.err")
code=$(post "$TMP/x" /v1/completions '{"prompt":"Hello","max_tokens":3,"temperature":0}')
[ -n "$ctx" ] && [ "$ctx" -lt 4096 ] && [ "$ctx" -ge 64 ] && [ "$code" = 200 ] && grep -q 'context shrunk' "$TMP/server.err" \
    && ok "--mem 70M with 3 slots: the context of each shrunk to $ctx, and the server answers" \
    || not_ok "--mem with slots: context '$ctx', status $code: $(head -c 400 "$TMP/server.err")"
stop_server
finish
