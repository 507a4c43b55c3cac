#!/bin/sh
# t_template_jinja.sh - the model's own Jinja template in the commands
# (issue 34): `pith template` with --chat-template-file, --tools and --var;
# a template read from the GGUF; tool-call arguments given as a JSON
# string reach the template as an object; bos_token and eos_token from the
# vocabulary; strftime_now fixed by SOURCE_DATE_EPOCH; errors with the
# template's LINE:COL, its raise_exception, and the bounds on steps,
# recursion and output (one line, status 2, never a hang); the plan's
# rows; serve's POST /apply-template and chat_template_kwargs. The
# byte-for-byte comparison with jinja2 on llama.cpp's 70 templates is
# tests/t_template_corpus.sh.
. tests/lib.sh
. tests/serve_lib.sh
S=$FIX/models/stories260K.gguf      # SPM vocabulary: <s> and </s>; no template
Q=$FIX/models/tiny-qwen3-Q8_0.gguf  # carries ChatML as Jinja text
ED=${ED:-build/asan/tools/ggufedit}

# same NAME WANT_TEXT CMD...: the command prints exactly WANT_TEXT (printf format)
same() {
    name=$1 want=$2; shift 2
    printf "$want" >"$TMP/want"
    if "$@" >"$TMP/out" 2>"$TMP/err" && cmp -s "$TMP/out" "$TMP/want"; then ok "$name"
    else not_ok "$name: $(head -c 200 "$TMP/out" | od -c | head -3) $(head -c 300 "$TMP/err")"; fi
}
# refused NAME PATTERN CMD...: status 2, one line on stderr that matches PATTERN
refused() {
    name=$1 pat=$2; shift 2
    expect_fail2 "$name" "$@"
    grep -q -- "$pat" "$TMP/err" && ok "$name: says '$pat'" || not_ok "$name: message: $(head -c 300 "$TMP/err")"
}

printf '[{"role":"system","content":"S"},{"role":"user","content":"Hi"}]' >"$TMP/two.json"
cat >"$TMP/t1.jinja" <<'EOF'
{{- bos_token }}{% for m in messages %}<{{ m.role }}>{{ m.content | trim }}{{ eos_token }}
{% endfor %}
{%- if add_generation_prompt %}<assistant>{% endif %}{{ greeting | default("(none)") }}
EOF
same "--chat-template-file: bos/eos of the vocabulary, the messages, the generation prompt" \
    '<s><system>S</s>\n<user>Hi</s>\n<assistant>(none)' $PITH template "$S" --messages "$TMP/two.json" --chat-template-file "$TMP/t1.jinja"
same "--var KEY=JSON: a variable of the template (the file's last newline dropped, as jinja2 does)" '<s><system>S</s>\n<user>Hi</s>\nhey' \
    $PITH template "$S" --messages "$TMP/two.json" --chat-template-file "$TMP/t1.jinja" --var 'greeting="hey"' --no-generation-prompt
refused "--var: a value that is not JSON" "--var: byte 0" $PITH template "$S" --messages "$TMP/two.json" --chat-template-file "$TMP/t1.jinja" --var 'greeting=hey'
refused "--var: no '='" "not KEY=JSON" $PITH template "$S" --messages "$TMP/two.json" --var greeting

# tools, and a call whose arguments are a JSON string
printf '[{"type":"function","function":{"name":"now"}},{"type":"function","function":{"name":"add","parameters":{"type":"object"}}}]' >"$TMP/tools.json"
printf '[{"role":"user","content":"x"},{"role":"assistant","content":null,"tool_calls":[{"type":"function","function":{"name":"add","arguments":"{\\"a\\": 1, \\"b\\": [2, 3]}"}}]}]' >"$TMP/call.json"
printf '{%%- for t in tools %%}{{ t.function.name }};{%%- endfor %%}\n{%%- set a = messages[1].tool_calls[0].function.arguments %%}{{ a.b[1] + a.a }} {{ a | tojson }} {{ messages[1].content }}' >"$TMP/t2.jinja"
same "--tools FILE; arguments as an object; content null as \"\" (as llama.cpp)" 'now;add;4 {"a": 1, "b": [2, 3]} ' \
    $PITH template "$S" --messages "$TMP/call.json" --tools "$TMP/tools.json" --chat-template-file "$TMP/t2.jinja"
printf '{"messages": [{"role":"user","content":"x"}], "tools": [{"type":"function","function":{"name":"now"}}]}' >"$TMP/obj.json"
printf '{%%- for t in tools %%}{{ t.function.name }};{%%- endfor %%}{{ messages | length }}' >"$TMP/t3.jinja"
same "--messages {messages, tools}" 'now;1' $PITH template "$S" --messages "$TMP/obj.json" --chat-template-file "$TMP/t3.jinja"
printf '{{ strftime_now("%%d %%b %%Y, %%A") }}' >"$TMP/date.jinja"
same "strftime_now: the date SOURCE_DATE_EPOCH gives" '29 Nov 2025, Saturday' \
    env SOURCE_DATE_EPOCH=1764374400 $PITH template "$S" --messages "$TMP/two.json" --chat-template-file "$TMP/date.jinja"

# The template the file carries: rendered, or refused at load with its line and column.
"$ED" "$S" "$TMP/own.gguf" --set-str tokenizer.chat_template '{% for m in messages %}[{{ m.role }}:{{ m.content }}]{% endfor %}' >/dev/null 2>&1 ||
    not_ok "ggufedit: a model with its own template"
same "the model's own template" '[system:S][user:Hi]' $PITH template "$TMP/own.gguf" --messages "$TMP/two.json"
same "--template NAME instead of the model's" '<|im_start|>system\nS<|im_end|>\n<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n' \
    $PITH template "$TMP/own.gguf" --messages "$TMP/two.json" --template chatml
"$ED" "$S" "$TMP/bad.gguf" --set-str tokenizer.chat_template 'ok
{% for m in messages %}{{ m.content }}{% endif %}' >/dev/null 2>&1 || not_ok "ggufedit: a model with a broken template"
refused "a broken template in the file: template" "bad.gguf: tokenizer.chat_template:2:" $PITH template "$TMP/bad.gguf" --messages "$TMP/two.json"
refused "a broken template in the file: run" "bad.gguf: tokenizer.chat_template:2:" $PITH run "$TMP/bad.gguf" -p hi -n 1
check "a broken template: --template NAME still runs" $PITH run "$TMP/bad.gguf" -p hi -n 1 --template chatml

# Errors and bounds: one line, status 2, the template's position.
printf 'a\n  {%% if %%}x{%% endif %%}' >"$TMP/syntax.jinja"
refused "a syntax error names FILE:LINE:COL" "syntax.jinja:2:" $PITH template "$S" --messages "$TMP/two.json" --chat-template-file "$TMP/syntax.jinja"
printf '{%% if messages[0].role == "system" %%}{{ raise_exception("System role not supported") }}{%% endif %%}' >"$TMP/raise.jinja"
refused "raise_exception: the template's own message" "System role not supported" $PITH template "$S" --messages "$TMP/two.json" --chat-template-file "$TMP/raise.jinja"
printf '{{ messages | frobnicate }}' >"$TMP/filter.jinja"
refused "an unknown filter is named" "frobnicate" $PITH template "$S" --messages "$TMP/two.json" --chat-template-file "$TMP/filter.jinja"
printf '{%% for i in range(100000) %%}{%% for j in range(100000) %%}{%% endfor %%}{%% endfor %%}' >"$TMP/loop.jinja"
refused "a loop of 10^10 steps ends with an error (the first bound it meets)" "steps\|work memory" timeout 60 $PITH template "$S" --messages "$TMP/two.json" --chat-template-file "$TMP/loop.jinja"
printf '{%% for i in range(1000000) %%}{%% endfor %%}' >"$TMP/range.jinja"
refused "range() beyond the sandbox's 100000, as jinja2's" "MAX_RANGE" $PITH template "$S" --messages "$TMP/two.json" --chat-template-file "$TMP/range.jinja"
printf '{%% macro f(n) %%}{{ f(n + 1) }}{%% endmacro %%}{{ f(0) }}' >"$TMP/deep.jinja"
refused "endless recursion ends with an error" "deep" $PITH template "$S" --messages "$TMP/two.json" --chat-template-file "$TMP/deep.jinja"
printf '{%% for i in range(100000) %%}{{ "x" * 1000000 }}{%% endfor %%}' >"$TMP/big.jinja"
refused "100 GB of output ends with an error" "bytes" timeout 60 $PITH template "$S" --messages "$TMP/two.json" --chat-template-file "$TMP/big.jinja"
refused "--chat-template-file and --template together" "either" $PITH template "$S" --messages "$TMP/two.json" --chat-template-file "$TMP/t1.jinja" --template chatml

# The plan shows the template's memory.
if $PITH run "$Q" -p hi --plan >"$TMP/plan" 2>&1 && grep -q "chat template " "$TMP/plan" && grep -q "chat template work" "$TMP/plan"; then
    ok "--plan: the template and its work region"
else not_ok "--plan: $(grep -i template "$TMP/plan")"; fi

# serve: POST /apply-template, chat_template_kwargs, a template error is a 400.
for tool in curl node; do
    command -v $tool >/dev/null 2>&1 || { not_ok "$tool is not installed"; finish; }
done
post() { # PATH JSON: status code; the body in $TMP/body
    curl -s -m 60 -o "$TMP/body" -w '%{http_code}' -H 'Content-Type: application/json' --data-binary "$2" "$URL$1"
}
printf '{{ bos_token }}{%% for m in messages %%}<{{ m.role }}>{{ m.content }}{%% endfor %%}{{ flavour | default("plain") }}{%% if boom is defined %%}{{ raise_exception("boom asked") }}{%% endif %%}' >"$TMP/srv.jinja"
serve_start $PITH "$Q" -c 128 -t 1 --chat-template-file "$TMP/srv.jinja"
[ -n "$PORT" ] || { not_ok "serve: did not start: $(cat "$TMP/server.err")"; finish; }
st=$(post /apply-template '{"messages":[{"role":"user","content":"Hi \"you\""}]}')
[ "$st" = 200 ] && [ "$(cat "$TMP/body")" = '{"prompt":"<|endoftext|><user>Hi \"you\"plain"}' ] && ok "/apply-template: the prompt as JSON" ||
    not_ok "/apply-template: $st $(cat "$TMP/body")"
st=$(post /apply-template '{"messages":[{"role":"user","content":"Hi"}],"chat_template_kwargs":{"flavour":"mint","enable_thinking":false}}')
[ "$st" = 200 ] && [ "$(cat "$TMP/body")" = '{"prompt":"<|endoftext|><user>Himint"}' ] && ok "chat_template_kwargs: every key a variable" ||
    not_ok "chat_template_kwargs: $st $(cat "$TMP/body")"
st=$(post /v1/chat/completions '{"messages":[{"role":"user","content":"Hi"}],"chat_template_kwargs":{"boom":1},"max_tokens":1}')
[ "$st" = 400 ] && grep -q 'boom asked' "$TMP/body" && ok "a template's raise_exception: 400 with its message" ||
    not_ok "raise_exception in serve: $st $(cat "$TMP/body")"
st=$(post /v1/chat/completions '{"messages":[{"role":"user","content":"Hi"}],"max_tokens":2,"temperature":0}')
[ "$st" = 200 ] && ok "the server survives and answers after a refused request" || not_ok "after a 400: $st $(cat "$TMP/body")"
stop_server
finish
