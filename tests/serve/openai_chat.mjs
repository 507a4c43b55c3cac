// The official openai npm client against `pith serve`: one chat completion
// without streaming and one with, greedy; prints what it got as one JSON
// line. A wrong key must raise the client's AuthenticationError (401).
// usage: node openai_chat.mjs BASE_URL API_KEY PROMPT MAX_TOKENS
import OpenAI from 'openai';

const [base, key, prompt, maxTokens] = process.argv.slice(2);
const client = new OpenAI({ baseURL: base, apiKey: key, maxRetries: 0, timeout: 30000 });
const req = {
  model: 'pith',
  messages: [{ role: 'user', content: prompt }],
  temperature: 0,
  max_tokens: Number(maxTokens),
};

const r = await client.chat.completions.create(req);
const stream = await client.chat.completions.create({ ...req, stream: true, stream_options: { include_usage: true } });
let text = '';
let finish = null;
let usage = null;
let chunks = 0;
for await (const chunk of stream) {
  chunks++;
  if (chunk.choices.length) {
    const d = chunk.choices[0].delta;
    if (d.content) text += d.content;
    if (chunk.choices[0].finish_reason) finish = chunk.choices[0].finish_reason;
  }
  if (chunk.usage) usage = chunk.usage;
}

let wrongKey = 'no error';
try {
  const bad = new OpenAI({ baseURL: base, apiKey: key + 'x', maxRetries: 0, timeout: 30000 });
  await bad.chat.completions.create(req);
} catch (e) {
  wrongKey = `${e.constructor.name} ${e.status}`;
}

console.log(JSON.stringify({
  json: r.choices[0].message.content,
  json_finish: r.choices[0].finish_reason,
  json_usage: r.usage,
  stream: text,
  stream_finish: finish,
  stream_usage: usage,
  chunks,
  wrong_key: wrongKey,
}));
