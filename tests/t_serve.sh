# pith serve: an OpenAI-compatible server on loopback, driven by curl, the
# official openai npm client (tests/npm_clients.sh installs it into build/, once) and
# hostile clients (tests/serve/hostile.mjs). The greedy replies must equal
# `pith run --temp 0` on the same prompt. The server is killed at the end,
# whatever happens.
. tests/lib.sh
M=$FIX/models/tiny-qwen3-f32.gguf
KEY=test-key-0123456789
. tests/serve_lib.sh

start_server() { model=$1; shift; serve_start "$PITH" "$model" -t 1 "$@"; } # MODEL [options]
# curl with the key, JSON body; prints the status code, the body goes to $TMP/body
post() { # PATH JSON [curl options]
    p=$1; d=$2; shift 2
    curl -s -m 30 -o "$TMP/body" -w '%{http_code}' -H "Authorization: Bearer $KEY" \
        -H 'Content-Type: application/json' --data-binary "$d" "$@" "$URL$p"
}
# Evaluates a JS expression over the JSON in a file (r = the parsed value).
. tests/jget_lib.sh
# Concatenates delta.content (or text, or delta.FIELD) of a server-sent
# event stream; the last event must be [DONE]; writes the final chunk to
# $TMP/last.json.
sse_text() { # FILE [FIELD]
    node -e '
const fs = require("fs");
const ev = fs.readFileSync(process.argv[1], "utf8").split("\n\n").filter((e) => e.length);
if (ev[ev.length - 1] !== "data: [DONE]") { console.error("no [DONE] at the end"); process.exit(1); }
let text = "", last = null;
for (const e of ev.slice(0, -1)) {
  if (!e.startsWith("data: ")) { console.error("not an SSE data line: " + e.slice(0, 80)); process.exit(1); }
  const c = JSON.parse(e.slice(6));
  if (c.choices.length) { const ch = c.choices[0]; text += (ch.delta ? ch.delta[process.argv[3]] || "" : ch.text) || ""; if (ch.finish_reason) last = c; }
}
fs.writeFileSync(process.argv[2], JSON.stringify(last));
process.stdout.write(text);' "$1" "$TMP/last.json" "${2:-content}"
}
rss() { sed -n 's/^VmRSS:[[:space:]]*\([0-9]*\) kB/\1/p' "/proc/$SERVER/status"; }

for tool in curl node npm; do
    command -v $tool >/dev/null 2>&1 || { not_ok "serve: $tool is not installed (the test needs curl, node 20 and npm)"; finish; }
done
printf '%s\n' "$KEY" >"$TMP/key"
start_server "$M" -c 256 --api-key-file "$TMP/key" --max-body 64K --timeout 2 --queue 4
if [ -z "$PORT" ]; then not_ok "serve: the server did not start: $(head -c 300 "$TMP/server.err")"; finish; fi
ok "serve: listening on 127.0.0.1:$PORT"

# ---- the endpoints ---------------------------------------------------------
code=$(curl -s -m 10 -o "$TMP/body" -w '%{http_code}' -H "Authorization: Bearer $KEY" "$URL/health")
[ "$code" = 200 ] && [ "$(jget "$TMP/body" r.status)" = ok ] && ok "GET /health" || not_ok "GET /health: $code $(cat "$TMP/body")"
code=$(curl -s -m 10 -o "$TMP/body" -w '%{http_code}' -H "Authorization: Bearer $KEY" "$URL/v1/models")
[ "$code" = 200 ] && [ "$(jget "$TMP/body" 'r.data[0].id')" = tiny-qwen3-f32.gguf ] && ok "GET /v1/models" \
    || not_ok "GET /v1/models: $code $(cat "$TMP/body")"

# The reference: pith run, greedy, same prompt through the same template.
PROMPT="Tell me a story about a small robot."
N=24
$PITH run "$M" -p "$PROMPT" --temp 0 -n $N -t 1 -c 256 >"$TMP/run.out" 2>/dev/null
head -c -1 "$TMP/run.out" >"$TMP/want"   # run ends the reply with a newline
[ -s "$TMP/want" ] && ok "reference: pith run printed $(wc -c <"$TMP/want") bytes" || not_ok "pith run printed nothing"

chat_req="{\"model\":\"m\",\"messages\":[{\"role\":\"user\",\"content\":\"$PROMPT\"}],\"temperature\":0,\"max_tokens\":$N}"
code=$(post /v1/chat/completions "$chat_req")
jget "$TMP/body" 'r.choices[0].message.content' >"$TMP/got" 2>/dev/null
if [ "$code" = 200 ] && cmp -s "$TMP/got" "$TMP/want"; then ok "chat (JSON): greedy reply equals pith run"
else not_ok "chat (JSON): $code: got '$(cat "$TMP/got")' want '$(cat "$TMP/want")'"; fi
u=$(jget "$TMP/body" '[r.usage.prompt_tokens > 0, r.usage.completion_tokens, r.usage.total_tokens === r.usage.prompt_tokens + r.usage.completion_tokens, r.choices[0].finish_reason, typeof r.timings.predicted_per_second].join(" ")')
[ "$u" = "true $N true length number" ] && ok "chat (JSON): usage, finish_reason, timings" || not_ok "chat usage: $u"
p1=$(jget "$TMP/body" r.usage.prompt_tokens)

code=$(post /v1/chat/completions "$(echo "$chat_req" | sed 's/}$/,"stream":true}/')" -N)
sse_text "$TMP/body" >"$TMP/got" 2>"$TMP/sse.err"
if [ "$code" = 200 ] && cmp -s "$TMP/got" "$TMP/want"; then ok "chat (stream): deltas equal pith run, ends with [DONE]"
else not_ok "chat (stream): $code: got '$(cat "$TMP/got")' $(cat "$TMP/sse.err")"; fi
# The same prompt again: all but its last token come from the cache.
c=$(jget "$TMP/last.json" '[r.choices[0].finish_reason, r.usage.completion_tokens, r.usage.prompt_tokens_details.cached_tokens, r.timings.prompt_n].join(" ")')
[ "$c" = "length $N $((p1 - 1)) 1" ] && ok "chat (stream): usage in the last chunk; prefix reuse prefilled 1 token" \
    || not_ok "chat (stream) last chunk: '$c' (prompt $p1)"

# A second turn extends the first conversation: only the new tokens are
# prefilled, and the reply equals the same request served from a cache that
# holds something else.
turn2=$(node -e 'const fs = require("fs"); process.stdout.write(JSON.stringify({messages: [{role: "user", content: process.argv[1]},
  {role: "assistant", content: fs.readFileSync(process.argv[2], "utf8")}, {role: "user", content: "And then?"}], temperature: 0, max_tokens: 12}))' "$PROMPT" "$TMP/want")
post /v1/chat/completions "$turn2" >/dev/null; cp "$TMP/body" "$TMP/turn2a"
post /v1/completions '{"prompt":"Something else entirely","max_tokens":2,"temperature":0}' >/dev/null
post /v1/chat/completions "$turn2" >/dev/null; cp "$TMP/body" "$TMP/turn2b"
a=$(jget "$TMP/turn2a" 'r.choices[0].message.content'); b=$(jget "$TMP/turn2b" 'r.choices[0].message.content')
ca=$(jget "$TMP/turn2a" r.usage.prompt_tokens_details.cached_tokens); cb=$(jget "$TMP/turn2b" r.usage.prompt_tokens_details.cached_tokens)
if [ -n "$a" ] && [ "$a" = "$b" ] && [ "$ca" -ge "$p1" ] && [ "$cb" -lt "$ca" ]; then
    ok "chat: second turn reuses the cache ($ca cached, then $cb) with the same reply"
else not_ok "chat second turn: '$a' ($ca cached) vs '$b' ($cb cached)"; fi

# /v1/completions: the raw prompt, as pith run --raw.
$PITH run "$M" --raw -p "Once upon a time" --temp 0 -n 16 -t 1 -c 256 2>/dev/null | head -c -1 >"$TMP/want_raw"
code=$(post /v1/completions '{"prompt":"Once upon a time","max_tokens":16,"temperature":0}')
jget "$TMP/body" 'r.choices[0].text' >"$TMP/got" 2>/dev/null
[ "$code" = 200 ] && cmp -s "$TMP/got" "$TMP/want_raw" && ok "completions (JSON): equals pith run --raw" \
    || not_ok "completions: $code '$(cat "$TMP/got")' want '$(cat "$TMP/want_raw")'"
code=$(post /v1/completions '{"prompt":"Once upon a time","max_tokens":16,"temperature":0,"stream":true}' -N)
sse_text "$TMP/body" >"$TMP/got" 2>"$TMP/sse.err"
[ "$code" = 200 ] && cmp -s "$TMP/got" "$TMP/want_raw" && ok "completions (stream): equals pith run --raw" \
    || not_ok "completions stream: $code '$(cat "$TMP/got")' $(cat "$TMP/sse.err")"

# Sampling with a seed is reproducible; a stop string cuts the reply.
r1=$(post /v1/chat/completions '{"messages":[{"role":"user","content":"Hi"}],"temperature":1,"seed":5,"max_tokens":12}' >/dev/null; jget "$TMP/body" 'r.choices[0].message.content')
r2=$(post /v1/chat/completions '{"messages":[{"role":"user","content":"Hi"}],"temperature":1,"seed":5,"max_tokens":12,"top_k":40,"top_p":0.9,"min_p":0.01,"chat_template_kwargs":{"enable_thinking":false}}' >/dev/null; jget "$TMP/body" 'r.choices[0].message.content')
r3=$(post /v1/chat/completions '{"messages":[{"role":"user","content":"Hi"}],"temperature":1,"seed":5,"max_tokens":12}' >/dev/null; jget "$TMP/body" 'r.choices[0].message.content')
[ -n "$r1" ] && [ "$r1" = "$r3" ] && [ -n "$r2" ] && ok "chat: same seed, same reply; sampling options accepted" || not_ok "seeded replies: '$r1' '$r3' ('$r2')"
stop=$(head -c 6 "$TMP/want" | tail -c 3)
code=$(post /v1/chat/completions "$(echo "$chat_req" | sed "s/}\$/,\"stop\":[\"$stop\"]}/")")
got=$(jget "$TMP/body" 'r.choices[0].message.content + "|" + r.choices[0].finish_reason')
want_stop="$(cat "$TMP/want" | awk -v s="$stop" '{ i = index($0, s); print substr($0, 1, i - 1); exit }')|stop"
[ "$code" = 200 ] && [ "$got" = "$want_stop" ] && ok "chat: stop string ends the reply before it" || not_ok "stop '$stop': $code '$got' want '$want_stop'"

# While a long reply streams, the loop still answers /health and queues a
# second chat request, served after it; a client that leaves mid-stream
# stops its generation.
long_req='{"messages":[{"role":"user","content":"Go on and on"}],"temperature":0,"max_tokens":200,"stream":true}'
curl -s -m 60 -N -o "$TMP/long" -H "Authorization: Bearer $KEY" -H 'Content-Type: application/json' --data-binary "$long_req" "$URL/v1/chat/completions" &
bg1=$!
sleep 0.3
curl -s -m 60 -o "$TMP/queued" -H "Authorization: Bearer $KEY" -H 'Content-Type: application/json' --data-binary "$chat_req" "$URL/v1/chat/completions" &
bg2=$!
code=$(curl -s -m 10 -o "$TMP/body" -w '%{http_code}' -H "Authorization: Bearer $KEY" "$URL/health")
wait $bg1 $bg2
jget "$TMP/queued" 'r.choices[0].message.content' >"$TMP/got" 2>/dev/null
n_long=$(sse_text "$TMP/long" >/dev/null 2>&1 && jget "$TMP/last.json" r.usage.completion_tokens)
[ "$code" = 200 ] && [ "$n_long" = 200 ] && cmp -s "$TMP/got" "$TMP/want" \
    && ok "during a 200-token stream: /health answers, a queued chat is served after it" \
    || not_ok "concurrent: health $code, long stream $n_long tokens, queued '$(head -c 200 "$TMP/queued")'"
timeout 30 node tests/serve/hostile.mjs leave "$PORT" "$KEY" >/dev/null
i=0; while [ $i -lt 100 ] && ! grep -q 'client gone' "$TMP/server.err"; do sleep 0.1; i=$((i + 1)); done
grep -q 'client gone' "$TMP/server.err" && ok "a client leaving mid-stream stops its generation" || not_ok "client gone not noticed"

# ---- the openai npm package ----------------------------------------------
if NPM=$(sh tests/npm_clients.sh 2>"$TMP/npm.err"); then
    ok "npm openai ($(jget "$NPM/node_modules/openai/package.json" r.version), tests/npm_clients.sh)"
    if timeout 60 node "$NPM/openai_chat.mjs" "$URL/v1" "$KEY" "$PROMPT" $N >"$TMP/oa.json" 2>"$TMP/oa.err"; then
        jget "$TMP/oa.json" r.json >"$TMP/got"
        cmp -s "$TMP/got" "$TMP/want" && ok "openai client (JSON): greedy reply equals pith run" || not_ok "openai JSON: '$(cat "$TMP/got")'"
        jget "$TMP/oa.json" r.stream >"$TMP/got"
        cmp -s "$TMP/got" "$TMP/want" && ok "openai client (stream): greedy reply equals pith run" || not_ok "openai stream: '$(cat "$TMP/got")'"
        u=$(jget "$TMP/oa.json" '[r.json_usage.completion_tokens, r.stream_usage.completion_tokens, r.stream_finish, r.wrong_key].join(" ")')
        [ "$u" = "$N $N length AuthenticationError 401" ] && ok "openai client: usage, finish_reason, wrong key is AuthenticationError 401" || not_ok "openai client: $u"
    else not_ok "openai client: $(head -c 600 "$TMP/oa.err")"; fi
    # logprobs: the values pith run --trace prints for the same prompt and seed
    $PITH run "$M" -p "$PROMPT" -n 8 -t 1 -c 256 --seed 7 --temp 0.9 --top-k 8 --top-p 0.9 --min-p 0.05 \
        --trace "$TMP/trace_sampled" >/dev/null 2>&1
    $PITH run "$M" --raw -p "Once upon a time" --temp 0 -n 8 -t 1 -c 256 --trace "$TMP/trace_greedy" >/dev/null 2>&1
    timeout 60 node "$NPM/openai_logprobs.mjs" "$URL/v1" "$KEY" "$PROMPT" "Once upon a time" 8 7 "$TMP/trace_sampled" \
        "$TMP/trace_greedy" >"$TMP/lp.out" 2>"$TMP/lp.err"
    grep -q . "$TMP/lp.out" || not_ok "openai client logprobs: $(head -c 600 "$TMP/lp.err")"
    while read -r line; do
        case $line in "ok "*) ok "logprobs: ${line#ok }" ;; *) not_ok "logprobs: ${line#not ok }" ;; esac
    done <"$TMP/lp.out"
else not_ok "$(cat "$TMP/npm.err")"; fi

# ---- hostile HTTP ----------------------------------------------------------
# /health is public (probes carry no key); every other endpoint needs it.
code=$(curl -s -m 10 -o "$TMP/body" -w '%{http_code}' "$URL/health")
[ "$code" = 200 ] && [ "$(jget "$TMP/body" r.status)" = ok ] && ok "no API key: /health 200" || not_ok "no key, /health: $code $(cat "$TMP/body")"
code=$(curl -s -m 10 -o "$TMP/body" -w '%{http_code}' "$URL/v1/models")
[ "$code" = 401 ] && [ "$(jget "$TMP/body" r.error.type)" = authentication_error ] && ok "no API key: /v1/models 401 with an error object" || not_ok "no key, /v1/models: $code"
code=$(curl -s -m 10 -o "$TMP/body" -w '%{http_code}' -H 'Content-Type: application/json' \
    --data-binary '{"messages":[{"role":"user","content":"Hi"}],"max_tokens":2}' "$URL/v1/chat/completions")
[ "$code" = 401 ] && [ "$(jget "$TMP/body" r.error.type)" = authentication_error ] && ok "no API key: /v1/chat/completions 401" || not_ok "no key, chat: $code"
code=$(post /v1/chat/completions '{"messages":[{"role":"user","content":"Hi"}],"max_tokens":2}')
[ "$code" = 200 ] && ok "with the API key: /v1/chat/completions 200" || not_ok "key, chat: $code $(cat "$TMP/body")"
code=$(curl -s -m 10 -o "$TMP/body" -w '%{http_code}' -H "Authorization: Bearer ${KEY}x" "$URL/v1/models")
[ "$code" = 401 ] && ok "wrong API key: 401" || not_ok "wrong key: $code"
code=$(curl -s -m 10 -o "$TMP/body" -w '%{http_code}' -H "Authorization: Bearer ${KEY}x" "$URL/health")
[ "$code" = 200 ] && ok "wrong API key: /health still 200" || not_ok "wrong key, /health: $code"
code=$(curl -s -m 10 -o "$TMP/body" -w '%{http_code}' -H "Authorization: Bearer $KEY" -H 'Host: evil.example' "$URL/health")
[ "$code" = 403 ] && ok "Host that is not loopback (DNS rebinding): 403" || not_ok "foreign Host: $code"
head -c 70000 /dev/zero | tr '\0' 'a' >"$TMP/big"
code=$(curl -s -m 10 -o "$TMP/body" -w '%{http_code}' -H "Authorization: Bearer $KEY" -H 'Content-Type: application/json' --data-binary @"$TMP/big" "$URL/v1/chat/completions")
[ "$code" = 413 ] && [ -n "$(jget "$TMP/body" r.error.message)" ] && ok "oversized body: 413" || not_ok "oversized body: $code"
for bad in '{"messages":[{"role":"user","content":"hi"}' 'not json' '[]' '{"messages":[{"role":"wizard","content":"hi"}]}' \
           '{"messages":[{"role":"user","content":"hi"}],"temperature":"hot"}' '{"messages":"hi"}' \
           '{"messages":[{"role":"user","content":"hi"}],"max_tokens":1.5}' '{"messages":[{"role":"user","content":"hi"}],"stop":[1]}' \
           '{"messages":[{"role":"user","content":"hi"}],"n":2}' '{"prompt":"x"}' '{"messages":[{"role":"user","content":"\ud800"}]}' \
           '{"messages":[{"role":"user","content":"hi"}],"logprobs":1}' '{"messages":[{"role":"user","content":"hi"}],"top_logprobs":2}' \
           '{"messages":[{"role":"user","content":"hi"}],"logprobs":true,"top_logprobs":21}' \
           '{"messages":[{"role":"user","content":"hi"}],"logprobs":true,"post_sampling_probs":"yes"}'; do
    code=$(post /v1/chat/completions "$bad")
    t=$(jget "$TMP/body" 'r.error.type + " " + typeof r.error.message + " " + typeof r.error.code' 2>/dev/null)
    [ "$code" = 400 ] && [ "$t" = "invalid_request_error string string" ] && ok "bad request $bad: 400" || not_ok "bad request $bad: $code $(cat "$TMP/body")"
done
for bad in '{"prompt":"x","logprobs":true}' '{"prompt":"x","logprobs":-1}' '{"prompt":"x","logprobs":2,"top_logprobs":2}'; do
    code=$(post /v1/completions "$bad")
    [ "$code" = 400 ] && [ -n "$(jget "$TMP/body" r.error.message)" ] && ok "bad completions request $bad: 400" || not_ok "bad completions $bad: $code $(cat "$TMP/body")"
done
long=$(awk 'BEGIN { for (i = 0; i < 400; i++) printf "word%d ", i }')
code=$(post /v1/chat/completions "{\"messages\":[{\"role\":\"user\",\"content\":\"$long\"}]}")
[ "$code" = 400 ] && [ "$(jget "$TMP/body" r.error.code)" = context_length_exceeded ] && ok "prompt longer than the context: 400 context_length_exceeded" || not_ok "long prompt: $code $(cat "$TMP/body")"
code=$(curl -s -m 10 -o "$TMP/body" -w '%{http_code}' -H "Authorization: Bearer $KEY" --data-binary '{}' "$URL/v1/chat/completions")
[ "$code" = 415 ] && ok "form-encoded POST (what a web page can send): 415" || not_ok "no JSON type: $code"
code=$(curl -s -m 10 -o "$TMP/body" -w '%{http_code}' -H "Authorization: Bearer $KEY" "$URL/etc/passwd")
[ "$code" = 404 ] && ok "no file is served: 404" || not_ok "file path: $code"
code=$(curl -s -m 10 -o "$TMP/body" -w '%{http_code}' -H "Authorization: Bearer $KEY" -X DELETE "$URL/v1/models")
[ "$code" = 405 ] && ok "wrong method: 405" || not_ok "wrong method: $code"

r=$(timeout 30 node tests/serve/hostile.mjs truncated "$PORT" "$KEY")
[ "$r" = "408 closed" ] && ok "truncated body: 408 and closed after --timeout" || not_ok "truncated body: $r"
r=$(timeout 30 node tests/serve/hostile.mjs halfhead "$PORT" "$KEY")
[ "$r" = "408 closed" ] && ok "unfinished head: 408 and closed" || not_ok "unfinished head: $r"
r=$(timeout 30 node tests/serve/hostile.mjs busy "$PORT" "$KEY" 5)
[ "$r" = 503 ] && ok "connection table full (queue 4 + 1): 503" || not_ok "table full: $r"
sleep 1.2 # the idle connections drain

# Floods: a warm-up touches every buffer, then 200 connections at once;
# the server keeps answering and its memory does not grow.
timeout 60 node tests/serve/hostile.mjs flood "$PORT" "$KEY" 50 >/dev/null
sleep 1.2
rss0=$(rss)
r=$(timeout 60 node tests/serve/hostile.mjs flood "$PORT" "$KEY" 200)
sleep 1.2
rss1=$(rss)
echo "# flood of 200: $r; VmRSS $rss0 -> $rss1 kB"
n200=$(echo "$r" | node -e 'const c = JSON.parse(require("fs").readFileSync(0, "utf8")); process.stdout.write(String(c["200"] || 0))')
[ "$n200" -ge 1 ] && ok "flood of 200 connections: $n200 answered 200, the rest 503 or closed" || not_ok "flood: $r"
code=$(curl -s -m 10 -o "$TMP/body" -w '%{http_code}' -H "Authorization: Bearer $KEY" "$URL/health")
[ "$code" = 200 ] && ok "after the flood: /health answers" || not_ok "after the flood: $code"
code=$(post /v1/chat/completions "$chat_req")
jget "$TMP/body" 'r.choices[0].message.content' >"$TMP/got" 2>/dev/null
[ "$code" = 200 ] && cmp -s "$TMP/got" "$TMP/want" && ok "after the flood: chat still equals pith run" || not_ok "after the flood chat: $code"
[ -n "$rss0" ] && [ -n "$rss1" ] && [ $((rss1 - rss0)) -le 256 ] && ok "VmRSS flat over the flood ($rss0 -> $rss1 kB)" \
    || not_ok "VmRSS grew over the flood: $rss0 -> $rss1 kB"

kill -0 "$SERVER" 2>/dev/null && ok "server alive after everything" || not_ok "server died: $(tail -5 "$TMP/server.err")"
grep -q 'ERROR: AddressSanitizer\|runtime error' "$TMP/server.err" && not_ok "sanitizer report: $(grep -m3 'ERROR\|runtime error' "$TMP/server.err")"
stop_server

# Qwen3's template and thinking: a small random model with the real Qwen3
# chat template (tests/tools/main_mkmodel.c). A prompt full of <think> and a
# negative frequency penalty make the greedy reply "<think><think>...", so
# everything after the first tag is reasoning_content; enable_thinking=false
# (top level or in chat_template_kwargs) renders the empty think block.
Q3=$TMP/qwen3-template.gguf
if build/asan/tools/mkmodel "$Q3" --layers 2 --embd 64 --ff 128 --heads 2 --kv-heads 1 --head-dim 32 --ctx 512 \
       --type f32 --seed 1 --template-from "$FIX/tokenizer/qwen3-vocab.gguf" >"$TMP/mk.out" 2>&1; then
    start_server "$Q3" -c 256
    P=$(awk 'BEGIN { for (i = 0; i < 20; i++) printf "<think>" }')
    $PITH run "$Q3" -p "$P" --temp 0 -n 6 -t 1 -c 256 --frequency-penalty -1 2>/dev/null | head -c -1 >"$TMP/want_think"
    req="{\"messages\":[{\"role\":\"user\",\"content\":\"$P\"}],\"temperature\":0,\"max_tokens\":6,\"frequency_penalty\":-1}"
    code=$(post /v1/chat/completions "$req")
    got=$(jget "$TMP/body" '"<think>" + r.choices[0].message.reasoning_content + "|" + r.choices[0].message.content')
    [ "$code" = 200 ] && [ "$got" = "$(cat "$TMP/want_think")|" ] && [ "$(head -c 7 "$TMP/want_think")" = "<think>" ] \
        && ok "qwen3: the reply after <think> is reasoning_content (JSON), as pith run printed it" \
        || not_ok "qwen3 reasoning: $code '$got' want '$(cat "$TMP/want_think")'"
    code=$(post /v1/chat/completions "$(echo "$req" | sed 's/}$/,"stream":true}/')" -N)
    r=$(sse_text "$TMP/body" reasoning_content); c=$(sse_text "$TMP/body" content)
    [ "$code" = 200 ] && [ "<think>$r|$c" = "$(cat "$TMP/want_think")|" ] && ok "qwen3: streamed deltas carry reasoning_content" \
        || not_ok "qwen3 stream reasoning: '$r' '$c'"
    hi='{"messages":[{"role":"user","content":"Hi"}],"temperature":0,"max_tokens":6'
    post /v1/chat/completions "$hi}" >/dev/null; a=$(jget "$TMP/body" r.usage.prompt_tokens)
    post /v1/chat/completions "$hi,\"chat_template_kwargs\":{\"enable_thinking\":false}}" >/dev/null
    b=$(jget "$TMP/body" r.usage.prompt_tokens); jget "$TMP/body" 'r.choices[0].message.content' >"$TMP/got"
    post /v1/chat/completions "$hi,\"enable_thinking\":false}" >/dev/null; c=$(jget "$TMP/body" r.usage.prompt_tokens)
    $PITH run "$Q3" -p Hi --no-think --temp 0 -n 6 -t 1 -c 256 2>/dev/null | head -c -1 >"$TMP/want_nothink"
    [ -n "$a" ] && [ "$b" -gt "$a" ] && [ "$b" = "$c" ] && cmp -s "$TMP/got" "$TMP/want_nothink" \
        && ok "qwen3: enable_thinking=false (kwargs or top level) renders the empty think block; reply equals run --no-think" \
        || not_ok "qwen3 enable_thinking: prompt tokens $a / $b / $c, reply '$(cat "$TMP/got")'"
    kill -0 "$SERVER" 2>/dev/null && ok "qwen3 server alive" || not_ok "qwen3 server died: $(tail -3 "$TMP/server.err")"
    stop_server
else not_ok "mkmodel: $(head -c 300 "$TMP/mk.out")"; fi

# Command-line errors: one line, status 2.
expect_fail2 "serve: --slots 17 refused" $PITH serve "$M" --slots 17
expect_fail2 "serve: --slots 0 refused" $PITH serve "$M" --slots 0
expect_fail2 "serve: --host must be numeric" $PITH serve "$M" --host example.com --port 0
expect_fail2 "serve: empty key file" $PITH serve "$M" --api-key-file /dev/null
finish
