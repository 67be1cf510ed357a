import fc from 'fast-check';
import type { OpenAIChatMessage, OpenAIContentPart } from '../../src/formats/openai-chat/types.js';
import { mulberry32 } from '../../bench/fixtures/conversation.js';

/**
 * fast-check generators of random OpenAI Chat Completions histories, shaped like real agent logs:
 * system/developer messages first and in the middle, user and assistant text, assistant turns with
 * 1–12 parallel `tool_calls` whose `tool` results come back in any order, legacy `function_call`
 * turns answered by role `function`, call ids reused by later turns, content as a string, a list
 * of text parts or null (on call-making assistants), and now and then a bulky tool output.
 *
 * `validHistory()` yields what a provider accepts; `brokenHistory()` yields a valid history with at
 * least one injected fault (orphan, stray, duplicate or missing results, a tool message first, a
 * user message between a call and its results). Every generated message is a fresh object.
 */

/** Content of a message: a string or a list of text parts. */
export type Content = string | OpenAIContentPart[];

const ENGLISH = [
  'the', 'item', 'order', 'was', 'updated', 'member', 'parcel', 'please', 'confirm', 'cancel',
  'refund', 'to', 'from', 'Paris', 'Tokyo', 'insurance', 'seat', 'economy', 'business', 'and', 'yes', 'no',
  'order', 'status', 'delivered', 'I', 'want', 'change', 'my', 'date', 'search', 'results', 'error', 'ok',
];
const CHINESE = ['预订', '已成功', '更新', '乘客', '信息', '航班', '取消', '退款', '行李', '请确认', '经济舱', '商务舱', '你好', '谢谢'];
const JSON_SNIPPETS = [
  '{"order_id":"ZFA04Y","status":"confirmed","items":[{"item_number":"QMX417","date":"2024-05-16"}]}',
  '{"error":null,"items":[1,2,3],"total":1287.5,"currency":"USD"}',
  '[{"name":"Mia Li","dob":"1990-04-05"},{"name":"陈明","dob":"1985-11-20"}]',
  '{"ok":true,"message":"预订已成功更新","seats":{"economy":12,"business":3}}',
];

/** Ids a call may use. Small on purpose: later turns often reuse an id an earlier turn used. */
export const CALL_ID_POOL: readonly string[] = [
  'call_0', 'call_1', 'call_2', 'call_3', 'call_4', 'call_5', 'call_6', 'call_7', 'call_8', 'call_9',
  'call_jJATmoUduQWxi4tRwcQjsodM', 'call_gmd4tanjXcwOxfPawOnDmq6R', 'call_a1', 'call_b2', 'call_c3', 'call_d4',
];

/** Prefix of the ids of injected orphan results: never the id of any generated call. */
export const ORPHAN_ID_PREFIX = 'call_gone_';

const TOOL_NAMES = ['get_order_details', 'search_direct_item', 'place_order', 'calculate', 'think', 'web_search', 'read_file'];


/**
 * A Chinese clause of 1–4 phrases and its punctuation. Never one unbroken run of Han characters:
 * tiktoken's encoding time grows with the square of a run without spaces or punctuation.
 */
function chineseClause(rand: () => number): string {
  let clause = '';
  const phrases = 1 + Math.floor(rand() * 4);
  for (let k = 0; k < phrases; k++) clause += CHINESE[Math.floor(rand() * CHINESE.length)];
  return clause + (rand() < 0.7 ? '，' : '。\n');
}

/**
 * Bulky tool outputs (1k–20k characters of English, Chinese, JSON or a mix), built once with a fixed
 * seed. Drawn from a fixed pool so a shared token counter encodes each one once per test file.
 */
export const BULKY_OUTPUTS: readonly string[] = (() => {
  const rand = mulberry32(20240515);
  const pick = <T>(xs: readonly T[]) => xs[Math.floor(rand() * xs.length)];
  const out: string[] = [];
  const count = 24;
  for (let k = 0; k < count; k++) {
    const length = 1000 + Math.floor((19000 * k) / (count - 1));
    const flavour = k % 4;
    let s = '';
    while (s.length < length) {
      const f = flavour === 3 ? Math.floor(rand() * 3) : flavour;
      if (f === 0) s += `${pick(ENGLISH)} `;
      // Chinese prose is punctuated every few phrases, as real text is (see chineseClause).
      else if (f === 1) s += chineseClause(rand);
      else s += `${pick(JSON_SNIPPETS)}\n`;
    }
    out.push(s.slice(0, length));
  }
  return out;
})();

const wordsArb = fc.array(fc.constantFrom(...ENGLISH), { minLength: 1, maxLength: 24 }).map((ws) => ws.join(' '));
const chineseArb = fc.array(fc.constantFrom(...CHINESE), { minLength: 1, maxLength: 12 }).map((ws) => ws.join(''));

/** A short text: mostly English words, sometimes Chinese, JSON or arbitrary graphemes (maybe empty). */
export const textArb: fc.Arbitrary<string> = fc.oneof(
  { weight: 8, arbitrary: wordsArb },
  { weight: 2, arbitrary: chineseArb },
  { weight: 1, arbitrary: fc.constantFrom(...JSON_SNIPPETS) },
  { weight: 1, arbitrary: fc.string({ maxLength: 30, unit: 'grapheme' }) },
);

const partsArb = fc.array(textArb, { minLength: 1, maxLength: 3 }).map((ts): OpenAIContentPart[] => ts.map((text) => ({ type: 'text', text })));

/** Message content: a string (mostly) or a list of text parts. */
export const contentArb: fc.Arbitrary<Content> = fc.oneof({ weight: 3, arbitrary: textArb }, { weight: 1, arbitrary: partsArb });

const bulkyArb = fc.tuple(fc.constantFrom(...BULKY_OUTPUTS), fc.boolean())
  .map(([text, asParts]): Content => (asParts ? [{ type: 'text', text }] : text));

/** A tool output: usually short, sometimes bulky. */
export const toolOutputArb: fc.Arbitrary<Content> = fc.oneof({ weight: 12, arbitrary: contentArb }, { weight: 1, arbitrary: bulkyArb });

const argsArb = fc.array(
  fc.tuple(fc.constantFrom('order_id', 'origin', 'destination', 'date', 'query', 'amount'), fc.oneof(wordsArb, fc.integer())),
  { maxLength: 4 },
).map((entries) => JSON.stringify(Object.fromEntries(entries)));

/** How many parallel calls a turn makes: mostly one or two, up to twelve. */
const callCountArb = fc.oneof(
  { weight: 6, arbitrary: fc.integer({ min: 1, max: 2 }) },
  { weight: 3, arbitrary: fc.integer({ min: 3, max: 6 }) },
  { weight: 1, arbitrary: fc.integer({ min: 7, max: 12 }) },
);

interface CallPlan {
  readonly id: string;
  readonly name: string;
  readonly args: string;
  readonly output: Content;
  /** Sort key: results come back in the order of these keys, not of the calls. */
  readonly order: number;
}

/** An assistant turn with parallel tool calls, plus the faults a broken history injects into it. */
interface ToolTurnPlan {
  readonly kind: 'tools';
  readonly content: Content | null;
  readonly calls: readonly CallPlan[];
  readonly followUp: Content | null;
  missing?: number[];
  duplicate?: { call: number; at: number };
  stray?: { at: number; content: Content };
  userBetween?: Content;
  interject?: { at: number; role: 'user' | 'system' | 'assistant'; content: Content };
}

/** A legacy `function_call` turn answered by a `function` message, plus injected faults. */
interface LegacyTurnPlan {
  readonly kind: 'legacy';
  readonly content: Content | null;
  readonly name: string;
  readonly args: string;
  readonly output: Content;
  readonly followUp: Content | null;
  missing?: boolean;
  duplicate?: boolean;
  userBetween?: Content;
}

interface PlainPlan {
  readonly kind: 'system' | 'developer' | 'user' | 'assistant';
  readonly content: Content;
}

interface OrphanPlan {
  readonly kind: 'orphan';
  readonly content: Content;
}

type SegmentPlan = ToolTurnPlan | LegacyTurnPlan | PlainPlan | OrphanPlan;

const toolTurnArb: fc.Arbitrary<ToolTurnPlan> = callCountArb.chain((k) => fc.record({
  content: fc.option(contentArb, { nil: null, freq: 2 }),
  ids: fc.uniqueArray(fc.constantFrom(...CALL_ID_POOL), { minLength: k, maxLength: k }),
  names: fc.array(fc.constantFrom(...TOOL_NAMES), { minLength: k, maxLength: k }),
  args: fc.array(argsArb, { minLength: k, maxLength: k }),
  outputs: fc.array(toolOutputArb, { minLength: k, maxLength: k }),
  order: fc.array(fc.nat(), { minLength: k, maxLength: k }),
  followUp: fc.option(contentArb, { nil: null, freq: 2 }),
})).map((r): ToolTurnPlan => ({
  kind: 'tools',
  content: r.content,
  calls: r.ids.map((id, k) => ({ id, name: r.names[k], args: r.args[k], output: r.outputs[k], order: r.order[k] })),
  followUp: r.followUp,
}));

const legacyTurnArb: fc.Arbitrary<LegacyTurnPlan> = fc.record({
  content: fc.option(contentArb, { nil: null, freq: 3 }),
  name: fc.constantFrom(...TOOL_NAMES),
  args: argsArb,
  output: toolOutputArb,
  followUp: fc.option(contentArb, { nil: null, freq: 2 }),
}).map((r): LegacyTurnPlan => ({ kind: 'legacy', ...r }));

const plainArb = (kind: PlainPlan['kind']) => contentArb.map((content): PlainPlan => ({ kind, content }));

const middleSegmentArb: fc.Arbitrary<SegmentPlan> = fc.oneof(
  { weight: 5, arbitrary: plainArb('user') },
  { weight: 3, arbitrary: plainArb('assistant') },
  { weight: 5, arbitrary: toolTurnArb },
  { weight: 1, arbitrary: legacyTurnArb },
  { weight: 1, arbitrary: fc.oneof(plainArb('system'), plainArb('developer')) },
);

const firstSegmentArb: fc.Arbitrary<SegmentPlan | null> = fc.option(
  fc.oneof({ weight: 4, arbitrary: plainArb('system') }, { weight: 1, arbitrary: plainArb('developer') }),
  { nil: null, freq: 6 },
);

function segmentSize(s: SegmentPlan): number {
  switch (s.kind) {
    case 'tools':
      return 1 + s.calls.length + (s.followUp !== null ? 1 : 0);
    case 'legacy':
      return 2 + (s.followUp !== null ? 1 : 0);
    default:
      return 1;
  }
}

/** The longest prefix of whole segments that fits in `max` messages (at least one segment). */
function capSegments(segments: readonly SegmentPlan[], max: number): SegmentPlan[] {
  const out: SegmentPlan[] = [];
  let size = 0;
  for (const s of segments) {
    const n = segmentSize(s);
    if (out.length > 0 && size + n > max) break;
    out.push(s);
    size += n;
  }
  return out;
}

/** Options of the history generators. */
export interface HistoryShape {
  /** Upper bound on the messages of a valid history (broken ones add a few). Default 80. */
  readonly maxMessages?: number;
  /** Upper bound on the segments drawn before capping. Default 30. */
  readonly maxSegments?: number;
}

function segmentsArb(shape: HistoryShape): fc.Arbitrary<SegmentPlan[]> {
  const maxMessages = shape.maxMessages ?? 80;
  return fc.tuple(firstSegmentArb, fc.array(middleSegmentArb, { minLength: 1, maxLength: shape.maxSegments ?? 30, size: 'medium' }))
    .map(([first, rest]) => capSegments(first ? [first, ...rest] : rest, maxMessages));
}

/** Turns plans into messages, applying each plan's injected faults. */
function materialize(segments: readonly SegmentPlan[]): OpenAIChatMessage[] {
  const out: OpenAIChatMessage[] = [];
  let orphans = 0;
  for (const s of segments) {
    switch (s.kind) {
      case 'system':
      case 'developer':
      case 'user':
      case 'assistant':
        out.push({ role: s.kind, content: s.content });
        break;
      case 'orphan': {
        // Right after a legacy call with no result, an id-bearing result would answer it by position.
        const prev = out[out.length - 1];
        if (prev?.function_call) out.push({ role: 'user', content: 'go on' });
        out.push({ role: 'tool', tool_call_id: `${ORPHAN_ID_PREFIX}${orphans++}`, content: s.content });
        break;
      }
      case 'legacy': {
        out.push({ role: 'assistant', content: s.content, function_call: { name: s.name, arguments: s.args } });
        if (s.userBetween !== undefined) out.push({ role: 'user', content: s.userBetween });
        if (!s.missing) {
          out.push({ role: 'function', name: s.name, content: s.output });
          if (s.duplicate) out.push({ role: 'function', name: s.name, content: s.output });
        }
        if (s.followUp !== null) out.push({ role: 'assistant', content: s.followUp });
        break;
      }
      case 'tools': {
        out.push({
          role: 'assistant',
          content: s.content,
          tool_calls: s.calls.map((c) => ({ id: c.id, type: 'function', function: { name: c.name, arguments: c.args } })),
        });
        if (s.userBetween !== undefined) out.push({ role: 'user', content: s.userBetween });
        const missing = new Set(s.missing ?? []);
        const answered = s.calls.map((c, k) => ({ c, k })).filter(({ k }) => !missing.has(k)).sort((a, b) => a.c.order - b.c.order || a.k - b.k);
        const run: OpenAIChatMessage[] = answered.map(({ c }) => ({ role: 'tool', tool_call_id: c.id, content: c.output }));
        if (s.duplicate && answered.length > 0) {
          const from = s.duplicate.call % answered.length;
          const { c } = answered[from];
          const at = from + 1 + (s.duplicate.at % (run.length - from));
          run.splice(at, 0, { role: 'tool', tool_call_id: c.id, content: c.output });
        }
        if (s.stray) run.splice(s.stray.at % (run.length + 1), 0, { role: 'tool', tool_call_id: `${ORPHAN_ID_PREFIX}${orphans++}`, content: s.stray.content });
        // Before at least one result, so the results after it are cut off from their call.
        if (s.interject) run.splice(s.interject.at % Math.max(1, run.length), 0, { role: s.interject.role, content: s.interject.content });
        out.push(...run);
        if (s.followUp !== null) out.push({ role: 'assistant', content: s.followUp });
        break;
      }
    }
  }
  return out;
}

/** Random valid OpenAI Chat histories (1 to `maxMessages` messages): zero violations by construction. */
export function validHistory(shape: HistoryShape = {}): fc.Arbitrary<OpenAIChatMessage[]> {
  return segmentsArb(shape).map(materialize);
}

/** One fault to inject; `target` and `at` pick the place (taken modulo what exists). */
type Fault =
  | { readonly type: 'orphan'; readonly at: number; readonly content: Content }
  | { readonly type: 'tool-first'; readonly content: Content }
  | { readonly type: 'missing'; readonly target: number; readonly picks: readonly number[] }
  | { readonly type: 'duplicate'; readonly target: number; readonly call: number; readonly at: number }
  | { readonly type: 'user-between'; readonly target: number; readonly content: Content }
  | { readonly type: 'interject'; readonly target: number; readonly at: number; readonly role: 'user' | 'system' | 'assistant'; readonly content: Content }
  | { readonly type: 'stray'; readonly target: number; readonly at: number; readonly content: Content };

/** The kinds of fault `brokenHistory` injects. */
export type FaultType = Fault['type'];

const faultArb: fc.Arbitrary<Fault> = fc.oneof(
  fc.record({ type: fc.constant('orphan' as const), at: fc.nat(), content: toolOutputArb }),
  fc.record({ type: fc.constant('tool-first' as const), content: contentArb }),
  fc.record({ type: fc.constant('missing' as const), target: fc.nat(), picks: fc.array(fc.nat(), { minLength: 1, maxLength: 4 }) }),
  fc.record({ type: fc.constant('duplicate' as const), target: fc.nat(), call: fc.nat(), at: fc.nat() }),
  fc.record({ type: fc.constant('user-between' as const), target: fc.nat(), content: contentArb }),
  fc.record({ type: fc.constant('interject' as const), target: fc.nat(), at: fc.nat(), role: fc.constantFrom('user' as const, 'system' as const, 'assistant' as const), content: contentArb }),
  fc.record({ type: fc.constant('stray' as const), target: fc.nat(), at: fc.nat(), content: contentArb }),
);

/** Copies the plans and injects the faults; adds `spare` as a turn to break when none exists. */
function injectFaults(valid: readonly SegmentPlan[], faults: readonly Fault[], spare: ToolTurnPlan): SegmentPlan[] {
  const segments: SegmentPlan[] = valid.map((s) => ({ ...s }));
  const turnsOf = (pred: (s: SegmentPlan) => boolean) => {
    let turns = segments.filter(pred);
    if (turns.length === 0) {
      segments.push({ ...spare });
      turns = [segments[segments.length - 1]];
    }
    return turns;
  };
  const anyTurn = (s: SegmentPlan) => s.kind === 'tools' || s.kind === 'legacy';
  let toolFirst: OrphanPlan | undefined;
  for (const f of faults) {
    switch (f.type) {
      case 'orphan':
        segments.splice(f.at % (segments.length + 1), 0, { kind: 'orphan', content: f.content });
        break;
      case 'tool-first':
        toolFirst = { kind: 'orphan', content: f.content };
        break;
      case 'missing': {
        const turns = turnsOf(anyTurn);
        const t = turns[f.target % turns.length] as ToolTurnPlan | LegacyTurnPlan;
        if (t.kind === 'legacy') t.missing = true;
        else t.missing = [...new Set([...(t.missing ?? []), ...f.picks.map((p) => p % t.calls.length)])];
        break;
      }
      case 'duplicate': {
        const turns = turnsOf(anyTurn);
        const t = turns[f.target % turns.length] as ToolTurnPlan | LegacyTurnPlan;
        if (t.kind === 'legacy') t.duplicate = true;
        else t.duplicate = { call: f.call, at: f.at };
        break;
      }
      case 'user-between': {
        const turns = turnsOf(anyTurn);
        (turns[f.target % turns.length] as ToolTurnPlan | LegacyTurnPlan).userBetween = f.content;
        break;
      }
      case 'interject': {
        const turns = turnsOf((s) => s.kind === 'tools');
        (turns[f.target % turns.length] as ToolTurnPlan).interject = { at: f.at, role: f.role, content: f.content };
        break;
      }
      case 'stray': {
        // Only after parallel calls: after a legacy call with no result, a stray would answer it by position.
        const turns = turnsOf((s) => s.kind === 'tools');
        (turns[f.target % turns.length] as ToolTurnPlan).stray = { at: f.at, content: f.content };
        break;
      }
    }
  }
  return toolFirst ? [toolFirst, ...segments] : segments;
}

/**
 * Random broken histories: a valid history plus 1–4 injected faults (orphan results, strays inside
 * a result run, duplicate results, missing results, a tool message first, a user message between a
 * call and its results, a user/system/assistant message cutting a run of results in two). Each fault is placed so that no other fault undoes it: every history
 * drawn has at least one violation.
 */
export function brokenHistory(shape: HistoryShape = {}): fc.Arbitrary<OpenAIChatMessage[]> {
  return fc.tuple(segmentsArb(shape), fc.array(faultArb, { minLength: 1, maxLength: 4 }), toolTurnArb)
    .map(([segments, faults, spare]) => materialize(injectFaults(segments, faults, spare)));
}

/** Valid and broken histories, about half each. */
export function anyHistory(shape: HistoryShape = {}): fc.Arbitrary<OpenAIChatMessage[]> {
  return fc.oneof(validHistory(shape), brokenHistory(shape));
}
