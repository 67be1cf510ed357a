import { generateText, jsonSchema, stepCountIs, tool, wrapLanguageModel } from 'ai';
import { MockLanguageModelV3 } from 'ai/test';
import { ctxfoldMiddleware } from 'ctxfold/ai-sdk';

// Keep every prompt under 1,500 tokens (default: the model's published window, e.g. 128k for gpt-4o).
const ctxfold = ctxfoldMiddleware({ maxContextTokens: 1500, compressionThresholdTokens: 1000, keepLast: 4 });
ctxfold.compressor.on('summary:done', (e) => console.log(`  summary v${e.version} now stands for ${e.coveredIds.length} messages`));

// A stand-in for openai('gpt-4o') so this runs offline: it looks the city up, then answers,
// saying how many messages its prompt held.
const stub = new MockLanguageModelV3({
  modelId: 'gpt-4o',
  doGenerate: async ({ prompt }) => {
    const last = prompt.at(-1);
    const usage = { inputTokens: { total: JSON.stringify(prompt).length / 4 }, outputTokens: { total: 10 } };
    if (last.role === 'user') {
      const city = last.content[0].text.match(/in (\w+)/)[1];
      const call = { type: 'tool-call', toolCallId: `call-${city}`, toolName: 'weather', input: JSON.stringify({ city }) };
      return { content: [call], finishReason: { unified: 'tool-calls', raw: undefined }, usage, warnings: [] };
    }
    const answer = `Sunny (my prompt held ${prompt.length} messages).`;
    return { content: [{ type: 'text', text: answer }], finishReason: { unified: 'stop', raw: undefined }, usage, warnings: [] };
  },
});
const model = wrapLanguageModel({ model: stub, middleware: ctxfold });

const weather = tool({
  description: 'The weather report of a city.',
  inputSchema: jsonSchema({ type: 'object', properties: { city: { type: 'string' } }, required: ['city'] }),
  execute: async ({ city }) => `${city}: sunny, 21 C, light wind from the west. `.repeat(20),
});

const messages = [];
for (const city of ['Paris', 'Berlin', 'Madrid', 'Rome', 'Vienna', 'Lisbon', 'Oslo', 'Prague']) {
  messages.push({ role: 'user', content: `What is the weather in ${city}?` });
  const result = await generateText({
    model,
    system: 'You are a weather assistant.',
    messages,
    tools: { weather },
    stopWhen: stepCountIs(3),
    maxOutputTokens: 200,
    providerOptions: { ctxfold: { chatId: 'chat-42' } }, // one summary per chat
  });
  messages.push(...result.response.messages);
  console.log(`${city}: history has ${messages.length} messages; ${result.text}`);
  await new Promise((resolve) => setTimeout(resolve, 10)); // time passes between turns
}
await ctxfold.compressor.close();
// prints: Paris: history has 4 messages; Sunny (my prompt held 4 messages).
// prints: Prague: history has 32 messages; Sunny (my prompt held <n> messages).
// prints: summary v1 now stands for <n> messages
