#!/bin/sh
# npm_clients.sh - puts the npm clients the server tests use (the official
# openai client, and ajv to validate JSON Schema replies) into
# build/npm-clients, once, pinned, with the scripts of tests/serve and
# tests/grammar next to them (a script imports them from there). Used by
# tests/t_serve.sh and tests/t_grammar.sh; later runs reuse the install (a
# fresh clone installs it once, from the npm registry or npm's cache).
# Prints the directory; exit status 1 with a message if npm fails.
set -e
OPENAI=6.49.0
AJV=8.20.0
DIR=build/npm-clients
for tool in node npm; do
    command -v $tool >/dev/null 2>&1 || { echo "npm_clients.sh: $tool is not installed (needs node 20 and npm)" >&2; exit 1; }
done
mkdir -p "$DIR"
# Tests that run at the same time install it once: one at a time here, and
# a script is replaced (by a rename) only when it changed.
exec 9>"$DIR/.lock"
flock 9
if ! grep -qs "\"version\": \"$OPENAI\"" "$DIR/node_modules/openai/package.json" ||
   ! grep -qs "\"version\": \"$AJV\"" "$DIR/node_modules/ajv/package.json"; then
    echo '{"private": true}' >"$DIR/package.json"
    if ! (cd "$DIR" && timeout 300 npm install --no-audit --no-fund --loglevel=error openai@$OPENAI ajv@$AJV \
            >npm.log 2>&1); then
        echo "npm_clients.sh: npm install openai@$OPENAI ajv@$AJV failed (the registry must be reachable): $(tail -c 300 "$DIR/npm.log")" >&2
        exit 1
    fi
fi
for f in tests/serve/*.mjs tests/grammar/*.mjs; do
    to=$DIR/$(basename "$f")
    cmp -s "$f" "$to" || { cp "$f" "$to.tmp" && mv "$to.tmp" "$to"; }
done
echo "$DIR"
