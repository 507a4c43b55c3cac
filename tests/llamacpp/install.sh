#!/bin/sh
# install.sh - puts llama.cpp (npm's node-llama-cpp, a prebuilt llama.cpp
# v0.5.0 for linux-x64, CPU only) into build/node-llama-cpp, once, with
# the scripts of this directory next to it. Used by tests/t_llamacpp.sh
# (a reference for models the fixtures do not cover) and `make
# bench-llamacpp` (speed on the same file, back to back). Needs node 20 and
# npm with the npm registry reachable. Exit status 1 with a message if not.
set -e
VERSION=3.22.1
DIR=build/node-llama-cpp
for tool in node npm; do
    command -v $tool >/dev/null 2>&1 || { echo "install.sh: $tool is not installed (needs node 20 and npm)" >&2; exit 1; }
done
mkdir -p "$DIR"
# Tests that run at the same time (tests/run.sh) install it once: one at a
# time here, and a script is replaced (by a rename) only when it changed,
# never rewritten under a node that is reading it.
exec 9>"$DIR/.lock"
flock 9
if ! grep -qs "\"version\": \"$VERSION\"" "$DIR/node_modules/node-llama-cpp/package.json"; then
    echo '{"private": true}' >"$DIR/package.json"
    # only the CPU build for linux-x64 (the optional CUDA/Vulkan/ARM ones are 600 MB)
    if ! (cd "$DIR" && timeout 300 npm install --no-audit --no-fund --loglevel=error --omit=optional \
            node-llama-cpp@$VERSION @node-llama-cpp/linux-x64@$VERSION >npm.log 2>&1); then
        echo "install.sh: npm install node-llama-cpp@$VERSION failed (the registry must be reachable): $(tail -c 300 "$DIR/npm.log")" >&2
        exit 1
    fi
fi
for f in tests/llamacpp/*.mjs; do
    to=$DIR/$(basename "$f")
    cmp -s "$f" "$to" || { cp "$f" "$to.tmp" && mv "$to.tmp" "$to"; }
done
