# pith serve on a model that computes NaN for some inputs only: a request
# that reaches it gets an HTTP 500 with a JSON error naming the problem
# (non-finite logits), the server keeps serving, and the next good request
# is answered as if the bad one had never come (the KV cache the bad prompt
# poisoned is not reused as a prefix).
#
# The model: a small random F32 Qwen3 model with an output matrix of its own
# (untied: with tied embeddings a NaN row of token_embd would give a NaN
# logit for every input), with one row of token_embd.weight - the token
# " water" - made NaN (ggufedit --nan-row). A prompt without " water" never
# reads that row.
#
# Until the core stops ending the process (issue "One set of weights, many
# sequences"), this test fails: the server exits with status 2 at the first
# non-finite logit, and the test says so.
. tests/lib.sh
TOOLS=build/asan/tools
[ -x $TOOLS/mkmodel ] && [ -x $TOOLS/ggufedit ] || TOOLS=build/rel/tools
. tests/serve_lib.sh

for tool in curl node; do
    command -v $tool >/dev/null 2>&1 || { not_ok "serve nan: $tool is not installed"; finish; }
done

# ---- the model ----------------------------------------------------------------
M=$TMP/nan.gguf
$TOOLS/mkmodel "$TMP/clean.gguf" --type f32 --untied --layers 2 --embd 64 --ff 128 --heads 2 --kv-heads 1 \
    --head-dim 32 --ctx 512 --seed 3 >/dev/null 2>"$TMP/err" || { not_ok "mkmodel: $(head -c 300 "$TMP/err")"; finish; }
$PITH tokenize "$TMP/clean.gguf" " water" --pieces >"$TMP/tok" 2>"$TMP/err"
BAD=$(awk 'NR == 1 { print $1 }' "$TMP/tok")
if [ "$(wc -l <"$TMP/tok")" -ne 1 ] || [ -z "$BAD" ]; then not_ok "' water' is not one token: $(cat "$TMP/tok" "$TMP/err")"; finish; fi
$TOOLS/ggufedit "$TMP/clean.gguf" "$M" --nan-row token_embd.weight "$BAD" 2>"$TMP/err" \
    || { not_ok "ggufedit --nan-row: $(head -c 300 "$TMP/err")"; finish; }

# Good and bad prompts share their first words; the bad one has " water"
# where the good one has " said".
GOOD="The old man said that the boy was"
BADP="The old man water that the boy was"
# pos_of FILE ID: the index of the first token ID in a `pith tokenize` output.
pos_of() { awk -v id="$2" '$1 == id { print NR - 1; exit }' "$1"; }
$PITH tokenize "$M" "$BADP" --pieces >"$TMP/bad.tok" 2>/dev/null
RAW_AT=$(pos_of "$TMP/bad.tok" "$BAD")
# The same for the chat prompt: mkmodel's ChatML template, as the server renders it.
$PITH tokenize "$M" "<|im_start|>user
$BADP<|im_end|>
<|im_start|>assistant
" --pieces >"$TMP/bad_chat.tok" 2>/dev/null
CHAT_AT=$(pos_of "$TMP/bad_chat.tok" "$BAD")
[ -n "$RAW_AT" ] && [ -n "$CHAT_AT" ] && ok "model with a NaN row for token $BAD (' water', prompt position $RAW_AT; $CHAT_AT in the chat prompt)" \
    || { not_ok "token $BAD not found in the bad prompts"; finish; }
# Sanity: pith run gives a NaN only with the bad token.
$PITH run "$M" --raw -p "$GOOD" --temp 0 -n 4 -c 256 -t 1 >/dev/null 2>"$TMP/err" && ok "pith run: the good prompt runs" \
    || not_ok "pith run on the good prompt: $(tail -c 300 "$TMP/err")"
$PITH run "$M" --raw -p "$BADP" --temp 0 -n 4 -c 256 -t 1 >/dev/null 2>"$TMP/err"
st=$?
[ $st -ne 0 ] && grep -q 'non-finite' "$TMP/err" && ok "pith run: the bad prompt gives a non-finite logit (status $st)" \
    || not_ok "pith run on the bad prompt: status $st: $(tail -c 300 "$TMP/err")"

# ---- the server ---------------------------------------------------------------
# As t_serve.sh: a free port picked by the kernel (--port 0), read from the
# server's first line.
start_server() {
    $PITH serve "$M" --port 0 -t 1 -c 256 --timeout 5 2>>"$TMP/server.err" &
    SERVER=$!
    PORT=
    i=0
    while [ $i -lt 200 ] && [ -z "$PORT" ] && kill -0 "$SERVER" 2>/dev/null; do
        sleep 0.1
        PORT=$(sed -n 's|^pith serve: .* on http://127\.0\.0\.1:\([0-9]*\)/v1 .*|\1|p' "$TMP/server.err" | tail -1)
        i=$((i + 1))
    done
    URL=http://127.0.0.1:$PORT
    [ -n "$PORT" ]
}
# alive: true while the server runs; otherwise says why it ended (status
# and its last stderr line) in $WHY, and forgets it.
alive() {
    kill -0 "$SERVER" 2>/dev/null && return 0
    wait "$SERVER" 2>/dev/null
    WHY="the server exited with status $?: $(tail -n 1 "$TMP/server.err" | head -c 300)"
    SERVER=
    return 1
}
# post PATH JSON [curl options]: prints the status code; the body goes to
# $TMP/body, the headers to $TMP/head.
post() {
    p=$1; d=$2; shift 2
    : >"$TMP/body"
    curl -s -m 30 -o "$TMP/body" -D "$TMP/head" -w '%{http_code}' -H 'Content-Type: application/json' \
        --data-binary "$d" "$@" "$URL$p"
}
# Evaluates a JS expression over the JSON in a file (r = the parsed value).
. tests/jget_lib.sh
# The error object of a JSON body: "MESSAGE" when it has error.message and
# error.type and the message names non-finite values; else nothing.
json_error() { jget "$1" 'typeof r.error.type === "string" && /non-finite|\bNaN\b/i.test(r.error.message) ? r.error.message : ""' 2>/dev/null; }
# A server-sent event stream holding an error event: prints its message when
# one data event is {"error":{...}} naming non-finite values and no chunk
# claims a finish_reason (the reply must not pass for a finished one).
sse_error() {
    node -e '
const ev = require("fs").readFileSync(process.argv[1], "utf8").split("\n\n").filter((e) => e.trim().length);
let msg = "", finished = false;
for (const e of ev) {
  const line = e.split("\n").find((l) => l.startsWith("data: "));
  if (!line || line === "data: [DONE]") continue;
  let c; try { c = JSON.parse(line.slice(6)); } catch (x) { continue; }
  if (c.error && /non-finite|\bNaN\b/i.test(c.error.message || "")) msg = c.error.message;
  if (c.choices && c.choices.some((ch) => ch.finish_reason)) finished = true;
}
if (msg && !finished) process.stdout.write(msg);' "$1" 2>/dev/null
}

: >"$TMP/server.err"
if ! start_server; then not_ok "serve: the server did not start: $(head -c 300 "$TMP/server.err")"; finish; fi
ok "serve: listening on 127.0.0.1:$PORT"

GOOD_RAW="{\"prompt\":\"$GOOD\",\"max_tokens\":8,\"temperature\":0}"
GOOD_CHAT="{\"messages\":[{\"role\":\"user\",\"content\":\"$GOOD\"}],\"max_tokens\":8,\"temperature\":0}"
BAD_RAW="{\"prompt\":\"$BADP\",\"max_tokens\":8,\"temperature\":0}"
BAD_CHAT="{\"messages\":[{\"role\":\"user\",\"content\":\"$BADP\"}],\"max_tokens\":8,\"temperature\":0}"
with_stream() { echo "$1" | sed 's/}$/,"stream":true}/'; }

# The replies to the good requests on a fresh server, the references.
code=$(post /v1/completions "$GOOD_RAW"); cp "$TMP/body" "$TMP/ref_raw"
want_raw=$(jget "$TMP/ref_raw" 'r.choices[0].text + "|" + r.choices[0].finish_reason' 2>/dev/null)
[ "$code" = 200 ] && [ -n "$want_raw" ] && ok "good completion: 200 ($(jget "$TMP/ref_raw" r.usage.completion_tokens) tokens)" \
    || not_ok "good completion on a fresh server: $code $(head -c 300 "$TMP/body")"
code=$(post /v1/chat/completions "$GOOD_CHAT"); cp "$TMP/body" "$TMP/ref_chat"
want_chat=$(jget "$TMP/ref_chat" 'r.choices[0].message.content + "|" + r.choices[0].finish_reason' 2>/dev/null)
[ "$code" = 200 ] && [ -n "$want_chat" ] && ok "good chat: 200 ($(jget "$TMP/ref_chat" r.usage.completion_tokens) tokens)" \
    || not_ok "good chat on a fresh server: $code $(head -c 300 "$TMP/body")"

# case NAME PATH BAD_JSON STREAM GOOD_PATH GOOD_JSON WANT CLEAN_PREFIX
# Sends the good request (so the cache holds its prompt), the bad one, then
# the good one again: that reply must equal the reference and may take from
# the cache at most the CLEAN_PREFIX tokens before the NaN token; /health
# must answer and the server must still run.
nan_case() {
    name=$1 path=$2 bad=$3 stream=$4 gpath=$5 good=$6 want=$7 clean=$8 WHY=
    if [ -z "$SERVER" ]; then
        start_server || { not_ok "$name: the server did not restart: $(tail -c 300 "$TMP/server.err")"; return; }
    fi
    post "$gpath" "$good" >/dev/null
    if [ "$stream" = 1 ]; then code=$(post "$path" "$bad" -N); else code=$(post "$path" "$bad"); fi
    if ! alive; then
        not_ok "$name: $WHY"
        not_ok "$name: the server survives (skipped the good request after it)"
        return
    fi
    if [ "$code" = 500 ] && msg=$(json_error "$TMP/body") && [ -n "$msg" ]; then
        ok "$name: HTTP 500, error: $msg"
    elif [ "$stream" = 1 ] && [ "$code" = 200 ] && grep -qi '^content-type: *text/event-stream' "$TMP/head" \
        && msg=$(sse_error "$TMP/body") && [ -n "$msg" ]; then
        ok "$name: the stream had started; it ends with an error event: $msg"
    else
        not_ok "$name: want 500 with a JSON error naming non-finite logits$([ "$stream" = 1 ] && echo ' (or an error event in the stream)'), got $code: $(head -c 300 "$TMP/body")"
    fi
    code=$(post "$gpath" "$good")
    if [ "$gpath" = /v1/completions ]; then got=$(jget "$TMP/body" 'r.choices[0].text + "|" + r.choices[0].finish_reason' 2>/dev/null)
    else got=$(jget "$TMP/body" 'r.choices[0].message.content + "|" + r.choices[0].finish_reason' 2>/dev/null); fi
    cached=$(jget "$TMP/body" r.usage.prompt_tokens_details.cached_tokens 2>/dev/null)
    if [ "$code" = 200 ] && [ "$got" = "$want" ] && [ -n "$cached" ] && [ "$cached" -le "$clean" ]; then
        ok "$name: then the good request: 200, the reference reply, $cached cached tokens (at most $clean are clean)"
    else
        not_ok "$name: then the good request: $code, cached '$cached' (at most $clean are clean), got '$got' want '$want': $(head -c 200 "$TMP/body")"
    fi
    code=$(curl -s -m 10 -o "$TMP/body" -w '%{http_code}' "$URL/health")
    if [ "$code" = 200 ] && alive; then ok "$name: /health answers 200, the server still runs"
    else not_ok "$name: /health $code; ${WHY:-}"; fi
}

# a) /v1/completions with the NaN token; b) the good completion after it; c) /health.
nan_case "completion with the NaN token" /v1/completions "$BAD_RAW" 0 /v1/completions "$GOOD_RAW" "$want_raw" "$RAW_AT"
nan_case "chat with the NaN token" /v1/chat/completions "$BAD_CHAT" 0 /v1/chat/completions "$GOOD_CHAT" "$want_chat" "$CHAT_AT"
# Streaming. Expected: the non-finite logits are found right after the
# prefill, before the reply's headers go out, so a 500 as above. Accepted
# too: a 200 event stream (headers already sent) that ends with an error
# event {"error":{...}} and no finish_reason - as long as the server
# survives and the next good request is answered as on a fresh server.
nan_case "chat (stream) with the NaN token" /v1/chat/completions "$(with_stream "$BAD_CHAT")" 1 \
    /v1/chat/completions "$GOOD_CHAT" "$want_chat" "$CHAT_AT"
nan_case "completion (stream) with the NaN token" /v1/completions "$(with_stream "$BAD_RAW")" 1 \
    /v1/completions "$GOOD_RAW" "$want_raw" "$RAW_AT"
finish
