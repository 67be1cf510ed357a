import fc from 'fast-check';
import type { HermesMessage } from '../../src/formats/hermes/types.js';
import { faultsArb, scriptArb, type Fault, type Injected, type Script } from './qwen-agent.js';

/**
 * The session scripts of `qwen-agent-arbitraries.ts` rendered as Hermes text the way the Qwen
 * chat template writes it: reasoning as a `<think>` block, the model's text, then one
 * `<tool_call>` block per call (a newline before each); the results as one user message of
 * `<tool_response>` blocks joined by newlines, sometimes with the user's own note after them.
 * Written here, independently of src's block writer.
 */

const think = (reasoning: string | undefined) => (reasoning === undefined ? '' : `<think>\n${reasoning}\n</think>\n\n`);

/** Renders a script as Hermes messages. */
export function renderHermes(script: Script): HermesMessage[] {
  const out: HermesMessage[] = [];
  for (const step of script.steps) {
    switch (step.kind) {
      case 'system':
        out.push({ role: 'system', content: step.text });
        break;
      case 'user':
        out.push({ role: 'user', content: step.text });
        break;
      case 'answer':
        out.push({ role: 'assistant', content: think(step.reasoning) + step.text });
        break;
      case 'turn': {
        const blocks = step.calls.map((c) => `<tool_call>\n{"name": "${c.name}", "arguments": ${c.args}}\n</tool_call>`);
        out.push({ role: 'assistant', content: think(step.reasoning) + (step.text !== undefined ? `${step.text}\n` : '') + blocks.join('\n') });
        const responses = step.results.map((r) => `<tool_response>\n${r}\n</tool_response>`).join('\n');
        out.push({ role: 'user', content: step.userNote !== undefined ? `${responses}\n\n${step.userNote}` : responses });
        break;
      }
    }
  }
  return out;
}

/** A valid Hermes history. */
export const hermesHistoryArb: fc.Arbitrary<HermesMessage[]> = scriptArb.map(renderHermes);

export { faultsArb };

const RESPONSE = /<tool_response>\n[\s\S]*?\n<\/tool_response>/g;

/**
 * Injects `faults` into a valid Hermes history: a results message after a user message (an
 * orphan), one `<tool_response>` block more than the calls (removable), the last blocks of a
 * results message left out (or the whole message, when it has no note of the user's). The block
 * too many goes in a results message of its own after the real one, or, with `inMessage`, after
 * the real blocks of the same message.
 * `removable` holds the messages repair may shorten or remove; `extraBlocks` how many blocks it must remove.
 */
export function breakHermes(valid: readonly HermesMessage[], faults: readonly Fault[], inMessage = false): Injected<HermesMessage> & { extraBlocks: number } {
  let messages = [...valid];
  const removable = new Set<HermesMessage>();
  let unanswered = 0;
  let extraBlocks = 0;
  const isResults = (m: HermesMessage) => m.role === 'user' && m.content.includes('<tool_response>');
  // A block too many in a message of its own after a results message that lost a block would
  // answer that call (results split over two messages, which repair does not merge): not both.
  const shortened = new Set<HermesMessage>();
  const followed = new Set<HermesMessage>();
  for (const fault of faults) {
    if (fault.kind === 'orphan') {
      // Not right after a results message that lost every block but kept the user's note: a
      // response there, as many as the calls, answers them by position (Hermes has no ids).
      const spots = messages.map((m, i) => (m.role === 'user' && !isResults(m) && !shortened.has(m) ? i + 1 : -1)).filter((i) => i >= 0);
      if (spots.length === 0) continue;
      const at = spots[fault.at % spots.length];
      const orphan: HermesMessage = { role: 'user', content: '<tool_response>\na result nobody asked for\n</tool_response>' };
      messages.splice(at, 0, orphan);
      removable.add(orphan);
      extraBlocks++;
    } else {
      const spots = messages.map((m, i) => (isResults(m) && !removable.has(m) && messages[i - 1]?.role === 'assistant' ? i : -1)).filter((i) => i >= 0);
      if (spots.length === 0) continue;
      const at = spots[fault.at % spots.length];
      const m = messages[at];
      const blocks = [...m.content.matchAll(RESPONSE)];
      const last = blocks[blocks.length - 1];
      const after = last.index + last[0].length;
      if (fault.kind === 'duplicate' && inMessage) {
        if (shortened.has(m)) continue; // the block would answer the call that lost its result
        const changed = { ...m, content: `${m.content.slice(0, after)}\n<tool_response>\none too many\n</tool_response>${m.content.slice(after)}` };
        messages[at] = changed;
        removable.add(changed);
        extraBlocks++;
      } else if (fault.kind === 'duplicate') {
        if (shortened.has(m)) continue;
        followed.add(m);
        const extra: HermesMessage = { role: 'user', content: '<tool_response>\none too many\n</tool_response>' };
        messages.splice(at + 1, 0, extra);
        removable.add(extra);
        extraBlocks++;
      } else {
        if (followed.has(m)) continue;
        const drop = Math.min(fault.count, blocks.length);
        const note = m.content.slice(after);
        if (drop === blocks.length) {
          // Every result gone: the message goes too, unless the user's note keeps it.
          if (note.trim() === '') messages = [...messages.slice(0, at), ...messages.slice(at + 1)];
          else shortened.add(messages[at] = { ...m, content: note.trim() });
        } else {
          const keepEnd = blocks[blocks.length - drop - 1].index + blocks[blocks.length - drop - 1][0].length;
          shortened.add(messages[at] = { ...m, content: m.content.slice(0, keepEnd) + note });
        }
        unanswered += drop;
      }
    }
  }
  return { messages, removable, unanswered, extraBlocks };
}
