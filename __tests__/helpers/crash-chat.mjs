import { createHash } from 'node:crypto';

// The chat a crash-test worker serves (crash-worker.mjs) and its checks read back: a pure
// function of the chat's name and turn, so the history at turn t is a prefix of the one at t + 1
// and a checker can rebuild exactly what a worker summarized.

/**
 * The history of `chat` at its `turns`-th user message (it ends with that message): every third
 * turn calls a tool, and every history at turn t is a prefix of the one at turn t + 1.
 */
export function chatHistory(chat, turns) {
  const messages = [{ role: 'system', content: `You look up records for team ${chat}.` }];
  for (let t = 1; t <= turns; t++) {
    messages.push({ role: 'user', content: `Turn ${t}: look up record R-${chat}-${t} and compare it with the earlier ones, ${'in detail '.repeat(8)}` });
    if (t === turns) break;
    if (t % 3 === 0) {
      const id = `call_${t}`;
      messages.push({ role: 'assistant', content: null, tool_calls: [{ id, type: 'function', function: { name: 'lookup', arguments: JSON.stringify({ record: `R-${chat}-${t}` }) } }] });
      messages.push({ role: 'tool', tool_call_id: id, content: JSON.stringify({ record: `R-${chat}-${t}`, status: t % 2 ? 'open' : 'closed', notes: 'n'.repeat(60 + (t % 5) * 40) }) });
    }
    messages.push({ role: 'assistant', content: `Record R-${chat}-${t} is ${t % 2 ? 'open' : 'closed'}; it matches the earlier ones.` });
  }
  return messages;
}

/** A text's token count as the crash workers count it (a rough counter: no tokenizer to load, so a worker is up fast). */
export const roughTokens = (text) => Math.ceil(text.length / 4);

/** The hash an acknowledgement line carries for covered ids: sha1 (hex) of the ids, one a line (the order counts). */
export function coveredHash(ids) {
  return createHash('sha1').update(ids.join('\n')).digest('hex');
}
