import { describe, expect, test } from '@jest/globals';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  compressContext, createCompressor, createExtractiveSummarizer, createHistoryCache, createTokenCounter, CtxfoldError, fromOpenWebUIValves,
  InputError, StoreError, SummarizerError,
} from '../src/index.js';

const history = [{ role: 'system', content: 'be brief' }, { role: 'user', content: 'hello there' }];

/** Runs `work` and returns the InputError it throws (fails when it throws anything else, or nothing). */
function inputError(work: () => unknown): InputError {
  try {
    work();
  } catch (error) {
    expect(error).toBeInstanceOf(InputError);
    return error as InputError;
  }
  throw new Error('expected an InputError, nothing was thrown');
}

describe('options are checked at the boundary by one schema', () => {
  test('a misspelt or mistaken option is rejected with the name ctxfold uses', () => {
    expect(inputError(() => compressContext(history, { maxTokens: 10 } as never)).message).toBe('options.maxTokens: unknown option; did you mean maxContextTokens?');
    expect(inputError(() => compressContext(history, { keepLst: 2 } as never)).message).toBe('options.keepLst: unknown option; did you mean keepLast?');
    expect(inputError(() => compressContext(history, { max_context_tokens: 10 } as never)).message)
      .toBe("options.max_context_tokens: unknown option; ctxfold's name is maxContextTokens (for Open WebUI valves, pass them through fromOpenWebUIValves(valves))");
    expect(inputError(() => compressContext(history, { colour: 'red' } as never)).message).toMatch(/^options\.colour: unknown option \(known: keepFirst, /);
  });

  test('a wrong value names the option, the rule and what was found', () => {
    expect(inputError(() => compressContext(history, { keepLast: -1 })).message).toBe('options.keepLast: must be an integer >= 0, got -1');
    expect(inputError(() => compressContext(history, { maxContextTokens: 1.5 })).message).toBe('options.maxContextTokens: must be an integer >= 1, got 1.5');
    expect(inputError(() => compressContext(history, { repair: 'no' as never })).message).toBe('options.repair: must be true or false, got "no"');
    expect(inputError(() => compressContext(history, { model: 42 as never })).message).toBe('options.model: must be a model name (a string), got 42');
    expect(inputError(() => compressContext(history, { counter: {} as never })).message).toMatch(/^options\.counter: must be a TokenCounter from createTokenCounter\(\)/);
    expect(inputError(() => compressContext(history, { toolOutputTrim: { minChars: -3 } })).message).toMatch(/^options\.toolOutputTrim/);
    expect(inputError(() => compressContext(history, { summary: { text: 'x', coveredIds: [1] as never } })).message).toBe('options.summary.coveredIds.0: must be a message id (a string), got 1');
    expect(inputError(() => compressContext(history, null as never)).message).toBe('options: must be an options object, got null');
    expect(inputError(() => compressContext(history, { historyCache: createHistoryCache() })).message).toMatch(/^options\.chatId: is required with historyCache/);
  });

  test('compressContext(null) and a non-message name the input', () => {
    expect(inputError(() => compressContext(null as never)).message).toMatch(/^messages: must be an array of messages/);
    expect(inputError(() => compressContext([null] as never)).message).toMatch(/^messages\[0\]/);
  });

  test('createCompressor checks its options before anything runs', () => {
    expect(inputError(() => createCompressor({ store: {} as never })).message).toMatch(/^options\.store: must be a StateStore/);
    expect(inputError(() => createCompressor({ summarizer: 'extractive' as never })).message).toMatch(/^options\.summarizer: must be a Summarizer/);
    expect(inputError(() => createCompressor({ concurrency: 0 })).message).toBe('options.concurrency: must be an integer >= 1, got 0');
    expect(inputError(() => createCompressor({ summaryFailMode: 'loud' as never })).message).toBe('options.summaryFailMode: must be "silent" or "raise", got "loud"');
    expect(inputError(() => createCompressor({ chatId: 'fixed' as never })).message).toMatch(/^options\.chatId: must be a function/);
    expect(inputError(() => createExtractiveSummarizer({ maxSummaryTokens: 10 })).message).toBe('options.maxSummaryTokens: must be an integer >= 32, got 10');
  });

  test('compressor.compress with the messages first names chatId, short, and says the id comes first', async () => {
    const compressor = createCompressor({ summarizer: null });
    const long = Array.from({ length: 200 }, (_, k) => ({ role: 'user', content: `message ${k} `.repeat(50) }));
    const error = await compressor.compress(long as never, long).then(() => undefined, (e: unknown) => e);
    expect(error).toBeInstanceOf(InputError);
    expect((error as InputError).message).toBe('chatId: must be a non-empty string, got an array (compress(chatId, messages): the chat id comes first)');
    const blank = await compressor.compress('', history).then(() => undefined, (e: unknown) => e);
    expect((blank as InputError).message).toBe('chatId: must be a non-empty string, got the string ""');
    await compressor.close();
  });

  test('valid options still plan as before', () => {
    const counter = createTokenCounter();
    const { report } = compressContext(history, { counter, keepFirst: 1, keepLast: 2, maxContextTokens: 1000, toolOutputTrim: true, summaryRole: 'system', format: 'openai', repair: false });
    expect(report.messagesAfter).toBe(2);
  });
});

describe('errors', () => {
  test('every error class is a CtxfoldError and knows its own kind', () => {
    const input = new InputError('options.x', 'must be y');
    const store = new StoreError('SqliteStore(/tmp/a.db)', 'locked');
    const summarizer = new SummarizerError('llm', 'connection', 'refused');
    for (const e of [input, store, summarizer]) {
      expect(e).toBeInstanceOf(CtxfoldError);
      expect(e).toBeInstanceOf(Error);
      expect(CtxfoldError.isInstance(e)).toBe(true);
    }
    expect(input.name).toBe('InputError');
    expect(store.message).toBe('SqliteStore(/tmp/a.db): locked');
    expect(InputError.isInstance(store)).toBe(false);
    expect(store).not.toBeInstanceOf(InputError);
    expect(summarizer.failure).toBe('connection');
  });

  test('an error from another installed copy of ctxfold is still recognised (by its Symbol.for marker)', () => {
    // What a second copy's InputError looks like from here: another class, the same registered marker.
    const foreign = Object.assign(new Error('options.x: bad'), { [Symbol.for('ctxfold.error')]: ['InputError', 'CtxfoldError'] });
    expect(foreign).toBeInstanceOf(InputError);
    expect(CtxfoldError.isInstance(foreign)).toBe(true);
    expect(StoreError.isInstance(foreign)).toBe(false);
    expect(new Error('plain')).not.toBeInstanceOf(CtxfoldError);
    expect(CtxfoldError.isInstance(null)).toBe(false);
  });
});

describe('fromOpenWebUIValves', () => {
  test('maps the filter valves to ctxfold options and lists those with no equivalent', () => {
    const { options, ignored } = fromOpenWebUIValves({ keep_first: 1, keep_last: 6, max_context_tokens: 128000, compression_threshold_tokens: 64000, priority: 10, summary_model: 'x' });
    expect(options).toEqual({ keepFirst: 1, keepLast: 6, maxContextTokens: 128000, compressionThresholdTokens: 64000 });
    expect(ignored).toEqual(['priority', 'summary_model']);
    expect(compressContext(history, options).report.maxContextTokens).toBe(128000);
  });

  test('applies the per-model thresholds in both of the filter forms; 0 means no limit', () => {
    const text = fromOpenWebUIValves({ max_context_tokens: 128000, compression_threshold_tokens: 64000, model_thresholds: 'gpt-4:8000:32000, qwen3:8b:4000:16000' }, 'qwen3:8b');
    expect(text.options).toEqual({ maxContextTokens: 16000, compressionThresholdTokens: 4000 });
    const object = fromOpenWebUIValves({ max_context_tokens: 0, model_thresholds: { 'gpt-4': { max_context_tokens: 32000 } } }, 'gpt-4');
    expect(object.options).toEqual({ maxContextTokens: 32000 });
    expect(fromOpenWebUIValves({ max_context_tokens: 0 }).options).toEqual({});
  });

  test('a bad valve is named', () => {
    expect(inputError(() => fromOpenWebUIValves({ keep_last: -2 })).message).toBe('valves.keep_last: must be an integer >= 0, got -2');
  });
});

describe('misuse that used to fail later or silently', () => {
  test('a countText that returns NaN is named instead of turning the budget off', () => {
    const counter = createTokenCounter({ countText: () => Number.NaN });
    expect(inputError(() => compressContext(history, { counter, maxContextTokens: 5 })).message)
      .toBe('options.countText: returned NaN for a text of 8 characters; it must return a whole number of tokens >= 0');
  });

  test('validateMessages checks its input and defaults to the OpenAI profile', async () => {
    const { validateMessages } = await import('../src/index.js');
    expect(inputError(() => validateMessages([null] as never, 'openai')).message).toMatch(/^messages\[0\]: must be a message object, got null/);
    expect(inputError(() => validateMessages(history, 'palm' as never)).message).toMatch(/^profile: must be a profile name \(openai, [a-z, -]+\) or a Profile object, got "palm"/);
    expect(validateMessages(history)).toEqual([]);
  });

  test('SqliteStore.open refuses an empty path and names the file it cannot open', async () => {
    const { SqliteStore } = await import('../src/store/sqlite.js');
    expect(inputError(() => SqliteStore.open('')).message).toBe('path: must be the database file\'s path (or ":memory:"), got ""');
    // A directory that cannot exist: its parent is a file.
    const dir = mkdtempSync(join(tmpdir(), 'ctxfold-open-'));
    const file = join(dir, 'a-file');
    writeFileSync(file, 'not a directory');
    const path = join(file, 'state.db');
    try {
      expect(() => SqliteStore.open(path)).toThrow(`SqliteStore(${path}): cannot open the database: `);
      expect(() => SqliteStore.open(path)).toThrow(StoreError);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
