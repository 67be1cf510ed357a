import fc from 'fast-check';
import type { QwenAgentMessage } from '../../src/formats/qwen-agent/types.js';

/**
 * Seeded generators of tool-using sessions, first as a format-neutral script (system, user turns,
 * model turns that open 1–4 parallel calls with their results, reasoning, answers, bulky results),
 * then rendered as Qwen-Agent messages the way Qwen-Agent writes them: reasoning and text in
 * assistant messages before the calls, one assistant message per `function_call`, the `function`
 * results right after in call order. `hermes-arbitraries.ts` renders the same scripts as Hermes text.
 * Every generated message is a fresh object.
 */

/** One call of a model turn: the function and its arguments' JSON text. */
export interface ScriptCall {
  readonly name: string;
  readonly args: string;
}

/** One step of a session script. */
export type ScriptStep =
  | { readonly kind: 'system'; readonly text: string }
  | { readonly kind: 'user'; readonly text: string; readonly image?: boolean }
  | { readonly kind: 'answer'; readonly text: string; readonly reasoning?: string }
  | {
    readonly kind: 'turn';
    readonly reasoning?: string;
    readonly text?: string;
    readonly calls: readonly ScriptCall[];
    readonly results: readonly string[];
    /** Text the user adds beside the results (Hermes renders it in the results message). */
    readonly userNote?: string;
  };

/** A session script; it always holds at least one user step. */
export interface Script {
  readonly steps: readonly ScriptStep[];
}

const WORDS = [
  'the', 'table', 'rows', 'query', 'file', 'report', 'index', 'count', 'total', 'schema', 'column', 'value', 'sorted', 'by',
  'date', 'please', 'check', 'list', 'and', 'then', 'summarize', 'latest', 'results', 'error', 'ok', 'done', 'weather', 'city',
  'forecast', 'page', 'search', 'found', 'none', 'missing', 'updated', 'version', 'build', 'test', 'passed', 'failed',
];
const CHINESE = ['查询', '结果', '表格', '文件', '天气', '总数', '更新', '请确认', '完成', '错误'];
const TOOLS = ['list_tables', 'read_query', 'describe_table', 'get_weather', 'web_search', 'read_file', 'code_interpreter'];

const sentence = (min: number, max: number) => fc.array(fc.oneof({ weight: 8, arbitrary: fc.constantFrom(...WORDS) }, { weight: 1, arbitrary: fc.constantFrom(...CHINESE) }), { minLength: min, maxLength: max }).map((w) => w.join(' '));

/** Text of a user or assistant message: a few words, now and then a longer paragraph. */
export const textArb = fc.oneof({ weight: 5, arbitrary: sentence(1, 12) }, { weight: 1, arbitrary: sentence(30, 120) });

/**
 * A bulky result: `n` words (1,500–6,000, in steps of 250) read from one fixed pseudo-random word
 * sequence at one of `BULKY_OFFSETS` places. Bulky results are about size, not wording: taking
 * them from a few hundred distinct texts lets the token counter's text cache serve repeats
 * across runs (the tests spent most of their time tokenizing fresh bulky texts).
 */
const BULKY_OFFSETS = 32;
const BULKY_POOL = (() => {
  let s = 12345;
  const words: string[] = [];
  for (let k = 0; k < 6000 + BULKY_OFFSETS; k++) {
    s = (Math.imul(s, 1103515245) + 12345) >>> 0;
    words.push(WORDS[s % WORDS.length]);
  }
  return words;
})();
function bulky(n: number, offset: number): string {
  return BULKY_POOL.slice(offset, offset + n).join(' ');
}

/** A tool result: a short JSON or text answer, now and then a bulky one (thousands of words). */
const resultArb = fc.oneof(
  { weight: 6, arbitrary: sentence(1, 20) },
  { weight: 3, arbitrary: fc.record({ rows: fc.array(fc.record({ id: fc.nat(999), value: sentence(1, 3) }), { maxLength: 4 }) }).map((r) => JSON.stringify(r)) },
  { weight: 1, arbitrary: fc.tuple(fc.integer({ min: 6, max: 24 }), fc.nat(BULKY_OFFSETS - 1)).map(([quarters, offset]) => bulky(250 * quarters, offset)) },
);

const callArb: fc.Arbitrary<ScriptCall> = fc.record({
  name: fc.constantFrom(...TOOLS),
  args: fc.oneof(
    fc.record({ sql: sentence(1, 6) }).map((a) => JSON.stringify(a)),
    fc.record({ city: fc.constantFrom('Hangzhou', 'Lisbon', 'Quito'), days: fc.nat(7) }).map((a) => JSON.stringify(a, null, 1)),
    fc.constant('{}'),
  ),
});

const turnArb: fc.Arbitrary<ScriptStep> = fc.array(callArb, { minLength: 1, maxLength: 4 }).chain((calls) => fc.record({
  kind: fc.constant('turn' as const),
  reasoning: fc.option(sentence(2, 10), { nil: undefined, freq: 3 }),
  text: fc.option(sentence(1, 8), { nil: undefined, freq: 2 }),
  calls: fc.constant(calls),
  results: fc.tuple(...calls.map(() => resultArb)),
  userNote: fc.option(sentence(1, 6), { nil: undefined, freq: 6 }),
}));

const answerArb: fc.Arbitrary<ScriptStep> = fc.record({ kind: fc.constant('answer' as const), text: textArb, reasoning: fc.option(sentence(2, 10), { nil: undefined, freq: 3 }) });

/** One exchange: a user message, 0–3 model turns with calls, mostly an answer, sometimes a system note. */
const exchangeArb: fc.Arbitrary<ScriptStep[]> = fc.tuple(
  fc.record({ kind: fc.constant('user' as const), text: textArb, image: fc.boolean() }),
  fc.array(turnArb, { maxLength: 3 }),
  fc.option(answerArb, { nil: undefined, freq: 5 }),
  fc.option(fc.record({ kind: fc.constant('system' as const), text: sentence(2, 8) }), { nil: undefined, freq: 10 }),
).map(([user, turns, answer, note]) => [...(note ? [note] : []), user, ...turns, ...(answer ? [answer] : [])]);

/** A session script: an optional system prompt, then 1–7 exchanges. */
export const scriptArb: fc.Arbitrary<Script> = fc.tuple(
  fc.option(fc.record({ kind: fc.constant('system' as const), text: sentence(3, 20) }), { nil: undefined, freq: 4 }),
  fc.array(exchangeArb, { minLength: 1, maxLength: 7 }),
).map(([system, exchanges]) => ({ steps: [...(system ? [system] : []), ...exchanges.flat()] }));

/** How a rendered session keys its calls: unique ids, Qwen-Agent's fixed "1" for every call, or none. */
export type IdMode = 'unique' | 'repeated' | 'none';

/** Renders a script as Qwen-Agent messages; `ids` says how calls are keyed (see `IdMode`). */
export function renderQwenAgent(script: Script, ids: IdMode): QwenAgentMessage[] {
  const out: QwenAgentMessage[] = [];
  let next = 0;
  for (const step of script.steps) {
    switch (step.kind) {
      case 'system':
        out.push({ role: 'system', content: step.text });
        break;
      case 'user':
        out.push(step.image ? { role: 'user', content: [{ image: 'https://example.com/chart.png' }, { text: step.text }] } : { role: 'user', content: step.text });
        break;
      case 'answer':
        if (step.reasoning !== undefined) out.push({ role: 'assistant', content: '', reasoning_content: step.reasoning });
        out.push({ role: 'assistant', content: step.text });
        break;
      case 'turn': {
        if (step.reasoning !== undefined) out.push({ role: 'assistant', content: '', reasoning_content: step.reasoning });
        if (step.text !== undefined) out.push({ role: 'assistant', content: step.text });
        // Ids come from a small pool: a later turn may reuse an id an earlier one used.
        const keys = step.calls.map(() => (ids === 'unique' ? `call_${next++ % 9}` : ids === 'repeated' ? '1' : undefined));
        step.calls.forEach((call, k) => out.push({
          role: 'assistant',
          content: '',
          function_call: { name: call.name, arguments: call.args },
          ...(keys[k] !== undefined ? { extra: { function_id: keys[k] } } : {}),
        }));
        step.results.forEach((result, k) => out.push({
          role: 'function',
          name: step.calls[k].name,
          content: result,
          ...(keys[k] !== undefined ? { extra: { function_id: keys[k] } } : {}),
        }));
        break;
      }
    }
  }
  return out;
}

/** A valid Qwen-Agent history and how it keys its calls. */
export const qwenHistoryArb: fc.Arbitrary<{ messages: QwenAgentMessage[]; ids: IdMode }> = fc.tuple(scriptArb, fc.constantFrom<IdMode>('unique', 'repeated', 'none'))
  .map(([script, ids]) => ({ messages: renderQwenAgent(script, ids), ids }));

/** Faults injected into a valid history, and what repair must do about them. */
export interface Injected<M> {
  readonly messages: M[];
  /** Result messages that answer no call or answer one twice: repair may remove these, and only these. */
  readonly removable: ReadonlySet<M>;
  /** Calls left without a result: repair adds one error result for each. */
  readonly unanswered: number;
}

/** A fault and where it goes (positions are taken modulo what the history offers). */
export interface Fault {
  readonly kind: 'orphan' | 'duplicate' | 'missing';
  readonly at: number;
  readonly count: number;
}

/** Faults to inject: 1–3 of orphan results, duplicated results and results missing at the end of a turn. */
export const faultsArb: fc.Arbitrary<Fault[]> = fc.array(fc.record({ kind: fc.constantFrom<Fault['kind']>('orphan', 'duplicate', 'missing'), at: fc.nat(), count: fc.integer({ min: 1, max: 3 }) }), { minLength: 1, maxLength: 3 });

/**
 * Injects `faults` into a valid Qwen-Agent history: an orphan function message after a user
 * message, a copy of a result right after it, the last results of a turn left out. Without
 * distinct ids, a result is copied only where its turn calls that function once (else the copy
 * answers the function's next call: Qwen-Agent itself could not tell them apart).
 */
export function breakQwenAgent(valid: readonly QwenAgentMessage[], ids: IdMode, faults: readonly Fault[]): Injected<QwenAgentMessage> {
  let messages = [...valid];
  const removable = new Set<QwenAgentMessage>();
  let unanswered = 0;
  for (const fault of faults) {
    if (fault.kind === 'orphan') {
      const spots = messages.map((m, i) => (m.role === 'user' ? i + 1 : -1)).filter((i) => i >= 0);
      const at = spots[fault.at % spots.length];
      const orphan: QwenAgentMessage = { role: 'function', name: 'ghost_tool', content: 'a result nobody asked for', extra: { function_id: `gone_${fault.at % 97}` } };
      messages.splice(at, 0, orphan);
      removable.add(orphan);
    } else if (fault.kind === 'duplicate') {
      // Without distinct ids, a copy of a result is a duplicate only when its turn calls that function
      // once (else it reads as the answer to the function's next call: ambiguous, to Qwen-Agent too).
      const calledOnce = (i: number) => {
        let k = i;
        while (k > 0 && messages[k - 1].role === 'function') k--;
        let n = 0;
        for (let c = k - 1; c >= 0 && messages[c].role === 'assistant'; c--) if (messages[c].function_call?.name === messages[i].name) n++;
        return n === 1;
      };
      const spots = messages.map((m, i) => (m.role === 'function' && !removable.has(m) && (ids === 'unique' || calledOnce(i)) ? i : -1)).filter((i) => i >= 0);
      if (spots.length === 0) continue;
      const at = spots[fault.at % spots.length];
      const copy: QwenAgentMessage = structuredClone(messages[at]);
      messages.splice(at + 1, 0, copy);
      removable.add(copy);
    } else if (fault.kind === 'missing') {
      // The last results of one turn (whole trailing run of real results) are left out.
      const ends = messages.map((m, i) => (m.role === 'function' && !removable.has(m) && messages[i + 1]?.role !== 'function' ? i : -1)).filter((i) => i >= 0);
      if (ends.length === 0) continue;
      const end = ends[fault.at % ends.length];
      let start = end;
      while (start > 0 && messages[start - 1].role === 'function' && !removable.has(messages[start - 1])) start--;
      if (messages.slice(start, end + 1).some((m) => removable.has(m))) continue;
      // A call run left with no result at all, followed by more calls of the model, would read as
      // one parallel turn (it is one to Qwen-Agent too): keep one result there.
      let k = end + 1;
      while (k < messages.length && messages[k].role === 'assistant' && !messages[k].function_call) k++;
      const all = !(k < messages.length && messages[k].role === 'assistant');
      const drop = Math.min(fault.count, end - start + (all ? 1 : 0));
      if (drop === 0) continue;
      messages = [...messages.slice(0, end + 1 - drop), ...messages.slice(end + 1)];
      unanswered += drop;
    }
  }
  return { messages, removable, unanswered };
}
