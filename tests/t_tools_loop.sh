#!/bin/sh
# t_tools_loop.sh - tool calls for any model (issue 34): the official openai
# npm client runs its whole tool loop (tests/serve/openai_tools.mjs:
# required and named calls, streamed and not, the results sent back, the
# model's answer) against tiny-qwen3 under two templates: its own plain
# ChatML, which knows no tools (the generic format: the tools described in
# the system message, the reply held to {"tool_call": ...} or
# {"response": ...}), and LFM2.5-Instruct's, whose model writes Python
# calls (<|tool_call_start|>[name(key="value")]<|tool_call_end|>). The
# prompt of each, through /apply-template, shows the tools as the format
# wants them.
. tests/lib.sh
. tests/serve_lib.sh
. tests/jget_lib.sh
Q=$FIX/models/tiny-qwen3-Q8_0.gguf
for tool in curl node; do
    command -v $tool >/dev/null 2>&1 || { not_ok "$tool is not installed"; finish; }
done
if ! NPM=$(sh tests/npm_clients.sh 2>"$TMP/npm.err"); then not_ok "$(cat "$TMP/npm.err")"; finish; fi
SRC=$(sh tests/llamacpp_src.sh 2>"$TMP/src.err") || { not_ok "llama.cpp's templates: $(cat "$TMP/src.err")"; finish; }
post() { # PATH JSON: status code; the body in $TMP/body
    curl -s -m 120 -o "$TMP/body" -w '%{http_code}' -H 'Content-Type: application/json' --data-binary "$2" "$URL$1"
}
TOOLS='[{"type":"function","function":{"name":"get_weather","description":"Current weather of a city","parameters":{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}}}]'

# loop NAME PROMPT_PATTERN [serve options]: the prompt shows the tools; the client's loop works
loop() {
    name=$1 pat=$2; shift 2
    serve_start "$PITH" "$Q" -t 1 -c 2048 "$@"
    [ -n "$PORT" ] || { not_ok "$name: the server did not start: $(head -c 300 "$TMP/server.err")"; return; }
    st=$(post /apply-template "{\"messages\":[{\"role\":\"user\",\"content\":\"Weather in Paris?\"}],\"tools\":$TOOLS}")
    if [ "$st" = 200 ] && jget "$TMP/body" r.prompt >"$TMP/prompt" && grep -q -- "$pat" "$TMP/prompt" && grep -q get_weather "$TMP/prompt"; then
        ok "$name: the prompt shows the tools ($pat)"
    else not_ok "$name: prompt: $st $(head -c 600 "$TMP/body")"; fi
    if timeout 600 node "$NPM/openai_tools.mjs" "$URL/v1" >"$TMP/oa.json" 2>"$TMP/oa.err"; then
        for k in json_required json_named stream_required stream_named; do
            v=$(jget "$TMP/oa.json" "[r.$k.calls, r.$k.finish, r.$k.answer_is_text, r.$k.answer_finish !== 'tool_calls'].join(' ')")
            [ "$v" = "ok tool_calls true true" ] && ok "$name: openai client $k: calls parse and hold the parameters; the results go back; the model answers" ||
                not_ok "$name: openai client $k: $v $(cat "$TMP/oa.json")"
        done
        v=$(jget "$TMP/oa.json" 'r.auto.content')
        [ "$v" = string ] && ok "$name: tool_choice auto: a well-formed reply" || not_ok "$name: auto: $(cat "$TMP/oa.json")"
    else not_ok "$name: openai tools: $(head -c 600 "$TMP/oa.err")"; fi
    stop_server
}
loop "ChatML (generic format)" '"tool_call"'
loop "LFM2.5-Instruct's template (Python calls)" 'List of tools: \[' --chat-template-file "$SRC/models/templates/LFM2.5-Instruct.jinja"
finish
