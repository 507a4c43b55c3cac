#!/bin/sh
# bench_template.sh - how long rendering a chat template takes (issue 34:
# it must not show in a request's time): the longest template of
# llama.cpp's corpus (tests/llamacpp_src.sh) with a conversation of 20
# messages (tool calls and results among them) and 10 tools
# (tests/templates/long_tools.json), rendered by
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

# 20 messages (a system prompt, user and assistant turns, three tool calls
# each answered by a tool message) and 10 tools: a case of the corpus check.
CASE=tests/templates/long_tools.json
"$PYTHON" tests/tools/jinja_ref.py "$TMP/ref" "$CASE" -- "$template" || exit 1
"$RENDER" --repeat "$RUNS" "$TMP/pith" "$CASE" -- "$template" >"$TMP/times" || exit 1
name=$(basename "$template" .jinja)
echo "CPU: $(sed -n 's/^model name[^:]*: //p' /proc/cpuinfo | head -1), $(date -u +%Y-%m-%d)"
echo "pith:   $(cat "$TMP/times")"
"$PYTHON" - "$template" "$CASE" "$RUNS" <<'PY'
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
if [ -f "$TMP/ref/$name@long_tools.txt" ] && cmp -s "$TMP/ref/$name@long_tools.txt" "$TMP/pith/$name@long_tools.txt"; then
    echo "same text from both: yes"
else
    echo "same text from both: NO ($(cat "$TMP"/pith/*.err "$TMP"/ref/*.err 2>/dev/null | head -c 300))"
fi
