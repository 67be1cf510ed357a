import fc from 'fast-check';
import type { AnthropicBlock, AnthropicMessage } from '../../src/formats/anthropic/types.js';

/**
 * Generators of Anthropic Messages histories: valid ones (user turns as text or blocks with
 * images, plain replies, tool loops with parallel calls answered in any order, long results,
 * error results, results beside the user's words, thinking-led turns with and without interleaved
 * thinking, redacted thinking, server tools answered in place, unfinished loops) and broken ones
 * (a result missing, an orphan result, a result twice, a history cut so it starts with results).
 * Now and then a history starts with the model's own tool loop, as an agent's does.
 * Ids are unique across each history, as Anthropic wants. Built from a drawn script, so a
 * shrunk failure stays readable.
 */

const word = fc.constantFrom('alpha', 'bravo', 'delta', 'echo', 'kilo', 'lima', 'oscar', 'sierra', 'tango', 'zulu', 'report', 'value', 'file', 'line');
const words = (min: number, max: number) => fc.array(word, { minLength: min, maxLength: max }).map((w) => w.join(' '));
/** A short non-blank text. */
export const shortText = words(1, 8);
const toolName = fc.constantFrom('read_file', 'search', 'run_query', 'get_weather', 'list_items');

/** A 1x1 PNG, inline. */
const PNG = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==';

interface CallDraw { name: string; input: Record<string, unknown>; result: string; long: number; error: boolean; blocks: boolean; image: boolean }
interface StepDraw { calls: CallDraw[]; thinking: boolean; redacted: boolean; text: string | null; order: number; userWords: string | null }
interface ExchangeDraw {
  user: string;
  userBlocks: boolean;
  userImage: boolean;
  thinking: boolean;
  server: { query: string; result: string } | null;
  steps: StepDraw[];
  reply: string | null;
}

const callDraw: fc.Arbitrary<CallDraw> = fc.record({
  name: toolName,
  input: fc.record({ q: shortText, n: fc.integer({ min: 0, max: 99 }) }),
  result: shortText,
  long: fc.oneof({ weight: 6, arbitrary: fc.constant(0) }, { weight: 1, arbitrary: fc.integer({ min: 300, max: 3000 }) }),
  error: fc.oneof({ weight: 5, arbitrary: fc.constant(false) }, { weight: 1, arbitrary: fc.constant(true) }),
  blocks: fc.boolean(),
  image: fc.oneof({ weight: 9, arbitrary: fc.constant(false) }, { weight: 1, arbitrary: fc.constant(true) }),
});

const stepDraw: fc.Arbitrary<StepDraw> = fc.record({
  calls: fc.array(callDraw, { minLength: 1, maxLength: 3 }),
  thinking: fc.boolean(),
  redacted: fc.oneof({ weight: 5, arbitrary: fc.constant(false) }, { weight: 1, arbitrary: fc.constant(true) }),
  text: fc.option(shortText, { nil: null }),
  order: fc.nat(),
  userWords: fc.oneof({ weight: 6, arbitrary: fc.constant(null) }, { weight: 1, arbitrary: shortText }),
});

const exchangeDraw: fc.Arbitrary<ExchangeDraw> = fc.record({
  user: words(1, 12),
  userBlocks: fc.boolean(),
  userImage: fc.oneof({ weight: 8, arbitrary: fc.constant(false) }, { weight: 1, arbitrary: fc.constant(true) }),
  thinking: fc.boolean(),
  server: fc.oneof({ weight: 3, arbitrary: fc.constant(null) }, { weight: 1, arbitrary: fc.record({ query: shortText, result: words(5, 40) }) }),
  steps: fc.array(stepDraw, { minLength: 0, maxLength: 4 }),
  reply: fc.option(shortText, { nil: null, freq: 8 }),
});

/** A drawn history script: its exchanges, whether thinking is on, and whether the last one is left open. */
export interface HistoryDraw { exchanges: ExchangeDraw[]; thinkingOn: boolean; open: boolean; agentStart: boolean }

const historyDraw: fc.Arbitrary<HistoryDraw> = fc.oneof(
  { weight: 4, arbitrary: fc.record({
    exchanges: fc.array(exchangeDraw, { minLength: 1, maxLength: 7 }),
    thinkingOn: fc.boolean(),
    open: fc.boolean(),
    agentStart: fc.oneof({ weight: 6, arbitrary: fc.constant(false) }, { weight: 1, arbitrary: fc.constant(true) }),
  }) },
  // An agent's history: the model's own tool loop from the start (no user message before it), often still open.
  { weight: 1, arbitrary: fc.record({
    exchanges: fc.array(exchangeDraw.chain((x) => fc.array(stepDraw, { minLength: 2, maxLength: 5 }).map((steps) => ({ ...x, steps }))), { minLength: 1, maxLength: 2 }),
    thinkingOn: fc.oneof({ weight: 3, arbitrary: fc.constant(true) }, { weight: 1, arbitrary: fc.constant(false) }),
    open: fc.oneof({ weight: 3, arbitrary: fc.constant(true) }, { weight: 1, arbitrary: fc.constant(false) }),
    agentStart: fc.constant(true),
  }) },
);

function signature(n: number): string {
  return `EqQBCkYIBxgCKkB${'sig'.repeat(4)}${n.toString(36)}==`;
}

/** Builds the messages of a drawn script; ids count up from 1 so they are unique in the history. */
export function buildHistory(draw: HistoryDraw): AnthropicMessage[] {
  const out: AnthropicMessage[] = [];
  let ids = 0;
  const nextId = (prefix: string) => `${prefix}${String(++ids).padStart(4, '0')}`;
  draw.exchanges.forEach((x, e) => {
    const last = e === draw.exchanges.length - 1;
    const userContent: string | AnthropicBlock[] = x.userBlocks || x.userImage
      ? [...(x.userImage ? [{ type: 'image', source: { type: 'base64', media_type: 'image/png', data: PNG } }] : []), { type: 'text', text: x.user }]
      : x.user;
    if (!(e === 0 && draw.agentStart && x.steps.length > 0)) out.push({ role: 'user', content: userContent });
    // With thinking on, each exchange's first assistant message starts with thinking (always for the last one).
    const thinkingLed = draw.thinkingOn && (x.thinking || last);
    let needThinking = thinkingLed;
    const thoughts = (redacted: boolean): AnthropicBlock[] => {
      if (!needThinking) return [];
      needThinking = false;
      ids++;
      return redacted
        ? [{ type: 'redacted_thinking', data: `RkVEQUNURUQ${'x'.repeat(40)}${ids}` }]
        : [{ type: 'thinking', thinking: `Thinking it over: ${x.user}`, signature: signature(ids) }];
    };
    const steps = x.steps;
    steps.forEach((s, k) => {
      const content: AnthropicBlock[] = [...thoughts(s.redacted)];
      // Interleaved thinking: a later step may think again, not always.
      if (!content.length && draw.thinkingOn && s.thinking && k > 0) {
        ids++;
        content.push({ type: 'thinking', thinking: `Next: ${s.text ?? 'go on'}`, signature: signature(ids) });
      }
      if (k === 0 && x.server) {
        const id = nextId('srvtoolu_');
        content.push(
          { type: 'server_tool_use', id, name: 'web_search', input: { query: x.server.query } },
          { type: 'web_search_tool_result', tool_use_id: id, content: [{ type: 'web_search_result', url: 'https://example.com/a', title: x.server.query, encrypted_content: 'Zm9vYmFy'.repeat(8), page_age: null }] },
        );
      }
      if (s.text !== null) content.push({ type: 'text', text: s.text });
      const calls = s.calls.map((c) => ({ id: nextId('toolu_'), ...c }));
      for (const c of calls) content.push({ type: 'tool_use', id: c.id, name: c.name, input: c.input });
      out.push({ role: 'assistant', content });
      // Results in any order, each a string or blocks; a long one now and then.
      const order = calls.map((_, j) => j);
      for (let j = order.length - 1; j > 0; j--) {
        const r = (s.order + j * 7) % (j + 1);
        [order[j], order[r]] = [order[r], order[j]];
      }
      const results: AnthropicBlock[] = order.map((j) => {
        const c = calls[j];
        const text = c.long > 0 ? `${c.result} ${'word '.repeat(c.long)}`.trim() : c.result;
        const body: string | AnthropicBlock[] = c.blocks || c.image
          ? [{ type: 'text', text }, ...(c.image ? [{ type: 'image', source: { type: 'base64', media_type: 'image/png', data: PNG } }] : [])]
          : text;
        return c.error ? { type: 'tool_result', tool_use_id: c.id, content: body, is_error: true } : { type: 'tool_result', tool_use_id: c.id, content: body };
      });
      const words = s.userWords;
      out.push({ role: 'user', content: words !== null ? [...results, { type: 'text', text: words }] : results });
      // The user's words start a new loop: its first assistant message thinks first.
      if (words !== null && draw.thinkingOn) needThinking = true;
    });
    const open = last && draw.open && steps.length > 0;
    if (open) return;
    if (x.steps.length === 0 && x.server === null && x.reply === null && !thinkingLed) {
      out.push({ role: 'assistant', content: 'ok' });
      return;
    }
    const content: AnthropicBlock[] = [...thoughts(false)];
    if (x.steps.length === 0 && x.server) {
      const id = nextId('srvtoolu_');
      content.push(
        { type: 'server_tool_use', id, name: 'web_search', input: { query: x.server.query } },
        { type: 'web_search_tool_result', tool_use_id: id, content: [{ type: 'web_search_result', url: 'https://example.com/b', title: x.server.result, encrypted_content: 'YmFyYmF6'.repeat(8), page_age: null }] },
      );
    }
    content.push({ type: 'text', text: x.reply ?? 'done' });
    out.push({ role: 'assistant', content: content.length === 1 && x.reply !== null && e % 2 === 0 ? x.reply : content });
  });
  return out;
}

/** Valid Anthropic histories (see the file comment). */
export function validAnthropicHistory(): fc.Arbitrary<AnthropicMessage[]> {
  return historyDraw.map(buildHistory);
}

/** A way to break a valid history. */
export type Breakage = 'drop-result' | 'orphan-result' | 'duplicate-result' | 'starts-with-results';

/** A broken history and what was done to it. */
export interface BrokenHistory { messages: AnthropicMessage[]; breakage: Breakage }

/** Histories broken one way (a result missing, an orphan, a result twice, results first); only those with tool traffic. */
export function brokenAnthropicHistory(): fc.Arbitrary<BrokenHistory> {
  return fc.tuple(historyDraw, fc.constantFrom<Breakage>('drop-result', 'orphan-result', 'duplicate-result', 'starts-with-results'), fc.nat())
    .map(([draw, breakage, pick]) => ({ messages: breakHistory(buildHistory(draw), breakage, pick), breakage }))
    .filter((b) => b.messages.length > 0);
}

const resultsAt = (messages: readonly AnthropicMessage[]) => messages.flatMap((m, i) => (Array.isArray(m.content) && m.role === 'user' && m.content.some((b) => b.type === 'tool_result') ? [i] : []));

/** Breaks a history the given way (a history without results gets an orphan instead). */
export function breakHistory(messages: AnthropicMessage[], breakage: Breakage, pick: number): AnthropicMessage[] {
  const hosts = resultsAt(messages);
  if (hosts.length === 0 || breakage === 'orphan-result') {
    // An orphan result block first in a user message (or a message of its own, first in the history).
    const users = messages.flatMap((m, i) => (m.role === 'user' ? [i] : []));
    const at = users[pick % users.length];
    const orphan: AnthropicBlock = { type: 'tool_result', tool_use_id: `toolu_orphan${pick % 97}`, content: 'ORPHAN result' };
    const m = messages[at];
    const content = typeof m.content === 'string' ? [orphan, { type: 'text', text: m.content }] : [orphan, ...m.content];
    return messages.map((x, i) => (i === at ? { ...x, content } : x));
  }
  const at = hosts[pick % hosts.length];
  const m = messages[at];
  const blocks = m.content as AnthropicBlock[];
  const results = blocks.filter((b) => b.type === 'tool_result');
  const target = results[pick % results.length];
  if (breakage === 'drop-result') {
    const content = blocks.filter((b) => b !== target);
    if (content.length > 0) return messages.map((x, i) => (i === at ? { ...x, content } : x));
    return messages.filter((_, i) => i !== at);
  }
  if (breakage === 'duplicate-result') {
    const k = blocks.indexOf(target);
    const content = [...blocks.slice(0, k + 1), { ...target, content: 'DUPLICATE result' }, ...blocks.slice(k + 1)];
    return messages.map((x, i) => (i === at ? { ...x, content } : x));
  }
  // starts-with-results: a cut that left results first, where a user turn with words still follows.
  const human = (x: AnthropicMessage) => x.role === 'user' && (typeof x.content === 'string' || x.content.some((b) => b.type !== 'tool_result'));
  const cuts = hosts.filter((h) => messages.slice(h + 1).some(human));
  return cuts.length === 0 ? breakHistory(messages, 'orphan-result', pick) : messages.slice(cuts[pick % cuts.length]);
}
