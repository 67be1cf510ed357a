import { AIMessage, HumanMessage, createAgent, fakeModel, tool } from 'langchain';
import { z } from 'zod';
import { ctxfoldMiddleware } from 'ctxfold/langchain';

const search = tool(async ({ query }) => `Results for ${query}: ${'a long page of text. '.repeat(120)}`, {
  name: 'search',
  description: 'Searches the documentation.',
  schema: z.object({ query: z.string() }),
});

// A stand-in for your chat model (ChatOpenAI, ChatAnthropic...), so this runs offline:
// each turn it calls the tool, then answers.
const model = fakeModel();

const ctxfold = ctxfoldMiddleware({ maxContextTokens: 2000, keepLast: 4 });
ctxfold.compressor.on('summary:done', (e) => console.log(`  summary v${e.version} now stands for ${e.coveredIds.length} messages`));

const agent = createAgent({ model, tools: [search], systemPrompt: 'You are a research assistant.', middleware: [ctxfold] });
const config = { configurable: { thread_id: 'chat-42' } }; // ctxfold keys the chat's summary by the thread id

let history = [];
for (let turn = 1; turn <= 6; turn++) {
  model
    .respond(new AIMessage({ content: '', tool_calls: [{ id: `call_${turn}`, name: 'search', args: { query: `topic ${turn}` } }] }))
    .respond(new AIMessage(`Topic ${turn} is covered.`));
  const result = await agent.invoke({ messages: [...history, new HumanMessage(`Tell me about topic ${turn}.`)] }, config);
  history = result.messages;
  console.log(`turn ${turn}: the agent's state holds ${history.length} messages; the model was last sent ${model.calls.at(-1).messages.length}`);
  await new Promise((resolve) => setTimeout(resolve, 10)); // time passes between turns
}
await ctxfold.compressor.close();
// prints: turn 1: the agent's state holds 4 messages; the model was last sent 4
// prints: turn 6: the agent's state holds 24 messages; the model was last sent <n>
