#!/bin/sh
# t_template.sh - `pith template` against the chat fixtures (byte for byte),
# other templates, tools, and refused inputs.
. tests/lib.sh
VOCAB=$FIX/tokenizer/qwen3-vocab.gguf

# Each fixture's .json holds the conversation as its "messages" array, one
# key per line at a fixed indentation: cut that array out with sed.
n=0
while IFS='	' read -r id vocab gen think nmsg nids; do
    [ "$id" = case_id ] && continue
    n=$((n + 1))
    sed -n '/^ "messages": \[$/,/^ \],$/p' "$FIX/chat/$id.json" | sed -e '1s/.*/[/' -e '$s/.*/]/' >"$TMP/$id.msgs.json"
    flags=
    [ "$gen" = 0 ] && flags="$flags --no-generation-prompt"
    [ "$think" = 0 ] && flags="$flags --no-think"
    if $PITH template "$FIX/$vocab" --messages "$TMP/$id.msgs.json" $flags >"$TMP/$id.out" 2>"$TMP/$id.err" &&
        cmp -s "$TMP/$id.out" "$FIX/chat/$id.txt" && [ ! -s "$TMP/$id.err" ]; then
        ok "template $id: equals $id.txt byte for byte"
    else
        not_ok "template $id: differs from $id.txt: $(cmp "$TMP/$id.out" "$FIX/chat/$id.txt" 2>&1) $(head -c 300 "$TMP/$id.err")"
    fi
done <"$FIX/chat/cases.tsv"
# the read backend gives the same text
if $PITH template "$VOCAB" --messages "$TMP/pub_chat_single_user.msgs.json" --no-mmap >"$TMP/out" 2>"$TMP/err" &&
    cmp -s "$TMP/out" "$FIX/chat/pub_chat_single_user.txt"; then
    ok "template --no-mmap: same text"
else
    not_ok "template --no-mmap: $(head -c 300 "$TMP/err")"
fi
[ "$n" -eq 5 ] && ok "template: 5 fixture cases run" || not_ok "template: $n fixture cases run (want 5)"

# Tools and tool calls, with {"messages", "tools"}; expected text rendered
# with jinja2 from Qwen3's template (assistant content null read as "").
cat >"$TMP/tools.json" <<'JSON'
{"messages": [{"role": "user", "content": "Time?"},
  {"role": "assistant", "content": null, "tool_calls": [{"type": "function", "function": {"name": "now", "arguments": {"tz":"UTC"}}}]},
  {"role": "tool", "content": "12:00"}],
 "tools": [{"type": "function", "function": {"name": "now"}}]}
JSON
printf '<|im_start|>system\n# Tools\n\nYou may call one or more functions to assist with the user query.\n\nYou are provided with function signatures within <tools></tools> XML tags:\n<tools>\n{"type": "function", "function": {"name": "now"}}\n</tools>\n\nFor each function call, return a json object with function name and arguments within <tool_call></tool_call> XML tags:\n<tool_call>\n{"name": <function-name>, "arguments": <args-json-object>}\n</tool_call><|im_end|>\n<|im_start|>user\nTime?<|im_end|>\n<|im_start|>assistant\n<tool_call>\n{"name": "now", "arguments": {"tz": "UTC"}}\n</tool_call><|im_end|>\n<|im_start|>user\n<tool_response>\n12:00\n</tool_response><|im_end|>\n<|im_start|>assistant\n' >"$TMP/tools.want"
if $PITH template "$VOCAB" --messages "$TMP/tools.json" >"$TMP/tools.out" 2>"$TMP/err" && cmp -s "$TMP/tools.out" "$TMP/tools.want"; then
    ok "template: tools and tool calls"
else
    not_ok "template: tools and tool calls: $(cmp "$TMP/tools.out" "$TMP/tools.want" 2>&1) $(head -c 300 "$TMP/err")"
fi

# The tiny models carry plain ChatML; stories260K has no template: ChatML, with a note.
printf '[{"role":"system","content":"S"},{"role":"user","content":"Hi"}]' >"$TMP/two.json"
printf '<|im_start|>system\nS<|im_end|>\n<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n' >"$TMP/chatml.want"
if $PITH template "$FIX/models/tiny-qwen3-Q8_0.gguf" --messages "$TMP/two.json" >"$TMP/out" 2>"$TMP/err" &&
    cmp -s "$TMP/out" "$TMP/chatml.want" && [ ! -s "$TMP/err" ]; then
    ok "template: ChatML of tiny-qwen3"
else
    not_ok "template: ChatML of tiny-qwen3: $(cmp "$TMP/out" "$TMP/chatml.want" 2>&1) $(head -c 300 "$TMP/err")"
fi
if $PITH template "$FIX/models/stories260K.gguf" --messages "$TMP/two.json" >"$TMP/out" 2>"$TMP/err" &&
    cmp -s "$TMP/out" "$TMP/chatml.want" && grep -q 'note: no tokenizer.chat_template in the model: ChatML renders' "$TMP/err"; then
    ok "template: no template -> ChatML and a note"
else
    not_ok "template: no template: $(head -c 300 "$TMP/out") $(head -c 300 "$TMP/err")"
fi

# --template NAME overrides what the model carries (texts rendered with
# jinja2 from the real Zephyr and Llama 3.1 templates, see test_chat.c).
printf '<|system|>\nS</s>\n<|user|>\nHi</s>\n<|assistant|>\n' >"$TMP/zephyr.want"
if $PITH template "$FIX/models/stories260K.gguf" --messages "$TMP/two.json" --template zephyr >"$TMP/out" 2>"$TMP/err" &&
    cmp -s "$TMP/out" "$TMP/zephyr.want" && [ ! -s "$TMP/err" ]; then
    ok "template --template zephyr on a model without a template"
else
    not_ok "template --template zephyr: $(cmp "$TMP/out" "$TMP/zephyr.want" 2>&1) $(head -c 300 "$TMP/err")"
fi
printf '<|begin_of_text|><|start_header_id|>system<|end_header_id|>\n\nCutting Knowledge Date: December 2023\nToday Date: 26 Jul 2024\n\nS<|eot_id|><|start_header_id|>user<|end_header_id|>\n\nHi<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n\n' >"$TMP/llama31.want"
for name in llama3.1 llama3.2; do
    if $PITH template "$VOCAB" --messages "$TMP/two.json" --template $name >"$TMP/out" 2>"$TMP/err" &&
        cmp -s "$TMP/out" "$TMP/llama31.want"; then
        ok "template --template $name overrides the model's Qwen3 template"
    else
        not_ok "template --template $name: $(cmp "$TMP/out" "$TMP/llama31.want" 2>&1) $(head -c 300 "$TMP/err")"
    fi
done
if $PITH template "$VOCAB" --messages "$TMP/two.json" --template raw >"$TMP/out" 2>"$TMP/err" &&
    [ "$(cat "$TMP/out")" = "SHi" ] && [ ! -s "$TMP/err" ]; then
    ok "template --template raw: contents only, no warning"
else
    not_ok "template --template raw: $(head -c 300 "$TMP/out") $(head -c 300 "$TMP/err")"
fi
expect_fail2 "template --template with an unknown name" $PITH template "$VOCAB" --messages "$TMP/two.json" --template mistral
grep -q "'mistral' is not a template pith knows (raw, qwen3, chatml" "$TMP/err" && ok "template: unknown name listed with the known ones" ||
    not_ok "template: unknown name message: $(cat "$TMP/err")"
expect_fail2 "template --template without a value" $PITH template "$VOCAB" --messages "$TMP/two.json" --template

# Refused inputs: one "pith: ..." line, status 2.
printf '[{"role":"robot","content":"x"}]' >"$TMP/role.json"
printf '[{"role":"user","content":"x"}] x' >"$TMP/trail.json"
printf '[{"role":"user","content":"\\ud800"}]' >"$TMP/surr.json"
printf '[{"role":"user","content":"\303\050"}]' >"$TMP/utf8.json"
printf '[{"role":"user","role":"user","content":"x"}]' >"$TMP/dup.json"
printf '' >"$TMP/empty.json"
i=0; s=''; while [ $i -lt 70 ]; do s="$s["; i=$((i + 1)); done; printf '%s' "$s" >"$TMP/deep.json"
: >"$TMP/big.json"; truncate -s 17M "$TMP/big.json" 2>/dev/null || dd if=/dev/zero of="$TMP/big.json" bs=1M count=17 2>/dev/null
expect_fail2 "template --template qwen3 refuses an unknown role" $PITH template "$VOCAB" --messages "$TMP/role.json" --template qwen3
grep -q "role.json: messages: byte 9: unknown role" "$TMP/err" && ok "template: error names file and byte" || not_ok "template: error text: $(cat "$TMP/err")"
# the model's own template decides what a role means; a message without one is refused
printf '[{"content":"x"}]' >"$TMP/norole.json"
expect_fail2 "template refuses a message without a role" $PITH template "$VOCAB" --messages "$TMP/norole.json"
grep -q "norole.json: messages\[0\]: no role" "$TMP/err" && ok "template: the message without a role is named" || not_ok "template: no role: $(cat "$TMP/err")"
expect_fail2 "template refuses trailing garbage" $PITH template "$VOCAB" --messages "$TMP/trail.json"
expect_fail2 "template refuses a lone surrogate" $PITH template "$VOCAB" --messages "$TMP/surr.json"
expect_fail2 "template refuses invalid UTF-8" $PITH template "$VOCAB" --messages "$TMP/utf8.json"
expect_fail2 "template refuses a repeated key" $PITH template "$VOCAB" --messages "$TMP/dup.json"
expect_fail2 "template refuses an empty file" $PITH template "$VOCAB" --messages "$TMP/empty.json"
expect_fail2 "template refuses deep nesting" $PITH template "$VOCAB" --messages "$TMP/deep.json"
expect_fail2 "template refuses a file over 16 MiB" $PITH template "$VOCAB" --messages "$TMP/big.json"
expect_fail2 "template: missing messages file" $PITH template "$VOCAB" --messages "$TMP/nonexistent.json"
expect_fail2 "template: missing --messages" $PITH template "$VOCAB"
expect_fail2 "template: missing MODEL" $PITH template --messages "$TMP/two.json"
expect_fail2 "template: unknown option" $PITH template "$VOCAB" --messages "$TMP/two.json" --bogus
expect_fail2 "template: model that is not GGUF" $PITH template "$TMP/two.json" --messages "$TMP/two.json"
finish
