import { afterEach, describe, expect, test } from '@jest/globals';
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { compressContext, createCompressor, createLlmSummarizer, createTokenCounter, CtxfoldError, InputError, MemoryStore, SummarizerError, type Summarizer } from '../src/index.js';
import { startFakeLlmServer, type FakeLlmServer } from './helpers/fake-llm-server.js';

const root = join(fileURLToPath(new URL('.', import.meta.url)), '..');
const src = join(root, 'src');

function tsFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const path = join(dir, e.name);
    if (e.isDirectory()) return tsFiles(path);
    return e.name.endsWith('.ts') ? [path] : [];
  });
}

/** The code of a file without its comments (line and block), string contents kept. */
function withoutComments(text: string): string {
  return text.replace(/\/\*[\s\S]*?\*\//g, (c) => c.replace(/[^\n]/g, ' ')).replace(/(^|[^:'"`\\])\/\/.*$/gm, '$1');
}

/** Built-in error constructors, and classes extending them: none may be thrown where a user can catch it. */
const BUILT_IN = /\bnew (Error|TypeError|RangeError|SyntaxError|ReferenceError|EvalError|URIError|AggregateError)\(|\bclass \w+ extends (Error|TypeError|RangeError|SyntaxError|AggregateError)\b/g;

/**
 * Each allowed occurrence, with why it is allowed. Keep it short: a new entry needs a reason a
 * reviewer accepts (an error that never reaches a caller).
 */
const ALLOWED: ReadonlyArray<{ readonly file: string; readonly match: string; readonly reason: string }> = [
  { file: 'src/errors.ts', match: 'class CtxfoldError extends Error', reason: 'the base of the hierarchy itself' },
];

describe('every error a caller can catch is a CtxfoldError with a code', () => {
  test('no built-in error is constructed in src outside the allow-list', () => {
    const found: string[] = [];
    const used = new Set<string>();
    for (const path of tsFiles(src)) {
      const file = relative(root, path).split('\\').join('/');
      const code = withoutComments(readFileSync(path, 'utf8'));
      for (const m of code.matchAll(BUILT_IN)) {
        const line = code.slice(0, m.index).split('\n').length;
        const allowed = ALLOWED.find((a) => a.file === file && code.split('\n')[line - 1].includes(a.match));
        if (allowed) used.add(`${allowed.file}: ${allowed.match}`);
        else found.push(`${file}:${line}: ${m[0]}`);
      }
    }
    expect(found).toEqual([]);
    // An entry that no longer matches anything is stale: remove it.
    expect(ALLOWED.map((a) => `${a.file}: ${a.match}`).filter((k) => !used.has(k))).toEqual([]);
  });

  test('the scan sees what it must: a built-in error in code, not in a comment', () => {
    const code = withoutComments('// throw new Error("a")\n/* new TypeError( */\nconst url = "http://x"; throw new RangeError("b");\nclass A extends Error {}');
    expect([...code.matchAll(BUILT_IN)].map((m) => m[0])).toEqual(['new RangeError(', 'class A extends Error']);
  });

  test('every code is in use, listed once, in the CTXFOLD_ form', () => {
    const sources = tsFiles(src).map((p) => [relative(root, p), readFileSync(p, 'utf8')] as const);
    for (const code of CtxfoldError.codes) {
      // The base's own default, and the one for a check of ctxfold's own invariants (a bug) when one is written.
      if (code === 'CTXFOLD_ERROR' || code === 'CTXFOLD_INTERNAL') continue;
      const users = sources.filter(([file, text]) => !file.endsWith('errors.ts') && text.includes(`'${code}'`));
      const inErrors = sources.find(([file]) => file.endsWith('errors.ts'))![1].split(`'${code}'`).length - 1;
      // A code is set by a class in errors.ts (listed once, set once) or used elsewhere.
      expect({ code, used: users.length > 0 || inErrors >= 2 }).toEqual({ code, used: true });
    }
    expect(new Set(CtxfoldError.codes).size).toBe(CtxfoldError.codes.length);
    for (const code of CtxfoldError.codes) expect(code).toMatch(/^CTXFOLD_[A-Z_]+$/);
  });
});

describe('errors through the public API', () => {
  let server: FakeLlmServer | undefined;
  afterEach(async () => {
    await server?.close();
    server = undefined;
  });

  const history = [
    { role: 'user' as const, content: 'look up order 1' },
    { role: 'assistant' as const, content: null, tool_calls: [{ id: 'call_1', type: 'function' as const, function: { name: 'lookup', arguments: '{"id":1}' } }] },
    { role: 'tool' as const, tool_call_id: 'call_1', content: 'order 1: shipped' },
    { role: 'assistant' as const, content: 'Order 1 has shipped.' },
  ];

  test('a bad option is an InputError, code CTXFOLD_INPUT, naming the field', () => {
    let caught: unknown;
    try {
      compressContext(history, { keepLast: -1 } as never);
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(CtxfoldError);
    expect(caught).toBeInstanceOf(InputError);
    expect((caught as CtxfoldError).code).toBe('CTXFOLD_INPUT');
    expect((caught as InputError).path).toMatch(/keepLast/);
  });

  test('an unknown tiktoken encoding is an InputError naming options.encoding and the encodings there are', () => {
    let caught: unknown;
    try {
      createTokenCounter({ encoding: 'nope' });
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(InputError);
    expect((caught as InputError).code).toBe('CTXFOLD_INPUT');
    expect((caught as InputError).path).toBe('options.encoding');
    expect((caught as InputError).message).toMatch(/o200k_base.*cl100k_base/);
    expect((caught as InputError).message).toMatch(/"nope"/);
    // A good one still counts.
    expect(createTokenCounter({ encoding: 'cl100k_base' }).text('hello world')).toBe(2);
  });

  test('an LLM summarizer whose endpoint answers 500 fails with a SummarizerError, code CTXFOLD_SUMMARIZER, status 500', async () => {
    server = await startFakeLlmServer();
    server.enqueue({ status: 500, body: { error: { message: 'the model is down' } } });
    const summarizer = createLlmSummarizer({ baseURL: server.baseURL, model: 'm', retries: 0 });
    const failed = await summarizer.summarize({ messages: [{ role: 'user', text: 'hello', calls: [], results: [] }] }).then(() => undefined, (error: unknown) => error);
    expect(failed).toBeInstanceOf(CtxfoldError);
    expect(failed).toBeInstanceOf(SummarizerError);
    expect((failed as SummarizerError).code).toBe('CTXFOLD_SUMMARIZER');
    expect((failed as SummarizerError).failure).toBe('http');
    expect((failed as SummarizerError).status).toBe(500);
    expect((failed as Error).message).toMatch(/500.*the model is down/);
    expect(server.requests).toHaveLength(1);
  });

  test('a compressor in raise mode: drain() rejects with CTXFOLD_SUMMARY_JOBS holding the summarizer\'s CTXFOLD_SUMMARIZER', async () => {
    server = await startFakeLlmServer();
    server.enqueue({ status: 500 }, 10);
    const compressor = createCompressor({
      store: new MemoryStore(),
      summarizer: createLlmSummarizer({ baseURL: server.baseURL, model: 'm', retries: 0 }),
      summaryFailMode: 'raise',
      maxContextTokens: 400,
      compressionThresholdTokens: 100,
      keepLast: 1,
    });
    try {
      const long = Array.from({ length: 12 }, (_, i) => [
        { role: 'user' as const, content: `question ${i}: ${'details '.repeat(20)}` },
        { role: 'assistant' as const, content: `answer ${i}: ${'more '.repeat(20)}` },
      ]).flat();
      const { report } = await compressor.compress('chat-1', long);
      compressor.afterResponse('chat-1', long, report);
      const failed = await compressor.drain().then(() => undefined, (error: unknown) => error);
      expect(failed).toBeInstanceOf(CtxfoldError);
      expect((failed as CtxfoldError).code).toBe('CTXFOLD_SUMMARY_JOBS');
      const errors = (failed as CtxfoldError & { errors: readonly unknown[] }).errors;
      expect(errors.length).toBeGreaterThanOrEqual(1);
      expect((errors[0] as CtxfoldError).code).toBe('CTXFOLD_SUMMARIZER');
    } finally {
      await compressor.close(0);
    }
  });

  test('a summary job past its time limit fails with code CTXFOLD_JOB_TIMEOUT', async () => {
    // It never answers: the limit is what ends it, however slow the host.
    const hanging: Summarizer = { name: 'hanging', inputBudgetTokens: 100_000, summarize: () => new Promise<string>(() => undefined) };
    const compressor = createCompressor({ store: new MemoryStore(), summarizer: hanging, jobTimeoutMs: 50, maxContextTokens: 400, compressionThresholdTokens: 100, keepLast: 1 });
    try {
      const failures: unknown[] = [];
      compressor.on('summary:failed', (e) => failures.push(e.error));
      const long = Array.from({ length: 12 }, (_, i) => ({ role: 'user' as const, content: `message ${i}: ${'words '.repeat(30)}` }));
      compressor.schedule('chat-2', long);
      await compressor.drain();
      expect(failures).toHaveLength(1);
      expect(failures[0]).toBeInstanceOf(CtxfoldError);
      expect((failures[0] as CtxfoldError).code).toBe('CTXFOLD_JOB_TIMEOUT');
      expect((failures[0] as Error).message).toMatch(/timed out after 50 ms/);
    } finally {
      await compressor.close(0);
    }
  });

  test('codes are listed at run time and each instance carries its class\'s', () => {
    expect(CtxfoldError.codes).toEqual(expect.arrayContaining(['CTXFOLD_INPUT', 'CTXFOLD_STORE', 'CTXFOLD_SUMMARIZER', 'CTXFOLD_UPSTREAM', 'CTXFOLD_INTERNAL']));
    expect(Object.isFrozen(CtxfoldError.codes)).toBe(true);
    expect(new CtxfoldError('x').code).toBe('CTXFOLD_ERROR');
    expect(new CtxfoldError('x', { code: 'CTXFOLD_INTERNAL' }).code).toBe('CTXFOLD_INTERNAL');
    expect(new InputError('options.a', 'must be b').code).toBe('CTXFOLD_INPUT');
    expect(new SummarizerError('s', 'other', 'm').code).toBe('CTXFOLD_SUMMARIZER');
    expect('cause' in new CtxfoldError('x')).toBe(false);
    expect(new CtxfoldError('x', { cause: 1 }).cause).toBe(1);
  });
});
