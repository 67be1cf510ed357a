import { describe, expect, test } from '@jest/globals';
import { compressContext, createTokenCounter, repairHistory, validateMessages } from '../../src/index.js';
import { InputError } from '../../src/errors.js';
import { evidenceIn } from '../../src/formats/evidence.js';
import { hermesLens } from '../../src/formats/hermes/lens.js';
import type { HermesMessage } from '../../src/formats/hermes/types.js';
import { FIXTURES } from '../fixtures/formats/hermes.js';
import { checkHermes } from '../helpers/hermes-checker.js';

const counter = createTokenCounter();

const user = (content: string): HermesMessage => ({ role: 'user', content });
const say = (content: string): HermesMessage => ({ role: 'assistant', content });
const block = (name: string, args: object) => `<tool_call>\n${JSON.stringify({ name, arguments: args })}\n</tool_call>`;
const calls = (text: string, ...blocks: string[]): HermesMessage => say((text !== '' ? `${text}\n` : '') + blocks.join('\n'));
const responses = (...contents: string[]): HermesMessage => user(contents.map((c) => `<tool_response>\n${c}\n</tool_response>`).join('\n'));

describe('the independent checker (self-test)', () => {
  test('accepts every fixture and flags each known-bad sequence', () => {
    for (const f of FIXTURES) expect(checkHermes(f.messages)).toEqual([]);
    expect(checkHermes([user('go'), calls('', block('a', {}), block('b', {})), responses('x')]).map((p) => p.what)).toEqual(['count']);
    expect(checkHermes([user('go'), responses('x')]).map((p) => p.what)).toEqual(['orphan']);
    expect(checkHermes([user('go'), calls('', block('a', {})), responses('x', 'y')]).map((p) => p.what)).toEqual(['count']);
    expect(checkHermes([user('go'), calls('', block('a', {})), say('no results')]).map((p) => p.what)).toEqual(['count']);
    expect(checkHermes([user('go'), say('<tool_call>\n{"name": "a"\n</tool_call>'), responses('x')]).map((p) => p.what)).toEqual(['malformed']);
    expect(checkHermes([{ role: 'system', content: 'x' }, say('hi')]).map((p) => p.what)).toEqual(['no-query']);
    expect(checkHermes([{ role: 'tool', content: 'x' }, user('q')]).map((p) => p.what)).toEqual(['shape']);
  });
});

describe('detection', () => {
  test('every fixture shows evidence of Hermes and of nothing else, and auto reads it as hermes', () => {
    for (const f of FIXTURES) {
      expect({ name: f.name, formats: [...evidenceIn(f.messages).keys()] }).toEqual({ name: f.name, formats: ['hermes'] });
      expect(compressContext(f.messages, { counter }).report.format).toBe('hermes');
    }
  });
});

describe('the issue: the Qwen-Agent session rendered as Hermes text', () => {
  /** List the tables, then three parallel read_query calls in one message, answered by one message of three blocks. */
  const session = (): HermesMessage[] => [
    { role: 'system', content: 'You are a data assistant with read-only SQL access.' },
    user('Which tables are there?'),
    calls('', block('list_tables', {})),
    responses(JSON.stringify({ tables: ['orders', 'users', 'items'], note: 'x '.repeat(400) })),
    say('There are three tables: orders, users and items.'),
    user('How many rows does each have?'),
    calls('I will count them.', block('read_query', { query: 'SELECT COUNT(*) FROM orders' }), block('read_query', { query: 'SELECT COUNT(*) FROM users' }), block('read_query', { query: 'SELECT COUNT(*) FROM items' })),
    responses('[{"COUNT(*)": 1203}]', '[{"COUNT(*)": 87}]', '[{"COUNT(*)": 455}]'),
    say('orders has 1,203 rows, users 87 and items 455.'),
  ];

  test('it reads three calls and three positional results, and needs no repair', () => {
    const history = session();
    expect(hermesLens.read(history[6]).calls.map((c) => c.arguments)).toEqual(['{"query":"SELECT COUNT(*) FROM orders"}', '{"query":"SELECT COUNT(*) FROM users"}', '{"query":"SELECT COUNT(*) FROM items"}']);
    expect(hermesLens.read(history[7])).toMatchObject({ kind: 'result', hasUserText: false, results: [{ content: '[{"COUNT(*)": 1203}]' }, { content: '[{"COUNT(*)": 87}]' }, { content: '[{"COUNT(*)": 455}]' }] });
    expect(validateMessages(history, 'hermes')).toEqual([]);
    expect(repairHistory(history, { format: 'hermes' }).actions).toEqual([]);
  });

  test('it compresses at a budget that forces a cut, without breaking a pair', () => {
    const history = session();
    const full = compressContext(history, { format: 'hermes', counter, keepLast: 0 }).report;
    let cuts = 0;
    for (let max = full.tokensBefore; max >= 1; max -= 7) {
      const { messages, report } = compressContext(history, { format: 'hermes', counter, keepLast: 0, maxContextTokens: max });
      expect(validateMessages(messages, 'hermes')).toEqual([]);
      expect(checkHermes(messages)).toEqual([]);
      const kept = (m: HermesMessage) => messages.includes(m);
      expect(kept(history[6])).toBe(kept(history[7]));
      expect(kept(history[2])).toBe(kept(history[3]));
      if (report.droppedCounts.budget > 0) cuts++;
      if (!report.overBudget) expect(report.tokensAfter).toBeLessThanOrEqual(max);
    }
    expect(cuts).toBeGreaterThan(0);
    const tail = history.slice(5);
    const floor = counter.requestOverhead + counter.message(history[0], hermesLens) + tail.reduce((n, m) => n + counter.message(m, hermesLens), 0);
    const { messages } = compressContext(history, { format: 'hermes', counter, keepLast: 0, maxContextTokens: floor });
    expect(messages).toEqual([history[0], ...tail]);
    messages.forEach((m, k) => expect(m).toBe([history[0], ...tail][k]));
  });
});

describe('hermes profile: documented broken sequences', () => {
  const table: { name: string; broken: HermesMessage[]; fixed: HermesMessage[]; rule: string; index: number; id?: string; text: string }[] = [
    {
      name: 'two <tool_call> blocks, one <tool_response>',
      broken: [user('go'), calls('', block('a', {}), block('b', {})), responses('x'), say('ok')],
      fixed: [user('go'), calls('', block('a', {}), block('b', {})), responses('x', 'y'), say('ok')],
      rule: 'call-unanswered', index: 1, id: 'b', text: '2 <tool_call> block(s) are followed by 1 <tool_response> block(s)',
    },
    {
      name: 'calls with no results message at all',
      broken: [user('go'), calls('', block('a', {})), say('ok')],
      fixed: [user('go'), calls('', block('a', {})), responses('x'), say('ok')],
      rule: 'call-unanswered', index: 1, id: 'a', text: 'No result for: a.',
    },
    {
      name: 'a <tool_response> with no call before it',
      broken: [user('go'), responses('x'), say('ok')],
      fixed: [user('go'), say('ok')],
      rule: 'result-orphan', index: 1, text: '<tool_response> block 1 answers no call',
    },
    {
      name: 'one <tool_response> more than the calls',
      broken: [user('go'), calls('', block('a', {})), responses('x', 'y'), say('ok')],
      fixed: [user('go'), calls('', block('a', {})), responses('x'), say('ok')],
      rule: 'result-duplicate', index: 2, id: 'a', text: '<tool_response> block 2 is one more than the 1 <tool_call> block(s) of messages[1]',
    },
    {
      name: 'results split over two user messages',
      broken: [user('go'), calls('', block('a', {}), block('b', {})), responses('x'), responses('y'), say('ok')],
      fixed: [user('go'), calls('', block('a', {}), block('b', {})), responses('x', 'y'), say('ok')],
      rule: 'results-split', index: 3, id: 'a', text: 'split over several user messages',
    },
    {
      name: 'no genuine user message (Qwen3 template)',
      broken: [{ role: 'system', content: 'be brief' }, calls('', block('a', {})), responses('x'), say('ok')],
      fixed: [{ role: 'system', content: 'be brief' }, user('go'), calls('', block('a', {})), responses('x'), say('ok')],
      rule: 'no-user-query', index: 3, text: 'No user query found in messages.',
    },
  ];

  test.each(table)('$name: rejected as $rule, then the fixed form passes', ({ broken, fixed, rule, index, id, text }) => {
    const v = validateMessages(broken, 'hermes');
    const hit = v.find((x) => x.rule === rule);
    expect(hit).toMatchObject({ index });
    if (id !== undefined) expect(hit!.id).toBe(id);
    expect(hit!.message).toContain(text);
    expect(validateMessages(fixed, 'hermes')).toEqual([]);
    expect(checkHermes(broken)).not.toEqual([]);
    expect(checkHermes(fixed)).toEqual([]);
  });

  test.each([
    ['a <tool_call> that is never closed', say('ok\n<tool_call>\n{"name": "a", "arguments": {}}'), 3, '<tool_call> is opened and never closed with </tool_call>'],
    ['JSON that does not parse', say('<tool_call>\n{"name": "a", "arguments": {\n</tool_call>'), 0, 'its JSON does not parse ('],
    ['a call without a name', say('x <tool_call>\n{"arguments": {}}\n</tool_call>'), 2, 'its JSON has no "name" string (got no name)'],
    ['a second <tool_call> before the first closes', say('<tool_call>\n{"name": "a"}\n<tool_call>\n{"name": "b"}\n</tool_call>'), 0, 'another <tool_call> opens at character 26'],
  ])('malformed tags are rejected, not guessed at: %s', (_label, bad, offset, why) => {
    const history = [user('go'), bad];
    expect(() => validateMessages(history, 'hermes')).toThrow(InputError);
    try {
      compressContext(history, { format: 'hermes' });
      throw new Error('no error');
    } catch (e) {
      expect(e).toBeInstanceOf(InputError);
      const message = (e as Error).message;
      expect(message).toContain('messages[1].content');
      expect(message).toContain(`malformed <tool_call> block at character ${offset}: ${why}`);
      expect(message).toContain('fix or remove it, ctxfold does not guess at tool calls');
    }
  });

  test('a <tool_response> opened and not closed is rejected too', () => {
    expect(hermesLens.problem(user('<tool_response>\nx\n</tool_response>\n<tool_response>\ny'))).toEqual({
      field: '.content',
      rule: 'malformed <tool_response> block at character 35: <tool_response> is opened and never closed with </tool_response>; fix or remove it, ctxfold does not guess at tool results',
    });
  });
});

describe('the Hermes lens', () => {
  test('reads text around the blocks, arguments exactly as written, results by position', () => {
    const m = say('<think>\nplan\n</think>\n\nLet me look.\n<tool_call>\n{"name": "f", "arguments": {"a": [1, 2],  "b": "x"}}\n</tool_call>\n<tool_call>\n{"name": "g", "arguments": "{\\"q\\": 1}"}\n</tool_call>\n<tool_call>\n{"name": "h"}\n</tool_call>');
    expect(hermesLens.read(m)).toMatchObject({
      kind: 'assistant',
      text: '<think>\nplan\n</think>\n\nLet me look.',
      calls: [{ name: 'f', arguments: '{"a": [1, 2],  "b": "x"}' }, { name: 'g', arguments: '{"q": 1}' }, { name: 'h', arguments: '' }],
    });
    expect(hermesLens.read(m).calls[0].id).toBeUndefined();
    expect(hermesLens.read(user('<tool_response>\n\n</tool_response>\n<tool_response>\nb\nc\n</tool_response>'))).toMatchObject({ kind: 'result', role: 'tool', text: '', hasUserText: false, results: [{ content: '' }, { content: 'b\nc' }] });
    expect(hermesLens.read(user('<tool_response>\nr\n</tool_response>\n\nand thanks'))).toMatchObject({ kind: 'user', text: 'and thanks', hasUserText: true, results: [{ content: 'r' }] });
    expect(hermesLens.read(user('plain'))).toMatchObject({ kind: 'user', results: [] });
    expect(hermesLens.read({ role: 'system', content: '<tool_response>x</tool_response>' })).toMatchObject({ kind: 'system', results: [] });
  });

  test('result-level edits keep the other blocks, the user\'s text and every other field', () => {
    const m: HermesMessage = { role: 'user', content: '<tool_response>\na\n</tool_response>\n<tool_response>\nb\n</tool_response>\n\nnote', name: 'kept' };
    const frozen = structuredClone(m);
    expect(hermesLens.collapseResult(m, 1, '[cleared]')).toEqual({ ...frozen, content: '<tool_response>\na\n</tool_response>\n<tool_response>\n[cleared]\n</tool_response>\n\nnote' });
    expect(hermesLens.removeResult(m, 0)).toEqual({ ...frozen, content: '<tool_response>\nb\n</tool_response>\n\nnote' });
    expect(hermesLens.removeResult(m, 1)).toEqual({ ...frozen, content: '<tool_response>\na\n</tool_response>\n\nnote' });
    expect(hermesLens.removeResult(responses('only'), 0)).toBeUndefined();
    expect(hermesLens.removeResult(user('<tool_response>\nonly\n</tool_response>\nnote'), 0)).toEqual(user('note'));
    expect(hermesLens.addResults!(m, [{ name: 'x', arguments: '{}' }], 'err')).toEqual({ ...frozen, content: '<tool_response>\na\n</tool_response>\n<tool_response>\nb\n</tool_response>\n<tool_response>\nerr\n</tool_response>\n\nnote' });
    expect(hermesLens.addResults!(user('plain'), [{ name: 'x', arguments: '{}' }], 'err')).toBeUndefined();
    expect(hermesLens.missingResults([{ name: 'x', arguments: '{}' }, { name: 'y', arguments: '{}' }], 'err')).toEqual([responses('err', 'err')]);
    expect(hermesLens.rekeyResult(m, 0, { id: 'z', name: 'x', arguments: '{}' })).toBe(m);
    expect(hermesLens.rekeyCall(m, 0, 'z')).toBe(m);
    expect(m).toEqual(frozen);
  });

  test('a summary never reads as a call or a result', () => {
    const s = hermesLens.summaryMessage('called <tool_call> and got <tool_response>x</tool_response>', 'user');
    expect(s).toEqual({ role: 'user', content: 'called [tool_call] and got [tool_response]x[/tool_response]' });
    expect(hermesLens.read(s)).toMatchObject({ kind: 'user', results: [], calls: [] });
  });

  test('problem() rejects what is not Hermes text', () => {
    expect(hermesLens.problem({ role: 'tool', content: 'x' })).toMatchObject({ field: '.role', rule: expect.stringContaining('<tool_response> blocks') });
    expect(hermesLens.problem({ role: 'user', content: [{ type: 'text', text: 'x' }] })).toMatchObject({ field: '.content' });
    expect(hermesLens.problem({ role: 'assistant', content: '', tool_calls: [] })).toMatchObject({ field: '.tool_calls' });
    for (const f of FIXTURES) for (const m of f.messages) expect(hermesLens.problem(m)).toBeUndefined();
  });

  test('one <tool_response> too many beside real ones is removed by compressContext', () => {
    const history = [user('go'), calls('', block('a', {})), responses('x', 'one too many'), say('ok')];
    const { messages, report } = compressContext(history, { format: 'hermes', counter });
    expect(report.repaired.map((a) => a.action)).toEqual(['removed-duplicate']);
    expect(messages[2]).toEqual(responses('x'));
    expect(validateMessages(messages, 'hermes')).toEqual([]);
  });

  test('the user wrote while the tools ran: the response blocks go first into the user message, before the user\'s words', () => {
    const history = [user('go'), calls('', block('a', {}), block('b', {})), user('wait, also check c'), responses('x', 'y'), say('ok')];
    const r = repairHistory(history, { format: 'hermes' });
    expect(r.actions.map((a) => [a.action, a.index])).toEqual([['moved-result', 3]]);
    expect(r.messages).toEqual([user('go'), history[1], user('<tool_response>\nx\n</tool_response>\n<tool_response>\ny\n</tool_response>\n\nwait, also check c'), say('ok')]);
    expect(checkHermes(r.messages)).toEqual([]);
    // A note after the blocks stays after the user's words.
    const noted = repairHistory([user('go'), history[1], user('wait'), user('<tool_response>\nx\n</tool_response>\n<tool_response>\ny\n</tool_response>\n\nthanks')], { format: 'hermes' });
    expect(noted.messages[2]).toEqual(user('<tool_response>\nx\n</tool_response>\n<tool_response>\ny\n</tool_response>\n\nwait\n\nthanks'));
    expect(checkHermes(noted.messages)).toEqual([]);
    // Position is the only pairing Hermes has: with fewer (or more) responses than calls, nothing
    // says which call each answers; words before the blocks are not a note after them: the old rule.
    for (const late of [responses('x'), responses('x', 'y', 'z'), user('see:\n<tool_response>\nx\n</tool_response>\n<tool_response>\ny\n</tool_response>')]) {
      const old = repairHistory([user('go'), history[1], user('wait'), late, say('ok')], { format: 'hermes' });
      expect(old.actions.map((a) => a.action)).not.toContain('moved-result');
    }
  });

  test('repair adds error blocks to the results message and removes blocks that answer nothing', () => {
    const history = [user('go'), calls('', block('a', {}), block('b', {}), block('c', {})), responses('x'), say('ok'), user('more'), responses('stray')];
    const r = repairHistory(history, { format: 'hermes' });
    expect(r.actions.map((a) => [a.action, a.index])).toEqual([['added-result', 1], ['added-result', 1], ['removed-orphan', 5]]);
    expect(r.messages[2].content).toBe('<tool_response>\nx\n</tool_response>\n<tool_response>\nError: this tool call produced no result (the result was missing from the history).\n</tool_response>\n<tool_response>\nError: this tool call produced no result (the result was missing from the history).\n</tool_response>');
    expect(r.messages).toHaveLength(5);
    expect(validateMessages(r.messages, 'hermes')).toEqual([]);
  });
});

describe('token counting: a 5,000-word tool result is counted, not 0', () => {
  const words = Array.from({ length: 5000 }, (_, k) => ['alpha', 'beta', 'gamma', 'delta', 'rows', 'value'][k % 6]).join(' ');
  const history: HermesMessage[] = [
    { role: 'system', content: 'You are a data assistant.' },
    user('Dump the table.'),
    calls('', block('read_query', { query: 'SELECT * FROM t' })),
    responses(words),
    say('Here it is.'),
  ];
  /** What the provider bills: each message's whole text (tags included), 3 + 1 per message, 3 per request. */
  const direct = () => history.reduce((n, m) => n + 4 + counter.text(m.content), counter.requestOverhead);

  test.each(['auto', 'hermes'] as const)('format %s: detected as hermes, tokensBefore within 2% of a direct count, nothing dropped', (format) => {
    const { messages, report } = compressContext(history, { format, counter });
    expect(report.format).toBe('hermes');
    expect(report.tokensBefore).toBeGreaterThan(5000);
    expect(Math.abs(report.tokensBefore - direct()) / direct()).toBeLessThan(0.02);
    expect(messages).toEqual(history);
    expect(report.droppedCounts).toEqual({ summarized: 0, budget: 0 });
  });
});

