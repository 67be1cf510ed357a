import fc from 'fast-check';
import type { ResponsesItem } from '../../src/formats/openai-responses/types.js';

/**
 * fast-check generators of OpenAI Responses `input` lists shaped like real agent logs: developer
 * and system messages, a compaction item at the start now and then, user text (a string or
 * `input_text` parts), model responses split over items (reasoning items with summaries and
 * encrypted content, `output_text` messages, 1-4 parallel function / custom tool / local shell
 * calls, each call now and then preceded by its own reasoning item, in-place web search, MCP and
 * code interpreter calls), outputs in any order, some of them bulky, and tool loops of several
 * rounds. Every call_id and item id is unique across the history (the API wants that).
 *
 * `validResponses()` yields what the API accepts; `brokenResponses()` yields a valid history with
 * injected faults (an output dropped, an output sent twice, an orphan output at a turn boundary,
 * a stray output inside a run), and says which objects it injected.
 */

/** Bulky tool outputs (1k-12k characters), built once from a fixed seed so a counter encodes each once. */
export const BULKY: readonly string[] = (() => {
  const words = ['alpha', 'beta', 'gamma', 'delta', 'value', 'record', 'field', 'index', 'status', 'ok', 'error', 'page', 'result', '42', '3.14'];
  let x = 987654321;
  const rand = () => {
    x = (x * 1103515245 + 12345) % 2147483648;
    return x / 2147483648;
  };
  const out: string[] = [];
  for (let k = 0; k < 8; k++) {
    const length = 1000 + k * 1600;
    let s = '';
    while (s.length < length) s += k % 2 ? `{"${words[Math.floor(rand() * words.length)]}": ${Math.floor(rand() * 1000)}}\n` : `${words[Math.floor(rand() * words.length)]} `;
    out.push(s.slice(0, length));
  }
  return out;
})();

/** Prefix of the call_ids of injected orphan outputs: never the call_id of a generated call. */
export const ORPHAN_PREFIX = 'call_gone_';

const wordArb = fc.constantFrom('show', 'list', 'the', 'files', 'please', 'now', 'why', 'it', 'failed', 'ok', 'thanks', 'next', 'step', '数据', '结果');
const textArb = fc.array(wordArb, { minLength: 1, maxLength: 12 }).map((w) => w.join(' '));

const callArb = fc.record({
  kind: fc.constantFrom('function' as const, 'function' as const, 'custom' as const, 'shell' as const),
  name: fc.constantFrom('read_file', 'search', 'run_query', 'fetch_page'),
  arg: textArb,
  output: fc.oneof({ weight: 5, arbitrary: textArb }, { weight: 1, arbitrary: fc.integer({ min: 0, max: BULKY.length - 1 }).map((k) => BULKY[k]) }),
  outputParts: fc.boolean(),
  ownReasoning: fc.boolean(),
});

const stepArb = fc.record({
  reasoning: fc.boolean(),
  text: fc.option(textArb, { nil: undefined, freq: 4 }),
  calls: fc.array(callArb, { minLength: 1, maxLength: 4 }),
  inPlace: fc.array(fc.constantFrom('web_search_call' as const, 'mcp_call' as const, 'code_interpreter_call' as const), { maxLength: 2 }),
  order: fc.array(fc.nat(), { minLength: 4, maxLength: 4 }),
  itemIds: fc.boolean(),
});

const turnArb = fc.record({
  user: textArb,
  userParts: fc.boolean(),
  steps: fc.array(stepArb, { maxLength: 3 }),
  finalReasoning: fc.boolean(),
  final: fc.option(textArb, { nil: undefined, freq: 6 }),
  system: fc.option(textArb, { nil: undefined, freq: 8 }),
});

const historyArb = fc.record({
  developer: fc.option(textArb, { nil: undefined }),
  compaction: fc.boolean(),
  turns: fc.array(turnArb, { minLength: 1, maxLength: 6 }),
  pending: fc.boolean(),
});

type HistoryPlan = typeof historyArb extends fc.Arbitrary<infer T> ? T : never;

/** Builds the items of a plan: fresh objects, ids unique in the history. */
function build(plan: HistoryPlan): ResponsesItem[] {
  let n = 0;
  const next = () => (n++).toString(16).padStart(6, '0');
  const items: ResponsesItem[] = [];
  const reasoning = (): ResponsesItem => ({ type: 'reasoning', id: `rs_${next()}`, summary: [{ type: 'summary_text', text: `Thinking about step ${n}.` }], encrypted_content: `gAAAA${next()}${'x'.repeat(40)}==` });
  if (plan.developer !== undefined) items.push({ type: 'message', role: 'developer', content: plan.developer });
  if (plan.compaction) items.push({ type: 'compaction', id: `cmp_${next()}`, encrypted_content: `gAAAA${next()}compacted==` });
  plan.turns.forEach((turn, t) => {
    if (turn.system !== undefined) items.push({ type: 'message', role: 'system', content: turn.system });
    items.push(turn.userParts ? { type: 'message', role: 'user', content: [{ type: 'input_text', text: turn.user }] } : { role: 'user', content: turn.user });
    const last = t === plan.turns.length - 1;
    if (last && plan.pending) return; // the history ends on the user's message
    for (const step of turn.steps) {
      if (step.reasoning) items.push(reasoning());
      if (step.text !== undefined) items.push({ type: 'message', role: 'assistant', id: `msg_${next()}`, status: 'completed', content: [{ type: 'output_text', text: step.text, annotations: [] }] });
      const outputs: ResponsesItem[] = [];
      step.inPlace.forEach((kind) => {
        if (kind === 'web_search_call') items.push({ type: kind, id: `ws_${next()}`, status: 'completed', action: { type: 'search', query: 'latest release notes' } });
        else if (kind === 'mcp_call') items.push({ type: kind, id: `mcp_${next()}`, server_label: 'docs', name: 'lookup', arguments: '{"q":"x"}', output: 'two matches' });
        else items.push({ type: kind, id: `ci_${next()}`, status: 'completed', container_id: 'cntr_1', code: 'print(1+1)', outputs: [{ type: 'logs', logs: '2' }] });
      });
      step.calls.forEach((c) => {
        if (c.ownReasoning) items.push(reasoning());
        const callId = `call_${next()}`;
        const id = step.itemIds ? { id: `fc_${next()}` } : {};
        if (c.kind === 'custom') {
          items.push({ type: 'custom_tool_call', ...id, call_id: callId, name: c.name, input: c.arg });
          outputs.push({ type: 'custom_tool_call_output', call_id: callId, output: c.output });
        } else if (c.kind === 'shell') {
          items.push({ type: 'local_shell_call', id: `lsh_${next()}`, call_id: callId, status: 'completed', action: { type: 'exec', command: ['ls', c.arg], env: {} } });
          outputs.push({ type: 'local_shell_call_output', id: callId, output: c.output });
        } else {
          items.push({ type: 'function_call', ...id, call_id: callId, name: c.name, arguments: JSON.stringify({ q: c.arg }), ...(step.itemIds ? { status: 'completed' } : {}) });
          outputs.push({ type: 'function_call_output', call_id: callId, output: c.outputParts ? [{ type: 'input_text', text: c.output }] : c.output });
        }
      });
      // Outputs come back in any order.
      for (let k = outputs.length - 1; k > 0; k--) {
        const j = step.order[k % step.order.length] % (k + 1);
        [outputs[k], outputs[j]] = [outputs[j], outputs[k]];
      }
      items.push(...outputs);
    }
    if (turn.finalReasoning) items.push(reasoning());
    items.push({ type: 'message', role: 'assistant', content: [{ type: 'output_text', text: turn.final ?? 'done', annotations: [] }] });
  });
  return items;
}

/** Valid Responses histories (see the file comment). */
export function validResponses(): fc.Arbitrary<ResponsesItem[]> {
  return historyArb.map(build);
}

/** A broken history, and the objects injected into it (orphans and second outputs) that repair may remove. */
export interface BrokenResponses {
  readonly items: ResponsesItem[];
  readonly injected: ReadonlySet<ResponsesItem>;
}

const faultArb = fc.array(fc.record({ kind: fc.constantFrom('drop', 'duplicate', 'orphan', 'stray'), pick: fc.nat() }), { minLength: 1, maxLength: 3 });

const isOutput = (m: ResponsesItem) => typeof m.type === 'string' && m.type.endsWith('_output');
const isUser = (m: ResponsesItem) => m.role === 'user';

/** Valid histories with 1-3 injected faults; each draw has at least one fault that applies. */
export function brokenResponses(): fc.Arbitrary<BrokenResponses> {
  return fc.tuple(historyArb, faultArb).map(([plan, faults]) => {
    let items = build(plan);
    const injected = new Set<ResponsesItem>();
    let orphans = 0;
    const orphan = (): ResponsesItem => {
      const m: ResponsesItem = { type: 'function_call_output', call_id: `${ORPHAN_PREFIX}${orphans++}`, output: 'late result' };
      injected.add(m);
      return m;
    };
    for (const f of faults) {
      const outputs = items.map((m, i) => (isOutput(m) && !injected.has(m) ? i : -1)).filter((i) => i >= 0);
      if (f.kind === 'drop' && outputs.length > 0) {
        // Every output of that call goes (a second output injected before would answer it otherwise).
        const target = items[outputs[f.pick % outputs.length]];
        const callOf = (m: ResponsesItem) => m.call_id ?? m.id;
        items = items.filter((m) => !(isOutput(m) && callOf(m) === callOf(target)));
      } else if (f.kind === 'duplicate' && outputs.length > 0) {
        const i = outputs[f.pick % outputs.length];
        const copy = JSON.parse(JSON.stringify(items[i])) as ResponsesItem;
        injected.add(copy);
        items = [...items.slice(0, i + 1), copy, ...items.slice(i + 1)];
      } else if (f.kind === 'stray' && outputs.length > 0) {
        const i = outputs[f.pick % outputs.length];
        items = [...items.slice(0, i + 1), orphan(), ...items.slice(i + 1)];
      } else {
        // At a turn boundary: right before a user message (never after a reasoning item).
        const users = items.map((m, i) => (isUser(m) ? i : -1)).filter((i) => i >= 0);
        const i = users[f.pick % users.length];
        items = [...items.slice(0, i), orphan(), ...items.slice(i)];
      }
    }
    return { items, injected };
  });
}
