# Constrained output and tool calls, end to end: `pith run` and `pith chat`
# with --grammar and --json-schema (sampled replies match; bad grammars and
# schemas are one line and exit 2), and `pith serve` with response_format
# (200 sampled replies at temperature 1.0 per schema on stories260K, 25 on
# tiny-qwen3, each parsed and validated by ajv from npm) and tools (curl;
# the official openai client runs the whole tool loop, streamed and not).
. tests/lib.sh
S=$FIX/models/stories260K.gguf
Q=$FIX/models/tiny-qwen3-Q8_0.gguf
. tests/serve_lib.sh
start_server() { model=$1; shift; serve_start "${SERVE_BIN:-$PITH}" "$model" -t 1 "$@"; } # MODEL [options]
post() { # PATH JSON [curl options]: status code; the body in $TMP/body
    p=$1; d=$2; shift 2
    curl -s -m 60 -o "$TMP/body" -w '%{http_code}' -H 'Content-Type: application/json' --data-binary "$d" "$@" "$URL$p"
}
. tests/jget_lib.sh

# ---- the command line --------------------------------------------------------
cat >"$TMP/yesno.gbnf" <<'G'
# an answer and a two-digit number
root ::= ("yes" | "no") ", " [1-9] [0-9] "."
G
cat >"$TMP/list.gbnf" <<'G'
root ::= item ("," item){2,4}
item ::= [a-z]{1,6}
G
# Seeds 1-4 under the ASan build, 5-20 through the release build (./pith):
# the same 40 replies byte for byte (compared 2026-11-29), where an ASan
# process cost 0.07 CPU s and checked no code the first four do not.
REL=${PITH_REL:-./pith}
[ -x "$REL" ] || not_ok "$REL is not built (make pith)"
all=1
for seed in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20; do
    bin=$REL; [ $seed -le 4 ] && bin=$PITH
    out=$($bin run "$S" --raw -p "Once upon a time" --grammar "$TMP/yesno.gbnf" --temp 1 --top-k 0 --seed $seed -n 64 2>/dev/null)
    echo "$out" | grep -Eqx '(yes|no), [1-9][0-9]\.' || { all=0; echo "# seed $seed: '$out'"; }
    out=$($bin run "$S" --raw -p "Once upon a time" --grammar "$TMP/list.gbnf" --temp 1 --seed $seed -n 64 2>/dev/null)
    echo "$out" | grep -Eqx '[a-z]{1,6}(,[a-z]{1,6}){2,4}' || { all=0; echo "# seed $seed: '$out'"; }
done
[ $all = 1 ] && ok "run --grammar: 40 sampled replies (temperature 1) match their grammars" || not_ok "run --grammar: a reply does not match"

printf '%s' '{"type":"object","properties":{"n":{"type":"integer"},"s":{"enum":["a","b"]}},"required":["n","s"],"additionalProperties":false}' >"$TMP/s.json"
$PITH run "$Q" -p "JSON" --json-schema "$TMP/s.json" --temp 0 -n 100 >"$TMP/out" 2>"$TMP/err"
# (the verdicts by jget's node, one for the script; r: the JSON, or the path of a text)
[ "$(jget "$TMP/out" 'Number.isInteger(r.n) && ["a","b"].includes(r.s) && Object.keys(r).length === 2' 2>/dev/null)" = true ] \
    && ok "run --json-schema (tiny-qwen3, greedy): $(head -c 80 "$TMP/out" | tr '\n' ' ')" || not_ok "run --json-schema: '$(cat "$TMP/out")' $(cat "$TMP/err" | head -c 300)"
printf 'first\nsecond\n' | $PITH chat "$Q" --json-schema "$TMP/s.json" --temp 0.8 --seed 3 -n 100 >"$TMP/out" 2>"$TMP/err"
printf '"%s"' "$TMP/out" >"$TMP/out.path"
[ "$(jget "$TMP/out.path" '
const text = require("fs").readFileSync(r, "utf8"); let n = 0, depth = 0, start = 0, all = true;
for (let i = 0; i < text.length; i++) { if (text[i] === "{") { if (!depth) start = i; depth++; } else if (text[i] === "}") { depth--; if (!depth) { const v = JSON.parse(text.slice(start, i + 1)); if (!Number.isInteger(v.n)) all = false; n++; } } }
all && n === 2' 2>/dev/null)" = true ] && ok "chat --json-schema: both replies are objects of the schema" || not_ok "chat --json-schema: '$(cat "$TMP/out")' $(head -c 300 "$TMP/err")"

printf 'root ::= "a" bad\n' >"$TMP/bad1.gbnf"
expect_fail2 "--grammar with an undefined rule: exit 2, one line" $PITH run "$S" -p x --grammar "$TMP/bad1.gbnf"
grep -q "bad1.gbnf: 1:14: undefined rule 'bad'" "$TMP/err" && ok "  ... naming file, line and column" || not_ok "undefined rule message: $(cat "$TMP/err")"
printf 'root ::= x\nx ::= x "a"\n' >"$TMP/bad2.gbnf"
expect_fail2 "--grammar with left recursion: exit 2, one line" $PITH run "$S" -p x --grammar "$TMP/bad2.gbnf"
printf 'root ::= "a\n' >"$TMP/bad3.gbnf"
expect_fail2 "--grammar with an unterminated literal: exit 2" $PITH run "$S" -p x --grammar "$TMP/bad3.gbnf"
printf '%s' '{"type":"string","format":"email"}' >"$TMP/bad.json"
expect_fail2 "--json-schema with an unsupported keyword: exit 2, one line" $PITH run "$S" -p x --json-schema "$TMP/bad.json"
grep -q "unsupported keyword 'format'" "$TMP/err" && ok "  ... naming the keyword" || not_ok "schema message: $(cat "$TMP/err")"
printf '{"type":' >"$TMP/bad4.json"
expect_fail2 "--json-schema that is not JSON: exit 2" $PITH run "$S" -p x --json-schema "$TMP/bad4.json"
expect_fail2 "--grammar FILE that does not exist: exit 2" $PITH run "$S" -p x --grammar "$TMP/none.gbnf"
expect_fail2 "--grammar and --json-schema together: exit 2" $PITH run "$S" -p x --grammar "$TMP/yesno.gbnf" --json-schema "$TMP/s.json"
# hostile: huge alternation, deep nesting, big repetition
awk 'BEGIN { printf "root ::= "; for (i = 0; i < 3000; i++) printf "%s\"w%d\"", (i ? " | " : ""), i; print "" }' >"$TMP/wide.gbnf"
expect_fail2 "a 3000-way alternation: refused up front (the planned bound)" $PITH run "$S" -p x --grammar "$TMP/wide.gbnf"
awk 'BEGIN { printf "root ::= "; for (i = 0; i < 5000; i++) printf "("; printf "\"a\""; for (i = 0; i < 5000; i++) printf ")"; print "" }' >"$TMP/deep.gbnf"
expect_fail2 "5000 nested groups: refused (more rules than planned)" $PITH run "$S" -p x --grammar "$TMP/deep.gbnf"
awk 'BEGIN { printf "root ::="; for (i = 0; i < 40; i++) printf " [a-z]{1000}"; print "" }' >"$TMP/rep.gbnf"
expect_fail2 "40 x {1000}: refused (more elements than planned)" $PITH run "$S" -p x --grammar "$TMP/rep.gbnf"
grep -q "too large" "$TMP/err" && ok "  ... saying so" || not_ok "rep message: $(cat "$TMP/err")"

# ---- pith serve ----------------------------------------------------------------
for tool in curl node npm; do
    command -v $tool >/dev/null 2>&1 || { not_ok "$tool is not installed (the test needs curl, node 20 and npm)"; finish; }
done
if ! NPM=$(sh tests/npm_clients.sh 2>"$TMP/npm.err"); then not_ok "$(cat "$TMP/npm.err")"; finish; fi
ok "npm ajv $(jget "$NPM/node_modules/ajv/package.json" r.version), openai $(jget "$NPM/node_modules/openai/package.json" r.version) (tests/npm_clients.sh)"

# 200 sampled replies per schema: all parse and validate
replies() { # MODEL COUNT LABEL [serve options]
    model=$1; count=$2; label=$3; shift 3
    start_server "$model" "$@"
    if [ -z "$PORT" ]; then not_ok "$label: the server did not start: $(head -c 300 "$TMP/server.err")"; return; fi
    if timeout 1200 node "$NPM/replies.mjs" "$URL" tests/grammar/schemas.json "$count" >"$TMP/replies.json" 2>"$TMP/replies.err"; then
        for name in person nested arrays enums numbers json_object; do
            r=$(jget "$TMP/replies.json" "const x = r.$name; [x.ok, x.finish.stop || 0, x.finish.length || 0, x.tokens].join(' ')")
            set -- $r
            # every reply that ended (stop) parses and validates; bounded schemas always end
            if [ "$1" = "$2" ] && { [ "$3" = 0 ] || [ $name = json_object ]; } && [ $(($2 + $3)) = "$count" ]; then
                ok "$label $name: $1 of $count sampled replies parse and validate ($4 tokens; $3 cut at the length limit)"
            else not_ok "$label $name: $r: $(jget "$TMP/replies.json" "JSON.stringify(r.$name.bad)")"; fi
        done
    else not_ok "$label: $(head -c 600 "$TMP/replies.err")"; fi
    stop_server
}
# The 1200-reply soak on stories260K and the 150 replies on tiny-qwen3 run
# the release build (./pith, as t_soak.sh): they check what comes out (the
# same replies as the ASan build, byte for byte: stories260K the same
# 80,196 tokens; tiny-qwen3 all 150 texts, compared 2026-11-29), and ASan
# multiplied their CPU time by 3 to 6 (the forward pass, 90% of it)
# without checking more code: the first 5 replies of every schema (both
# top_k settings; json_object's fifth runs to the length limit, 1000
# tokens) go through the ASan server as well, then the tools below, and
# test_grammar and fuzz_grammar.
SERVE_BIN=$REL
replies "$S" 200 "stories260K" -c 512
replies "$Q" 25 "tiny-qwen3" -c 2048
SERVE_BIN=
replies "$Q" 5 "tiny-qwen3 (ASan build)" -c 2048

# tools on tiny-qwen3 through the Qwen3 template
start_server "$Q" -c 2048 --template qwen3
[ -n "$PORT" ] && ok "serve --template qwen3 on $PORT" || { not_ok "server: $(head -c 300 "$TMP/server.err")"; finish; }
TOOLS='[{"type":"function","function":{"name":"get_weather","parameters":{"type":"object","properties":{"city":{"type":"string","maxLength":12},"unit":{"enum":["c","f"]}},"required":["city","unit"]}}},{"type":"function","function":{"name":"add","parameters":{"type":"object","properties":{"a":{"type":"integer"},"b":{"type":"integer"}},"required":["a","b"]}}}]'
MSG='[{"role":"user","content":"Weather in Paris?"}]'
code=$(post /v1/chat/completions "{\"messages\":$MSG,\"tools\":$TOOLS,\"tool_choice\":\"required\",\"seed\":5,\"max_tokens\":300}")
v=$(jget "$TMP/body" 'const m = r.choices[0].message; [r.choices[0].finish_reason, m.content, m.tool_calls.length > 0, m.tool_calls.every(t => t.type === "function" && t.id && ["get_weather","add"].includes(t.function.name) && typeof JSON.parse(t.function.arguments) === "object")].join(" ")' 2>&1)
[ "$code" = 200 ] && [ "$v" = "tool_calls  true true" ] && ok "curl, tool_choice required: message.tool_calls with JSON arguments, content null, finish tool_calls" || not_ok "required: $code $v $(head -c 400 "$TMP/body")"
code=$(post /v1/chat/completions "{\"messages\":$MSG,\"tools\":$TOOLS,\"tool_choice\":{\"type\":\"function\",\"function\":{\"name\":\"add\"}},\"seed\":5,\"max_tokens\":300,\"stream\":true}" -N)
printf '"%s"' "$TMP/body" >"$TMP/body.path"
[ "$(jget "$TMP/body.path" '
const ev = require("fs").readFileSync(r, "utf8").split("\n\n").filter(e => e.length);
if (ev[ev.length - 1] !== "data: [DONE]") throw new Error("no [DONE]");
const calls = []; let finish = null;
for (const e of ev.slice(0, -1)) { const c = JSON.parse(e.slice(6)); const ch = c.choices[0]; if (!ch) continue;
  for (const t of ch.delta.tool_calls || []) { const x = calls[t.index] ??= {name: "", args: ""}; if (t.function.name) x.name += t.function.name; x.args += t.function.arguments || ""; }
  if (ch.finish_reason) finish = ch.finish_reason; }
const a = JSON.parse(calls[0].args);
finish === "tool_calls" && calls.length === 1 && calls[0].name === "add" && Number.isInteger(a.a) && Number.isInteger(a.b)' 2>/dev/null)" = true ] \
    && ok "curl, streamed, a named function: one call of add in deltas, integer arguments, finish tool_calls" || not_ok "named stream: $(head -c 600 "$TMP/body")"
# a tool result goes back into the template
RT="[{\"role\":\"user\",\"content\":\"Weather?\"},{\"role\":\"assistant\",\"content\":null,\"tool_calls\":[{\"id\":\"call_9\",\"type\":\"function\",\"function\":{\"name\":\"get_weather\",\"arguments\":\"{\\\"city\\\": \\\"Oslo\\\", \\\"unit\\\": \\\"c\\\"}\"}}]},{\"role\":\"tool\",\"tool_call_id\":\"call_9\",\"content\":\"{\\\"temp\\\": 21}\"}]"
code=$(post /v1/chat/completions "{\"messages\":$RT,\"tools\":$TOOLS,\"max_tokens\":8,\"temperature\":0}")
[ "$code" = 200 ] && [ "$(jget "$TMP/body" 'typeof r.choices[0].message.content')" = string ] && ok "curl: assistant tool_calls and a role tool message with tool_call_id: 200" || not_ok "tool result: $code $(head -c 300 "$TMP/body")"
printf '{"messages":%s,"tools":%s}' "$RT" "$TOOLS" >"$TMP/rt.json"
$PITH template "$Q" --template qwen3 --messages "$TMP/rt.json" >"$TMP/rt.txt" 2>"$TMP/err"
grep -q '^<tool_response>$' "$TMP/rt.txt" && grep -q '{"temp": 21}' "$TMP/rt.txt" && grep -q '"name": "get_weather", "arguments": {"city": "Oslo", "unit": "c"}' "$TMP/rt.txt" \
    && ok "the round trip renders the call and the <tool_response> (pith template)" || not_ok "round trip render: $(head -c 600 "$TMP/rt.txt") $(cat "$TMP/err")"
# errors: 400 with a reason
for bad in "{\"messages\":$MSG,\"tools\":$TOOLS,\"tool_choice\":\"sometimes\"}" \
           "{\"messages\":$MSG,\"tools\":$TOOLS,\"tool_choice\":{\"type\":\"function\",\"function\":{\"name\":\"nope\"}}}" \
           "{\"messages\":$MSG,\"tool_choice\":\"required\"}" \
           "{\"messages\":$MSG,\"response_format\":{\"type\":\"yaml\"}}" \
           "{\"messages\":$MSG,\"response_format\":{\"type\":\"json_schema\",\"json_schema\":{\"schema\":{\"type\":\"string\",\"pattern\":\"x\"}}}}" \
           "{\"messages\":$MSG,\"response_format\":{\"type\":\"json_schema\",\"json_schema\":{\"schema\":{\"\$ref\":\"#/\$defs/x\"}}}}" \
           "{\"messages\":$MSG,\"tools\":[{\"type\":\"function\",\"function\":{\"name\":\"f\",\"parameters\":{\"type\":\"object\",\"not\":{}}}}],\"tool_choice\":\"required\"}" \
           "{\"messages\":$MSG,\"tools\":$TOOLS,\"tool_choice\":\"required\",\"response_format\":{\"type\":\"json_object\"}}"; do
    code=$(post /v1/chat/completions "$bad")
    m=$(jget "$TMP/body" 'r.error.type + ": " + r.error.message' 2>/dev/null)
    [ "$code" = 400 ] && [ -n "$m" ] && ok "400: $m" || not_ok "bad request $bad: $code $(head -c 300 "$TMP/body")"
done
code=$(post /health "")
curl -s -m 10 -o "$TMP/body" "$URL/health" && [ "$(jget "$TMP/body" r.status)" = ok ] && ok "the server still answers" || not_ok "health after errors"
# the official client: the whole loop, streamed and not, required and named
if timeout 300 node "$NPM/openai_tools.mjs" "$URL/v1" >"$TMP/oa.json" 2>"$TMP/oa.err"; then
    for k in json_required json_named stream_required stream_named; do
        v=$(jget "$TMP/oa.json" "[r.$k.calls, r.$k.finish, r.$k.answer_is_text, r.$k.answer_finish !== 'tool_calls'].join(' ')")
        [ "$(echo "$v" | cut -d' ' -f1-4)" = "ok tool_calls true true" ] && ok "openai client $k: calls parse and hold the parameters; the tool results go back and the model answers" \
            || not_ok "openai client $k: $v $(cat "$TMP/oa.json")"
    done
    v=$(jget "$TMP/oa.json" '[r.auto.content].join(" ")')
    [ "$v" = string ] && ok "openai client, tool_choice auto: a well-formed reply" || not_ok "auto: $(cat "$TMP/oa.json")"
else not_ok "openai tools: $(head -c 600 "$TMP/oa.err")"; fi
stop_server
finish
