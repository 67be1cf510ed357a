import { CliError, describeFailure, oneLine } from '../src/cli/cli-error.js';
import { CtxfoldError, InputError } from '../src/errors.js';
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { compressContext, type CompressOptions } from '../src/index.js';
import { validateMessages } from '../src/formats/profiles.js';
import { openaiProfile } from '../src/formats/openai-chat/profile.js';
import { SUPPORTED_FORMATS } from '../src/formats/registry.js';
import type { OpenAIChatMessage } from '../src/formats/openai-chat/types.js';
import { CORPUS_PATH, corpusDescribe, loadCorpus } from './helpers/corpus.js';
import { pageExchangesChat } from './helpers/tool-rounds.js';

/** These tests run the built CLI as a child process: `npm run build` (or `npm test`) first. */
const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const CLI = join(root, 'dist', 'src', 'cli', 'main.js');

interface Run {
  status: number | null;
  stdout: string;
  stderr: string;
}

function ctxfold(args: readonly string[], stdin = '', env: Record<string, string> = {}): Run {
  const r = spawnSync(process.execPath, [CLI, ...args], {
    input: stdin,
    encoding: 'utf8',
    cwd: root,
    env: { ...process.env, CTXFOLD_DEBUG: '', ...env },
    maxBuffer: 256 * 1024 * 1024,
    timeout: 60_000,
  });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

/** `ctxfold` without blocking, so independent runs can overlap (each pays the tokenizer's start-up). */
function ctxfoldAsync(args: readonly string[], stdin = ''): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CLI, ...args], { cwd: root, env: { ...process.env, CTXFOLD_DEBUG: '' }, timeout: 60_000 });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => { stdout += d; });
    child.stderr.setEncoding('utf8').on('data', (d: string) => { stderr += d; });
    child.on('error', reject);
    child.on('close', (status) => resolve({ status, stdout, stderr }));
    child.stdin.end(stdin);
  });
}

/** Runs the jobs with at most `limit` at a time; results in job order. */
async function limited<T>(jobs: readonly (() => Promise<T>)[], limit: number): Promise<T[]> {
  const results: T[] = new Array(jobs.length);
  let next = 0;
  const worker = async () => {
    while (next < jobs.length) {
      const k = next++;
      results[k] = await jobs[k]();
    }
  };
  await Promise.all(Array.from({ length: limit }, worker));
  return results;
}

const json = (value: unknown) => JSON.parse(JSON.stringify(value)) as unknown;

const dir = mkdtempSync(join(tmpdir(), 'ctxfold-cli-'));
const file = (name: string, text: string) => {
  const path = join(dir, name);
  writeFileSync(path, text);
  return path;
};

beforeAll(() => {
  if (!existsSync(CLI)) throw new Error(`${CLI} is missing: run npm run build before these tests`);
});
afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
});

/**
 * A deterministic tool-calling chat: a system prompt, then rounds of question, call, result and
 * answer. Results come in three sizes (short, ~600 chars, ~3000 chars) so that each planning flag
 * (budget, collapse threshold, its default) changes the outcome.
 */
function toolChat(rounds: number): OpenAIChatMessage[] {
  const out: OpenAIChatMessage[] = [{ role: 'system', content: 'You are a support agent. Use the tools to look things up. 用户用中文提问时请用中文回答。' }];
  for (let i = 0; i < rounds; i++) {
    const size = [3000, 600, 60][i % 3];
    let result = '';
    for (let k = 0; result.length < size; k++) result += `item AF${100 + i * 7 + k} seat ${k}${'ABCDEF'[k % 6]} status ${k % 2 ? 'open' : 'held'}; `;
    out.push({ role: 'user', content: `Round ${i}: what is the status of order R${1000 + i}?` });
    out.push({ role: 'assistant', content: null, tool_calls: [{ id: `call_${i}`, type: 'function', function: { name: 'get_order', arguments: `{"id":"R${1000 + i}"}` } }] });
    out.push({ role: 'tool', tool_call_id: `call_${i}`, content: result });
    out.push({ role: 'assistant', content: `Order R${1000 + i} is confirmed; ${i + 1} seats checked.` });
  }
  out.push({ role: 'user', content: 'Thanks. Anything else I should know?' });
  return out;
}

/** A history the provider rejects: a tool message that answers no call. */
const orphanResult: OpenAIChatMessage[] = [
  { role: 'system', content: 'be brief' },
  { role: 'user', content: 'hi' },
  { role: 'tool', tool_call_id: 'call_x', content: 'a result nobody asked for' },
  { role: 'assistant', content: 'hello' },
];
const goodHistory: OpenAIChatMessage[] = toolChat(2);

describe('ctxfold compress: shapes', () => {
  const chat = toolChat(12);

  test('an array in gives { messages, ctxfold } out, equal to compressContext', () => {
    const r = ctxfold(['compress', '--max-context-tokens', '1500', file('array.json', JSON.stringify(chat))]);
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
    const out = JSON.parse(r.stdout);
    expect(Object.keys(out)).toEqual(['messages', 'ctxfold']);
    const lib = compressContext(chat, { maxContextTokens: 1500 });
    expect(out.messages).toEqual(json(lib.messages));
    expect(out.ctxfold).toEqual(json(lib.report));
    expect(out.messages.length).toBeLessThan(chat.length);
    expect(out.ctxfold.tokensAfter).toBeLessThanOrEqual(1500);
  });

  test('an object in keeps its other fields, in order, replaces messages and adds ctxfold', () => {
    const input = { id: 'chat-7', messages: chat, meta: { user: 'u1' } };
    const r = ctxfold(['compress', '--max-context-tokens', '1500', file('object.json', JSON.stringify(input))]);
    expect(r.status).toBe(0);
    const out = JSON.parse(r.stdout);
    expect(Object.keys(out)).toEqual(['id', 'messages', 'meta', 'ctxfold']);
    expect(out.id).toBe('chat-7');
    expect(out.meta).toEqual({ user: 'u1' });
    expect(out.messages).toEqual(json(compressContext(chat, { maxContextTokens: 1500 }).messages));
    expect(out.ctxfold.messagesBefore).toBe(chat.length);
  });

  test('JSONL in gives one line per record, in order; blank lines are skipped', () => {
    const records = [toolChat(1), toolChat(12), toolChat(5)].map((messages, k) => ({ id: `r${k}`, messages }));
    const text = `${JSON.stringify(records[0])}\n\n${JSON.stringify(records[1])}\r\n   \n${JSON.stringify(records[2])}\n\n`;
    const r = ctxfold(['compress', '--max-context-tokens', '1500', '--pretty', file('three.jsonl', text)]);
    expect(r.status).toBe(0);
    const lines = r.stdout.split('\n');
    expect(lines.pop()).toBe('');
    expect(lines).toHaveLength(3); // --pretty is ignored for JSONL: still one line per record
    const out = lines.map((l) => JSON.parse(l));
    expect(out.map((o) => o.id)).toEqual(['r0', 'r1', 'r2']);
    out.forEach((o, k) => {
      expect(o.messages).toEqual(json(compressContext(records[k].messages, { maxContextTokens: 1500 }).messages));
      expect(o.ctxfold.messagesBefore).toBe(records[k].messages.length);
    });
  });

  test('a JSONL line may also be a bare array of messages', () => {
    const text = `${JSON.stringify(goodHistory)}\n${JSON.stringify({ messages: goodHistory })}\n`;
    const r = ctxfold(['compress'], text);
    expect(r.status).toBe(0);
    const out = r.stdout.trim().split('\n').map((l) => JSON.parse(l));
    expect(out.map((o) => Object.keys(o))).toEqual([['messages', 'ctxfold'], ['messages', 'ctxfold']]);
  });

  test('standard input via "-" and via no FILE give the same output as the file', () => {
    const text = JSON.stringify({ messages: chat });
    const fromFile = ctxfold(['compress', '--max-context-tokens', '1500', file('stdin.json', text)]);
    const dash = ctxfold(['compress', '--max-context-tokens', '1500', '-'], text);
    const none = ctxfold(['compress', '--max-context-tokens', '1500'], text);
    expect(fromFile.status).toBe(0);
    expect(dash).toEqual(fromFile);
    expect(none).toEqual(fromFile);
  });

  test('--pretty indents a single JSON document and changes nothing else', () => {
    const text = JSON.stringify({ messages: goodHistory });
    const compact = ctxfold(['compress'], text);
    const pretty = ctxfold(['compress', '--pretty'], text);
    expect(compact.stdout.trim().split('\n')).toHaveLength(1);
    expect(pretty.stdout).toMatch(/^\{\n {2}"messages": \[\n {4}\{/);
    expect(JSON.parse(pretty.stdout)).toEqual(JSON.parse(compact.stdout));
  });
});

describe('ctxfold compress: each flag reaches compressContext', () => {
  const chat = toolChat(12);
  // Every case but the last must give a different result: each flag changes something.
  const cases: [string[], CompressOptions][] = [
    [[], {}],
    [['--max-context-tokens', '1500'], { maxContextTokens: 1500 }],
    [['--max-context-tokens', '1500', '--keep-first', '5'], { maxContextTokens: 1500, keepFirst: 5 }],
    [['--max-context-tokens=1500', '--keep-last', '1'], { maxContextTokens: 1500, keepLast: 1 }],
    [['--compression-threshold-tokens', '500'], { compressionThresholdTokens: 500 }],
    [['--max-context-tokens', '1500', '--tool-output-trim', '100'], { maxContextTokens: 1500, toolOutputTrim: { minChars: 100 } }],
    // No value: the FILE that follows is the input, not CHARS.
    [['--max-context-tokens', '1500', '--tool-output-trim'], { maxContextTokens: 1500, toolOutputTrim: true }],
    [['--max-context-tokens', '1500', '--low-water-mark', '1'], { maxContextTokens: 1500, lowWaterMark: 1 }],
    [['--model', 'gpt-4'], { model: 'gpt-4' }],
    [['--format', 'openai'], { format: 'openai' }],
  ];
  const input = file('flags.json', JSON.stringify(chat));
  let runs: Run[] = [];
  beforeAll(async () => {
    runs = await limited(cases.map(([args]) => () => ctxfoldAsync(['compress', ...args, input])), 3);
  });

  test.each(cases.map((c, k) => [...c, k] as const))('%j', (_args, options, k) => {
    const r = runs[k];
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
    const out = JSON.parse(r.stdout);
    const lib = compressContext(chat, options);
    expect(out.messages).toEqual(json(lib.messages));
    expect(out.ctxfold).toEqual(json(lib.report));
  });

  test('every flag changed the outcome (so none is silently ignored)', () => {
    const outputs = runs.map((r) => r.stdout);
    expect(outputs).toHaveLength(cases.length);
    const distinct = new Set(outputs.slice(0, -1));
    expect(distinct.size).toBe(cases.length - 1);
    expect(outputs.at(-1)).toBe(outputs[0]); // --format openai is what auto detects
  });

  test('--low-water-mark: a lower mark folds deeper, so the next turns append to the same prefix; each view equals compressContext\'s', () => {
    const pages = pageExchangesChat() as unknown as OpenAIChatMessage[];
    const path = file('pages.json', JSON.stringify(pages));
    const tokens = ['1', '0.7', '.5'].map((mark) => {
      const r = ctxfold(['compress', '--max-context-tokens', '2000', `--low-water-mark=${mark}`, path]);
      expect(r.stderr).toBe('');
      expect(r.status).toBe(0);
      const out = JSON.parse(r.stdout);
      const lib = compressContext(pages, { maxContextTokens: 2000, lowWaterMark: Number(mark) });
      expect(out).toEqual({ messages: json(lib.messages), ctxfold: json(lib.report) });
      expect(validateMessages(out.messages, openaiProfile)).toEqual([]);
      expect(out.ctxfold.tokensAfter).toBeLessThanOrEqual(2000);
      return out.ctxfold.tokensAfter as number;
    });
    expect(tokens[0]).toBeGreaterThan(tokens[1]);
    expect(tokens[1]).toBeGreaterThan(tokens[2]);
  });

  test('--tool-output-trim collapses the bulky results and the view stays valid', () => {
    const r = ctxfold(['compress', '--max-context-tokens', '1500', '--tool-output-trim', '100', input]);
    const out = JSON.parse(r.stdout);
    expect(out.ctxfold.collapsed.length).toBeGreaterThan(0);
    expect(validateMessages(out.messages, openaiProfile)).toEqual([]);
  });

  test('repair is on by default; --no-repair leaves a broken history as it is', () => {
    const text = JSON.stringify(orphanResult);
    const repaired = JSON.parse(ctxfold(['compress'], text).stdout);
    expect(repaired.ctxfold.repaired.map((a: { action: string }) => a.action)).toEqual(['removed-orphan']);
    expect(validateMessages(repaired.messages, openaiProfile)).toEqual([]);
    const raw = ctxfold(['compress', '--no-repair'], text);
    expect(raw.status).toBe(0);
    const out = JSON.parse(raw.stdout);
    expect(out.ctxfold.repaired).toEqual([]);
    expect(out.messages).toEqual(orphanResult);
    const lib = compressContext(orphanResult, { repair: false });
    expect(out).toEqual({ messages: json(lib.messages), ctxfold: json(lib.report) });
  });
});

describe('ctxfold: bad input and usage exit 2 with one stderr line', () => {
  const good = JSON.stringify({ messages: goodHistory });
  const bot = JSON.stringify({ messages: [{ role: 'system', content: 's' }, { role: 'user', content: 'u' }, { role: 'bot', content: 'b' }] });
  const cases: [string, () => string[], string, string][] = [
    ['validate: unknown role', () => ['validate', '-'], bot, 'ctxfold: input line 1: messages[2].role: unknown role "bot"'],
    ['not JSON or JSONL', () => ['compress'], 'this is not json', 'ctxfold: input: not valid JSON (Unexpected token'],
    ['a JSON document broken on line 3', () => ['compress'], '[\n{"role":"user","content":"hi"}\n{"role":"user","content":"hi"}]', 'ctxfold: input: not valid JSON ('],
    ['empty input', () => ['compress'], ' \n\n', 'ctxfold: input: empty'],
    ['a JSON scalar', () => ['compress'], '42', 'ctxfold: input line 1: expected an array of messages or a request body with "messages", "contents" or "input", got number'],
    ['an object without messages', () => ['compress'], '{"id":"x"}', 'ctxfold: input line 1: missing field "messages" (or "contents" for Gemini, "input" for OpenAI Responses): expected a list of messages'],
    ['messages that are not an array', () => ['compress'], '{"messages":"hi"}', 'ctxfold: input line 1: messages: must be an array of messages, got string'],
    ['a message that is not an object', () => ['compress'], '[{"role":"user","content":"hi"}, 7]', 'ctxfold: input line 1: messages[1]: must be a message object'],
    ['--max-context-tokens abc', () => ['compress', '--max-context-tokens', 'abc'], good, 'ctxfold: --max-context-tokens must be a positive integer, got "abc"'],
    ['--max-context-tokens 0', () => ['compress', '--max-context-tokens', '0'], good, 'ctxfold: --max-context-tokens must be a positive integer, got "0"'],
    ['--max-context-tokens -5', () => ['compress', '--max-context-tokens', '-5'], good, 'ctxfold: --max-context-tokens must be a positive integer, got "-5"'],
    ['--max-context-tokens 1.5', () => ['compress', '--max-context-tokens=1.5'], good, 'ctxfold: --max-context-tokens must be a positive integer, got "1.5"'],
    ['--max-context-tokens with no value', () => ['compress', '--max-context-tokens'], good, 'ctxfold: --max-context-tokens needs a value (N)'],
    ['--keep-last x', () => ['compress', '--keep-last', 'x'], good, 'ctxfold: --keep-last must be a non-negative integer, got "x"'],
    ['--compression-threshold-tokens 0', () => ['compress', '--compression-threshold-tokens', '0'], good, 'ctxfold: --compression-threshold-tokens must be a positive integer, got "0"'],
    ['--low-water-mark 0', () => ['compress', '--low-water-mark', '0'], good, 'ctxfold: --low-water-mark must be a number above 0 and at most 1, got "0"'],
    ['--low-water-mark 1.5', () => ['compress', '--low-water-mark', '1.5'], good, 'ctxfold: --low-water-mark must be a number above 0 and at most 1, got "1.5"'],
    ['--low-water-mark=-0.5', () => ['compress', '--low-water-mark=-0.5'], good, 'ctxfold: --low-water-mark must be a number above 0 and at most 1, got "-0.5"'],
    ['--low-water-mark 70%', () => ['compress', '--low-water-mark', '70%'], good, 'ctxfold: --low-water-mark must be a number above 0 and at most 1, got "70%"'],
    ['--tool-output-trim=abc', () => ['compress', '--tool-output-trim=abc'], good, 'ctxfold: --tool-output-trim must be a non-negative integer, got "abc"'],
    ['--format palm', () => ['compress', '--format', 'palm'], good, `ctxfold: --format must be one of ${[...SUPPORTED_FORMATS, 'auto'].join(', ')}`],
    ['--pretty=yes', () => ['compress', '--pretty=yes'], good, 'ctxfold: --pretty takes no value, got "yes"'],
    ['an unknown option', () => ['compress', '--bogus'], good, 'ctxfold: unknown option --bogus'],
    ['a compress flag given to validate', () => ['validate', '--max-context-tokens', '5'], good, 'ctxfold: --max-context-tokens is not an option of validate'],
    ['an unknown command', () => ['squash'], good, 'ctxfold: unknown command: expected compress, validate, inspect or serve, got "squash"'],
    ['a misspelt option', () => ['compress', '--max-context-token', '5'], good, 'ctxfold: unknown option --max-context-token (did you mean --max-context-tokens?)'],
    ['a misspelt deprecated option: the hint names the flag to use now', () => ['compress', '--max-token', '5'], good, 'ctxfold: unknown option --max-token (did you mean --max-context-tokens?)'],
    ['a deprecated compress flag given to validate', () => ['validate', '--threshold', '5'], good, 'ctxfold: --threshold is not an option of validate'],
    ['a misspelt command', () => ['compres'], good, 'ctxfold: unknown command: expected compress, validate, inspect or serve, got "compres" (did you mean compress?)'],
    ['inspect without --html', () => ['inspect'], good, 'ctxfold: inspect needs --html FILE (the page to write; see ctxfold inspect --help)'],
    ['inspect with an LLM summarizer', () => ['inspect', '--html', join(dir, 'never.html'), '--summarizer', 'llm', '--compression-threshold-tokens', '10'], good, 'ctxfold: inspect runs offline: --summarizer must be none or extractive, got "llm"'],
    ['a misspelt inspect option', () => ['inspect', '--htm', 'x.html'], good, 'ctxfold: unknown option --htm (did you mean --html?)'],
    ['a compress-only flag given to inspect', () => ['inspect', '--pretty', '--html', 'x.html'], good, 'ctxfold: --pretty is not an option of inspect'],
    ['no command', () => [], good, 'ctxfold: missing command'],
    ['two files', () => ['compress', 'a.json', 'b.json'], good, 'ctxfold: expected at most one FILE, got "a.json" and "b.json"'],
    ['a missing file', () => ['compress', join(dir, 'nope.json')], '', `ctxfold: cannot read ${join(dir, 'nope.json')}: no such file`],
    ['a directory', () => ['validate', dir], '', `ctxfold: cannot read ${dir}: is a directory`],
  ];

  test.each(cases)('%s', (_name, args, stdin, expected) => {
    const r = ctxfold(args(), stdin);
    expect(r.status).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr.startsWith(expected)).toBe(true);
    expect(r.stderr.endsWith('\n')).toBe(true);
    expect(r.stderr.trimEnd().split('\n')).toHaveLength(1);
    expect(r.stderr).not.toMatch(/^\s*at /m);
  });

  test('an unexpected failure is one line and exit 70; the stack only with CTXFOLD_DEBUG=1', () => {
    const bug = new RangeError('something broke\ninside');
    const plain = describeFailure(bug, false);
    expect(plain).toEqual({ line: 'internal error: RangeError: something broke\ninside (set CTXFOLD_DEBUG=1 for the stack trace)', stack: undefined, exitCode: 70 });
    expect(oneLine(plain.line)).toBe('internal error: RangeError: something broke inside (set CTXFOLD_DEBUG=1 for the stack trace)');
    const debug = describeFailure(bug, true);
    expect(debug.exitCode).toBe(70);
    expect(debug.stack).toMatch(/^\s+at /m);
    // What the user can fix is never called internal.
    expect(describeFailure(new InputError('options.x', 'bad'), false)).toEqual({ line: 'options.x: bad', exitCode: 2 });
    // The CLI's own errors are ctxfold errors, as every error ctxfold throws.
    const usage = new CliError('--max-context-tokens must be a positive integer');
    expect(usage).toBeInstanceOf(CtxfoldError);
    expect({ name: usage.name, exitCode: usage.exitCode }).toEqual({ name: 'CliError', exitCode: 2 });
    expect(describeFailure(usage, false)).toEqual({ line: '--max-context-tokens must be a positive integer', exitCode: 2 });
    expect(oneLine('bad \u0007\u001b[31m input')).toBe('bad \\u0007\\u001b[31m input');
  });
});

describe('ctxfold validate', () => {
  test('a tool message with no preceding call: exit 1, the violation in ctxfold and on stderr, messages unchanged', () => {
    const r = ctxfold(['validate', file('orphan.json', JSON.stringify({ id: 'o', messages: orphanResult }))]);
    expect(r.status).toBe(1);
    const out = JSON.parse(r.stdout);
    expect(out.id).toBe('o');
    expect(out.messages).toEqual(orphanResult);
    expect(out.ctxfold.valid).toBe(false);
    expect(out.ctxfold.violations).toEqual(json(validateMessages(orphanResult, openaiProfile)));
    expect(out.ctxfold.violations.map((v: { index: number; rule: string }) => [v.index, v.rule])).toEqual([[2, 'result-orphan']]);
    expect(r.stderr).toContain('ctxfold: input line 1: result-orphan: messages[2]: tool result call_x answers no call');
  });

  test('a good history: exit 0, valid, no violations, nothing on stderr', () => {
    const r = ctxfold(['validate', '--pretty', '-'], JSON.stringify(goodHistory));
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
    expect(r.stdout).toContain('\n  "ctxfold": {\n    "valid": true');
    expect(JSON.parse(r.stdout)).toEqual({ messages: goodHistory, ctxfold: { valid: true, violations: [] } });
  });

  test('JSONL: one result per line, exit 1 when any line is broken, the broken line named', () => {
    const lines = [goodHistory, orphanResult, goodHistory].map((messages) => JSON.stringify({ messages }));
    const r = ctxfold(['validate'], lines.join('\n'));
    expect(r.status).toBe(1);
    const out = r.stdout.trim().split('\n').map((l) => JSON.parse(l));
    expect(out.map((o) => o.ctxfold.valid)).toEqual([true, false, true]);
    expect(r.stderr).toMatch(/^ctxfold: input line 2: result-orphan: /);
    expect(r.stderr).not.toContain('input line 1:');
    expect(r.stderr).not.toContain('input line 3:');
  });

  test('what compress sends out validates', () => {
    const compressed = ctxfold(['compress'], JSON.stringify(orphanResult));
    const r = ctxfold(['validate'], compressed.stdout);
    expect(r.status).toBe(0);
    expect(JSON.parse(r.stdout).ctxfold.valid).toBe(true);
  });
});

describe('ctxfold inspect', () => {
  test('a JSONL record that cannot be read is named on stderr and has no section; the page is written with the others, exit 2', () => {
    const out = join(dir, 'mixed.html');
    const text = `${JSON.stringify(goodHistory)}\nnot json\n${JSON.stringify({ messages: goodHistory })}\n`;
    const r = ctxfold(['inspect', '--html', out, file('mixed.jsonl', text)]);
    expect(r.status).toBe(2);
    expect(r.stderr.trimEnd().split('\n')).toEqual([
      expect.stringMatching(/^ctxfold: input line 2: not valid JSON/),
      'ctxfold: 1 of 3 records could not be read (each is named above, and has no section)',
    ]);
    expect(r.stdout).toMatch(/^ctxfold inspect: wrote .*mixed\.html: 2 histories, \d+ groups, \d+ bytes\n$/);
    const data = JSON.parse(/id="ctxfold-data">(.*?)<\/script>/s.exec(readFileSync(out, 'utf8'))![1]) as { histories: { label: string; messages: unknown[] }[] };
    expect(data.histories.map((h) => [h.label, h.messages.length])).toEqual([['input line 1', goodHistory.length], ['input line 3', goodHistory.length]]);
  });
});

describe('ctxfold help and version', () => {
  const flags = ['--max-context-tokens', '--keep-first', '--keep-last', '--keep-last-yields', '--low-water-mark', '--compression-threshold-tokens', '--tool-output-trim', '--model', '--format', '--no-repair', '--pretty', '--help', '-h', '--version'];

  test.each([[['--help']], [['-h']], [['help']]])('%j lists every flag, the shapes and the exit codes', (args) => {
    const r = ctxfold(args);
    expect(r.status).toBe(0);
    expect(r.stderr).toBe('');
    for (const flag of flags) expect(r.stdout).toContain(flag);
    expect(r.stdout).toContain('ctxfold compress [options] [FILE|-]');
    expect(r.stdout).toContain('ctxfold validate [options] [FILE|-]');
    expect(r.stdout).toContain('ctxfold inspect [options] [FILE|-] --html OUT.html');
    expect(r.stdout).toContain('an array cannot carry the report');
    expect(r.stdout).toContain('--tool-output-trim [CHARS]');
    expect(r.stdout).toContain(`--format FORMAT`);
    expect(r.stdout).toContain(`message format of the input: ${[...SUPPORTED_FORMATS, 'auto'].join(', ')}; auto detects it by evidence`);
    for (const code of ['0', '1', '2', '70']) expect(r.stdout).toMatch(new RegExp(`^ {2}${code} +\\S`, 'm'));
  });

  test('help states the defaults the library really applies', () => {
    const help = ctxfold(['compress', '--help']).stdout;
    const stated = (flag: string) => Number(new RegExp(`${flag} N .*\\[default: (\\d+)\\]`).exec(help)?.[1]);
    const keepFirst = stated('--keep-first');
    const keepLast = stated('--keep-last');
    const chat = toolChat(12);
    const byDefault = compressContext(chat, { maxContextTokens: 1500 }).report;
    expect(byDefault.headEnd).toBe(keepFirst); // here the first keep-first messages are whole groups
    expect(compressContext(chat, { maxContextTokens: 1500, keepFirst, keepLast }).report).toEqual(byDefault);
    expect(compressContext(chat, { maxContextTokens: 1500, keepLast: keepLast + 4 }).report.tailStart).toBeLessThan(byDefault.tailStart);
    const lowWaterMark = Number(/--low-water-mark X .*\[default: ([\d.]+)\]/.exec(help)?.[1]);
    expect(compressContext(chat, { maxContextTokens: 1500, lowWaterMark }).report).toEqual(byDefault);
  });

  test('command help lists only that command\'s flags', () => {
    const r = ctxfold(['validate', '--help']);
    expect(r.status).toBe(0);
    expect(r.stdout).toContain('--format');
    expect(r.stdout).toContain('--pretty');
    expect(r.stdout).not.toContain('--max-context-tokens');
    expect(ctxfold(['help', 'validate']).stdout).toBe(r.stdout);
  });

  test('--version prints the version in package.json', () => {
    const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { version: string };
    const r = ctxfold(['--version']);
    expect(r.status).toBe(0);
    expect(r.stdout).toBe(`${pkg.version}\n`);
  });
});

describe('ctxfold: one name per option, the library\'s, in kebab-case', () => {
  const chat = toolChat(12);
  const input = file('names.json', JSON.stringify(chat));
  const renamed: [string, string][] = [['--max-tokens', '--max-context-tokens'], ['--threshold', '--compression-threshold-tokens'], ['--trim-tool-output', '--tool-output-trim']];

  test('the old names still work, as the new ones do, and each prints one deprecation line naming the new flag, however often it is given', async () => {
    const [fresh, old] = await Promise.all([
      ctxfoldAsync(['compress', '--max-context-tokens', '1500', '--compression-threshold-tokens', '500', '--tool-output-trim', '100', input]),
      ctxfoldAsync(['compress', '--max-tokens', '1500', '--max-tokens=1500', '--threshold', '500', '--trim-tool-output', '100', input]),
    ]);
    expect(fresh.stderr).toBe('');
    expect(fresh.status).toBe(0);
    const lib = compressContext(chat, { maxContextTokens: 1500, compressionThresholdTokens: 500, toolOutputTrim: { minChars: 100 } });
    expect(JSON.parse(fresh.stdout)).toEqual({ messages: json(lib.messages), ctxfold: json(lib.report) });
    expect(old.status).toBe(0);
    expect(old.stdout).toBe(fresh.stdout);
    expect(old.stderr.trimEnd().split('\n')).toEqual(renamed.map(([was, now]) => `ctxfold: ${was} is deprecated; use ${now}`));
  });

  test('an old name\'s bad value is named as it was typed, in the one line of a usage error', () => {
    const r = ctxfold(['compress', '--max-tokens', 'abc'], JSON.stringify(goodHistory));
    expect(r.status).toBe(2);
    expect(r.stderr).toBe('ctxfold: --max-tokens must be a positive integer, got "abc"\n');
  });

  test.each([[['--help']], [['compress', '--help']], [['serve', '--help']]])('%j lists the new names only', (args) => {
    const r = ctxfold(args);
    expect(r.status).toBe(0);
    for (const [was, now] of renamed) {
      expect(r.stdout).toContain(now);
      expect(r.stdout).not.toMatch(new RegExp(`${was}\\b(?!-)`));
    }
  });
});

/** Lines of a child's standard output, as they arrive. */
function lineReader(stream: NodeJS.ReadableStream): () => Promise<string | undefined> {
  let buffered = '';
  let ended = false;
  const waiting: (() => void)[] = [];
  stream.setEncoding('utf8');
  stream.on('data', (d: string) => { buffered += d; waiting.splice(0).forEach((w) => w()); });
  stream.on('end', () => { ended = true; waiting.splice(0).forEach((w) => w()); });
  return async () => {
    for (;;) {
      const nl = buffered.indexOf('\n');
      if (nl !== -1) {
        const line = buffered.slice(0, nl);
        buffered = buffered.slice(nl + 1);
        return line;
      }
      if (ended) return undefined;
      await new Promise<void>((resolve) => waiting.push(resolve));
    }
  };
}

describe('ctxfold on JSONL: record by record', () => {
  const records = [toolChat(1), toolChat(12), toolChat(5)].map((messages, k) => JSON.stringify({ id: `r${k}`, messages }));

  test.each(['compress', 'validate'])('%s: the first output line comes out before standard input ends', async (command) => {
    const child = spawn(process.execPath, [CLI, command, '-'], { cwd: root, env: { ...process.env, CTXFOLD_DEBUG: '' } });
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (d: string) => { stderr += d; });
    const exited = new Promise<number | null>((resolve) => child.on('close', resolve));
    const next = lineReader(child.stdout);
    child.stdin.write(`${records[0]}\n`);
    const first = await next();
    // Standard input is still open: only the first record has been sent.
    expect(child.stdin.writableEnded).toBe(false);
    expect(JSON.parse(first!).id).toBe('r0');
    child.stdin.end(`${records[1]}\n${records[2]}\n`);
    expect(JSON.parse((await next())!).id).toBe('r1');
    expect(JSON.parse((await next())!).id).toBe('r2');
    expect(await next()).toBeUndefined();
    expect(await exited).toBe(0);
    expect(stderr).toBe('');
  });

  test('"-" reads JSONL from standard input, as FILE does', async () => {
    const text = `${records.join('\n')}\n`;
    const [dash, fromFile] = await Promise.all([ctxfoldAsync(['compress', '--max-context-tokens', '1500', '-'], text), ctxfoldAsync(['compress', '--max-context-tokens', '1500', file('dash.jsonl', text)])]);
    expect(dash.status).toBe(0);
    expect(dash.stdout.trim().split('\n').map((l) => JSON.parse(l).id)).toEqual(['r0', 'r1', 'r2']);
    expect(dash).toEqual(fromFile);
  });

  test('text in several scripts, across the reader\'s chunk boundaries, comes out as it went in', () => {
    // Over 1 MB of two-, three- and four-byte characters: some fall across the 256 KiB chunks the file is read in.
    const lines = Array.from({ length: 60 }, (_, k) => JSON.stringify({ id: k, messages: [{ role: 'user', content: `${'é用😀'.repeat(2000 + k)} ${k}` }] }));
    const r = ctxfold(['validate', file('scripts.jsonl', `${lines.join('\n')}\n`)]);
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
    const out = r.stdout.trim().split('\n').map((l) => JSON.parse(l) as { id: number; messages: unknown });
    expect(out.map(({ id, messages }) => JSON.stringify({ id, messages }))).toEqual(lines);
  });

  test('a bad record is named by its line, field and rule, has no output line; the run goes on and exits 2', async () => {
    const good = JSON.stringify({ messages: goodHistory });
    const bot = JSON.stringify({ id: 'bot', messages: [{ role: 'user', content: 'u' }, { role: 'bot', content: 'b' }] });
    const text = `${good}\n\n${bot}\n{"messages": [\n${good}\n`;
    const [compress, validate] = await Promise.all([ctxfoldAsync(['compress'], text), ctxfoldAsync(['validate'], text)]);
    for (const r of [compress, validate]) {
      expect(r.status).toBe(2);
      expect(r.stdout.trim().split('\n')).toHaveLength(2);
      const lines = r.stderr.trimEnd().split('\n');
      expect(lines).toHaveLength(3);
      expect(lines[0]).toBe('ctxfold: input line 3: messages[1].role: unknown role "bot" (expected system, developer, user, assistant, tool, function)');
      expect(lines[1]).toMatch(/^ctxfold: input line 4: not valid JSON \(/);
      expect(lines[2]).toBe('ctxfold: 2 of 4 records could not be read (each is named above, and has no output line)');
    }
    expect(JSON.parse(validate.stdout.split('\n')[1]).ctxfold.valid).toBe(true);
  });

  test('no progress when standard error is not a terminal; --quiet is accepted by compress and validate', async () => {
    const text = `${records.join('\n')}\n`.repeat(20);
    const runs = await Promise.all([['compress'], ['compress', '--quiet'], ['validate', '-q'], ['validate']].map((args) => ctxfoldAsync(args, text)));
    for (const r of runs) {
      expect(r.status).toBe(0);
      expect(r.stderr).toBe('');
      expect(r.stdout.trim().split('\n')).toHaveLength(60);
    }
  });

  const script = spawnSync('script', ['--version'], { encoding: 'utf8' });
  (script.status === 0 ? test : test.skip)('progress on a terminal (records, tokens in and out, rate, what is read of a FILE), none with --quiet', () => {
    const path = file('progress.jsonl', `${records.join('\n')}\n`.repeat(20));
    // `script` runs the CLI on a real pseudo-terminal; its standard output goes to a file, so only standard error reaches the terminal.
    const onTerminal = (args: string) => spawnSync('script', ['-qec', `${JSON.stringify(process.execPath)} ${JSON.stringify(CLI)} ${args} ${JSON.stringify(path)} > /dev/null`, '/dev/null'], { encoding: 'utf8', cwd: root, timeout: 120_000 });
    const shown = onTerminal('compress');
    expect(shown.status).toBe(0);
    expect(shown.stdout).toMatch(/ctxfold: 60 records, [\d.]+k? tokens in, [\d.]+k? out, [\d.]+k? records\/s, 100% read/);
    const quiet = onTerminal('compress --quiet');
    expect(quiet.status).toBe(0);
    expect(quiet.stdout).not.toContain('records');
  });
});

describe('ctxfold validate: --format against the evidence', () => {
  const anthropic = join(root, 'examples', 'formats', 'anthropic.json');

  test('--format openai on an Anthropic history warns, naming the format the evidence points to and why; the exit code is validation\'s', () => {
    const r = ctxfold(['validate', '--format', 'openai', anthropic]);
    expect(r.status).toBe(0);
    expect(r.stderr).toBe('ctxfold: input line 1: warning: --format openai, but the messages look like anthropic (a "tool_use" block in content at messages[1], a "tool_result" block in content at messages[2])\n');
    expect(JSON.parse(r.stdout).ctxfold.valid).toBe(true);
  });

  test('--provider implies the format, and is named as what set it', () => {
    const r = ctxfold(['validate', '--provider', 'mistral', anthropic]);
    expect(r.stderr).toContain('ctxfold: input line 1: warning: --provider mistral (openai messages), but the messages look like anthropic (a "tool_use" block');
  });

  test('no warning when the evidence agrees, when the format is detected, or with --quiet', async () => {
    const runs = await Promise.all([
      ctxfoldAsync(['validate', '--format', 'anthropic', anthropic]),
      ctxfoldAsync(['validate', anthropic]),
      ctxfoldAsync(['validate', '--quiet', '--format', 'openai', anthropic]),
      ctxfoldAsync(['validate', '--format', 'anthropic', '-'], JSON.stringify([{ role: 'user', content: 'plain text is evidence of nothing' }])),
    ]);
    for (const r of runs) {
      expect(r.stderr).toBe('');
      expect(r.status).toBe(0);
    }
  });
});

corpusDescribe(describe)('ctxfold on the real corpus', () => {
  test('JSONL in, 200 JSONL lines out: every view valid and within --max-context-tokens unless overBudget', () => {
    const corpus = loadCorpus();
    const r = ctxfold(['compress', '--max-context-tokens', '2000', CORPUS_PATH]);
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
    const lines = r.stdout.split('\n');
    expect(lines.pop()).toBe('');
    expect(lines).toHaveLength(200);
    const out = lines.map((l) => JSON.parse(l) as { id: string; messages: OpenAIChatMessage[]; ctxfold: { tokensAfter: number; overBudget: boolean; droppedCounts: { budget: number } } });
    expect(out.map((o) => o.id)).toEqual(corpus.map((c) => c.id));
    let dropped = 0;
    for (const o of out) {
      expect(validateMessages(o.messages, openaiProfile)).toEqual([]);
      if (!o.ctxfold.overBudget) expect(o.ctxfold.tokensAfter).toBeLessThanOrEqual(2000);
      dropped += o.ctxfold.droppedCounts.budget;
    }
    expect(dropped).toBeGreaterThan(0); // the budget really bit
    // Over budget only where the system prompt, the last user message and the newest turn alone pass 2000 tokens (the next test).
    expect(out.filter((o) => o.ctxfold.overBudget).length).toBeLessThan(out.length / 5);
  });

  test('by default (and with --keep-last-yields) only the conversations whose system prompt and last user turn alone pass --max-context-tokens stay over it; --no-keep-last-yields sends the kept tail whole', () => {
    const corpus = loadCorpus();
    const run = (extra: string[]) => {
      const r = ctxfold(['compress', '--max-context-tokens', '2000', ...extra, CORPUS_PATH]);
      expect(r.stderr).toBe('');
      expect(r.status).toBe(0);
      return r.stdout.trim().split('\n').map((l) => JSON.parse(l) as { messages: OpenAIChatMessage[]; ctxfold: { tokensAfter: number; overBudget: boolean } });
    };
    const whole = run(['--no-keep-last-yields']);
    const yielding = run([]);
    expect(run(['--keep-last-yields'])).toEqual(yielding);
    expect(yielding).toHaveLength(corpus.length);
    let over = 0;
    yielding.forEach((o, k) => {
      expect(validateMessages(o.messages, openaiProfile)).toEqual([]);
      if (!o.ctxfold.overBudget) expect(o.ctxfold.tokensAfter).toBeLessThanOrEqual(2000);
      else over++;
      // A view within budget without the flag is the same with it; one over it is never larger.
      if (!whole[k].ctxfold.overBudget) expect(o.messages).toEqual(whole[k].messages);
      else expect(o.ctxfold.tokensAfter).toBeLessThanOrEqual(whole[k].ctxfold.tokensAfter);
    });
    expect(over).toBeLessThan(whole.filter((o) => o.ctxfold.overBudget).length);
  });

  test('validate accepts every corpus conversation (ids reused across blocks are fine)', () => {
    const r = ctxfold(['validate', CORPUS_PATH]);
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
    expect(r.stdout.trim().split('\n')).toHaveLength(200);
  });
});
