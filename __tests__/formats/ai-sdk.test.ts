import { describe, expect, test } from '@jest/globals';
import type { ModelMessage, ToolResultPart } from 'ai';
import { compressContext, createTokenCounter, repairHistory, validateMessages } from '../../src/index.js';
import { aiSdkLens } from '../../src/formats/ai-sdk/lens.js';
import { aiSdkProfile } from '../../src/formats/ai-sdk/profile.js';
import type { AiSdkMessage } from '../../src/formats/ai-sdk/types.js';
import { evidenceIn } from '../../src/formats/evidence.js';
import { selectLens } from '../../src/formats/registry.js';
import { buildGroups } from '../../src/core/groups.js';
import { messageTokens, CALL_OVERHEAD_TOKENS, MESSAGE_OVERHEAD_TOKENS, REQUEST_OVERHEAD_TOKENS } from '../../src/tokens/accounting.js';
import { checkAiSdk } from '../helpers/ai-sdk-checker.js';
import { FIXTURES } from '../fixtures/formats/ai-sdk.js';

/**
 * The AI SDK lens: what it reads from each message, how it changes one (always a copy), what it
 * refuses, how histories of the format group, validate and compress, and the required case
 * (a ModelMessage history with a ~4,800-token tool result, detected and counted).
 */

const counter = createTokenCounter();

const call = (id: string, name = 'search', input: unknown = { q: id }) => ({ type: 'tool-call' as const, toolCallId: id, toolName: name, input });
const result = (id: string, value: string, name = 'search') => ({ type: 'tool-result' as const, toolCallId: id, toolName: name, output: { type: 'text' as const, value } });
const user = (content: string): AiSdkMessage => ({ role: 'user', content });
const say = (content: string): AiSdkMessage => ({ role: 'assistant', content });
const calls = (...parts: object[]): AiSdkMessage => ({ role: 'assistant', content: parts as AiSdkMessage['content'] });
const tool = (...parts: object[]): AiSdkMessage => ({ role: 'tool', content: parts as AiSdkMessage['content'] });

/** Deterministic prose of `words` common words (a fixed linear congruential sequence). */
function prose(words: number, seed = 7): string {
  const vocabulary = ['the', 'system', 'returned', 'a', 'record', 'with', 'several', 'fields', 'and', 'each', 'value', 'was', 'checked', 'against', 'its', 'schema', 'before', 'being', 'stored', 'in', 'table', 'row', 'column', 'index', 'page', 'report', 'line', 'status', 'ready', 'pending'];
  let x = seed;
  const out: string[] = [];
  for (let k = 0; k < words; k++) {
    x = (x * 1103515245 + 12345) % 2147483648;
    out.push(vocabulary[x % vocabulary.length]);
  }
  return out.join(' ');
}

describe('ai-sdk lens: reading', () => {
  test('roles map to kinds; text, calls and results are read with ids and names', () => {
    const a = calls({ type: 'reasoning', text: 'think. ' }, { type: 'text', text: 'Looking.' }, call('c1', 'search', { q: 'x' }), call('c2', 'fetch', 'raw'));
    expect(aiSdkLens.read(a)).toMatchObject({ kind: 'assistant', role: 'assistant', text: 'think. Looking.', hasUserText: false, results: [], inPlace: [] });
    expect(aiSdkLens.read(a).calls).toEqual([{ id: 'c1', name: 'search', arguments: '{"q":"x"}' }, { id: 'c2', name: 'fetch', arguments: 'raw' }]);
    expect(aiSdkLens.read({ role: 'system', content: 'rules' })).toMatchObject({ kind: 'system', text: 'rules' });
    expect(aiSdkLens.read(user('hi'))).toMatchObject({ kind: 'user', text: 'hi', hasUserText: true });
    expect(aiSdkLens.read({ role: 'user', content: [{ type: 'text', text: 'a' }, { type: 'image', image: 'https://x/y.png' }, { type: 'text', text: 'b' }] }).text).toBe('ab');
    const t = tool(
      result('c1', 'plain'),
      { type: 'tool-result', toolCallId: 'c2', toolName: 'fetch', output: { type: 'json', value: { a: [1, 2] } } },
      { type: 'tool-result', toolCallId: 'c3', toolName: 'x', output: { type: 'content', value: [{ type: 'text', text: 'one ' }, { type: 'image-url', url: 'https://x' }, { type: 'text', text: 'two' }] } },
      { type: 'tool-result', toolCallId: 'c4', toolName: 'x', output: { type: 'error-text', value: 'boom' } },
      { type: 'tool-result', toolCallId: 'c5', toolName: 'x', output: { type: 'error-json', value: { code: 5 } } },
      { type: 'tool-result', toolCallId: 'c6', toolName: 'x', output: { type: 'execution-denied', reason: 'no' } },
      { type: 'tool-result', toolCallId: 'c7', toolName: 'x', result: { v4: true } },
    );
    const r = aiSdkLens.read(t);
    expect(r).toMatchObject({ kind: 'result', role: 'tool', text: '', calls: [] });
    expect(r.results.map((x) => [x.id, x.name, x.content])).toEqual([
      ['c1', 'search', 'plain'], ['c2', 'fetch', '{"a":[1,2]}'], ['c3', 'x', 'one two'], ['c4', 'x', 'boom'], ['c5', 'x', '{"code":5}'], ['c6', 'x', 'no'], ['c7', 'x', '{"v4":true}'],
    ]);
  });

  test('ai v4 args are read as the call arguments', () => {
    expect(aiSdkLens.read(calls({ type: 'tool-call', toolCallId: 'c', toolName: 'n', args: { a: 1 } })).calls[0].arguments).toBe('{"a":1}');
  });

  test('a provider-executed call is read in place with the result beside it, never as a call to pair', () => {
    const m = calls(
      { ...call('s1', 'web_search'), providerExecuted: true },
      { type: 'tool-result', toolCallId: 's1', toolName: 'web_search', output: { type: 'json', value: ['hit'] } },
      { type: 'text', text: 'Found it.' },
      call('c1'),
    );
    const r = aiSdkLens.read(m);
    expect(r.calls.map((c) => c.id)).toEqual(['c1']);
    expect(r.inPlace).toEqual([{ call: { id: 's1', name: 'web_search', arguments: '{"q":"s1"}' }, result: { id: 's1', idHint: undefined, name: 'web_search', content: '["hit"]' } }]);
    // Without its result in the message (deferred or kept by the provider): in place, empty result.
    expect(aiSdkLens.read(calls({ ...call('s2'), providerExecuted: true })).inPlace[0].result.content).toBe('');
  });

  test('an approval request is read as a call keyed by its approvalId; the response as its result', () => {
    const a = calls(call('c1', 'rm'), { type: 'tool-approval-request', approvalId: 'ap1', toolCallId: 'c1' });
    expect(aiSdkLens.read(a).calls.map((c) => [c.id, c.name, c.arguments])).toEqual([['c1', 'rm', '{"q":"c1"}'], ['ap1', 'tool-approval-request', '']]);
    const t = tool({ type: 'tool-approval-response', approvalId: 'ap1', approved: false, reason: 'not now' });
    expect(aiSdkLens.read(t).results).toEqual([{ id: 'ap1', idHint: undefined, content: 'not now' }]);
  });

  test('billedTextTokens agrees with the reading on every fixture message and odd shapes', () => {
    const odd: AiSdkMessage[] = [
      { role: 'tool', content: 'not a list' as unknown as [] },
      calls({ ...call('s'), providerExecuted: true }, result('s', 'r'), result('zz', 'lonely')),
      { role: 'user', content: [{ type: 'image', image: new Uint8Array([1, 2]) }] },
    ];
    const all = [...FIXTURES.flatMap((f) => f.messages as AiSdkMessage[]), ...odd];
    for (const m of all) {
      const { billedTextTokens: _skip, ...slow } = aiSdkLens;
      expect(messageTokens(m, aiSdkLens, counter.text)).toBe(messageTokens(m, slow as typeof aiSdkLens, counter.text));
    }
  });

  test('images are billed by the tile rule: low detail 85, a remote image 765', () => {
    expect(aiSdkLens.mediaTokens!({ role: 'user', content: [{ type: 'image', image: 'https://x/a.png', providerOptions: { openai: { imageDetail: 'low' } } }] })).toBe(85);
    expect(aiSdkLens.mediaTokens!({ role: 'user', content: [{ type: 'image', image: new URL('https://x/a.png') }] })).toBe(765);
    expect(aiSdkLens.mediaTokens!({ role: 'user', content: [{ type: 'file', data: 'https://x/a.pdf', mediaType: 'application/pdf' }] })).toBe(0);
    expect(aiSdkLens.mediaTokens!(tool({ type: 'tool-result', toolCallId: 'c', toolName: 'n', output: { type: 'content', value: [{ type: 'image-url', url: 'https://x/b.png' }] } }))).toBe(765);
  });
});

describe('ai-sdk lens: changes are copies that keep every other field', () => {
  const big = tool({ ...result('c1', 'long text'), providerOptions: { p: { k: 1 } } }, { type: 'tool-approval-response', approvalId: 'ap', approved: true }, result('c2', 'second'));
  const frozen = structuredClone(big);

  test('collapseResult replaces the output with a text placeholder', () => {
    const out = aiSdkLens.collapseResult(big, 0, '[cleared]');
    expect(out.content[0]).toEqual({ type: 'tool-result', toolCallId: 'c1', toolName: 'search', providerOptions: { p: { k: 1 } }, output: { type: 'text', value: '[cleared]' } });
    expect(out.content[1]).toBe(big.content[1]);
    expect(aiSdkLens.collapseResult(big, 1, '[x]')).toBe(big); // an approval response has nothing to clear
    expect(aiSdkLens.collapseResult(tool({ type: 'tool-result', toolCallId: 'c', toolName: 'n', result: 'v4' }), 0, '[x]').content[0]).toMatchObject({ result: '[x]' });
    expect(big).toEqual(frozen);
  });

  test('removeResult removes one part; undefined when none is left', () => {
    expect(aiSdkLens.removeResult(big, 2)!.content).toEqual([big.content[0], big.content[1]]);
    expect(aiSdkLens.removeResult(big, 1)!.content).toEqual([big.content[0], big.content[2]]);
    expect(aiSdkLens.removeResult(tool(result('c', 'x')), 0)).toBeUndefined();
    expect(big).toEqual(frozen);
  });

  test('rekeyResult sets toolCallId (approvalId for an approval response); rekeyCall sets the call id and what names it in the message', () => {
    expect(aiSdkLens.rekeyResult(big, 2, { id: 'n2', name: 'search', arguments: '' }).content[2]).toMatchObject({ toolCallId: 'n2', toolName: 'search' });
    expect(aiSdkLens.rekeyResult(big, 1, { id: 'ap9', name: 'tool-approval-request', arguments: '' }).content[1]).toMatchObject({ approvalId: 'ap9' });
    expect(aiSdkLens.rekeyResult(tool({ type: 'tool-result', toolCallId: 'c' }), 0, { id: 'k', name: 'named', arguments: '' }).content[0]).toEqual({ type: 'tool-result', toolCallId: 'k', toolName: 'named' });
    const a = calls({ type: 'text', text: 'x' }, call('c1'), { type: 'tool-approval-request', approvalId: 'ap', toolCallId: 'c1' }, call('c2'));
    const k = aiSdkLens.rekeyCall(a, 0, 'z1');
    expect(k.content).toEqual([{ type: 'text', text: 'x' }, { ...call('c1'), toolCallId: 'z1' }, { type: 'tool-approval-request', approvalId: 'ap', toolCallId: 'z1' }, call('c2')]);
    expect(aiSdkLens.rekeyCall(a, 1, 'ap2').content[2]).toEqual({ type: 'tool-approval-request', approvalId: 'ap2', toolCallId: 'c1' });
    expect(aiSdkLens.read(aiSdkLens.rekeyCall(a, 2, 'z2')).calls.map((c) => c.id)).toEqual(['c1', 'ap', 'z2']);
  });

  test('missingResults: one tool message with error-text results (a denied response for an approval request); addResults appends them', () => {
    const missing = [{ id: 'c1', name: 'search', arguments: '{}' }, { id: 'ap', name: 'tool-approval-request', arguments: '' }];
    expect(aiSdkLens.missingResults(missing, 'ERR')).toEqual([{ role: 'tool', content: [
      { type: 'tool-result', toolCallId: 'c1', toolName: 'search', output: { type: 'error-text', value: 'ERR' } },
      { type: 'tool-approval-response', approvalId: 'ap', approved: false, reason: 'ERR' },
    ] }]);
    const t = tool(result('c0', 'x'));
    expect(aiSdkLens.addResults!(t, missing.slice(0, 1), 'ERR')!.content).toEqual([result('c0', 'x'), { type: 'tool-result', toolCallId: 'c1', toolName: 'search', output: { type: 'error-text', value: 'ERR' } }]);
    expect(aiSdkLens.addResults!(user('u'), missing, 'ERR')).toBeUndefined();
    expect(aiSdkLens.summaryMessage('S', 'system')).toEqual({ role: 'system', content: 'S' });
  });
});

describe('ai-sdk lens: problem() names the field and what it expected', () => {
  test.each([
    ['a string', 'x', '', /message object/],
    ['no role', { content: 'x' }, '.role', /must be a string/],
    ['an unknown role', { role: 'developer', content: 'x' }, '.role', /unknown role "developer"/],
    ['system parts', { role: 'system', content: [{ type: 'text', text: 'x' }] }, '.content', /string in a system message/],
    ['tool string content', { role: 'tool', content: 'x' }, '.content', /array of tool-result parts/],
    ['a null content', { role: 'user', content: null }, '.content', /string or an array of parts, got null/],
    ['a part without type', { role: 'user', content: [{ text: 'x' }] }, '.content[0].type', /must be a string/],
    ['a number part', { role: 'assistant', content: ['x', 3] }, '.content[0]', /content part object/],
    ['a call without id', { role: 'assistant', content: [{ type: 'text', text: 'a' }, { type: 'tool-call', toolName: 'n', input: {} }] }, '.content[1].toolCallId', /must be a string, got nothing/],
    ['a call without name', { role: 'assistant', content: [{ type: 'tool-call', toolCallId: 'c', input: {} }] }, '.content[0].toolName', /must be a string/],
    ['a result with a numeric id', { role: 'tool', content: [{ type: 'tool-result', toolCallId: 7, toolName: 'n', output: { type: 'text', value: '' } }] }, '.content[0].toolCallId', /number 7/],
    ['a text part in a tool message', { role: 'tool', content: [{ type: 'text', text: 'x' }] }, '.content[0].type', /only "tool-result"/],
    ['a tool call in a user message', { role: 'user', content: [{ type: 'tool-call', toolCallId: 'c', toolName: 'n' }] }, '.content[0].type', /user message holds/],
    ['an approval response in an assistant message', { role: 'assistant', content: [{ type: 'tool-approval-response', approvalId: 'a', approved: true }] }, '.content[0].type', /belongs to a tool message/],
    ['an approval response without approved', { role: 'tool', content: [{ type: 'tool-approval-response', approvalId: 'a' }] }, '.content[0].approved', /true or false/],
    ['an approval request without toolCallId', { role: 'assistant', content: [{ type: 'tool-approval-request', approvalId: 'a' }] }, '.content[0].toolCallId', /must be a string/],
  ])('%s', (_name, value, field, rule) => {
    const p = aiSdkLens.problem(value);
    expect(p?.field).toBe(field);
    expect(p?.rule).toMatch(rule);
  });

  test('every fixture message is a message of the format; unknown part types (V4 custom, reasoning-file) are accepted', () => {
    for (const f of FIXTURES) for (const m of f.messages) expect(aiSdkLens.problem(m)).toBeUndefined();
    expect(aiSdkLens.problem({ role: 'assistant', content: [{ type: 'custom', kind: 'x' }, { type: 'reasoning-file', data: 'AA', mediaType: 'image/png' }] })).toBeUndefined();
  });

  test('selectLens names the message and field of bad input', () => {
    expect(() => selectLens([calls(call('c1')), tool({ type: 'tool-result', toolName: 'n' })], 'ai-sdk')).toThrow(/messages\[1\]\.content\[0\]\.toolCallId/);
  });
});

describe('ai-sdk fixtures', () => {
  test.each(FIXTURES.map((f) => [f.name, f.messages] as const))('%s: detected as ai-sdk only, valid for the profile and the checker, nothing repaired', (_name, messages) => {
    expect([...evidenceIn(messages).keys()]).toEqual(['ai-sdk']);
    expect(validateMessages(messages as AiSdkMessage[], 'ai-sdk')).toEqual([]);
    expect(validateMessages(messages as AiSdkMessage[])).toEqual([]);
    expect(checkAiSdk(messages)).toEqual([]);
    const repaired = repairHistory(messages as AiSdkMessage[]);
    expect(repaired.actions).toEqual([]);
    expect(repaired.messages).toBe(messages);
    expect(buildGroups(messages as AiSdkMessage[], aiSdkLens).regular).toBe(true);
  });
});

describe('ai-sdk: the approval flow', () => {
  const flow: AiSdkMessage[] = [
    user('Clean up the build folder.'),
    calls({ type: 'text', text: 'I need your approval.' }, call('c_rm', 'deletePath', { path: 'build' }), { type: 'tool-approval-request', approvalId: 'ap_1', toolCallId: 'c_rm' }),
    tool({ type: 'tool-approval-response', approvalId: 'ap_1', approved: true }),
    tool(result('c_rm', 'removed 3 files', 'deletePath')),
    say('Removed 3 files.'),
    user('Thanks, now list what is left.'),
    calls(call('c_ls', 'list')),
    tool(result('c_ls', 'src/ README.md', 'list')),
    say('src/ and README.md are left.'),
  ];

  test('approval flow: call + approval request, approval response, then the result, is one group and never reported as broken', () => {
    const g = buildGroups(flow, aiSdkLens);
    expect(g.regular).toBe(true);
    const turn = g.groups.find((x) => x.start === 1)!;
    expect([turn.start, turn.end, turn.type, turn.complete]).toEqual([1, 5, 'turn', true]);
    expect(validateMessages(flow, 'ai-sdk')).toEqual([]);
    expect(checkAiSdk(flow)).toEqual([]);
    expect(repairHistory(flow, { format: 'ai-sdk' }).messages).toBe(flow);
    // The response and the result in one tool message (as convertToModelMessages writes them) too.
    const merged = [...flow.slice(0, 2), tool({ type: 'tool-approval-response', approvalId: 'ap_1', approved: true }, result('c_rm', 'removed 3 files', 'deletePath')), ...flow.slice(4)];
    expect(validateMessages(merged, 'ai-sdk')).toEqual([]);
    expect(buildGroups(merged, aiSdkLens).groups.find((x) => x.start === 1)!.end).toBe(4);
  });

  test('approval flow: a cut never falls inside it, at any budget', () => {
    const total = compressContext(flow, { format: 'ai-sdk', counter }).report.tokensBefore;
    for (let max = 1; max <= total + 5; max += 3) {
      const { messages: view } = compressContext(flow, { format: 'ai-sdk', counter, maxContextTokens: max, keepLast: 1 });
      expect(validateMessages(view, 'ai-sdk')).toEqual([]);
      expect(checkAiSdk(view)).toEqual([]);
      const kept = new Set(view);
      expect([1, 2, 3, 4].map((i) => kept.has(flow[i])).filter((x, _k, all) => x !== all[0])).toEqual([]);
    }
  });

  test('a response or result that answers nothing in the approval flow is reported and repaired', () => {
    const orphan = [...flow.slice(0, 3), tool({ type: 'tool-approval-response', approvalId: 'ap_other', approved: true }), ...flow.slice(3)];
    const v = validateMessages(orphan, 'ai-sdk');
    expect(v.map((x) => [x.rule, x.index, x.id])).toEqual([['result-orphan', 3, 'ap_other']]);
    expect(v[0].message).toBe('messages[3].content[0]: Tool approval response references unknown approvalId: "ap_other". No matching tool-approval-request found in message history.');
    const fixed = repairHistory(orphan, { format: 'ai-sdk' });
    expect(fixed.messages).toEqual(flow);
    expect(fixed.actions.map((a) => a.action)).toEqual(['removed-orphan']);
  });

  test('a call approved or denied in the last message is answered by the AI SDK itself: the profile and the checker accept it', () => {
    const pending = flow.slice(0, 3);
    expect(validateMessages(pending, 'ai-sdk')).toEqual([]);
    expect(checkAiSdk(pending)).toEqual([]);
    // Not in the last message: generateText does not run it, and MissingToolResultsError follows.
    const later = [...pending, say('Waiting.')];
    expect(validateMessages(later, 'ai-sdk').map((x) => x.message)).toEqual(['messages[1]: Tool result is missing for tool call c_rm.']);
    expect(checkAiSdk(later).map((x) => x.rule)).toEqual(['call-unanswered']);
  });

  // Repair used to add an error result for the approved call, so the AI SDK never ran it.
  test('a pending approval at the end of the history is left for the AI SDK to answer (CallRef.settledBy)', () => {
    const pending = flow.slice(0, 3);
    const out = compressContext(pending, { format: 'ai-sdk', counter });
    expect(out.report.repaired).toEqual([]);
    expect(out.messages).toEqual(pending);
  });

  // The approval request is read as an optional call: a missing response used to be repaired with a denied one.
  test('an approval request whose response is missing but whose result is there needs no repair (CallRef.optional)', () => {
    const noResponse = [flow[0], flow[1], flow[3], flow[4]];
    expect(validateMessages(noResponse, 'ai-sdk')).toEqual([]);
    expect(repairHistory(noResponse, { format: 'ai-sdk' }).actions).toEqual([]);
  });
});

describe('ai-sdk: provider-executed calls', () => {
  test('a deferred provider result stays with its call (atomicJoins), and is counted', () => {
    const h: AiSdkMessage[] = [
      user('go'),
      calls({ ...call('srv1', 'code_execution'), providerExecuted: true }, { type: 'text', text: 'Running.' }),
      say('Still running.'),
      calls({ type: 'tool-result', toolCallId: 'srv1', toolName: 'code_execution', output: { type: 'text', value: 'exit 0' } }, { type: 'text', text: 'Done.' }),
      user('next'),
      say('ok'),
    ];
    expect(Array.from(aiSdkLens.atomicJoins!(h, aiSdkLens.read)!)).toEqual([0, 0, 1, 1, 0, 0]);
    expect(validateMessages(h, 'ai-sdk')).toEqual([]);
    expect(checkAiSdk(h)).toEqual([]);
    for (let max = 1; max < 200; max += 2) {
      const view = compressContext(h, { format: 'ai-sdk', counter, maxContextTokens: max, keepLast: 1 }).messages;
      expect(checkAiSdk(view)).toEqual([]);
    }
    expect(aiSdkLens.read(h[3]).inPlace[0].result.content).toBe('exit 0');
    // A provider result with no call before it is reported.
    expect(validateMessages(h.slice(2), 'ai-sdk').map((v) => [v.rule, v.index, v.id])).toEqual([['provider-result-orphan', 1, 'srv1']]);
  });
});

describe('ai-sdk: counting (the issue case)', () => {
  const bigText = prose(4800);
  const history = (): ModelMessage[] => [
    { role: 'system', content: 'You are a research assistant.' },
    { role: 'user', content: 'Summarize the export.' },
    { role: 'assistant', content: [{ type: 'tool-call', toolCallId: 'call_export_1', toolName: 'readExport', input: { file: 'export.txt' } }] },
    { role: 'tool', content: [{ type: 'tool-result', toolCallId: 'call_export_1', toolName: 'readExport', output: { type: 'text', value: bigText } }] },
    { role: 'assistant', content: 'The export lists records and their status.' },
    { role: 'user', content: 'Thanks.' },
  ];

  /** What the messages cost counted by hand: every text through `counter.text`, plus the documented overheads. */
  function direct(): number {
    const per = MESSAGE_OVERHEAD_TOKENS + 1;
    return REQUEST_OVERHEAD_TOKENS
      + per + counter.text('You are a research assistant.')
      + per + counter.text('Summarize the export.')
      + per + CALL_OVERHEAD_TOKENS + counter.text('readExport') + counter.text('{"file":"export.txt"}')
      + per + counter.text(bigText) + 1
      + per + counter.text('The export lists records and their status.')
      + per + counter.text('Thanks.');
  }

  test('issue case: a ModelMessage history with a ~4,800-token tool result is detected as ai-sdk with format auto, counted within 2%, nothing deleted, the view valid', () => {
    const tokens = counter.text(bigText);
    expect(tokens).toBeGreaterThan(4500);
    expect(tokens).toBeLessThan(5200);
    for (const format of ['auto', 'ai-sdk'] as const) {
      const messages = history();
      const before = structuredClone(messages);
      const { messages: view, report } = compressContext(messages, { format, counter, maxContextTokens: tokens + 400 });
      expect(report.format).toBe('ai-sdk');
      expect(Math.abs(report.tokensBefore - direct()) / direct()).toBeLessThan(0.02);
      expect(report.tokensBefore).toBeGreaterThan(tokens);
      expect(report.messagesAfter).toBe(messages.length);
      expect(report.droppedCounts).toEqual({ summarized: 0, budget: 0 });
      expect(report.repaired).toEqual([]);
      expect(view).toHaveLength(messages.length);
      view.forEach((m, i) => expect(m).toBe(messages[i]));
      expect(messages).toEqual(before);
      expect(validateMessages(view, 'ai-sdk')).toEqual([]);
      expect(checkAiSdk(view)).toEqual([]);
    }
  });

  test('a 5,000-word tool result in a text, content or error-text output is counted too', () => {
    const words = prose(5000, 11);
    const outputs: ToolResultPart['output'][] = [{ type: 'text', value: words }, { type: 'content', value: [{ type: 'text', text: words }] }, { type: 'error-text', value: words }];
    for (const output of outputs) {
      const messages: ModelMessage[] = [...history().slice(0, 3), { role: 'tool', content: [{ type: 'tool-result', toolCallId: 'call_export_1', toolName: 'readExport', output }] }, ...history().slice(4)];
      const { report } = compressContext(messages, { format: 'auto', counter });
      expect(report.format).toBe('ai-sdk');
      const expected = direct() - counter.text(bigText) + counter.text(words);
      expect(Math.abs(report.tokensBefore - expected) / expected).toBeLessThan(0.02);
      expect(report.messagesAfter).toBe(messages.length);
    }
  });

  test('a big in-place provider result is counted as well', () => {
    const words = prose(5000, 3);
    const messages: AiSdkMessage[] = [user('search'), calls({ ...call('s1', 'web_search'), providerExecuted: true }, { type: 'tool-result', toolCallId: 's1', toolName: 'web_search', output: { type: 'text', value: words } }, { type: 'text', text: 'done' })];
    const { report } = compressContext(messages, { format: 'auto', counter });
    expect(report.tokensBefore).toBeGreaterThan(counter.text(words));
  });
});

describe('ai-sdk: repair', () => {
  test('a tool message of several results a user message came between it and its calls goes back after them, whole', () => {
    const result = (id: string, value: string) => ({ type: 'tool-result' as const, toolCallId: id, toolName: 'weather', output: { type: 'text' as const, value } });
    const input: AiSdkMessage[] = [
      { role: 'user', content: 'Weather in Paris and Rome?' },
      { role: 'assistant', content: [{ type: 'tool-call', toolCallId: 'a', toolName: 'weather', input: { city: 'Paris' } }, { type: 'tool-call', toolCallId: 'b', toolName: 'weather', input: { city: 'Rome' } }] },
      { role: 'user', content: 'also, hurry' },
      { role: 'tool', content: [result('a', 'PARIS-21C'), result('b', 'ROME-25C')] },
    ];
    expect(checkAiSdk(input).length).toBeGreaterThan(0);
    const { messages, report } = compressContext(input, { format: 'ai-sdk', counter: createTokenCounter() });
    expect(messages).toEqual([input[0], input[1], input[3], input[2]]);
    expect(report.repaired.map((a) => [a.action, a.index])).toEqual([['moved-result', 3]]);
    expect(checkAiSdk(messages)).toEqual([]);
  });
});

describe('ai-sdk checker self-test', () => {
  test.each([
    ['a call without a result before the next user message', [user('u'), calls(call('c1')), user('again')], 'call-unanswered', 1],
    ['a call without a result at the end', [user('u'), calls(call('c1'), call('c2')), tool(result('c1', 'x'))], 'call-unanswered', 1],
    ['an assistant message between a call and its result', [user('u'), calls(call('c1')), say('hm'), tool(result('c1', 'x'))], 'call-unanswered', 1],
    ['a result for no call', [user('u'), tool(result('c9', 'x'))], 'result-orphan', 1],
    ['a result for a call of an earlier turn', [user('u'), calls(call('c1')), tool(result('c1', 'x')), say('a'), calls(call('c2')), tool(result('c1', 'y'), result('c2', 'z'))], 'result-orphan', 5],
    ['a duplicate result', [user('u'), calls(call('c1')), tool(result('c1', 'x')), tool(result('c1', 'x'))], 'result-duplicate', 3],
    ['two calls with one id', [user('u'), calls(call('c1'), call('c1')), tool(result('c1', 'x'))], 'call-id-duplicate', 1],
    ['an approval response for no request', [user('u'), calls(call('c1')), tool({ type: 'tool-approval-response', approvalId: 'zz', approved: true }, result('c1', 'x'))], 'result-orphan', 2],
    ['a provider result with no call', [user('u'), calls(result('s1', 'x'))], 'provider-result-orphan', 1],
    ['a bad shape', [{ role: 'tool', content: 'x' }], 'shape', 0],
  ])('flags %s', (_name, messages, rule, index) => {
    expect(checkAiSdk(messages as unknown[])).toEqual(expect.arrayContaining([expect.objectContaining({ rule, index })]));
  });
});
