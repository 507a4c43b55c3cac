// Log probabilities through the official openai npm client, streamed and
// not, on both endpoints, checked against `pith run --trace` on the same
// prompt and seed: the trace prints p with 6 significant digits, so a
// logprob matches when exp(logprob) is within half a unit of that digit
// (plus the float rounding of ln p). Prints one line per check: "ok WHAT"
// or "not ok WHAT: detail".
// usage: node openai_logprobs.mjs BASE_URL API_KEY CHAT_PROMPT RAW_PROMPT N SEED
//        TRACE_SAMPLED (chat, sampled as SAMPLING below) TRACE_GREEDY (raw prompt, --temp 0)
import fs from 'node:fs';
import OpenAI from 'openai';

const [base, key, chatPrompt, rawPrompt, nArg, seedArg, traceSampled, traceGreedy] = process.argv.slice(2);
const N = Number(nArg);
const SAMPLING = { temperature: 0.9, top_k: 8, top_p: 0.9, min_p: 0.05, seed: Number(seedArg) };
const client = new OpenAI({ baseURL: base, apiKey: key, maxRetries: 0, timeout: 30000 });
const readTrace = (f) => fs.readFileSync(f, 'utf8').trim().split('\n').map((l) => JSON.parse(l));
const sampled = readTrace(traceSampled);
const greedy = readTrace(traceGreedy);

let failed = 0;
function check(what, errors) {
  if (errors.length) failed++;
  console.log(errors.length ? `not ok ${what}: ${errors.slice(0, 3).join('; ')}` : `ok ${what}`);
}
// exp(lp) against a trace's p printed with %.6g
const same = (lp, p) => Math.abs(Math.exp(lp) - p) <= 5e-6 * p + 1.2e-7 * (1 + Math.abs(lp)) * Math.exp(lp) + 1e-12;

// What every reply must satisfy: p in [0, 1], the top list in descending
// order summing to at most 1, and the chosen token in it when it ranks there.
function general(tokens) {
  const errors = [];
  tokens.forEach((t, i) => {
    const lps = [t.logprob, ...t.top.map((c) => c.logprob)];
    if (lps.some((lp) => !(lp <= 0) || !(Math.exp(lp) >= 0))) errors.push(`token ${i}: a p outside [0, 1]`);
    const sum = t.top.reduce((a, c) => a + Math.exp(c.logprob), 0);
    if (sum > 1 + 1e-5) errors.push(`token ${i}: the top p sum to ${sum}`);
    for (let k = 1; k < t.top.length; k++) if (t.top[k].logprob > t.top[k - 1].logprob) errors.push(`token ${i}: not sorted`);
    const last = t.top[t.top.length - 1];
    if (last && t.logprob > last.logprob && !t.top.some((c) => c.key === t.key)) errors.push(`token ${i}: chosen not in its top`);
  });
  return errors;
}

// Chat: choices[0].logprobs.content as {key, logprob, top, pith}.
const fromChat = (content) =>
  content.map((e) => ({
    key: e.id, logprob: e.logprob, top: e.top_logprobs.map((c) => ({ key: c.id, logprob: c.logprob })), pith: e.pith_sampling,
    bytesOk: JSON.stringify(e.bytes) === JSON.stringify([...Buffer.from(e.token)]) || e.token.includes('\ufffd'),
  }));
// Completions: the legacy arrays, keyed by token text.
const fromLegacy = (lp) =>
  lp.tokens.map((tok, i) => ({
    key: tok, logprob: lp.token_logprobs[i], offset: lp.text_offset[i],
    top: Object.entries(lp.top_logprobs[i]).map(([k, v]) => ({ key: k, logprob: v })).sort((a, b) => b.logprob - a.logprob),
  }));

// The drawn distribution (post_sampling_probs) against the sampled trace.
function againstSampled(tokens) {
  const errors = [];
  // the trace has a line for an end-of-generation token too; the reply does not
  if (!tokens.length || (tokens.length !== sampled.length && tokens.length + 1 !== sampled.length))
    errors.push(`${tokens.length} tokens, the trace has ${sampled.length}`);
  tokens.forEach((t, i) => {
    const s = sampled[i];
    if (!s) return;
    if (t.key !== s.id || !same(t.logprob, s.p)) errors.push(`token ${i}: ${t.key} ${Math.exp(t.logprob)} vs ${s.id} ${s.p}`);
    if (t.top.length !== s.top.length) errors.push(`token ${i}: ${t.top.length} candidates vs ${s.top.length}`);
    s.top.forEach((c, k) => {
      const g = t.top[k];
      if (!g || g.key !== c.id || !same(g.logprob, c.p)) errors.push(`token ${i} candidate ${k}: ${g && g.key} vs ${c.id}`);
    });
    if (!t.pith || t.pith.n_kept !== s.n_kept || Math.abs(t.pith.kept_mass - s.kept_mass) > 5e-6 * s.kept_mass)
      errors.push(`token ${i}: pith_sampling ${JSON.stringify(t.pith)} vs n_kept ${s.n_kept} kept_mass ${s.kept_mass}`);
    else if (t.pith.cut_top_k + t.pith.cut_top_p + t.pith.cut_min_p + s.n_kept !== t.pith.vocab)
      errors.push(`token ${i}: the cuts and the nucleus are not the vocabulary`);
    if (!t.bytesOk) errors.push(`token ${i}: bytes are not the token's`);
  });
  return errors;
}

async function chat(extra) {
  const req = { model: 'pith', messages: [{ role: 'user', content: chatPrompt }], max_tokens: N, ...extra };
  if (!extra.stream) return fromChat((await client.chat.completions.create(req)).choices[0].logprobs.content);
  const content = [];
  for await (const chunk of await client.chat.completions.create(req))
    if (chunk.choices.length && chunk.choices[0].logprobs) content.push(...chunk.choices[0].logprobs.content);
  return fromChat(content);
}
async function completion(extra) {
  const req = { model: 'pith', prompt: rawPrompt, max_tokens: N, ...extra };
  if (!extra.stream) return fromLegacy((await client.completions.create(req)).choices[0].logprobs);
  const lp = { tokens: [], token_logprobs: [], top_logprobs: [], text_offset: [] };
  for await (const chunk of await client.completions.create(req)) {
    const l = chunk.choices.length && chunk.choices[0].logprobs;
    if (l) for (const k of Object.keys(lp)) lp[k].push(...l[k]);
  }
  return fromLegacy(lp);
}

const vocab = (await client.models.list()).data[0].meta.n_vocab;
const withVocab = (tokens) => (tokens.forEach((t) => t.pith && (t.pith.vocab = vocab)), tokens);
const drawn = { ...SAMPLING, logprobs: true, top_logprobs: 20, post_sampling_probs: true, pith_sampling: true };
for (const stream of [false, true]) {
  const how = stream ? 'stream' : 'JSON';
  const t = withVocab(await chat({ ...drawn, stream }));
  check(`chat (${how}, sampled, post_sampling_probs): p in [0, 1], sorted, sum <= 1, chosen in its top`, general(t));
  check(`chat (${how}, sampled): equals pith run --trace (ids, p, n_kept, kept_mass; cuts + nucleus = vocabulary)`, againstSampled(t));

  // greedy, the raw logits' softmax (post_sampling_probs false): the chosen
  // token is the top one, and the values are the greedy trace's (no penalty:
  // the same softmax)
  const c = await completion({ temperature: 0, logprobs: 20, post_sampling_probs: false, stream });
  const e = general(c);
  c.forEach((t, i) => {
    const g = greedy[i];
    if (!g) return e.push(`token ${i}: past the trace`);
    if (t.top[0].key !== t.key || t.top[0].logprob !== t.logprob) e.push(`token ${i}: greedy, not the top one`);
    if (!same(t.logprob, g.p)) e.push(`token ${i}: ${Math.exp(t.logprob)} vs the trace's ${g.p}`);
    // (20 unless two tokens' texts are the same key, as malformed UTF-8 gives)
    if (t.top.length > 20 || !t.top.every((x) => g.top.some((y) => same(x.logprob, y.p)))) e.push(`token ${i}: top not the trace's`);
    if (t.offset !== (i ? c[i - 1].offset + Buffer.byteLength(c[i - 1].key) : 0) && !c[i - 1].key.includes('\ufffd'))
      e.push(`token ${i}: text_offset ${t.offset}`);
  });
  if (!c.length || (c.length !== greedy.length && c.length + 1 !== greedy.length)) e.push(`${c.length} tokens, the trace has ${greedy.length}`);
  check(`completions (${how}, temperature 0, logprobs 20): the top one, equals pith run --trace, text_offset`, e);

  // greedy in the drawn view: p = 1 for the chosen token, nothing else
  // (the default view: no post_sampling_probs given)
  const d = await chat({ temperature: 0, logprobs: true, top_logprobs: 5, stream });
  const de = general(d);
  d.forEach((t, i) => {
    if (t.logprob !== 0 || t.top.length !== 1 || t.top[0].key !== t.key) de.push(`token ${i}: ${JSON.stringify(t)}`);
  });
  if (d.length !== N) de.push(`${d.length} tokens`);
  check(`chat (${how}, temperature 0, post_sampling_probs): the chosen token alone, logprob 0`, de);
}
process.exit(failed ? 1 : 0);
