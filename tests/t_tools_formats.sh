#!/bin/sh
# t_tools_formats.sh - tool calls in `pith serve` for each template's format
# (curl and node, no npm): tiny-qwen3 served with --template llama3.1,
# smollm3, lfm2 and qwen3.5 (the grammar of a forced call makes the model write the call in
# that template's format; a forced call's arguments stream in several
# deltas, Qwen3.5's <function=...> calls too, forced or not, joined equal to
# the call not streamed; its string
# parameters stay strings, whatever their text); with llama3.1 and qwen3.5, text before a call stays content and the call
# becomes tool_calls, streamed and not (a response_format "const" makes the
# model write a fixed text with a call inside; one that does not parse
# stays content, streamed too); templates without a
# tool-call format take the generic one.
. tests/lib.sh
Q=$FIX/models/tiny-qwen3-Q8_0.gguf
. tests/serve_lib.sh
for tool in curl node; do
    command -v $tool >/dev/null 2>&1 || { not_ok "$tool is not installed (the test needs curl and node)"; finish; }
done
post() { # PATH JSON [curl options]: status code; the body in $TMP/body
    p=$1; d=$2; shift 2
    curl -s -m 120 -o "$TMP/body" -w '%{http_code}' -H 'Content-Type: application/json' --data-binary "$d" "$@" "$URL$p"
}
. tests/jget_lib.sh
# A streamed reply folded into {content, calls: [{name, args, deltas}], finish},
# by jget's node (r: the reply's path): a node per reply was 20 starts of
# ~0.17 CPU s here
printf '"%s"' "$TMP/body" >"$TMP/body.path"
fold() {
    jget "$TMP/body.path" '
const ev = require("fs").readFileSync(r, "utf8").split("\n\n").filter(e => e.length);
if (ev[ev.length - 1] !== "data: [DONE]") throw new Error("no [DONE]");
const out = {content: "", calls: [], finish: null};
for (const e of ev.slice(0, -1)) { const c = JSON.parse(e.slice(6)); const ch = c.choices[0]; if (!ch) continue;
  if (ch.delta.content) out.content += ch.delta.content;
  for (const t of ch.delta.tool_calls || []) { const x = out.calls[t.index] ??= {name: "", args: "", deltas: 0, id: t.id};
    if (t.function.name) x.name += t.function.name; if (t.function.arguments) { x.args += t.function.arguments; x.deltas++; } }
  if (ch.finish_reason) out.finish = ch.finish_reason; }
JSON.stringify(out)' >"$TMP/folded"
}
TOOLS='[{"type":"function","function":{"name":"get_weather","parameters":{"type":"object","properties":{"city":{"type":"string","maxLength":12},"unit":{"enum":["c","f"]}},"required":["city","unit"]}}},{"type":"function","function":{"name":"add","parameters":{"type":"object","properties":{"a":{"type":"integer"},"b":{"type":"integer"}},"required":["a","b"]}}}]'
MSG='[{"role":"user","content":"Weather in Paris?"}]'
# maxLength counts code points (JSON Schema), not UTF-16 units
ARGS_OK='(n, a) => n === "get_weather" ? typeof a.city === "string" && [...a.city].length <= 12 && ["c","f"].includes(a.unit) && Object.keys(a).length === 2 : Number.isInteger(a.a) && Number.isInteger(a.b) && Object.keys(a).length === 2'

formats() { # TEMPLATE CALL_JSON (the call as the template's format writes it, a JSON value) CONTENT_WANT
    tmpl=$1 call=$2 want=$3
    start_server() { serve_start "$PITH" "$Q" -t 1 -c 2048 --template "$tmpl"; }
    start_server
    [ -n "$PORT" ] && ok "$tmpl: serve on $PORT" || { not_ok "$tmpl: server: $(head -c 300 "$TMP/server.err")"; return; }
    # tool_choice required: one call, arguments that hold the parameters
    code=$(post /v1/chat/completions "{\"messages\":$MSG,\"tools\":$TOOLS,\"tool_choice\":\"required\",\"seed\":5,\"max_tokens\":1000}")
    v=$(jget "$TMP/body" "const m = r.choices[0].message, ok = $ARGS_OK; [r.choices[0].finish_reason, m.content, m.tool_calls.length > 0, m.tool_calls.every(t => t.type === 'function' && t.id && ok(t.function.name, JSON.parse(t.function.arguments)))].join(' ')" 2>&1)
    [ "$code" = 200 ] && [ "$v" = "tool_calls  true true" ] && ok "$tmpl, tool_choice required: tool_calls whose arguments hold the parameters, content null" \
        || not_ok "$tmpl required: $code $v $(head -c 400 "$TMP/body")"
    # a named function, streamed
    code=$(post /v1/chat/completions "{\"messages\":$MSG,\"tools\":$TOOLS,\"tool_choice\":{\"type\":\"function\",\"function\":{\"name\":\"add\"}},\"seed\":7,\"max_tokens\":300,\"stream\":true}" -N)
    fold && v=$(jget "$TMP/folded" "const ok = $ARGS_OK; [r.finish, r.calls.length, r.calls[0].name, ok(r.calls[0].name, JSON.parse(r.calls[0].args)), r.content.trim() === '', r.calls[0].deltas >= $MIND].join(' ')" 2>&1)
    [ "$code" = 200 ] && [ "$v" = "tool_calls 1 add true true true" ] && ok "$tmpl, streamed, a named function: one call of add, its arguments in $(jget "$TMP/folded" 'r.calls[0].deltas') deltas as they come, finish tool_calls" \
        || not_ok "$tmpl named stream: $code $v $(head -c 600 "$TMP/body")"
    # text before a call: content, then the call (a JSON const can write
    # the JSON format's call, not a tagged one: test_tools checks those)
    if [ -n "$call" ]; then
    fixed="{\"type\":\"json_schema\",\"json_schema\":{\"schema\":{\"const\":[\"Let me check.\",$call]}}}"
    code=$(post /v1/chat/completions "{\"messages\":$MSG,\"tools\":$TOOLS,\"seed\":5,\"max_tokens\":300,\"response_format\":$fixed}")
    v=$(jget "$TMP/body" "const m = r.choices[0].message; [r.choices[0].finish_reason, m.content, m.tool_calls.length, m.tool_calls[0].function.name, m.tool_calls[0].function.arguments].join('|')" 2>&1)
    [ "$code" = 200 ] && [ "$v" = "tool_calls|$want|1|add|{\"a\": 1, \"b\": 2}" ] && ok "$tmpl: text before a call stays content ($want), the call becomes tool_calls" \
        || not_ok "$tmpl text before a call: $code '$v' $(head -c 600 "$TMP/body")"
    code=$(post /v1/chat/completions "{\"messages\":$MSG,\"tools\":$TOOLS,\"seed\":5,\"max_tokens\":300,\"response_format\":$fixed,\"stream\":true}" -N)
    fold && v=$(jget "$TMP/folded" "[r.finish, r.content, r.calls.length, r.calls[0].name, r.calls[0].args].join('|')" 2>&1)
    [ "$code" = 200 ] && [ "$v" = "tool_calls|$want|1|add|{\"a\": 1, \"b\": 2}" ] && ok "$tmpl, streamed: the text in content deltas, the call in tool_calls deltas" \
        || not_ok "$tmpl streamed text before a call: $code '$v' $(head -c 900 "$TMP/body")"
    fi
    # the round trip: the call and its result go back through the template
    RT="[{\"role\":\"user\",\"content\":\"Weather?\"},{\"role\":\"assistant\",\"content\":null,\"tool_calls\":[{\"id\":\"call_9\",\"type\":\"function\",\"function\":{\"name\":\"get_weather\",\"arguments\":\"{\\\"city\\\": \\\"Oslo\\\", \\\"unit\\\": \\\"c\\\"}\"}}]},{\"role\":\"tool\",\"tool_call_id\":\"call_9\",\"content\":\"{\\\"temp\\\": 21}\"}]"
    code=$(post /v1/chat/completions "{\"messages\":$RT,\"tools\":$TOOLS,\"max_tokens\":8,\"temperature\":0}")
    [ "$code" = 200 ] && [ "$(jget "$TMP/body" 'typeof r.choices[0].message.content')" = string ] && ok "$tmpl: assistant tool_calls and a tool result: 200" \
        || not_ok "$tmpl tool result: $code $(head -c 300 "$TMP/body")"
    stop_server
}
MIND=2
formats llama3.1 '{"name":"add","parameters":{"a":1,"b":2}}' '["Let me check.",]'
formats smollm3 '' ''
formats lfm2 '' ''
formats qwen3.5 '' ''

# Qwen3.5's calls streamed: the pieces join into the arguments of the same
# request not streamed (forced, and a call the model writes under auto: a
# response_format const writes it), in more than one delta; a block that
# does not parse stays content, streamed or not
serve_start "$PITH" "$Q" -t 1 -c 2048 --template qwen3.5
if [ -n "$PORT" ]; then
    same() { # NAME REQUEST: streamed and not, the same calls and content
        code=$(post /v1/chat/completions "$2")
        whole=$(jget "$TMP/body" "const m = r.choices[0].message; JSON.stringify([r.choices[0].finish_reason, m.content || '', (m.tool_calls || []).map(t => [t.function.name, t.function.arguments])])" 2>&1)
        req=$2
        code2=$(post /v1/chat/completions "${req%?},\"stream\":true}" -N)
        fold && streamed=$(jget "$TMP/folded" "JSON.stringify([r.finish, r.content, r.calls.filter(c => r.finish === 'tool_calls').map(c => [c.name, c.args])])" 2>&1)
        deltas=$(jget "$TMP/folded" "r.calls.map(c => c.deltas).join(',')" 2>&1)
        parses=$(jget "$TMP/folded" "r.calls.every(c => { try { JSON.parse(c.args); return true } catch (e) { return false } })" 2>&1)
    }
    same named "{\"messages\":$MSG,\"tools\":$TOOLS,\"tool_choice\":{\"type\":\"function\",\"function\":{\"name\":\"get_weather\"}},\"seed\":3,\"max_tokens\":300}"
    [ "$code" = 200 ] && [ "$code2" = 200 ] && [ "$whole" = "$streamed" ] && [ "${deltas:-0}" -gt 1 ] && [ "$parses" = true ] \
        && ok "qwen3.5, named, streamed: $deltas deltas join into the arguments not streamed ($whole)" \
        || not_ok "qwen3.5 named streamed: $code $code2 '$whole' '$streamed' deltas $deltas parses $parses"
    call='<tool_call><function=get_weather><parameter=city>New York</parameter><parameter=unit>c</parameter></function></tool_call>'
    fixed="{\"type\":\"json_schema\",\"json_schema\":{\"schema\":{\"const\":\"Let me check. $call\"}}}"
    same auto "{\"messages\":$MSG,\"tools\":$TOOLS,\"seed\":5,\"max_tokens\":300,\"response_format\":$fixed}"
    want='["tool_calls","\"Let me check.\"",[["get_weather","{\"city\": \"New York\", \"unit\": \"c\"}"]]]'
    [ "$code" = 200 ] && [ "$whole" = "$want" ] && [ "$whole" = "$streamed" ] && [ "${deltas:-0}" -gt 1 ] \
        && ok "qwen3.5, auto, streamed: text before the call stays content, $deltas deltas join into the arguments not streamed" \
        || not_ok "qwen3.5 auto streamed: $code $code2 '$whole' '$streamed' deltas $deltas"
    bad='<tool_call><function=get_weather><parameter=city>Oslo</parameter>oops</function></tool_call>'
    fixed="{\"type\":\"json_schema\",\"json_schema\":{\"schema\":{\"const\":\"$bad\"}}}"
    same bad "{\"messages\":$MSG,\"tools\":$TOOLS,\"seed\":5,\"max_tokens\":300,\"response_format\":$fixed}"
    want="[\"stop\",\"\\\"$bad\\\"\",[]]"
    [ "$code" = 200 ] && [ "$whole" = "$want" ] && [ "$whole" = "$streamed" ] \
        && ok "qwen3.5, auto: a block that does not parse stays content whole, streamed too (its call begun: ${deltas:-none})" \
        || not_ok "qwen3.5 bad block: $code $code2 '$whole' '$streamed' want '$want'"
    stop_server
else
    not_ok "qwen3.5 streamed: server: $(head -c 300 "$TMP/server.err")"
fi

# Qwen3.5 on its own architecture (a random qwen35 model whose file
# carries Qwen3.5-4B's template): a string parameter's text comes back as
# a string even where it reads as JSON ("true"), a parameter that may be a
# string or null is JSON, and a bounded string is raw text within its
# bounds; streamed and not. Seed 1 (and the refusal) under the ASan build;
# seeds 2 and 3 through the release build (./pith, as t_grammar.sh): the
# same replies byte for byte (compared 2026-11-29), where the ASan
# build's qwen35 forward pass cost 3 CPU s a seed and checked no more
# code (test_forward runs qwen35 under the sanitizers).
# the model is data: the release mkmodel writes the same bytes, faster
# (t_inspect.sh runs the ASan one)
MK=${MK:-build/rel/tools/mkmodel}
REL=${PITH_REL:-./pith}
[ -x "$REL" ] || not_ok "$REL is not built (make pith)"
SRC=$(sh tests/llamacpp_src.sh 2>"$TMP/src.err") || not_ok "llama.cpp's templates: $(cat "$TMP/src.err")"
cp "$SRC/models/templates/Qwen3.5-4B.jinja" "$TMP/t.jinja"
"$MK" "$TMP/q35.gguf" --arch qwen35 --layers 4 --embd 128 --ff 256 --heads 2 --kv-heads 1 --head-dim 256 --rope-dim 64 \
    --ctx 4096 --type f32 --seed 3 --template-file "$TMP/t.jinja" >"$TMP/mk.out" 2>&1 || not_ok "qwen35: mkmodel: $(head -c 300 "$TMP/mk.out")"
printf '[{"role": "user", "content": "Hi"}]' >"$TMP/msgs.json"
"$PITH" template "$TMP/q35.gguf" --messages "$TMP/msgs.json" >"$TMP/auto" 2>&1
"$PITH" template "$TMP/q35.gguf" --messages "$TMP/msgs.json" --template qwen3.5-think >"$TMP/forced" 2>&1
[ -s "$TMP/auto" ] && cmp -s "$TMP/auto" "$TMP/forced" && ok "qwen35 model: its file's template (Qwen3.5-4B's as llama.cpp keeps it) renders as the built-in qwen3.5-think" || not_ok "qwen35 template: $(head -c 200 "$TMP/auto")"
T2='[{"type":"function","function":{"name":"set_zip","parameters":{"type":"object","properties":{"zip":{"type":"string","enum":["12345","true"]},"n":{"type":["integer","null"]},"tag":{"type":"string","maxLength":8}},"required":["zip","n","tag"]}}}]'
ZIP_OK='a => typeof a.zip === "string" && ["12345","true"].includes(a.zip) && (a.n === null || Number.isInteger(a.n)) && typeof a.tag === "string" && [...a.tag].length <= 8 && Object.keys(a).length === 3'
zip_calls() { # BIN SEEDS...: serves the qwen35 model, a forced call and a named streamed one per seed
    bin=$1; shift
    serve_start "$bin" "$TMP/q35.gguf" -t 1 -c 4096
    if [ -z "$PORT" ]; then not_ok "qwen3.5: server ($bin): $(head -c 300 "$TMP/server.err")"; return 1; fi
    for seed in "$@"; do
        code=$(post /v1/chat/completions "{\"messages\":$MSG,\"tools\":$T2,\"tool_choice\":\"required\",\"seed\":$seed,\"max_tokens\":2000}")
        v=$(jget "$TMP/body" "const m = r.choices[0].message, ok = $ZIP_OK; [r.choices[0].finish_reason, m.content, m.tool_calls.length > 0, m.tool_calls.every(t => t.function.name === 'set_zip' && ok(JSON.parse(t.function.arguments)))].join(' ')" 2>&1)
        [ "$code" = 200 ] && [ "$v" = "tool_calls  true true" ] && ok "qwen3.5, required, seed $seed: string parameters stay strings ($(jget "$TMP/body" 'JSON.stringify(r.choices[0].message.tool_calls[0].function.arguments)'))" \
            || not_ok "qwen3.5 strings, seed $seed: $code $v $(head -c 600 "$TMP/body")"
        code=$(post /v1/chat/completions "{\"messages\":$MSG,\"tools\":$T2,\"tool_choice\":{\"type\":\"function\",\"function\":{\"name\":\"set_zip\"}},\"seed\":$seed,\"max_tokens\":400,\"stream\":true}" -N)
        fold && v=$(jget "$TMP/folded" "const ok = $ZIP_OK; [r.finish, r.calls.length, r.calls[0].name, ok(JSON.parse(r.calls[0].args)), r.content.trim() === '', r.calls[0].deltas > 1].join(' ')" 2>&1)
        [ "$code" = 200 ] && [ "$v" = "tool_calls 1 set_zip true true true" ] && ok "qwen3.5, streamed, named, seed $seed: one call, its arguments valid, in $(jget "$TMP/folded" 'r.calls[0].deltas') deltas" \
            || not_ok "qwen3.5 named stream, seed $seed: $code $v $(head -c 600 "$TMP/body")"
    done
}
if zip_calls "$PITH" 1; then
    # what still cannot be held to the form: a 400 with the reason
    code=$(post /v1/chat/completions "{\"messages\":$MSG,\"tools\":[{\"type\":\"function\",\"function\":{\"name\":\"f\",\"parameters\":{\"anyOf\":[{\"type\":\"object\"}]}}}],\"tool_choice\":\"required\"}")
    m=$(jget "$TMP/body" 'r.error.message' 2>/dev/null)
    case "$m" in *"one object schema at the top"*) named=1 ;; *) named=0 ;; esac
    [ "$code" = 400 ] && [ $named = 1 ] && ok "qwen3.5: parameters that are not an object schema, forced: 400 ($m)" || not_ok "qwen3.5 anyOf parameters: $code $(head -c 300 "$TMP/body")"
    stop_server
fi
zip_calls "$REL" 2 3 && stop_server

# templates without a tool-call format: the generic format (the reply held
# to {"tool_call": ...} or {"response": ...}): required gives tool_calls
# whose arguments hold the parameters; auto a call or the response's text
# as content, the same streamed
start_server() { serve_start "$PITH" "$Q" -t 1 -c 2048 --template "$1"; }
for tmpl in chatml gemma phi4; do
    start_server $tmpl
    code=$(post /v1/chat/completions "{\"messages\":$MSG,\"tools\":$TOOLS,\"tool_choice\":\"required\",\"seed\":5,\"max_tokens\":1000}")
    v=$(jget "$TMP/body" "const m = r.choices[0].message, ok = $ARGS_OK; [r.choices[0].finish_reason, m.content, m.tool_calls.length === 1, ok(m.tool_calls[0].function.name, JSON.parse(m.tool_calls[0].function.arguments))].join(' ')" 2>&1)
    [ "$code" = 200 ] && [ "$v" = "tool_calls  true true" ] && ok "$tmpl, the generic format, required: one call whose arguments hold the parameters" \
        || not_ok "$tmpl generic required: $code $v $(head -c 400 "$TMP/body")"
    for seed in 1 2; do
        code=$(post /v1/chat/completions "{\"messages\":$MSG,\"tools\":$TOOLS,\"seed\":$seed,\"max_tokens\":60}")
        whole=$(jget "$TMP/body" "const m = r.choices[0].message; JSON.stringify([m.content, (m.tool_calls || []).map(t => t.function.name)])" 2>&1)
        code2=$(post /v1/chat/completions "{\"messages\":$MSG,\"tools\":$TOOLS,\"seed\":$seed,\"max_tokens\":60,\"stream\":true}" -N)
        fold && streamed=$(jget "$TMP/folded" "JSON.stringify([r.calls.length ? null : r.content, r.calls.map(c => c.name)])" 2>&1)
        [ "$code" = 200 ] && [ "$code2" = 200 ] && [ "$whole" = "$streamed" ] && ok "$tmpl, the generic format, auto, seed $seed: $whole, the same streamed" \
            || not_ok "$tmpl generic auto seed $seed: $code $code2 '$whole' '$streamed'"
    done
    code=$(post /v1/chat/completions "{\"messages\":$MSG,\"tools\":$TOOLS,\"tool_choice\":\"none\",\"max_tokens\":4}")
    [ "$code" = 200 ] && ok "$tmpl with tools and tool_choice none: 200" || not_ok "$tmpl tool_choice none: $code $(head -c 300 "$TMP/body")"
    stop_server
done
finish
