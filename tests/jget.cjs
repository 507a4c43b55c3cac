// jget.cjs - the JSON lookups of the shell tests (tests/jget_lib.sh), from
// one node process per script: starting node costs ~0.15 CPU s on the Zen 5
// CI machine, more than a lookup, and a server test makes dozens.
//
// Reads requests from stdin, a line each: JSON<TAB>EXPR_FILE<TAB>OUT. Parses
// the JSON file as r, evaluates the JavaScript in EXPR_FILE (its last
// expression is the value; statements before it may declare names) and
// writes the value to OUT, a string as it is, anything else as JSON; then
// answers on stdout "jget: ok", or "jget: error: MESSAGE" (OUT not written).
"use strict";
const fs = require("fs");
const readline = require("readline");

function evaluate(r, expr) { return eval(expr); } // eslint-disable-line no-eval, no-unused-vars

const rl = readline.createInterface({input: process.stdin});
rl.on("line", line => {
    if (!line) return;
    const [json, exprFile, out] = line.split("\t");
    try {
        const r = JSON.parse(fs.readFileSync(json, "utf8"));
        const v = evaluate(r, fs.readFileSync(exprFile, "utf8"));
        // (undefined: writeFileSync throws, as process.stdout.write did in node -e)
        fs.writeFileSync(out, typeof v === "string" ? v : JSON.stringify(v));
        process.stdout.write("jget: ok\n");
    } catch (e) {
        process.stdout.write("jget: error: " + String(e && e.message || e).replace(/\n/g, " ") + "\n");
    }
});
// The script that started it has ended (a child it left running may still
// hold the request pipe open): end too.
const parent = process.ppid;
setInterval(() => { if (process.ppid !== parent) process.exit(0); }, 1000).unref();
