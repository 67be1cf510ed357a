import { describe, expect, test } from '@jest/globals';
import { hermesLens } from '../../src/formats/hermes/lens.js';
import fc from 'fast-check';
import { compressContext, createTokenCounter } from '../../src/index.js';
import { evidenceIn } from '../../src/formats/evidence.js';
import { FIXTURES } from '../fixtures/formats/hermes.js';
import { formatPropertyParams } from '../helpers/property-runs.js';

/**
 * Hermes tags written in prose are not tool traffic. With format auto, a plain chat that asks how
 * Hermes tool calling works, quotes a `<tool_response>`, or shows a `<tool_call>` example (inline or
 * in a code fence, its JSON valid or not) is planned as the plain chat it is: it is never an error,
 * and every kept message is the caller's own object, unchanged. Hermes is detected only from a call
 * turn: an assistant message ending in `<tool_call>` blocks answered by a user message opening
 * with `<tool_response>` blocks.
 */

const counter = createTokenCounter();
type Message = { role: string; content: string };

/** Runs format auto and checks the view keeps the caller's own objects, in order, unchanged, and repairs nothing. */
function expectPlanned(messages: Message[], maxContextTokens?: number, keepLast?: number) {
  const frozen = structuredClone(messages);
  const { messages: view, report } = compressContext(messages, { counter, maxContextTokens, keepLast });
  expect(report.format).toBe('openai');
  expect(report.repaired).toEqual([]);
  expect(report.collapsed).toEqual([]);
  let from = 0;
  for (const m of view) {
    const at = messages.indexOf(m as Message, from);
    expect(at).toBeGreaterThanOrEqual(from);
    expect(m).toEqual(frozen[at]);
    from = at + 1;
  }
  expect(messages).toEqual(frozen);
  return view;
}

describe('Hermes tags in prose, format auto', () => {
  test('a user question quoting <tool_response> is kept as written, not repaired as an orphan result', () => {
    const messages = [{ role: 'user', content: 'What is <tool_response>x</tool_response>?' }, { role: 'assistant', content: 'A tag.' }, { role: 'user', content: 'ok' }];
    expect([...evidenceIn(messages).keys()]).toEqual([]);
    const view = expectPlanned(messages, 1000);
    expect(view).toHaveLength(3);
    view.forEach((m, i) => expect(m).toBe(messages[i]));
  });

  test('an answer showing a <tool_call> example (inline with placeholder JSON, or in a code fence) is a plain chat, not an error', () => {
    const examples = [
      'The model writes <tool_call>{...}</tool_call> around a JSON object.',
      'It looks like <tool_call>{"name": "get_weather", "arguments": {"city": "Paris"}}</tool_call> in the reply.',
      'Here is one:\n```xml\n<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>\n```',
      'A broken one:\n```\n<tool_call>\n{"name": "get_weather", "arguments": {\n</tool_call>\n```\nThe JSON never closes.',
      'An opening <tool_call> tag with no closing tag is an error in that format.',
    ];
    for (const example of examples) {
      const messages = [
        { role: 'system', content: 'You help with prompt formats.' },
        { role: 'user', content: 'How does the Hermes format mark a tool call, and what comes back in <tool_response>?' },
        { role: 'assistant', content: example },
        { role: 'user', content: '<tool_response> holds the result, then? Thanks.' },
      ];
      expect({ example, found: [...evidenceIn(messages).keys()] }).toEqual({ example, found: [] });
      const view = expectPlanned(messages, 1000);
      expect(view).toHaveLength(4);
    }
  });

  test('a genuine Hermes history with a user quoting the tags in prose is still Hermes', () => {
    const history = [
      { role: 'user', content: 'Why do your replies sometimes start with <tool_call>? Anyway, what is the weather in Paris?' },
      { role: 'assistant', content: 'Let me check.\n<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>' },
      { role: 'user', content: '<tool_response>\n{"sky": "sun"}\n</tool_response>' },
      { role: 'assistant', content: 'It is sunny in Paris. I start a reply that way when I call one of your tools.' },
    ];
    expect([...evidenceIn(history).entries()]).toEqual([['hermes', [{ format: 'hermes', index: 2, what: expect.stringContaining('<tool_response>') }]]]);
    const { messages, report } = compressContext(history, { counter });
    expect(report.format).toBe('hermes');
    expect(report.repaired).toEqual([]);
    messages.forEach((m, i) => expect(m).toBe(history[i]));
    for (const f of FIXTURES) expect(compressContext(f.messages, { counter }).report.format).toBe('hermes');
  });

  test('in a genuine Hermes history, a user sentence quoting a <tool_response> block (or an unclosed tag) after prose is the user\'s words, not a result', () => {
    const call = { role: 'assistant', content: 'Let me check.\n<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>' };
    const answer = { role: 'user', content: '<tool_response>\n{"sky": "sun"}\n</tool_response>' };
    for (const quote of ['What does <tool_response>\nx\n</tool_response> mean in your replies?', 'And what is a <tool_response> tag without its end?']) {
      const history = [{ role: 'user', content: 'Weather in Paris?' }, call, answer, { role: 'assistant', content: 'Sunny.' }, { role: 'user', content: quote }];
      const { messages, report } = compressContext(history, { counter });
      expect(report.format).toBe('hermes');
      expect(report.repaired).toEqual([]);
      messages.forEach((m, i) => expect(m).toBe(history[i]));
      expect(hermesLens.read(history[4] as never)).toMatchObject({ kind: 'user', results: [] });
    }
    // Blocks that lead the message are results, and the words after them are the user's.
    expect(hermesLens.read({ role: 'user', content: '<tool_response>\nr\n</tool_response>\nand thanks' })).toMatchObject({ kind: 'user', results: [{ content: 'r' }], text: 'and thanks' });
  });

  test('a lone <tool_response> message with no call turn before it, or calls followed by prose, is not evidence', () => {
    expect([...evidenceIn([{ role: 'user', content: 'go' }, { role: 'user', content: '<tool_response>\nx\n</tool_response>' }]).keys()]).toEqual([]);
    const example = { role: 'assistant', content: 'Example:\n<tool_call>\n{"name": "f", "arguments": {}}\n</tool_call>' };
    expect([...evidenceIn([{ role: 'user', content: 'show me' }, example, { role: 'user', content: 'nice, and <tool_response>?' }]).keys()]).toEqual([]);
    expect([...evidenceIn([{ role: 'user', content: 'show me' }, example, { role: 'user', content: '<tool_response>\nr\n</tool_response>' }]).keys()]).toEqual(['hermes']);
  });
});

/** Hermes-looking fragments: tags alone, blocks with valid, placeholder or broken JSON, unclosed blocks. */
const fragmentArb = fc.oneof(
  fc.constantFrom('<tool_call>', '</tool_call>', '<tool_response>', '</tool_response>', '<tool_call>{...}</tool_call>', '<tool_call>\n{"name": "a"\n</tool_call>', '<tool_response>\nunclosed'),
  fc.tuple(fc.constantFrom('f', 'get_weather', ''), fc.constantFrom('{}', '{"q": 1}', '"x"', '[1]')).map(([name, args]) => `<tool_call>\n{"name": ${JSON.stringify(name)}, "arguments": ${args}}\n</tool_call>`),
  fc.string({ maxLength: 12 }).map((s) => `<tool_call>${s}</tool_call>`),
  fc.string({ maxLength: 30 }).map((s) => `<tool_response>\n${s}\n</tool_response>`),
);
const wordsArb = fc.array(fc.constantFrom('the', 'tag', 'looks', 'like', 'this', 'example', 'why', 'does', 'it', 'fail', 'ok'), { minLength: 1, maxLength: 8 }).map((w) => w.join(' '));
/** A text with fragments in it, each inline in a sentence or in a code fence, always with prose around. */
const textArb = fc.tuple(wordsArb, fc.array(fc.tuple(fragmentArb, fc.boolean(), wordsArb), { maxLength: 3 })).map(([head, parts]) =>
  parts.reduce((text, [fragment, fenced, tail]) => (fenced ? `${text}\n\`\`\`xml\n${fragment}\n\`\`\`\n${tail}` : `${text} ${fragment} ${tail}`), head),
);
const chatArb = fc.tuple(fc.option(textArb, { nil: undefined }), fc.array(textArb, { minLength: 1, maxLength: 12 })).map(([system, texts]) => [
  ...(system === undefined ? [] : [{ role: 'system', content: system }]),
  ...texts.map((content, k) => ({ role: k % 2 === 0 ? 'user' : 'assistant', content })),
]);

describe('property: plain chats quoting Hermes tags', () => {
  test('format auto never throws, repairs nothing, and keeps the caller\'s objects unchanged at any budget', () => {
    fc.assert(fc.property(chatArb, fc.option(fc.integer({ min: 1, max: 600 }), { nil: undefined }), fc.integer({ min: 0, max: 4 }), (messages, max, keepLast) => {
      expect([...evidenceIn(messages).keys()]).toEqual([]);
      expectPlanned(messages, max, keepLast);
    }), formatPropertyParams());
  });
});
