// The official openai npm client runs a whole tool loop against `pith serve`:
// a request with tools and tool_choice (required, a named function, or auto)
// gets tool calls whose arguments parse as JSON and hold the function's
// required parameters; the calls and a tool result go back (role "tool" with
// tool_call_id) and the model answers. Once without streaming and once with
// (the deltas accumulated as OpenAI's do). Prints one JSON line.
// usage: node openai_tools.mjs BASE_URL
import OpenAI from 'openai';

const [base] = process.argv.slice(2);
const client = new OpenAI({ baseURL: base, apiKey: 'none', maxRetries: 0, timeout: 60000 });
const tools = [
  { type: 'function', function: { name: 'get_weather', description: 'Current weather of a city',
    parameters: { type: 'object', properties: { city: { type: 'string', maxLength: 12 }, unit: { enum: ['c', 'f'] } },
                  required: ['city', 'unit'], additionalProperties: false } } },
  { type: 'function', function: { name: 'add', description: 'Adds two integers',
    parameters: { type: 'object', properties: { a: { type: 'integer' }, b: { type: 'integer' } }, required: ['a', 'b'] } } },
];
const required = { get_weather: ['city', 'unit'], add: ['a', 'b'] };

async function call(stream, toolChoice, messages) {
  const req = { model: 'pith', messages, tools, tool_choice: toolChoice, temperature: 0.8, seed: 7, max_tokens: 200 };
  if (!stream) {
    const r = await client.chat.completions.create(req);
    return { message: r.choices[0].message, finish: r.choices[0].finish_reason };
  }
  const s = await client.chat.completions.create({ ...req, stream: true });
  const message = { role: 'assistant', content: '', tool_calls: [] };
  let finish = null;
  for await (const chunk of s) {
    const ch = chunk.choices[0];
    if (!ch) continue;
    if (ch.delta.content) message.content += ch.delta.content;
    for (const tc of ch.delta.tool_calls || []) {
      const t = message.tool_calls[tc.index] ??= { id: '', type: 'function', function: { name: '', arguments: '' } };
      if (tc.id) t.id = tc.id;
      if (tc.function?.name) t.function.name += tc.function.name;
      if (tc.function?.arguments) t.function.arguments += tc.function.arguments;
    }
    if (ch.finish_reason) finish = ch.finish_reason;
  }
  if (!message.tool_calls.length) delete message.tool_calls;
  return { message, finish };
}

function checkCalls(message, only) {
  if (!message.tool_calls?.length) return 'no tool_calls';
  for (const tc of message.tool_calls) {
    if (tc.type !== 'function' || !tc.id) return `bad call ${JSON.stringify(tc)}`;
    if (only && tc.function.name !== only) return `called ${tc.function.name}, not ${only}`;
    let args;
    try { args = JSON.parse(tc.function.arguments); } catch (e) { return `arguments do not parse: ${tc.function.arguments}`; }
    for (const k of required[tc.function.name] || ['?']) if (!(k in args)) return `missing ${k} in ${tc.function.arguments}`;
  }
  return 'ok';
}

const out = {};
for (const stream of [false, true]) {
  for (const [label, choice, only] of [['required', 'required', null], ['named', { type: 'function', function: { name: 'add' } }, 'add']]) {
    const messages = [{ role: 'user', content: 'What is the weather in Paris, and what is 2 + 3?' }];
    const first = await call(stream, choice, messages);
    const key = `${stream ? 'stream' : 'json'}_${label}`;
    out[key] = { calls: checkCalls(first.message, only), finish: first.finish, n: first.message.tool_calls?.length || 0 };
    if (out[key].calls !== 'ok') continue;
    // the loop: the calls and their results go back; the model answers
    messages.push(first.message);
    for (const tc of first.message.tool_calls)
      messages.push({ role: 'tool', tool_call_id: tc.id, content: JSON.stringify({ result: tc.function.name === 'add' ? 5 : 'sunny' }) });
    const second = await call(stream, 'auto', messages);
    out[key].answer_finish = second.finish;
    out[key].answer_is_text = typeof second.message.content === 'string';
  }
}
// auto: whatever the model says, the reply is well formed
const auto = await call(false, 'auto', [{ role: 'user', content: 'Hello' }]);
out.auto = { finish: auto.finish, content: typeof auto.message.content };
console.log(JSON.stringify(out));
