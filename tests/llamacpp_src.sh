#!/bin/sh
# llamacpp_src.sh - puts llama.cpp's source (commit de3ff81, the one npm's
# node-llama-cpp@3.22.1 bundles) into build/llamacpp-src, once, and prints
# that directory's absolute path. Only the parts the tests read are checked
# out: models/templates (the chat templates llama.cpp tests its Jinja engine
# with, tests/t_template_corpus.sh) and models/ggml-vocab-* (its vocabulary
# test files). The source comes from the git bundle node-llama-cpp ships
# (llama/gitRelease.bundle), installed by tests/llamacpp/install.sh.
# Exit status 1 and one line on stderr if it cannot be had.
set -u
COMMIT=de3ff815ea7d559ee917f063901b8986f038abc6
DIR=build/llamacpp-src
BUNDLE=build/node-llama-cpp/node_modules/node-llama-cpp/llama/gitRelease.bundle
fail() { echo "llamacpp_src.sh: $*" >&2; exit 1; }

command -v git >/dev/null 2>&1 || fail "git is not installed"
mkdir -p build
# Tests running at the same time fetch it once: one at a time here, and the
# directory appears (by a rename) only when complete.
exec 8>build/.llamacpp-src.lock
flock 8
if [ "$(git -C "$DIR" rev-parse HEAD 2>/dev/null)" != "$COMMIT" ] || [ ! -f "$DIR/.complete" ]; then
    err=$(sh tests/llamacpp/install.sh 2>&1) || fail "no node-llama-cpp: $err"
    [ -f "$BUNDLE" ] || fail "node-llama-cpp has no $BUNDLE"
    rm -rf "$DIR" "$DIR.tmp"
    git clone -q --no-checkout "$BUNDLE" "$DIR.tmp" 2>"build/.llamacpp-src.err" ||
        fail "git clone of $BUNDLE failed: $(head -c 300 build/.llamacpp-src.err)"
    [ "$(git -C "$DIR.tmp" rev-parse HEAD)" = "$COMMIT" ] ||
        fail "$BUNDLE holds $(git -C "$DIR.tmp" rev-parse HEAD), not $COMMIT"
    git -C "$DIR.tmp" checkout -q "$COMMIT" -- models/templates 'models/ggml-vocab-*' 2>"build/.llamacpp-src.err" ||
        fail "git checkout of models/ failed: $(head -c 300 build/.llamacpp-src.err)"
    : >"$DIR.tmp/.complete"
    mv "$DIR.tmp" "$DIR" || fail "cannot rename $DIR.tmp to $DIR"
    rm -f build/.llamacpp-src.err
fi
echo "$(pwd)/$DIR"
