#!/bin/sh
# bench_template.sh - how long rendering a chat template takes (issue 34:
# it must not show in a request's time): the longest template of
# llama.cpp's corpus (tests/llamacpp_src.sh) with a conversation of 20
# messages (tool calls and results among them) and 10 tools, rendered by
# pith's interpreter (the release build of tests/tools/main_jinja_render.c,
# each render as a request does it: variables set from JSON, then the
# render) and, for scale, by jinja2 as transformers sets it up. Checks that
# both texts are the same bytes. Not part of `make test`.
#
#   sh tests/bench_template.sh [RUNS]       (default 200)
set -u
RUNS=${1:-200}
PYTHON=${PYTHON:-/usr/bin/python3}
RENDER=build/rel/tools/jinja_render
export SOURCE_DATE_EPOCH=1741183629
TMP=${TMPDIR:-/tmp}/pith-bench-template-$$
trap 'rm -rf "$TMP"' EXIT
mkdir -p "$TMP"

src=$(sh tests/llamacpp_src.sh) || exit 1
make -s -j2 "$RENDER" || exit 1
template=$(ls -S "$src"/models/templates/*.jinja | head -1)

# 10 tools, and 20 messages: a system prompt, then user and assistant turns,
# three of them tool calls each answered by a tool message.
"$PYTHON" - "$TMP/long.json" <<'PY' || exit 1
import json, sys
kinds = ["string", "integer", "number", "boolean"]
tools = []
for i in range(10):
    props = {"arg%d" % k: {"type": kinds[(i + k) % 4], "description": "Argument %d of tool %d." % (k, i)}
             for k in range(3)}
    props["mode"] = {"type": "string", "enum": ["fast", "exact"], "description": "How to run it"}
    tools.append({"type": "function", "function": {
        "name": "tool_%d" % i, "description": "Tool number %d: does step %d of the job." % (i, i),
        "parameters": {"type": "object", "properties": props, "required": ["arg0", "mode"]}}})
messages = [{"role": "system", "content": "You are a careful assistant. Use the tools when they help."}]
call = 0
while len(messages) < 20:
    n = len(messages)
    messages.append({"role": "user", "content": "Question %d: what does step %d give for the input «x%d»?" % (n, n, n)})
    if n % 6 == 1 and len(messages) <= 17:
        call += 1
        cid = "call%05d" % call
        messages.append({"role": "assistant", "content": "", "tool_calls": [{"id": cid, "type": "function",
                         "function": {"name": "tool_%d" % call, "arguments": {"arg0": "x%d" % n, "mode": "fast"}}}]})
        messages.append({"role": "tool", "tool_call_id": cid, "name": "tool_%d" % call,
                         "content": json.dumps({"result": n * 7, "unit": "steps"})})
    if len(messages) < 20:
        messages.append({"role": "assistant", "content": "Step %d gives %d. " % (n, n * 7) * 3})
messages = messages[:19] + [{"role": "user", "content": "Summarise all results in one table."}]
case = {"messages": messages, "tools": tools, "documents": None, "add_generation_prompt": True,
        "bos_token": "<s>", "eos_token": "</s>"}
with open(sys.argv[1], "w") as f:
    json.dump(case, f, ensure_ascii=False, indent=1)
PY

"$PYTHON" tests/tools/jinja_ref.py "$TMP/ref" "$TMP/long.json" -- "$template" || exit 1
"$RENDER" --repeat "$RUNS" "$TMP/pith" "$TMP/long.json" -- "$template" >"$TMP/times" || exit 1
name=$(basename "$template" .jinja)
echo "CPU: $(sed -n 's/^model name[^:]*: //p' /proc/cpuinfo | head -1), $(date -u +%Y-%m-%d)"
echo "pith:   $(cat "$TMP/times")"
"$PYTHON" - "$template" "$TMP/long.json" "$RUNS" <<'PY'
import json, sys, time
sys.path.insert(0, "tests/tools")
import jinja_ref
source = open(sys.argv[1], encoding="utf-8", newline="").read()
case = json.load(open(sys.argv[2], encoding="utf-8"))
runs = int(sys.argv[3])
env = jinja_ref.environment()
t0 = time.perf_counter()
template = env.from_string(source)
compiled = time.perf_counter() - t0
t0 = time.perf_counter()
for _ in range(runs):
    text = template.render(**case)
print("jinja2: compiled in %.1f us; %d bytes rendered in %.1f us (mean of %d)" %
      (1e6 * compiled, len(text.encode()), 1e6 * (time.perf_counter() - t0) / runs, runs))
PY
if [ -f "$TMP/ref/$name@long.txt" ] && cmp -s "$TMP/ref/$name@long.txt" "$TMP/pith/$name@long.txt"; then
    echo "same text from both: yes"
else
    echo "same text from both: NO ($(cat "$TMP"/pith/*.err "$TMP"/ref/*.err 2>/dev/null | head -c 300))"
fi
