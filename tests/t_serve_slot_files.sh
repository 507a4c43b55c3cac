# pith serve --slot-save-path DIR: POST /slots/ID?action=save|restore|erase
# (llama-server's endpoint) writes a slot's cache to a file of DIR, puts it
# back (into any slot, in this server or after a restart) and empties a
# slot; cache_prompt: false computes a prompt whole; a prompt that shares
# a prefix with what another slot holds copies it from there; --cache-dir
# keeps prompts on disk across restarts. A restored prompt's
# greedy reply equals the one computed from scratch, with the prompt taken
# from the file (usage.prompt_tokens_details.cached_tokens). Bad names,
# slots, actions and files are 4xx with one line, and the server stays up.
. tests/lib.sh
M=$FIX/models/tiny-qwen3-f32.gguf
M8=$FIX/models/tiny-qwen3-Q8_0.gguf
. tests/serve_lib.sh
. tests/jget_lib.sh
command -v curl >/dev/null 2>&1 || { not_ok "slot files: curl is not installed"; finish; }
D=$TMP/slots
mkdir -p "$D"
post() { # PATH JSON -> status; body in $TMP/body
    curl -s -m 30 -o "$TMP/body" -w '%{http_code}' -H 'Content-Type: application/json' --data-binary "$2" "$URL$1"
}
REQ='{"messages":[{"role":"system","content":"You are a storyteller who likes small animals."},{"role":"user","content":"Tell me about a cat"}],"temperature":0,"max_tokens":12}'
# reply text and cached/prompt tokens of $TMP/body
reply() { jget "$TMP/body" 'r.choices[0].message.content + " | " + r.usage.prompt_tokens_details.cached_tokens + "/" + r.usage.prompt_tokens'; }
text() { jget "$TMP/body" 'r.choices[0].message.content'; }
cached() { jget "$TMP/body" 'r.usage.prompt_tokens_details.cached_tokens'; }

serve_start "$PITH" "$M" -t 1 -c 256 --slots 2 --slot-save-path "$D"
[ -n "$PORT" ] || { not_ok "slot files: the server did not start: $(cat "$TMP/server.err")"; finish; }

s=$(post /v1/chat/completions "$REQ")
ref=$(text)
[ "$s" = 200 ] && [ "$(cached)" = 0 ] && ok "slot files: the first reply, computed whole" \
    || not_ok "slot files: first request: $s $(head -c 300 "$TMP/body")"
s=$(post /v1/chat/completions "$(echo "$REQ" | sed 's/}$/,"cache_prompt":false}/')")
[ "$s" = 200 ] && [ "$(cached)" = 0 ] && [ "$(text)" = "$ref" ] \
    && ok "slot files: cache_prompt false: nothing reused, the same reply" \
    || not_ok "slot files: cache_prompt false: $s $(reply)"

# save slot 0 (it held the conversation), empty it, restore into slot 1
s=$(post '/slots/0?action=save' '{"filename":"story.bin"}')
n_saved=$(jget "$TMP/body" 'r.n_saved')
size=$(wc -c <"$D/story.bin" 2>/dev/null)
[ "$s" = 200 ] && [ "$n_saved" -gt 10 ] && [ "$(jget "$TMP/body" 'r.n_written')" = "$size" ] \
    && [ "$(jget "$TMP/body" 'r.id_slot + r.filename + (r.timings.save_ms >= 0)')" = "0story.bintrue" ] \
    && ok "slot files: save: $n_saved positions, $size bytes, llama-server's reply" \
    || not_ok "slot files: save: $s $(head -c 300 "$TMP/body")"
s=$(post '/slots/0?action=erase' '')
[ "$s" = 200 ] && [ "$(jget "$TMP/body" 'r.n_erased')" = "$n_saved" ] \
    && [ "$(curl -s "$URL/slots" | node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>console.log(JSON.parse(s)[0].n_past))')" = 0 ] \
    && ok "slot files: erase empties the slot ($n_saved positions)" \
    || not_ok "slot files: erase: $s $(head -c 300 "$TMP/body")"
s=$(post '/slots/1?action=erase' '')
s=$(post '/slots/1?action=restore' '{"filename":"story.bin"}')
[ "$s" = 200 ] && [ "$(jget "$TMP/body" 'r.n_restored + "/" + r.n_read')" = "$n_saved/$size" ] \
    && ok "slot files: restore into another slot: $n_saved positions" \
    || not_ok "slot files: restore: $s $(head -c 300 "$TMP/body")"
s=$(post /v1/chat/completions "$REQ")
c=$(cached)
[ "$s" = 200 ] && [ "$c" -gt 10 ] && [ "$(text)" = "$ref" ] \
    && ok "slot files: the prompt again is taken from the restored slot ($c tokens cached), the same reply" \
    || not_ok "slot files: after restore: $s $(reply), want '$ref'"

# refusals: one line each, the server stays up
refused() { # WHAT STATUS PATH BODY PATTERN
    s=$(post "$3" "$4")
    [ "$s" = "$2" ] && grep -q "$5" "$TMP/body" && ok "slot files: $1: $2" \
        || not_ok "slot files: $1: $s $(head -c 300 "$TMP/body")"
}
refused "a path in the name" 400 '/slots/0?action=save' '{"filename":"../x.bin"}' 'plain file name'
refused "a hidden name" 400 '/slots/0?action=restore' '{"filename":".x"}' 'plain file name'
refused "no name" 400 '/slots/0?action=save' '{}' 'filename: missing'
refused "not JSON" 400 '/slots/0?action=save' '{"filename":' 'request'
refused "a slot that is not there" 404 '/slots/2?action=erase' '' 'the slots are 0 to 1'
refused "a slot that is not a number" 404 '/slots/x1?action=erase' '' 'no slot'
refused "no action" 400 '/slots/0' '' 'save, restore or erase'
refused "a missing file" 400 '/slots/0?action=restore' '{"filename":"none.bin"}' 'none.bin'
head -c 1000 "$D/story.bin" >"$D/short.bin"
refused "a truncated file" 400 '/slots/0?action=restore' '{"filename":"short.bin"}' 'truncated'
cp "$D/story.bin" "$D/flip.bin"
printf '\377' | dd of="$D/flip.bin" bs=1 seek=$((size - 100)) conv=notrunc 2>/dev/null
refused "a damaged file" 400 '/slots/0?action=restore' '{"filename":"flip.bin"}' 'damaged'
# the prefix cache across slots: a second conversation with the same
# system prompt lands in the empty slot (the first slot's conversation went
# on too long to be taken over) and copies the system prompt's positions
# from the first slot; its reply equals the same request computed whole
SYS='You are a storyteller who likes small animals, gardens, rivers and old houses. Keep every story gentle.'
ask() { echo "{\"messages\":[{\"role\":\"system\",\"content\":\"$SYS\"},{\"role\":\"user\",\"content\":\"$1\"}],\"temperature\":0,\"max_tokens\":$2$3}"; }
s=$(post '/slots/0?action=erase' '')
s=$(post '/slots/1?action=erase' '')
s1=$(post /v1/chat/completions "$(ask 'Tell me about a cat' 60)")
s2=$(post /v1/chat/completions "$(ask 'Tell me about a dog' 16 ',"cache_prompt":false')")
whole=$(text)
s3=$(post '/slots/1?action=erase' '')
s4=$(post /v1/chat/completions "$(ask 'Tell me about a dog' 16)")
c=$(cached)
held=$(curl -s "$URL/slots" | node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>console.log(JSON.parse(s).map(x=>x.n_past).join(" ")))')
[ "$s1$s2$s3$s4" = 200200200200 ] && [ "$c" -gt 20 ] && [ "$(text)" = "$whole" ] \
    && ok "slot files: a prompt shared with another slot is copied from it ($c tokens cached; slots hold $held), the same reply" \
    || not_ok "slot files: across slots: $s1 $s2 $s3 $s4 $(reply), want '$whole' (slots hold $held)"

s=$(curl -s -m 10 -o /dev/null -w '%{http_code}' "$URL/health")
[ "$s" = 200 ] && ok "slot files: the server is up after the refusals" || not_ok "slot files: /health $s"
stop_server

# after a restart: the file is found again
serve_start "$PITH" "$M" -t 1 -c 256 --slot-save-path "$D/"
s=$(post '/slots/0?action=restore' '{"filename":"story.bin"}')
s2=$(post /v1/chat/completions "$REQ")
c=$(cached)
[ "$s" = 200 ] && [ "$s2" = 200 ] && [ "$c" -gt 10 ] && [ "$(text)" = "$ref" ] \
    && ok "slot files: after a restart the restored prompt is reused ($c tokens cached), the same reply" \
    || not_ok "slot files: after restart: $s $s2 $(reply)"
stop_server

# --cache-dir: a prompt mostly computed is written when the server is
# idle, found again after a restart; the oldest go past --cache-dir-size;
# a damaged file is a note and the prompt computed
C=$TMP/cache
mkdir -p "$C"
LONGSYS="$SYS $SYS $SYS"
ask2() { echo "{\"messages\":[{\"role\":\"system\",\"content\":\"$LONGSYS\"},{\"role\":\"user\",\"content\":\"$1\"}],\"temperature\":0,\"max_tokens\":12$2}"; }
files() { ls "$C" | grep -c '^pith-.*\.kv$'; }
wait_files() { i=0; while [ "$(files)" != "$1" ] && [ $i -lt 50 ]; do sleep 0.1; i=$((i + 1)); done; }
serve_start "$PITH" "$M" -t 1 -c 512 --cache-dir "$C"
s1=$(post /v1/chat/completions "$(ask2 'Tell me about a cat')")
wait_files 1
s2=$(post /v1/chat/completions "$(ask2 'Tell me about a bird' ',"cache_prompt":false')")
bird=$(text)
n_files=$(files)
stop_server
[ "$s1$s2" = 200200 ] && [ "$n_files" = 1 ] && ok "cache dir: the first prompt written when idle (one file)" \
    || not_ok "cache dir: $s1 $s2, $n_files files: $(cat "$TMP/server.err")"
serve_start "$PITH" "$M" -t 1 -c 512 --cache-dir "$C"
s=$(post /v1/chat/completions "$(ask2 'Tell me about a bird')")
c=$(cached)
[ "$s" = 200 ] && [ "$c" -gt 60 ] && [ "$(text)" = "$bird" ] \
    && ok "cache dir: after a restart the system prompt comes from the file ($c tokens cached), the same reply" \
    || not_ok "cache dir: after restart: $s $(reply), want '$bird': $(cat "$TMP/server.err")"
stop_server
f=$(ls "$C"/pith-*.kv | head -n 1)
fsize=$(wc -c <"$f")
printf '\377' | dd of="$f" bs=1 seek=$((fsize - 50)) conv=notrunc 2>/dev/null
serve_start "$PITH" "$M" -t 1 -c 512 --cache-dir "$C" --cache-dir-size $((fsize + fsize / 2))
s=$(post /v1/chat/completions "$(ask2 'Tell me about a bird')")
c=$(cached)
[ "$s" = 200 ] && [ "$c" = 0 ] && [ "$(text)" = "$bird" ] && grep -q 'damaged.*the file is removed' "$TMP/server.err" \
    && ok "cache dir: a damaged file is a note, the prompt computed, the same reply" \
    || not_ok "cache dir: damaged: $s $(reply): $(cat "$TMP/server.err")"
wait_files 1
s=$(post /v1/completions "{\"prompt\":\"$LONGSYS and then some more words about the river\",\"temperature\":0,\"max_tokens\":4}")
sleep 0.5
n_files=$(files)
stop_server
[ "$s" = 200 ] && [ "$n_files" = 1 ] && ok "cache dir: past --cache-dir-size the oldest file goes" \
    || not_ok "cache dir: size bound: $s, $n_files files: $(ls -l "$C")"

# another model's server refuses the file; without --slot-save-path: 501
serve_start "$PITH" "$M8" -t 1 -c 256
refused "without --slot-save-path" 501 '/slots/0?action=erase' '' 'slot-save-path'
stop_server
serve_start "$PITH" "$M8" -t 1 -c 256 --slot-save-path "$D"
refused "a file of another model" 400 '/slots/0?action=restore' '{"filename":"story.bin"}' 'another model'
stop_server
expect_fail2 "slot files: --slot-save-path that is not a folder: exit 2, one line" \
    "$PITH" serve "$M" --slot-save-path "$D/story.bin" --port 0
finish
