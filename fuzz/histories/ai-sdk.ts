import fc from 'fast-check';
import type { AiSdkMessage, AiSdkPart } from '../../src/formats/ai-sdk/types.js';

/**
 * fast-check generators of AI SDK histories: valid ones (parallel calls, every tool output kind,
 * reasoning with provider signatures, provider-executed calls answered in place or in a later
 * assistant message, tool approval flows approved and denied, results over one or two tool
 * messages, ids reused in later steps, long results) and broken ones (results dropped, duplicated,
 * orphaned, calls removed, history cut right after a call). Built from plain descriptors, so a
 * failing case shrinks to a small history.
 */

const WORDS = ['alpha', 'beta', 'gamma', 'delta', 'value', 'item', 'check', 'note', 'list', 'done', 'next', 'ok', 'file', 'path', 'row'];
const TOOLS = ['search', 'readFile', 'runQuery', 'fetchPage', 'listDir'];

/** Words joined by spaces (maybe none). */
const words = (max: number) => fc.array(fc.constantFrom(...WORDS), { maxLength: max }).map((w) => w.join(' '));
/** Non-empty text. */
const text = (max = 12) => fc.array(fc.constantFrom(...WORDS), { minLength: 1, maxLength: max }).map((w) => w.join(' '));

/** Deterministic long prose of `n` words. */
export function longText(n: number, seed = 1): string {
  let x = seed;
  const out: string[] = [];
  for (let k = 0; k < n; k++) {
    x = (x * 1103515245 + 12345) % 2147483648;
    out.push(WORDS[x % WORDS.length]);
  }
  return out.join(' ');
}

const outputArb = fc.record({
  type: fc.constantFrom('text', 'json', 'content', 'error-text', 'error-json'),
  body: fc.oneof({ weight: 6, arbitrary: words(30) }, { weight: 1, arbitrary: fc.integer({ min: 300, max: 2500 }).map((n) => longText(n, n)) }),
});

const callArb = fc.record({
  name: fc.constantFrom(...TOOLS),
  arg: text(4),
  output: outputArb,
  approval: fc.constantFrom<undefined | 'approve' | 'deny'>(undefined, undefined, undefined, 'approve', 'deny'),
});

const toolStepArb = fc.record({
  kind: fc.constant('tools' as const),
  reasoning: fc.option(text(8), { nil: undefined }),
  text: fc.option(text(8), { nil: undefined }),
  calls: fc.array(callArb, { minLength: 1, maxLength: 3 }),
  /** Results over two tool messages (approval responses first, when there are any). */
  split: fc.boolean(),
  /** A provider-executed call answered in the same message, beside the client calls. */
  inPlace: fc.boolean(),
  /** Ids `call_0`, `call_1`... in every step (ids reused across turns) rather than step-unique ones. */
  reuseIds: fc.boolean(),
});

const providerStepArb = fc.record({
  kind: fc.constant('provider' as const),
  deferred: fc.boolean(),
  text: text(8),
  body: words(40),
});

const turnArb = fc.record({
  userParts: fc.boolean(),
  user: text(10),
  steps: fc.array(fc.oneof({ weight: 4, arbitrary: toolStepArb }, { weight: 1, arbitrary: providerStepArb }), { maxLength: 3 }),
  final: fc.option(fc.record({ text: text(12), reasoning: fc.option(text(6), { nil: undefined }), asString: fc.boolean() }), { nil: undefined, freq: 5 }),
});

type Output = { type: string; body: string };

function outputOf(o: Output): AiSdkPart['output'] {
  switch (o.type) {
    case 'json':
      return { type: 'json', value: { text: o.body, n: o.body.length } };
    case 'content':
      return { type: 'content', value: [{ type: 'text', text: o.body }] };
    case 'error-json':
      return { type: 'error-json', value: { error: o.body } };
    default:
      return { type: o.type, value: o.body };
  }
}

const signature = (s: string) => ({ anthropic: { signature: `sig-${s.length}-${s.slice(0, 6)}` } });

/** Valid AI SDK histories: every call answered by the tool messages right after it. */
export function validAiSdkHistory(): fc.Arbitrary<AiSdkMessage[]> {
  return fc.record({ system: fc.option(text(10), { nil: undefined }), turns: fc.array(turnArb, { minLength: 1, maxLength: 6 }) }).map(({ system, turns }) => {
    const out: AiSdkMessage[] = [];
    if (system !== undefined) out.push({ role: 'system', content: system });
    let step = 0;
    for (const turn of turns) {
      out.push({ role: 'user', content: turn.userParts ? [{ type: 'text', text: turn.user }] : turn.user });
      for (const s of turn.steps) {
        step++;
        if (s.kind === 'provider') {
          const id = `srv_${step}`;
          const callPart = { type: 'tool-call', toolCallId: id, toolName: 'web_search', input: { query: s.text }, providerExecuted: true };
          const resultPart = { type: 'tool-result', toolCallId: id, toolName: 'web_search', output: { type: 'text', value: s.body } };
          if (s.deferred) {
            out.push({ role: 'assistant', content: [callPart, { type: 'text', text: 'Working on it.' }] });
            out.push({ role: 'assistant', content: [resultPart, { type: 'text', text: s.text }] });
          } else {
            out.push({ role: 'assistant', content: [callPart, resultPart, { type: 'text', text: s.text }] });
          }
          continue;
        }
        const parts: AiSdkPart[] = [];
        if (s.reasoning !== undefined) parts.push({ type: 'reasoning', text: s.reasoning, providerOptions: signature(s.reasoning) });
        if (s.text !== undefined) parts.push({ type: 'text', text: s.text });
        if (s.inPlace) {
          parts.push({ type: 'tool-call', toolCallId: `srv_in_${step}`, toolName: 'web_search', input: { q: 'x' }, providerExecuted: true });
          parts.push({ type: 'tool-result', toolCallId: `srv_in_${step}`, toolName: 'web_search', output: { type: 'json', value: ['hit'] } });
        }
        const responses: AiSdkPart[] = [];
        const results: AiSdkPart[] = [];
        s.calls.forEach((c, k) => {
          const id = s.reuseIds ? `call_${k}` : `call_${step}_${k}`;
          parts.push({ type: 'tool-call', toolCallId: id, toolName: c.name, input: { arg: c.arg } });
          if (c.approval !== undefined) {
            const approvalId = `ap_${step}_${k}`;
            parts.push({ type: 'tool-approval-request', approvalId, toolCallId: id });
            responses.push(c.approval === 'approve' ? { type: 'tool-approval-response', approvalId, approved: true } : { type: 'tool-approval-response', approvalId, approved: false, reason: 'not allowed' });
          }
          results.push({ type: 'tool-result', toolCallId: id, toolName: c.name, output: c.approval === 'deny' ? { type: 'execution-denied', reason: 'not allowed' } : outputOf(c.output) });
        });
        out.push({ role: 'assistant', content: parts });
        const all = [...responses, ...results];
        if (s.split && all.length > 1) {
          const at = responses.length > 0 ? responses.length : 1;
          out.push({ role: 'tool', content: all.slice(0, at) });
          out.push({ role: 'tool', content: all.slice(at) });
        } else {
          out.push({ role: 'tool', content: all });
        }
      }
      if (turn.final) {
        if (turn.final.asString && turn.final.reasoning === undefined) out.push({ role: 'assistant', content: turn.final.text });
        else {
          const parts: AiSdkPart[] = [];
          if (turn.final.reasoning !== undefined) parts.push({ type: 'reasoning', text: turn.final.reasoning, providerOptions: signature(turn.final.reasoning) });
          parts.push({ type: 'text', text: turn.final.text });
          out.push({ role: 'assistant', content: parts });
        }
      }
    }
    return out;
  });
}

/** The ways a history is broken by `brokenAiSdkHistory`. */
export type Mutation = 'drop-tool' | 'drop-part' | 'dup-tool' | 'orphan' | 'drop-caller' | 'cut-after-call';

const opensClientCalls = (m: AiSdkMessage) => m.role === 'assistant' && Array.isArray(m.content) && m.content.some((p) => p.type === 'tool-call' && p.providerExecuted !== true);
const hasProviderCall = (m: AiSdkMessage) => Array.isArray(m.content) && m.content.some((p) => p.type === 'tool-call' && p.providerExecuted === true);

/** Applies one mutation at the position `pick` selects (nothing when there is no place for it). */
export function mutate(messages: AiSdkMessage[], mutation: Mutation, pick: number): AiSdkMessage[] {
  const where = (ok: (m: AiSdkMessage, i: number) => boolean) => {
    const places = messages.map((m, i) => (ok(m, i) ? i : -1)).filter((i) => i >= 0);
    return places.length === 0 ? -1 : places[pick % places.length];
  };
  const out = messages.slice();
  switch (mutation) {
    case 'drop-tool': {
      const i = where((m) => m.role === 'tool');
      if (i >= 0) out.splice(i, 1);
      return out;
    }
    case 'drop-part': {
      const i = where((m) => m.role === 'tool' && m.content.length > 1);
      if (i >= 0) out[i] = { ...out[i], content: (out[i].content as AiSdkPart[]).filter((_, k) => k !== pick % out[i].content.length) };
      return out;
    }
    case 'dup-tool': {
      const i = where((m) => m.role === 'tool');
      if (i >= 0) out.splice(i + 1, 0, structuredClone(out[i]));
      return out;
    }
    case 'orphan': {
      const i = where((m) => m.role === 'user');
      if (i >= 0) out.splice(i + 1, 0, { role: 'tool', content: [{ type: 'tool-result', toolCallId: `ghost_${pick}`, toolName: 'search', output: { type: 'text', value: 'stale result' } }] });
      return out;
    }
    case 'drop-caller': {
      const i = where((m) => opensClientCalls(m) && !hasProviderCall(m));
      if (i >= 0) out.splice(i, 1);
      return out;
    }
    case 'cut-after-call': {
      const i = where((m, k) => k > 0 && opensClientCalls(m) && !hasProviderCall(m));
      return i >= 0 ? out.slice(i + 1) : out;
    }
  }
}

/** Valid histories broken by one to three mutations. */
export function brokenAiSdkHistory(): fc.Arbitrary<{ messages: AiSdkMessage[]; mutations: [Mutation, number][] }> {
  const mutation = fc.tuple(fc.constantFrom<Mutation>('drop-tool', 'drop-part', 'dup-tool', 'orphan', 'drop-caller', 'cut-after-call'), fc.nat());
  return fc.tuple(validAiSdkHistory(), fc.array(mutation, { minLength: 1, maxLength: 3 })).map(([history, mutations]) => ({
    messages: mutations.reduce((h, [m, pick]) => mutate(h, m, pick), history),
    mutations,
  }));
}
