import { describe, expect, test } from '@jest/globals';
import { compressContext, createTokenCounter, validateMessages } from '../../src/index.js';
import { repairHistory } from '../../src/formats/profiles.js';
import { evidenceIn } from '../../src/formats/evidence.js';
import { selectLens } from '../../src/formats/registry.js';
import { buildGroups } from '../../src/core/groups.js';
import { scanStructure } from '../../src/core/structure.js';
import { openaiResponsesLens } from '../../src/formats/openai-responses/lens.js';
import { openaiResponsesProfile } from '../../src/formats/openai-responses/profile.js';
import { fromOpenAIChat, toOpenAIChat } from '../../src/formats/openai-responses/convert.js';
import type { ResponsesItem } from '../../src/formats/openai-responses/types.js';
import type { OpenAIChatMessage } from '../../src/formats/openai-chat/types.js';
import type { Violation } from '../../src/core/validate/rules.js';
import { checkResponsesInput } from '../helpers/openai-responses-checker.js';
import { FIXTURES } from '../fixtures/formats/openai-responses.js';

const lens = openaiResponsesLens;
const counter = createTokenCounter();

const user = (text: string): ResponsesItem => ({ type: 'message', role: 'user', content: text });
const answer = (text: string): ResponsesItem => ({ type: 'message', role: 'assistant', content: [{ type: 'output_text', text, annotations: [] }] });
const call = (callId: string, extra: Partial<ResponsesItem> = {}): ResponsesItem => ({ type: 'function_call', call_id: callId, name: 'lookup', arguments: '{"q":1}', ...extra });
const output = (callId: string, text = `result of ${callId}`): ResponsesItem => ({ type: 'function_call_output', call_id: callId, output: text });
const reasoning = (id: string, summary = 'thinking'): ResponsesItem => ({ type: 'reasoning', id, summary: [{ type: 'summary_text', text: summary }], encrypted_content: `enc-${id}` });

const validate = (items: readonly ResponsesItem[]) => validateMessages(items, openaiResponsesProfile);

describe('openai-responses lens: reading items', () => {
  test('kinds: user message, model items, outputs, instructions and compaction, the rest', () => {
    const kinds: [ResponsesItem, string][] = [
      [user('hi'), 'user'],
      [{ role: 'user', content: 'no type field' }, 'user'],
      [answer('ok'), 'assistant'],
      [{ type: 'message', role: 'system', content: 's' }, 'system'],
      [{ type: 'message', role: 'developer', content: 'd' }, 'system'],
      [{ type: 'compaction', encrypted_content: 'opaque' }, 'system'],
      [reasoning('rs_1'), 'assistant'],
      [call('c1'), 'assistant'],
      [{ type: 'custom_tool_call', call_id: 'c2', name: 'patch', input: 'diff' }, 'assistant'],
      [{ type: 'local_shell_call', id: 'lsh_1', call_id: 'c3', action: { type: 'exec', command: ['ls'] } }, 'assistant'],
      [{ type: 'computer_call', id: 'cu_1', call_id: 'c4', action: { type: 'click' } }, 'assistant'],
      [{ type: 'web_search_call', id: 'ws_1', status: 'completed', action: { type: 'search', query: 'q' } }, 'assistant'],
      [{ type: 'mcp_call', id: 'mcp_1', name: 'n', arguments: '{}', server_label: 's', output: 'o' }, 'assistant'],
      [output('c1'), 'result'],
      [{ type: 'custom_tool_call_output', call_id: 'c2', output: 'ok' }, 'result'],
      [{ type: 'local_shell_call_output', id: 'c3', output: 'ok' }, 'result'],
      [{ type: 'computer_call_output', call_id: 'c4', output: { type: 'computer_screenshot', image_url: 'https://example.com/s.png' } }, 'result'],
      [{ type: 'item_reference', id: 'msg_9' }, 'other'],
      [{ type: 'some_future_item', payload: 1 }, 'other'],
    ];
    for (const [item, kind] of kinds) expect([item.type ?? item.role, lens.read(item).kind]).toEqual([item.type ?? item.role, kind]);
  });

  test('every billed text is exposed: calls, outputs, reasoning summaries, in-place calls and their results', () => {
    expect(lens.read(call('c1')).calls).toEqual([expect.objectContaining({ id: 'c1', name: 'lookup', arguments: '{"q":1}' })]);
    expect(lens.read({ type: 'custom_tool_call', call_id: 'c2', name: 'patch', input: '*** Begin Patch' }).calls[0]).toMatchObject({ id: 'c2', name: 'patch', arguments: '*** Begin Patch' });
    expect(lens.read(output('c1', 'x'.repeat(5000))).results).toEqual([{ id: 'c1', content: 'x'.repeat(5000) }]);
    expect(lens.read({ type: 'function_call_output', call_id: 'c1', output: [{ type: 'input_text', text: 'a' }, { type: 'input_text', text: 'b' }] }).results[0].content).toBe('ab');
    expect(lens.read({ type: 'local_shell_call_output', id: 'c3', output: 'listing' }).results).toEqual([{ id: 'c3', content: 'listing' }]);
    const r = lens.read({ type: 'reasoning', id: 'rs_1', summary: [{ type: 'summary_text', text: 'first' }, { type: 'summary_text', text: 'second' }], encrypted_content: 'e'.repeat(3000) });
    expect(r.text).toBe('first\nsecond'); // encrypted content is opaque: it counts nothing
    expect(r.ownId).toBe('rs_1');
    const mcp = lens.read({ type: 'mcp_call', id: 'mcp_1', name: 'get_issue', arguments: '{"id":7}', server_label: 's', output: 'closed' });
    expect(mcp.inPlace).toEqual([{ call: { id: 'mcp_1', name: 'get_issue', arguments: '{"id":7}' }, result: { id: 'mcp_1', name: 'get_issue', content: 'closed' } }]);
    expect(mcp.calls).toEqual([]);
    const fs = lens.read({ type: 'file_search_call', id: 'fs_1', queries: ['q'], results: [{ text: 'passage one' }, { text: 'passage two' }] });
    expect(fs.inPlace[0].result.content).toBe('passage one\npassage two');
    const code = lens.read({ type: 'code_interpreter_call', id: 'ci_1', code: 'print(2)', outputs: [{ type: 'logs', logs: '2' }] });
    expect(code.inPlace[0]).toMatchObject({ call: { name: 'code_interpreter', arguments: 'print(2)' }, result: { content: '2' } });
    expect(lens.read({ type: 'message', role: 'assistant', content: [{ type: 'refusal', refusal: 'no' }] }).text).toBe('no');
  });

  test('a local shell output that names its call in id has no own id; everything else with an id has one', () => {
    expect(lens.read({ type: 'local_shell_call_output', id: 'call_1', output: '' }).ownId).toBeUndefined();
    expect(lens.read(call('c1', { id: 'fc_1' })).ownId).toBe('fc_1');
    expect(lens.read({ ...output('c1'), id: 'fco_1' }).ownId).toBe('fco_1');
  });

  test('images are billed: input_image parts, screenshots', () => {
    const withImage: ResponsesItem = { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'see' }, { type: 'input_image', image_url: 'https://example.com/a.png', detail: 'low' }] };
    expect(lens.mediaTokens!(withImage)).toBe(85);
    expect(lens.mediaTokens!({ type: 'computer_call_output', call_id: 'c', output: { type: 'computer_screenshot', image_url: 'https://example.com/s.png' } })).toBe(765);
    expect(lens.mediaTokens!(user('plain'))).toBe(0);
  });

  test('problem(): malformed known items are rejected with the field; unknown item types are kept', () => {
    expect(lens.problem(user('ok'))).toBeUndefined();
    expect(lens.problem({ type: 'some_future_item' })).toBeUndefined();
    expect(lens.problem('text')).toEqual({ field: '', rule: expect.stringContaining('must be an input item object') });
    expect(lens.problem({ content: 'no role, no type' })).toEqual({ field: '.type', rule: expect.stringContaining('got neither') });
    expect(lens.problem({ role: 'tool', tool_call_id: 'x', content: 'chat tool message' })).toEqual({ field: '.role', rule: expect.stringContaining('unknown role "tool"') });
    expect(lens.problem({ type: 'message', role: 'user', content: [{ text: 'no type' }] })).toEqual({ field: '.content[0].type', rule: expect.stringContaining('must be a string') });
    expect(lens.problem({ type: 'function_call', call_id: 1, name: 'n', arguments: '{}' })).toEqual({ field: '.call_id', rule: 'must be a string, got number 1' });
    expect(lens.problem({ type: 'function_call', call_id: 'c', name: 'n', arguments: { q: 1 } })).toEqual({ field: '.arguments', rule: 'must be a string, got an object' });
    expect(lens.problem({ type: 'custom_tool_call', call_id: 'c', name: 'n' })).toEqual({ field: '.input', rule: expect.stringContaining('missing') });
    expect(lens.problem({ type: 'function_call_output', output: 'x' })).toEqual({ field: '.call_id', rule: expect.stringContaining('missing') });
    expect(lens.problem({ type: 'function_call_output', call_id: 'c', output: 5 })).toEqual({ field: '.output', rule: expect.stringContaining('number 5') });
    expect(lens.problem({ type: 'reasoning', id: 'rs', summary: 'text' })).toEqual({ field: '.summary', rule: expect.stringContaining('array') });
    expect(lens.problem({ type: 7 })).toEqual({ field: '.type', rule: 'must be a string, got number 7' });
  });

  test('a bad item is an input error naming input index and field', () => {
    expect(() => compressContext([user('a'), { type: 'function_call', call_id: 'c', name: 'n' }], { format: 'openai-responses' })).toThrow(/messages\[1\]\.arguments: must be a string/);
  });
});

describe('openai-responses lens: changes return copies that keep every other field', () => {
  test('rekeyCall and rekeyResult set call_id only; collapseResult replaces output; nothing is mutated', () => {
    const c = call('c1', { id: 'fc_1', status: 'completed', extra: { keep: true } });
    const o: ResponsesItem = { ...output('c1'), id: 'fco_1', extra: 1 };
    const frozen = [structuredClone(c), structuredClone(o)];
    expect(lens.rekeyCall(c, 0, 'c9')).toEqual({ ...c, call_id: 'c9' });
    expect(lens.rekeyCall(c, 1, 'c9')).toBe(c);
    expect(lens.rekeyResult(o, 0, { id: 'c9', name: 'lookup', arguments: '' })).toEqual({ ...o, call_id: 'c9' });
    const shell: ResponsesItem = { type: 'local_shell_call_output', id: 'c3', output: 'x' };
    expect(lens.rekeyResult(shell, 0, { id: 'c7', name: 'local_shell', arguments: '' })).toEqual({ ...shell, id: 'c7' });
    expect(lens.collapseResult(o, 0, '[cleared]')).toEqual({ ...o, output: '[cleared]' });
    const screenshot: ResponsesItem = { type: 'computer_call_output', call_id: 'c4', output: { type: 'computer_screenshot', image_url: 'u' } };
    expect(lens.collapseResult(screenshot, 0, '[cleared]')).toBe(screenshot);
    expect(lens.removeResult(o, 0)).toBeUndefined();
    expect([c, o]).toEqual(frozen);
  });

  test('summaryMessage: a developer message for system, a user message otherwise', () => {
    expect(lens.summaryMessage('s', 'system')).toEqual({ type: 'message', role: 'developer', content: 's' });
    expect(lens.summaryMessage('s', 'user')).toEqual({ type: 'message', role: 'user', content: 's' });
  });

  test('missingResults answers a custom tool call with a custom tool output, every other call with a function call output', () => {
    const calls = [...lens.read(call('c1')).calls, ...lens.read({ type: 'custom_tool_call', call_id: 'c2', name: 'p', input: 'x' }).calls, ...lens.read({ type: 'local_shell_call', call_id: 'c3', action: {} }).calls];
    expect(lens.missingResults(calls, 'missing')).toEqual([
      { type: 'function_call_output', call_id: 'c1', output: 'missing' },
      { type: 'custom_tool_call_output', call_id: 'c2', output: 'missing' },
      { type: 'function_call_output', call_id: 'c3', output: 'missing' },
    ]);
    // A CallRef made elsewhere (no item type on it) gets the default.
    expect(lens.missingResults([{ id: 'c5', name: 'n', arguments: '' }], 'm')).toEqual([{ type: 'function_call_output', call_id: 'c5', output: 'm' }]);
  });

  test('repair: a missing custom tool output is added as custom_tool_call_output right after the call; an orphan goes', () => {
    const items = [user('go'), { type: 'custom_tool_call', call_id: 'c2', name: 'p', input: 'x' }, output('gone'), answer('done')];
    const { messages, actions } = repairHistory(items, { format: 'openai-responses' });
    expect(messages).toEqual([items[0], items[1], { type: 'custom_tool_call_output', call_id: 'c2', output: expect.any(String) }, items[3]]);
    expect(actions.map((a) => a.action).sort()).toEqual(['added-result', 'removed-orphan']);
    expect(validate(messages)).toEqual([]);
  });
});

describe('openai-responses lens: atomic constraints', () => {
  test('a reasoning item is joined to the item after it; nothing else is', () => {
    const items = [user('q'), reasoning('rs_1'), answer('a'), user('q2'), reasoning('rs_2'), reasoning('rs_3'), call('c1', { id: 'fc_1' }), output('c1'), answer('b')];
    expect(Array.from(lens.atomicJoins!(items, lens.read)!)).toEqual([0, 0, 1, 0, 0, 1, 1, 0, 0]);
    expect(lens.atomicJoins!([user('q'), answer('a')], lens.read)).toBeUndefined();
  });

  test('a reasoning item is joined to every model item after it in its turn: preamble message, in-place call, calls, more reasoning; not to the outputs', () => {
    const items = [user('q'), reasoning('rs_1'), answer('let me look'), { type: 'web_search_call', id: 'ws_1', status: 'completed', action: { type: 'search', query: 'x' } }, call('c1', { id: 'fc_1' }), reasoning('rs_2'), call('c2', { id: 'fc_2' }), output('c1'), output('c2'), answer('done'), user('q2')];
    expect(Array.from(lens.atomicJoins!(items, lens.read)!)).toEqual([0, 0, 1, 1, 1, 1, 1, 0, 0, 0, 0]);
    // One group from the reasoning item to the follow-up answer: no cut between the reasoning and the calls.
    const grouping = buildGroups(items, lens);
    expect(grouping.groups[grouping.groupOf[1]]).toMatchObject({ start: 1, end: 10, type: 'turn', complete: true });
    // A model turn without reasoning keeps its finer groups: the preamble message is a group of its own.
    const plain = [user('q'), answer('let me look'), call('c1'), output('c1'), answer('done')];
    expect(lens.atomicJoins!(plain, lens.read)).toBeUndefined();
    expect(buildGroups(plain, lens).groups.map((g) => [g.start, g.end])).toEqual([[0, 1], [1, 2], [2, 5]]);
  });

  test('an MCP approval response stays with the approval request right before it', () => {
    const items: ResponsesItem[] = [user('q'), { type: 'mcp_approval_request', id: 'mcpr_1', server_label: 's', name: 'delete', arguments: '{}' }, { type: 'mcp_approval_response', approval_request_id: 'mcpr_1', approve: true }];
    expect(Array.from(lens.atomicJoins!(items, lens.read)!)).toEqual([0, 0, 1]);
  });

  test('[reasoning, function_call A, reasoning, function_call B, output A, output B] is ONE complete turn with no stray results', () => {
    const turn = [reasoning('rs_a'), call('call_A', { id: 'fc_a' }), reasoning('rs_b'), call('call_B', { id: 'fc_b' }), output('call_A'), output('call_B')];
    const items = [user('first'), answer('one'), user('second'), ...turn, answer('both done'), user('third')];
    const structure = scanStructure(items, lens);
    expect(structure.turns).toHaveLength(1);
    expect(structure.turns[0]).toMatchObject({ opener: 4, openersEnd: 7, runEnd: 9, answeredEnd: 9, complete: true });
    expect(structure.turns[0].calls.map((c) => c.id)).toEqual(['call_A', 'call_B']);
    expect(structure.results.map((p) => p.pairing)).toEqual(['answer', 'answer']);
    const grouping = buildGroups(items, lens);
    const g = grouping.groups[grouping.groupOf[3]];
    expect(g).toMatchObject({ start: 3, end: 10, type: 'turn', complete: true, stray: false }); // with its follow-up answer
    expect(grouping.regular).toBe(true);
    expect(validate(items)).toEqual([]);
    expect(checkResponsesInput(items)).toEqual([]);
    // Compressed at every budget: the turn is kept or dropped whole, never split.
    const before = compressContext(items, { format: 'openai-responses', counter }).report.tokensBefore;
    for (let max = 1; max <= before + 10; max += 3) {
      const view = compressContext(items, { format: 'openai-responses', counter, maxContextTokens: max, keepFirst: 0, keepLast: 1 }).messages;
      const kept = turn.filter((m) => view.includes(m)).length;
      expect([max, kept === 0 || kept === turn.length]).toEqual([max, true]);
      expect(validate(view)).toEqual([]);
      expect(checkResponsesInput(view)).toEqual([]);
    }
  });
});

describe('openai-responses checker: self-test', () => {
  const codes = (items: unknown[]) => checkResponsesInput(items).map((p) => [p.code, p.index]);

  test('flags every known-bad sequence, and passes the fixed ones', () => {
    expect(codes([user('a'), call('c1')])).toEqual([['call-without-output', 1]]);
    expect(codes([user('a'), output('c1')])).toEqual([['output-without-call', 1]]);
    expect(codes([user('a'), call('c1'), output('c1'), output('c1')])).toEqual([['output-repeated', 3]]);
    expect(codes([user('a'), call('c1'), output('c1'), call('c1'), output('c1')])).toEqual([['call-id-repeated', 3], ['output-repeated', 4]]);
    expect(codes([user('a'), call('c1', { id: 'fc_1' }), output('c1'), call('c2', { id: 'fc_1' }), output('c2')])).toEqual([['duplicate-item', 3]]);
    expect(codes([user('a'), reasoning('rs_1'), user('b')])).toEqual([['reasoning-alone', 1]]);
    expect(codes([user('a'), reasoning('rs_1')])).toEqual([['reasoning-alone', 1]]);
    expect(codes([user('a'), call('c1'), user('b'), output('c1')])).toEqual([['output-after-message', 3]]);
    expect(codes([{ type: 'message', role: 'tool', content: 'x' }])).toEqual([['bad-role', 0]]);
    expect(codes([{ type: 'function_call', call_id: 'c', name: 'n', arguments: {} }, output('c')])).toEqual([['bad-call', 0]]);
    expect(codes([user('a'), { type: 'custom_tool_call_output', call_id: 'c1', output: 'x' }])).toEqual([['output-without-call', 1]]);
    expect(codes([user('a'), reasoning('rs_1'), call('c1'), output('c1'), reasoning('rs_2'), answer('b')])).toEqual([]);
    expect(codes([user('a'), { type: 'local_shell_call', id: 'lsh_1', call_id: 'c1', action: {} }, { type: 'local_shell_call_output', id: 'c1', output: 'x' }])).toEqual([]);
  });
});

/**
 * The API's own 400 texts (provider notes, "OpenAI Responses API"), with the ids left as parameters.
 */
const RESPONSES_TEXT = {
  noOutput: (id: string) => `No tool output found for function call ${id}.`,
  noCall: (id: string) => `No tool call found for function call output with call_id ${id}.`,
  reasoningAlone: (id: string) => `Item '${id}' of type 'reasoning' was provided without its required following item.`,
  duplicateItem: (id: string) => `Duplicate item found with id ${id}. Remove duplicate items from your input and try again.`,
};

interface Row {
  readonly name: string;
  readonly broken: ResponsesItem[];
  readonly expected: { rule: string; index: number; id: string; text?: string }[];
  readonly fixed: ResponsesItem[];
}

const ROWS: Row[] = [
  {
    name: 'a function call without its output',
    broken: [user('go'), call('call_Zyy2Z9PgYUZUZ01B7iKppSkS'), user('and?')],
    expected: [{ rule: 'call-unanswered', index: 1, id: 'call_Zyy2Z9PgYUZUZ01B7iKppSkS', text: RESPONSES_TEXT.noOutput('call_Zyy2Z9PgYUZUZ01B7iKppSkS') }],
    fixed: [user('go'), call('call_Zyy2Z9PgYUZUZ01B7iKppSkS'), output('call_Zyy2Z9PgYUZUZ01B7iKppSkS'), user('and?')],
  },
  {
    name: 'the second of two parallel calls without its output (the index is the call item)',
    broken: [user('go'), call('call_a'), call('call_b'), output('call_a'), answer('x')],
    expected: [{ rule: 'call-unanswered', index: 2, id: 'call_b', text: RESPONSES_TEXT.noOutput('call_b') }],
    fixed: [user('go'), call('call_a'), call('call_b'), output('call_a'), output('call_b'), answer('x')],
  },
  {
    name: 'an output without its call (history truncated before the call)',
    broken: [user('go'), output('call_uqaym698xduZM7eXCT0SUABW'), answer('x')],
    expected: [{ rule: 'result-orphan', index: 1, id: 'call_uqaym698xduZM7eXCT0SUABW', text: RESPONSES_TEXT.noCall('call_uqaym698xduZM7eXCT0SUABW') }],
    fixed: [user('go'), call('call_uqaym698xduZM7eXCT0SUABW'), output('call_uqaym698xduZM7eXCT0SUABW'), answer('x')],
  },
  {
    name: 'an output whose call_id is not one of the calls before it',
    broken: [user('go'), call('call_a'), output('call_a'), output('call_zz')],
    expected: [{ rule: 'result-orphan', index: 3, id: 'call_zz', text: RESPONSES_TEXT.noCall('call_zz') }],
    fixed: [user('go'), call('call_a'), output('call_a')],
  },
  {
    name: 'a reasoning item whose following item was dropped (continuedev/continue#8933)',
    broken: [user('go'), reasoning('rs_0c38'), user('again')],
    expected: [{ rule: 'reasoning-unfollowed', index: 1, id: 'rs_0c38', text: RESPONSES_TEXT.reasoningAlone('rs_0c38') }],
    fixed: [user('go'), reasoning('rs_0c38'), answer('here'), user('again')],
  },
  {
    name: 'a reasoning item last in the input',
    broken: [user('go'), reasoning('rs_end')],
    expected: [{ rule: 'reasoning-unfollowed', index: 1, id: 'rs_end', text: RESPONSES_TEXT.reasoningAlone('rs_end') }],
    fixed: [user('go'), reasoning('rs_end'), answer('done')],
  },
  {
    name: 'the same item sent twice (vercel/ai#13307)',
    broken: [user('go'), call('call_a', { id: 'fc_0a03' }), output('call_a'), call('call_b', { id: 'fc_0a03' }), output('call_b')],
    expected: [{ rule: 'item-id-duplicate', index: 3, id: 'fc_0a03', text: RESPONSES_TEXT.duplicateItem('fc_0a03') }],
    fixed: [user('go'), call('call_a', { id: 'fc_0a03' }), output('call_a'), call('call_b', { id: 'fc_0a04' }), output('call_b')],
  },
  {
    name: 'a call_id used again by a later call in the request',
    broken: [user('go'), call('call_1'), output('call_1'), answer('x'), user('more'), call('call_1'), output('call_1')],
    expected: [{ rule: 'call-id-duplicate', index: 5, id: 'call_1' }],
    fixed: [user('go'), call('call_1'), output('call_1'), answer('x'), user('more'), call('call_2'), output('call_2')],
  },
  {
    name: 'two outputs for one call',
    broken: [user('go'), call('call_a'), output('call_a'), output('call_a')],
    expected: [{ rule: 'result-duplicate', index: 3, id: 'call_a' }],
    fixed: [user('go'), call('call_a'), output('call_a')],
  },
  {
    name: 'a user message between a call and its output (ctxfold keeps outputs right after their calls)',
    broken: [user('go'), call('call_a'), user('wait'), output('call_a')],
    expected: [{ rule: 'call-unanswered', index: 1, id: 'call_a', text: RESPONSES_TEXT.noOutput('call_a') }, { rule: 'result-orphan', index: 3, id: 'call_a', text: RESPONSES_TEXT.noCall('call_a') }],
    fixed: [user('go'), call('call_a'), output('call_a'), user('wait')],
  },
];

describe('openai-responses profile: the documented broken sequences', () => {
  test.each(ROWS)('$name: rejected with the rule, index, id and wording; the fixed form passes', (row) => {
    const v: Violation[] = validate(row.broken);
    expect(v.map((x) => ({ rule: x.rule, index: x.index, id: x.id }))).toEqual(row.expected.map(({ rule, index, id }) => ({ rule, index, id })));
    row.expected.forEach((e, k) => {
      expect(v[k].message.startsWith(`input[${e.index}]: `)).toBe(true);
      expect(v[k].message).toContain(e.id);
      if (e.text) expect(v[k].message).toBe(`input[${e.index}]: ${e.text}`);
    });
    expect(checkResponsesInput(row.broken).length).toBeGreaterThan(0);
    expect(validate(row.fixed)).toEqual([]);
    expect(checkResponsesInput(row.fixed)).toEqual([]);
  });

  test('the request-wide call_id rule says what to do', () => {
    const v = validate(ROWS.find((r) => r.name.startsWith('a call_id used again'))!.broken);
    expect(v[0].message).toBe("input[5]: call_id call_1 is already used by the call in input[1]; the Responses API pairs outputs with calls by call_id across the whole input, so every call needs a call_id of its own.");
  });

  test('a reasoning item before an output is flagged; before an item type this version does not know, it is not', () => {
    expect(validate([user('go'), call('c1'), reasoning('rs_1'), output('c1')]).map((v) => v.rule)).toContain('reasoning-unfollowed');
    expect(validate([user('go'), reasoning('rs_1'), { type: 'some_future_call', id: 'x_1' }, answer('ok')])).toEqual([]);
  });

  test('validateMessages detects the format on its own and checks it with this profile', () => {
    expect(validateMessages([user('go'), call('call_x')])).toEqual([expect.objectContaining({ rule: 'call-unanswered', index: 1, id: 'call_x' })]);
  });
});

describe('openai-responses fixtures', () => {
  test.each(FIXTURES)('$name: detected as openai-responses only, valid for the profile and the checker', ({ messages }) => {
    expect([...evidenceIn(messages).keys()]).toEqual(['openai-responses']);
    expect(selectLens(messages, 'auto').format).toBe('openai-responses');
    expect(validateMessages(messages as ResponsesItem[], 'openai-responses')).toEqual([]);
    expect(checkResponsesInput(messages)).toEqual([]);
  });
});

describe('openai-responses counting', () => {
  const words = Array.from({ length: 5000 }, (_, k) => ['alpha', 'beta', 'gamma', 'delta', 'epsilon'][k % 5] + (k % 17)).join(' ');
  const history: ResponsesItem[] = [
    { type: 'message', role: 'user', content: 'Summarize the report file.' },
    { type: 'reasoning', id: 'rs_1', summary: [{ type: 'summary_text', text: 'I need to read the file first.' }], encrypted_content: 'gAAAA'.repeat(400) },
    { type: 'function_call', id: 'fc_1', call_id: 'call_1', name: 'read_file', arguments: '{"path":"report.txt"}' },
    { type: 'function_call_output', call_id: 'call_1', output: words },
    { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'The report lists five recurring terms.', annotations: [] }] },
  ];
  /** The same texts counted one by one: 4 per item (role and framing), 3 per call, 3 per request. */
  const direct = counter.requestOverhead
    + 5 * 4
    + counter.text('Summarize the report file.')
    + counter.text('I need to read the file first.')
    + 3 + counter.text('read_file') + counter.text('{"path":"report.txt"}')
    + counter.text(words)
    + counter.text('The report lists five recurring terms.');

  test.each(['auto', 'openai-responses'] as const)('a 5,000-word tool output is counted (format %s), detected, and nothing is deleted', (format) => {
    expect(counter.text(words)).toBeGreaterThan(5000);
    const { messages, report } = compressContext(history, { format, counter, maxContextTokens: 2 * direct });
    expect(report.format).toBe('openai-responses');
    expect(Math.abs(report.tokensBefore - direct)).toBeLessThanOrEqual(0.02 * direct);
    expect(report.tokensBefore).toBeGreaterThan(counter.text(words));
    expect(messages).toHaveLength(history.length);
    messages.forEach((m, k) => expect(m).toBe(history[k]));
    expect(report.droppedCounts).toEqual({ summarized: 0, budget: 0 });
    expect(report.repaired).toEqual([]);
  });
});

describe('openai-responses converters', () => {
  const chat: OpenAIChatMessage[] = [
    { role: 'system', content: 'be brief' },
    { role: 'user', content: 'weather in two cities?' },
    { role: 'assistant', content: 'Checking both.', tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'weather', arguments: '{"c":"a"}' } }, { id: 'call_2', type: 'function', function: { name: 'weather', arguments: '{"c":"b"}' } }] },
    { role: 'tool', tool_call_id: 'call_2', content: 'rain' },
    { role: 'tool', tool_call_id: 'call_1', content: 'sun' },
    { role: 'assistant', content: 'Sun in a, rain in b.' },
    { role: 'user', content: [{ type: 'text', text: 'and this?' }, { type: 'image_url', image_url: { url: 'https://example.com/x.png', detail: 'high' } }] },
    { role: 'assistant', content: null, refusal: 'I cannot help with that.' },
  ];

  test('Chat -> Responses: items in place, assistant text before its calls, outputs by call_id', () => {
    const { messages, lost, toolNames } = fromOpenAIChat(chat);
    expect(lost).toEqual([]);
    expect(toolNames).toBe(false);
    expect(messages).toEqual([
      { type: 'message', role: 'system', content: 'be brief' },
      { type: 'message', role: 'user', content: 'weather in two cities?' },
      { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'Checking both.', annotations: [] }] },
      { type: 'function_call', call_id: 'call_1', name: 'weather', arguments: '{"c":"a"}' },
      { type: 'function_call', call_id: 'call_2', name: 'weather', arguments: '{"c":"b"}' },
      { type: 'function_call_output', call_id: 'call_2', output: 'rain' },
      { type: 'function_call_output', call_id: 'call_1', output: 'sun' },
      { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'Sun in a, rain in b.', annotations: [] }] },
      { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'and this?' }, { type: 'input_image', image_url: 'https://example.com/x.png', detail: 'high' }] },
      { type: 'message', role: 'assistant', content: [{ type: 'refusal', refusal: 'I cannot help with that.' }] },
    ]);
    expect(validate(messages)).toEqual([]);
    expect(toOpenAIChat(messages)).toEqual({ messages: chat, lost: [] });
  });

  test('tool message names come back from their calls when every tool message had its call name', () => {
    const named = chat.map((m) => (m.role === 'tool' ? { ...m, name: 'weather' } : m));
    const c = fromOpenAIChat(named);
    expect(c).toMatchObject({ lost: [], toolNames: true });
    expect(toOpenAIChat(c.messages, { toolNames: c.toolNames }).messages).toEqual(named);
    // A name that is not its call's cannot come back: it is named in lost.
    const wrong = named.map((m, i) => (i === 3 ? { ...m, name: 'other' } : m));
    const w = fromOpenAIChat(wrong);
    expect(w.toolNames).toBe(false);
    expect(w.lost).toEqual([expect.stringMatching(/^messages\[3\]: field "name" "other" dropped/), expect.stringMatching(/^messages\[4\]: field "name" dropped/)]);
  });

  test('a call id used again is renamed in the call and its outputs, and lost says so', () => {
    const reused: OpenAIChatMessage[] = [
      { role: 'user', content: 'a' },
      { role: 'assistant', content: null, tool_calls: [{ id: 'call_x', type: 'function', function: { name: 'f', arguments: '{}' } }] },
      { role: 'tool', tool_call_id: 'call_x', content: '1' },
      { role: 'user', content: 'b' },
      { role: 'assistant', content: null, tool_calls: [{ id: 'call_x', type: 'function', function: { name: 'f', arguments: '{}' } }] },
      { role: 'tool', tool_call_id: 'call_x', content: '2' },
    ];
    const c = fromOpenAIChat(reused);
    expect(c.lost).toEqual([expect.stringMatching(/^messages\[4\]: tool call id call_x is used again .* it is call_x_2 in the call and its results$/)]);
    expect(c.messages.slice(4)).toEqual([{ type: 'function_call', call_id: 'call_x_2', name: 'f', arguments: '{}' }, { type: 'function_call_output', call_id: 'call_x_2', output: '2' }]);
    expect(validate(c.messages)).toEqual([]);
  });

  test('what Responses cannot carry back is named in lost: legacy function calls, text then calls in two messages', () => {
    const legacy: OpenAIChatMessage[] = [
      { role: 'user', content: 'a' },
      { role: 'assistant', content: null, function_call: { name: 'f', arguments: '{}' } },
      { role: 'function', name: 'f', content: 'r' },
      { role: 'assistant', content: 'let me look' },
      { role: 'assistant', content: null, tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'g', arguments: '{}' } }] },
      { role: 'tool', tool_call_id: 'call_1', content: 'x' },
    ];
    const c = fromOpenAIChat(legacy);
    expect(c.lost).toEqual([
      'messages[1]: legacy function_call becomes a function_call with call_id call_legacy_1 (it converts back as tool_calls)',
      'messages[2]: legacy function message becomes a function_call_output for call_id call_legacy_1 (it converts back as a tool message)',
      'messages[4]: its tool calls follow the assistant message messages[3] with nothing between, so they convert back as part of it',
    ]);
    expect(validate(c.messages)).toEqual([]);
    expect(toOpenAIChat(c.messages).messages[3]).toEqual({ role: 'assistant', content: 'let me look', tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'g', arguments: '{}' } }] });
  });

  test('Responses -> Chat: instructions and a string input; reasoning, in-place calls and compaction are named in lost', () => {
    expect(toOpenAIChat('hello', { instructions: 'be kind' })).toEqual({ messages: [{ role: 'system', content: 'be kind' }, { role: 'user', content: 'hello' }], lost: [] });
    const items = FIXTURES[0].messages as ResponsesItem[];
    const back = toOpenAIChat(items);
    expect(back.messages).toEqual([
      { role: 'developer', content: 'You are a careful coding assistant.' },
      { role: 'user', content: [{ type: 'text', text: 'How many lines does src/main.ts have?' }] },
      { role: 'assistant', content: null, tool_calls: [{ id: 'call_01a', type: 'function', function: { name: 'count_lines', arguments: '{"path":"src/main.ts"}' } }] },
      { role: 'tool', tool_call_id: 'call_01a', content: '{"lines":212}' },
      { role: 'assistant', content: 'src/main.ts has 212 lines.' },
    ]);
    expect(back.lost).toEqual([
      'input[2]: reasoning item dropped (Chat Completions takes no reasoning items)',
      'input[3]: id and status dropped (a Chat message has no item id or status)',
      'input[5]: reasoning item dropped (Chat Completions takes no reasoning items)',
      'input[6]: id and status dropped (a Chat message has no item id or status)',
    ]);
    const builtIn = toOpenAIChat(FIXTURES[4].messages as ResponsesItem[]);
    expect(builtIn.lost[0]).toBe('input[0]: compaction item dropped (its content is held by the provider; Chat cannot refer to it)');
  });
});
