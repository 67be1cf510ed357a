import { describe, expect, test } from '@jest/globals';
import { compressContext, createTokenCounter, validateMessages } from '../../src/index.js';
import { repairHistory } from '../../src/formats/profiles.js';
import { evidenceIn } from '../../src/formats/evidence.js';
import { selectLens } from '../../src/formats/registry.js';
import { anthropicLens } from '../../src/formats/anthropic/lens.js';
import { anthropicProfile, bedrockProfile } from '../../src/formats/anthropic/profile.js';
import type { AnthropicBlock, AnthropicMessage } from '../../src/formats/anthropic/types.js';
import type { RuleId, Violation } from '../../src/core/validate/rules.js';
import { anthropicProblems } from '../helpers/anthropic-checker.js';
import { FIXTURES } from '../fixtures/formats/anthropic.js';

/**
 * The Anthropic lens, its profiles and its detection, fault by fault. The provider's 400 texts
 * are copied from the project's provider notes (../shared/provider-rules.md) with the indexes and
 * ids as parameters; each broken sequence is rejected with its rule and wording, its fixed form passes.
 */

const TEXT = {
  unanswered: (n: number, ids: string) => `messages.${n}: \`tool_use\` ids were found without \`tool_result\` blocks immediately after: ${ids}. Each \`tool_use\` block must have a corresponding \`tool_result\` block in the next message.`,
  unexpected: (n: number, k: number, id: string) => `messages.${n}.content.${k}: unexpected \`tool_use_id\` found in \`tool_result\` blocks: ${id}. Each \`tool_result\` block must have a corresponding \`tool_use\` block in the previous message.`,
  single: (n: number, k: number, id: string) => `messages.${n}.content.${k}: each tool_use must have a single result. Found multiple \`tool_result\` blocks with id: ${id}`,
  notFirst: (n: number, count: number) => `messages.${n}: Did not find ${count} \`tool_result\` block(s) at the beginning of this message. Messages following \`tool_use\` blocks must begin with a matching number of \`tool_result\` blocks.`,
  unique: (n: number, k: number) => `messages.${n}.content.${k}: \`tool_use\` ids must be unique`,
  serverUnanswered: (n: number, name: string, id: string) => `messages.${n}: \`${name}\` tool use with id \`${id}\` was found without a corresponding \`${name}_tool_result\` block`,
  serverOrphan: (n: number, k: number, type: string, id: string) => `messages.${n}.content.${k}: unexpected \`tool_use_id\` found in \`${type}\` blocks: ${id}. Each \`${type}\` block must have a corresponding \`server_tool_use\` block before it.`,
  thinkingFirst: (n: number, found: string) => `messages.${n}.content.0.type: Expected \`thinking\` or \`redacted_thinking\`, but found \`${found}\`. When \`thinking\` is enabled, a final \`assistant\` message must start with a thinking block (preceeding the lastmost set of \`tool_use\` and \`tool_result\` blocks). We recommend you include thinking blocks from previous turns. To avoid this requirement, disable \`thinking\`. Please consult our documentation at https://docs.claude.com/en/docs/build-with-claude/extended-thinking`,
  thinkingLast: (n: number) => `messages.${n}: The final block in an assistant message cannot be \`thinking\``,
  idPattern: (n: number, k: number, field: string) => `messages.${n}.content.${k}.${field}: String should match pattern '^[a-zA-Z0-9_-]+$'`,
  firstUser: 'messages.0: A conversation must start with a user message. Try again with a conversation that starts with a user message.',
  alternate: (n: number) => `messages.${n}: A conversation must alternate between user and assistant roles. Make sure the conversation alternates between user and assistant roles and try again.`,
  exceeds: (n: number) => `The number of toolResult blocks at messages.${n}.content exceeds the number of toolUse blocks of previous turn.`,
  blank: (n: number, k: number) => `The text field in the ContentBlock object at messages.${n}.content.${k} is blank. Add text to the text field, and try again.`,
  empty: (n: number) => `The content field in the Message object at messages.${n} is empty. Add a ContentBlock object to the content field and try again.`,
  errorEmpty: (n: number, k: number) => `The content field at messages.${n}.content.${k}.toolResult cannot be empty when status value is error.`,
};

const user = (content: string | AnthropicBlock[]): AnthropicMessage => ({ role: 'user', content });
const assistant = (content: string | AnthropicBlock[]): AnthropicMessage => ({ role: 'assistant', content });
const use = (id: string, name = 'lookup'): AnthropicBlock => ({ type: 'tool_use', id, name, input: { q: id } });
const result = (id: string, content: string | AnthropicBlock[] = `result of ${id}`): AnthropicBlock => ({ type: 'tool_result', tool_use_id: id, content });
const text = (t: string): AnthropicBlock => ({ type: 'text', text: t });
const thinking = (t = 'Let me think.'): AnthropicBlock => ({ type: 'thinking', thinking: t, signature: 'EqQBCkYIBxgCKkB==' });
const serverUse = (id: string): AnthropicBlock => ({ type: 'server_tool_use', id, name: 'web_search', input: { query: 'q' } });
const serverResult = (id: string): AnthropicBlock => ({ type: 'web_search_tool_result', tool_use_id: id, content: [{ type: 'web_search_result', url: 'https://example.com', title: 'Example', encrypted_content: 'abcd', page_age: null }] });

const anthropic = (messages: AnthropicMessage[]) => validateMessages(messages, 'anthropic');
const bedrock = (messages: AnthropicMessage[]) => validateMessages(messages, 'bedrock');
const only = (v: Violation[], rule: RuleId) => v.filter((x) => x.rule === rule);

describe('anthropic lens: reading', () => {
  test('kinds: assistant, a user turn, a tool step, and a user turn that also carries results', () => {
    const r = (m: AnthropicMessage) => anthropicLens.read(m);
    expect(r(assistant('hi'))).toMatchObject({ kind: 'assistant', role: 'assistant', hasUserText: false, text: 'hi' });
    expect(r(user('go'))).toMatchObject({ kind: 'user', role: 'user', hasUserText: true, text: 'go' });
    expect(r(user([result('t1')]))).toMatchObject({ kind: 'result', role: 'tool', hasUserText: false, results: [{ id: 't1', content: 'result of t1' }] });
    const mixed = r(user([result('t1'), text('and also this')]));
    expect(mixed).toMatchObject({ kind: 'user', hasUserText: true, text: 'and also this', results: [{ id: 't1' }] });
    expect(r(user([{ type: 'image', source: { type: 'url', url: 'https://example.com/a.png' } }]))).toMatchObject({ kind: 'user', hasUserText: true });
  });

  test('calls carry the input as JSON text; result content is the text of a string or of text blocks', () => {
    const m = assistant([thinking('plan'), text('Checking.'), use('t1', 'search'), use('t2', 'fetch')]);
    const reading = anthropicLens.read(m);
    expect(reading.calls).toEqual([{ id: 't1', name: 'search', arguments: '{"q":"t1"}' }, { id: 't2', name: 'fetch', arguments: '{"q":"t2"}' }]);
    // Thinking is billed text: it is input on the next request.
    expect(reading.text).toBe('plan\nChecking.');
    expect(anthropicLens.read(user([result('t1', [text('a'), text('b')])])).results[0].content).toBe('a\nb');
  });

  test('server tool calls are read in place with their results, never as calls to pair', () => {
    const reading = anthropicLens.read(assistant([serverUse('s1'), serverResult('s1'), text('Found it.')]));
    expect(reading.calls).toEqual([]);
    expect(reading.inPlace).toEqual([{ call: { id: 's1', name: 'web_search', arguments: '{"query":"q"}' }, result: { id: 's1', name: 'web_search_tool_result', content: 'https://example.com\nExample' } }]);
  });

  test('media: an inline image by its size, a remote one at the 1,600-token cap, redacted thinking at a quarter of its length', () => {
    const png1x1 = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==';
    const media = (m: AnthropicMessage) => anthropicLens.mediaTokens!(m);
    expect(media(user([{ type: 'image', source: { type: 'base64', media_type: 'image/png', data: png1x1 } }]))).toBe(1);
    expect(media(user([result('t1', [{ type: 'image', source: { type: 'url', url: 'https://example.com/x.png' } }])]))).toBe(1600);
    expect(media(assistant([{ type: 'redacted_thinking', data: 'x'.repeat(400) }, text('ok')]))).toBe(100);
    expect(media(user('plain'))).toBe(0);
  });
});

describe('anthropic lens: changes come back as copies in the format\'s shape', () => {
  const original = user([result('t1'), result('t2', [text('two')]), text('my words')]);
  const frozen = JSON.stringify(original);

  test('missingResults: one user message of error tool_result blocks', () => {
    expect(anthropicLens.missingResults([{ id: 'a', name: 'f', arguments: '{}' }, { id: 'b', name: 'g', arguments: '{}' }], 'missing')).toEqual([
      user([{ type: 'tool_result', tool_use_id: 'a', content: 'missing', is_error: true }, { type: 'tool_result', tool_use_id: 'b', content: 'missing', is_error: true }]),
    ]);
  });

  test('addResults: after the existing results and before the user\'s words; string content becomes a text block after them', () => {
    const added = anthropicLens.addResults!(original, [{ id: 't3', name: 'f', arguments: '{}' }], 'missing')!;
    expect((added.content as AnthropicBlock[]).map((b) => b.type === 'tool_result' ? b.tool_use_id : b.type)).toEqual(['t1', 't2', 't3', 'text']);
    const fromString = anthropicLens.addResults!({ role: 'user', content: 'go on', extra: 1 }, [{ id: 't9', name: 'f', arguments: '{}' }], 'missing')!;
    expect(fromString).toEqual({ role: 'user', extra: 1, content: [{ type: 'tool_result', tool_use_id: 't9', content: 'missing', is_error: true }, text('go on')] });
    expect(anthropicLens.addResults!(assistant('x'), [{ id: 't9', name: 'f', arguments: '{}' }], 'm')).toBeUndefined();
    expect(JSON.stringify(original)).toBe(frozen);
  });

  test('removeResult, collapseResult, rekeyResult, rekeyCall touch one block and keep every other field', () => {
    const removed = anthropicLens.removeResult(original, 1)!;
    expect((removed.content as AnthropicBlock[]).map((b) => b.tool_use_id ?? b.type)).toEqual(['t1', 'text']);
    expect(anthropicLens.removeResult(user([result('only')]), 0)).toBeUndefined();
    const collapsed = anthropicLens.collapseResult(user([{ ...result('t1'), is_error: true, cache_control: { type: 'ephemeral' } }]), 0, '[cleared]');
    expect(collapsed.content).toEqual([{ type: 'tool_result', tool_use_id: 't1', content: '[cleared]', is_error: true, cache_control: { type: 'ephemeral' } }]);
    expect((anthropicLens.rekeyResult(original, 1, { id: 'new', name: 'f', arguments: '' }).content as AnthropicBlock[])[1]).toEqual(result('new', [text('two')]));
    const call = assistant([thinking(), use('a'), use('b')]);
    const rekeyed = anthropicLens.rekeyCall(call, 1, 'c');
    expect(rekeyed.content).toEqual([thinking(), use('a'), { ...use('b'), id: 'c' }]);
    expect((rekeyed.content as AnthropicBlock[])[0]).toBe((call.content as AnthropicBlock[])[0]); // the thinking block is the same object
    expect(JSON.stringify(original)).toBe(frozen);
  });

  test('the summary is a user message whatever role is asked for', () => {
    expect(anthropicLens.summaryMessage('s', 'system')).toEqual({ role: 'user', content: 's' });
    expect(anthropicLens.leadsWithUser).toBe(true);
    expect(anthropicLens.request).toEqual({ messagesField: 'messages', systemField: 'system' });
  });
});

describe('anthropic lens: problem() names the field', () => {
  const p = (v: unknown) => anthropicLens.problem(v);
  test.each([
    [null, '', /must be a message object, got null/],
    [{ role: 'system', content: 'x' }, '.role', /unknown role "system" .*top-level system field/],
    [{ role: 'user' }, '.content', /must be a string or an array of content blocks, got nothing/],
    [{ role: 'user', content: [text('a'), 'b'] }, '.content[1]', /must be a content block object/],
    [{ role: 'user', content: [{ text: 'a' }] }, '.content[0].type', /must be a string naming the block type/],
    [{ role: 'assistant', content: [text('a'), { type: 'tool_use', name: 'f', input: {} }] }, '.content[1].id', /tool_use block needs a string id/],
    [{ role: 'assistant', content: [{ type: 'tool_use', id: 't', input: {} }] }, '.content[0].name', /needs a string name/],
    [{ role: 'user', content: [text('a'), text('b'), { type: 'tool_result', tool_use_id: 7 }] }, '.content[2].tool_use_id', /needs a string tool_use_id, got number 7/],
    [{ role: 'assistant', content: [{ type: 'thinking', thinking: 'x' }] }, '.content[0].signature', /needs a string signature/],
  ])('%j -> %s', (value, field, rule) => {
    const found = p(value);
    expect(found?.field).toBe(field);
    expect(found?.rule).toMatch(rule);
  });

  test('valid messages have no problem', () => {
    for (const f of FIXTURES) for (const m of f.messages) expect(p(m)).toBeUndefined();
  });
});

describe('anthropic lens: atomic joins', () => {
  const joinsOf = (messages: AnthropicMessage[]) => anthropicLens.atomicJoins!(messages, anthropicLens.read);

  test('with thinking, the open loop\'s later steps join the thinking-led message that started it; finished loops are not joined', () => {
    const finished = [
      user('go'), // 0
      assistant([thinking(), use('t1')]), // 1 starts a loop
      user([result('t1')]), // 2
      assistant([use('t2')]), // 3
      user([result('t2')]), // 4
      assistant([text('done')]), // 5
      user('next'), // 6: the loop is finished, the API no longer checks its thinking
    ];
    expect(joinsOf(finished)).toBeUndefined();
    const open = [
      ...finished,
      assistant([thinking(), use('t3')]), // 7 starts the open loop
      user([result('t3')]), // 8
      assistant([use('t4')]), // 9 joined
      user([result('t4')]), // 10
      assistant([thinking(), use('t5')]), // 11 thinks again: a cut before it leaves a valid loop
      user([result('t5')]), // 12
      assistant([use('t6')]), // 13 joined
      user([result('t6')]), // 14
    ];
    expect(Array.from(joinsOf(open)!)).toEqual([0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 1, 0]);
  });

  test('without thinking there is no constraint', () => {
    expect(joinsOf([user('go'), assistant([use('t1')]), user([result('t1')]), assistant([use('t2')]), user([result('t2')])])).toBeUndefined();
  });

  test('a server tool result that arrives in a later message stays with its call', () => {
    const messages = [user('go'), assistant([serverUse('s1'), use('t1')]), user([result('t1')]), assistant([serverResult('s1'), text('done')])];
    expect(Array.from(joinsOf(messages)!)).toEqual([0, 0, 1, 1]);
    expect(anthropic(messages)).toEqual([]);
  });

  test('compression never cuts inside a thinking loop: a view keeps the loop whole or drops it', () => {
    const big = 'word '.repeat(400);
    const messages = [
      assistant([thinking(), use('t1')]), user([result('t1', big)]),
      assistant([use('t2')]), user([result('t2', big)]),
      assistant([use('t3')]), user([result('t3')]),
    ];
    for (const max of [50, 300, 900, 5000]) {
      const view = compressContext(messages, { format: 'anthropic', maxContextTokens: max, keepLast: 2, keepFirst: 0 }).messages;
      expect(anthropic(view)).toEqual([]);
      expect(anthropicProblems(view, { thinking: true })).toEqual([]);
      expect(view.filter((m) => messages.includes(m))).toEqual(messages);
    }
  });
});

describe('anthropic profile: each documented 400, and its fixed form', () => {
  test('call-unanswered: the assistant index and every id', () => {
    const v = anthropic([user('go'), assistant([use('toolu_a'), use('toolu_b')]), user([result('toolu_b')]), assistant('x')]);
    expect(v).toEqual([{ index: 1, rule: 'call-unanswered', id: 'toolu_a', message: TEXT.unanswered(1, 'toolu_a') }]);
    expect(anthropic([user('go'), assistant([use('toolu_a'), use('toolu_b')]), user([result('toolu_b'), result('toolu_a')]), assistant('x')])).toEqual([]);
  });

  test('call-unanswered: a user message between the call and its result', () => {
    const v = anthropic([user('go'), assistant([use('toolu_a')]), user('wait'), user([result('toolu_a')])]);
    expect(v.map((x) => x.message)).toEqual([TEXT.unanswered(1, 'toolu_a'), TEXT.unexpected(3, 0, 'toolu_a')]);
  });

  test('repair: a result a user message separated from its call goes first in that user message (the tool output is kept; Bedrock-valid too)', () => {
    const data = 'DATA-7781 from the tool';
    const input: AnthropicMessage[] = [user('go'), assistant([text('Looking.'), use('toolu_a'), use('toolu_b')]), user('wait, also the other one'), user([result('toolu_a', data), result('toolu_b', 'B')]), assistant('ok'), user('next')];
    expect(anthropicProblems(input, { bedrock: true }).length).toBeGreaterThan(0);
    for (const provider of [undefined, 'anthropic', 'bedrock'] as const) {
      const { messages, actions } = repairHistory(input, { format: 'anthropic', ...(provider ? { provider } : {}) });
      expect(anthropicProblems(messages, { bedrock: true })).toEqual([]);
      expect(messages).toHaveLength(5);
      expect(messages[2]).toEqual({ role: 'user', content: [result('toolu_a', data), result('toolu_b', 'B'), text('wait, also the other one')] });
      [0, 1].forEach((i) => expect(messages[i]).toBe(input[i]));
      [3, 4].forEach((i) => expect(messages[i]).toBe(input[i + 1]));
      expect(actions.map((a) => [a.action, a.index])).toEqual([['moved-result', 3]]);
    }
    // Results the message holds with other content, or a later call turn between: the old rule (synthetic result, orphan removed).
    const mixed: AnthropicMessage[] = [user('go'), assistant([use('toolu_a')]), user('wait'), user([result('toolu_a', data), text('and this')])];
    const fixed = repairHistory(mixed, { format: 'anthropic' });
    expect(anthropicProblems(fixed.messages)).toEqual([]);
    expect(fixed.actions.map((a) => a.action)).toContain('added-result');
  });

  test('repair: the user\'s words before the tool_result blocks of a message go after them (nothing removed, Anthropic and Bedrock valid)', () => {
    const input: AnthropicMessage[] = [user('go'), assistant([use('toolu_a'), use('toolu_b')]), user([text('here they are:'), result('toolu_a', 'A-DATA'), text('and'), result('toolu_b', 'B-DATA')]), assistant('ok')];
    expect(anthropic(input).map((v) => v.rule)).toContain('tool-result-not-first');
    for (const provider of [undefined, 'anthropic', 'bedrock'] as const) {
      const { messages, report } = compressContext(input, { format: 'anthropic', counter: createTokenCounter(), ...(provider ? { provider } : {}) });
      expect(anthropicProblems(messages, { bedrock: true })).toEqual([]);
      expect(messages[2]).toEqual({ role: 'user', content: [result('toolu_a', 'A-DATA'), result('toolu_b', 'B-DATA'), text('here they are:'), text('and')] });
      [0, 1, 3].forEach((i) => expect(messages[i]).toBe(input[i]));
      expect(report.repaired.map((a) => [a.action, a.index])).toEqual([['moved-result', 2]]);
    }
  });

  test('result-orphan: a history cut so it starts with a result (messages.0), and a result for another turn', () => {
    expect(anthropic([user([result('toolu_x')]), assistant('hi')])).toEqual([{ index: 0, rule: 'result-orphan', id: 'toolu_x', message: TEXT.unexpected(0, 0, 'toolu_x') }]);
    const v = anthropic([user('go'), assistant([use('toolu_a')]), user([result('toolu_a'), result('toolu_z'), text('hm')])]);
    expect(v).toEqual([{ index: 2, rule: 'result-orphan', id: 'toolu_z', message: TEXT.unexpected(2, 1, 'toolu_z') }]);
    expect(anthropic([user('go'), assistant([use('toolu_a')]), user([result('toolu_a'), text('hm')])])).toEqual([]);
  });

  test('result-duplicate: two results for one tool_use', () => {
    const v = anthropic([user('go'), assistant([use('toolu_a')]), user([result('toolu_a'), result('toolu_a', 'again')])]);
    expect(v).toEqual([{ index: 2, rule: 'result-duplicate', id: 'toolu_a', message: TEXT.single(2, 1, 'toolu_a') }]);
  });

  test('tool-result-not-first: the user\'s words before the results', () => {
    const v = anthropic([user('go'), assistant([use('toolu_a'), use('toolu_b')]), user([text('here'), result('toolu_a'), result('toolu_b')])]);
    expect(v).toEqual([{ index: 2, rule: 'tool-result-not-first', message: TEXT.notFirst(2, 2) }]);
    expect(anthropic([user('go'), assistant([use('toolu_a'), use('toolu_b')]), user([result('toolu_a'), result('toolu_b'), text('here')])])).toEqual([]);
  });

  test('call-id-duplicate: an id used again in a later turn', () => {
    const v = anthropic([user('go'), assistant([use('toolu_a')]), user([result('toolu_a')]), assistant([use('toolu_a')]), user([result('toolu_a')])]);
    expect(v).toHaveLength(1);
    expect(v[0]).toMatchObject({ index: 3, rule: 'call-id-duplicate', id: 'toolu_a' });
    expect(v[0].message.startsWith(TEXT.unique(3, 0))).toBe(true);
    expect(v[0].message).toContain('messages.1.content.0');
  });

  test('tool-id-pattern: ids outside ^[a-zA-Z0-9_-]+$', () => {
    const v = anthropic([user('go'), assistant([use('functions.read:3')]), user([result('functions.read:3')])]);
    expect(v.map((x) => x.message)).toEqual([TEXT.idPattern(1, 0, 'tool_use.id'), TEXT.idPattern(2, 0, 'tool_result.tool_use_id')]);
  });

  test('server-tool-unanswered and server-tool-result-orphan; an open call in the last assistant message is a paused turn', () => {
    const v = anthropic([user('go'), assistant([serverUse('srvtoolu_1'), text('hm')]), user('and?'), assistant([serverResult('srvtoolu_9'), text('x')])]);
    expect(v).toEqual([
      { index: 1, rule: 'server-tool-unanswered', id: 'srvtoolu_1', message: TEXT.serverUnanswered(1, 'web_search', 'srvtoolu_1') },
      { index: 3, rule: 'server-tool-result-orphan', id: 'srvtoolu_9', message: TEXT.serverOrphan(3, 0, 'web_search_tool_result', 'srvtoolu_9') },
    ]);
    expect(anthropic([user('go'), assistant([serverUse('srvtoolu_1'), serverResult('srvtoolu_1'), text('hm')])])).toEqual([]);
    expect(anthropic([user('go'), assistant([serverUse('srvtoolu_1')])])).toEqual([]);
  });

  test('thinking-not-first: with thinking on, an open loop whose first assistant message does not start with thinking', () => {
    const broken = [user('a'), assistant([thinking(), text('x')]), user('b'), assistant([text('Checking.'), use('toolu_a')]), user([result('toolu_a')])];
    expect(anthropic(broken)).toEqual([{ index: 3, rule: 'thinking-not-first', message: TEXT.thinkingFirst(3, 'text') }]);
    const foundToolUse = [user('b'), assistant([use('toolu_a')]), user([result('toolu_a')]), assistant([thinking(), use('toolu_b')]), user([result('toolu_b')])];
    expect(anthropic(foundToolUse)).toEqual([{ index: 1, rule: 'thinking-not-first', message: TEXT.thinkingFirst(1, 'tool_use') }]);
    expect(anthropic([user('a'), assistant([thinking(), text('Checking.'), use('toolu_a')]), user([result('toolu_a')]), assistant([use('toolu_b')]), user([result('toolu_b')])])).toEqual([]);
    // A finished loop, or no thinking at all, is not held to it.
    expect(anthropic([...broken, assistant('done')])).toEqual([]);
    expect(anthropic([user('b'), assistant([use('toolu_a')]), user([result('toolu_a')])])).toEqual([]);
  });

  test('thinking-last-block: an assistant message ending with thinking', () => {
    expect(anthropic([user('a'), assistant([text('x'), thinking()])])).toEqual([{ index: 1, rule: 'thinking-last-block', message: TEXT.thinkingLast(1) }]);
  });
});

describe('bedrock profile: Anthropic\'s rules and Bedrock\'s own', () => {
  const valid = [user('go'), assistant([use('toolu_a')]), user([result('toolu_a')]), assistant('done')];

  test('a valid history passes both profiles', () => {
    expect(bedrock(valid)).toEqual([]);
    expect(anthropic(valid)).toEqual([]);
  });

  test('first-not-user', () => {
    expect(only(bedrock([assistant('hi'), user('go')]), 'first-not-user')).toEqual([{ index: 0, rule: 'first-not-user', message: TEXT.firstUser }]);
    expect(anthropic([assistant('hi'), user('go')])).toEqual([]);
  });

  test('roles-not-alternating: two user messages in a row (Anthropic merges them, Bedrock does not)', () => {
    const v = bedrock([user('a'), user('b'), assistant('c')]);
    expect(v).toEqual([{ index: 1, rule: 'roles-not-alternating', message: TEXT.alternate(1) }]);
    expect(anthropic([user('a'), user('b'), assistant('c')])).toEqual([]);
  });

  test('tool-id-pattern: longer than 64 characters', () => {
    const id = `toolu_${'a'.repeat(70)}`;
    const v = only(bedrock([user('go'), assistant([use(id)]), user([result(id)])]), 'tool-id-pattern');
    expect(v.map((x) => [x.index, x.id])).toEqual([[1, id], [2, id]]);
  });

  test('text-blank, content-empty, error-result-empty', () => {
    expect(bedrock([user([text(' ')]), assistant('x')])).toEqual([{ index: 0, rule: 'text-blank', message: TEXT.blank(0, 0) }]);
    expect(bedrock([user([]), assistant('x')])).toEqual([{ index: 0, rule: 'content-empty', message: TEXT.empty(0) }]);
    const v = bedrock([user('go'), assistant([use('toolu_a')]), user([{ type: 'tool_result', tool_use_id: 'toolu_a', content: '', is_error: true }])]);
    expect(v).toEqual([{ index: 2, rule: 'error-result-empty', id: 'toolu_a', message: TEXT.errorEmpty(2, 0) }]);
  });

  test('tool-results-exceed: more results than the turn before has calls', () => {
    const v = bedrock([user('go'), assistant([use('toolu_a')]), user([result('toolu_a'), result('toolu_b')])]);
    expect(only(v, 'tool-results-exceed')).toEqual([{ index: 2, rule: 'tool-results-exceed', message: TEXT.exceeds(2) }]);
  });

  test('repair with the provider makes reused ids unique, in calls and results', () => {
    const reused = [user('go'), assistant([use('toolu_a')]), user([result('toolu_a')]), assistant([use('toolu_a')]), user([result('toolu_a')]), assistant('done')];
    for (const provider of ['anthropic', 'bedrock'] as const) {
      const fixed = repairHistory(reused, { provider }).messages as AnthropicMessage[];
      expect(validateMessages(fixed, provider)).toEqual([]);
      expect(fixed[1]).toBe(reused[1]);
    }
  });

  test('the profiles are registered by name', () => {
    expect(anthropicProfile.name).toBe('anthropic');
    expect(bedrockProfile.name).toBe('bedrock');
    expect(validateMessages(valid)).toEqual([]);
  });
});

describe('the independent checker flags known-bad sequences', () => {
  const bad: [string, unknown[], boolean][] = [
    ['a call without its result', [user('go'), assistant([use('toolu_a')]), user('next')], false],
    ['a call at the very end', [user('go'), assistant([use('toolu_a')])], false],
    ['a result first', [user([result('toolu_a')])], false],
    ['a result after the user\'s words', [user('go'), assistant([use('toolu_a')]), user([text('x'), result('toolu_a')])], false],
    ['a result twice', [user('go'), assistant([use('toolu_a')]), user([result('toolu_a'), result('toolu_a')])], false],
    ['an id used twice', [user('go'), assistant([use('toolu_a')]), user([result('toolu_a')]), assistant([use('toolu_a')]), user([result('toolu_a')])], false],
    ['a server call without its result', [user('go'), assistant([serverUse('s1'), text('x')]), user('y'), assistant('z')], false],
    ['thinking on, open loop not led by thinking', [user('go'), assistant([thinking(), text('a')]), user('b'), assistant([use('toolu_a')]), user([result('toolu_a')])], false],
    ['thinking as the last block', [user('go'), assistant([text('a'), thinking()])], false],
    ['a system role', [{ role: 'system', content: 'x' }, user('go')], false],
    ['bedrock: assistant first', [assistant('x'), user('y')], true],
    ['bedrock: two users in a row', [user('x'), user('y')], true],
    ['bedrock: a blank text', [user([text('  ')])], true],
  ];
  test.each(bad)('%s', (_name, messages, onBedrock) => {
    expect(anthropicProblems(messages, { bedrock: onBedrock }).length).toBeGreaterThan(0);
  });

  test('and passes the fixtures and their Bedrock-valid forms', () => {
    for (const f of FIXTURES) expect({ name: f.name, problems: anthropicProblems(f.messages) }).toEqual({ name: f.name, problems: [] });
  });
});

describe('fixtures: detected as Anthropic and nothing else, valid under the profile', () => {
  test.each(FIXTURES.map((f) => [f.name, f.messages] as const))('%s', (_name, messages) => {
    expect([...evidenceIn(messages).keys()]).toEqual(['anthropic']);
    expect(selectLens(messages, 'auto').format).toBe('anthropic');
    expect(validateMessages(messages)).toEqual([]);
    const r = compressContext(messages, { format: 'auto' });
    expect(r.report.format).toBe('anthropic');
    expect(r.messages).toEqual(messages);
    expect(r.messages.every((m, i) => m === messages[i])).toBe(true);
  });
});

describe('counting: a 5,000-word tool result is billed, not 0', () => {
  const counter = createTokenCounter();
  const big = Array.from({ length: 5000 }, (_, i) => ['alpha', 'bravo', 'charlie', 'delta', 'echo'][i % 5] + String(i % 13)).join(' ');
  const messages: AnthropicMessage[] = [
    user('Read the whole log and tell me what failed.'),
    assistant([thinking('The log is long; read it first.'), use('toolu_01BigLog0000000000000001', 'read_log')]),
    user([result('toolu_01BigLog0000000000000001', big)]),
    assistant([text('The job failed at step 3.')]),
  ];

  /** The same count made by hand from the messages' texts: 4 per message, 3 per call, 3 per request. */
  function byHand(): number {
    let n = counter.requestOverhead;
    for (const m of messages) {
      n += 4;
      if (typeof m.content === 'string') n += counter.text(m.content);
      else {
        const texts: string[] = [];
        for (const b of m.content) {
          if (b.type === 'text') texts.push(b.text as string);
          if (b.type === 'thinking') texts.push(b.thinking as string);
          if (b.type === 'tool_use') n += 3 + counter.text(b.name as string) + counter.text(JSON.stringify(b.input));
          if (b.type === 'tool_result') n += counter.text(b.content as string);
        }
        if (texts.length > 0) n += counter.text(texts.join('\n'));
      }
    }
    return n;
  }

  test.each(['auto', 'anthropic'] as const)('format %s: detected, counted within 2%%, nothing deleted', (format) => {
    const r = compressContext(messages, { format, counter });
    expect(r.report.format).toBe('anthropic');
    const expected = byHand();
    expect(expected).toBeGreaterThan(5000);
    expect(Math.abs(r.report.tokensBefore - expected) / expected).toBeLessThan(0.02);
    expect(r.messages).toEqual(messages);
    expect(r.report.droppedCounts).toEqual({ summarized: 0, budget: 0 });
    expect(r.report.repaired).toEqual([]);
  });
});
