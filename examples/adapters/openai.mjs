import OpenAI from 'openai';
import { withCtxfold } from 'ctxfold/openai';

// Stands in for the API so this runs offline: it answers with how much of the history it was sent.
const offlineApi = async (url, init) => {
  const body = JSON.parse(init.body);
  const content = `I was sent ${body.messages.length} messages.`;
  return Response.json({
    id: 'chatcmpl-1', object: 'chat.completion', created: 0, model: body.model,
    choices: [{ index: 0, message: { role: 'assistant', content }, finish_reason: 'stop' }],
    usage: { prompt_tokens: Math.ceil(init.body.length / 4), completion_tokens: 8, total_tokens: 0 },
  });
};

// maxContextTokens is the model's window (or pass model: 'gpt-4o' and its published window is used).
const client = withCtxfold(new OpenAI({ apiKey: 'sk-test', fetch: offlineApi }), { maxContextTokens: 240, keepLast: 4 });
const compressor = withCtxfold.compressorOf(client);
compressor.on('summary:done', (e) => console.log(`  summary v${e.version} now stands for ${e.coveredIds.length} messages`));

const messages = [{ role: 'system', content: 'You are a shop assistant. Be brief.' }];
for (let turn = 1; turn <= 8; turn++) {
  messages.push({ role: 'user', content: `Please remember that item ${turn} costs ${turn * 7} euros and ships from warehouse W${turn}.` });
  const completion = await client.chat.completions.create({ model: 'gpt-4o', messages, metadata: { chat_id: 'chat-42' } });
  messages.push(completion.choices[0].message);
  console.log(`turn ${turn}: history has ${messages.length} messages; ${completion.choices[0].message.content}`);
  await new Promise((resolve) => setTimeout(resolve, 10)); // time passes between turns
}
const { samples, ratio } = compressor.stats().calibration.byModel['gpt-4o'];
console.log(`${samples} responses billed; ctxfold's count / billed input tokens = ${ratio.toFixed(2)}`);
await compressor.close();
// prints: turn 1: history has 3 messages; I was sent 2 messages.
// prints: turn 8: history has 17 messages; I was sent <n> messages.
// prints: 8 responses billed; ctxfold's count / billed input tokens = <ratio>
