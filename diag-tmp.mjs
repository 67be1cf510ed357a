import { generateSupportAgentConversation, generateCodeAgentConversation } from './dist/bench/fixtures/domains/index.js';
import { compressWithSummary, createTokenCounter, createExtractiveSummarizer } from './dist/src/index.js';
import { openaiChatLens } from './dist/src/core/index.js';
const ref = createTokenCounter();
const gen = process.argv[2] === 'code' ? generateCodeAgentConversation : generateSupportAgentConversation;
for (const k of [0, 1]) {
  const msgs = gen({ messages: 200 + 200 * k, seed: 9000 + k });
  let total = ref.requestOverhead; for (const m of msgs) total += ref.message(m, openaiChatLens);
  const budget = Math.floor(total * 0.25);
  const r = await compressWithSummary(msgs, { maxContextTokens: budget, compressionThresholdTokens: Math.floor(budget * 0.75), keepFirst: 1, keepLast: 6, toolOutputTrim: { minChars: 500 }, counter: createTokenCounter(), summarizer: createExtractiveSummarizer() });
  const v = r.messages; const rep = r.report;
  const sys = ref.message(msgs[0], openaiChatLens);
  let tail6 = 0; for (const m of msgs.slice(-6)) tail6 += ref.message(m, openaiChatLens);
  const summ = v.find((m) => typeof m.content === 'string' && m.content.includes('Summary') || (typeof m.content === 'string' && m.content.includes('ledger')));
  console.log({ k, n: msgs.length, total, budget, sys, tail6, viewMsgs: v.length, tokensAfter: rep.tokensAfter, protectedStart: rep.protectedStart, summary: rep.summary, minimum: rep.minimumTokens, notes: rep.notes });
  const si = v.findIndex((m, i) => i > 0 && m.role === 'system' || (m.role === 'user' && typeof m.content === 'string' && m.content.startsWith('[')));
  console.log('view roles', v.map((m) => m.role[0]).join(''));
  const sm = v[1]; if (process.argv[3]) { console.log(String(sm.content)); break; }
}
