import { afterAll, beforeAll, expect, test } from '@jest/globals';
import { join } from 'node:path';
import fc from 'fast-check';
import { bodyHistory } from '../../src/runtime/body-history.js';
import { MemoryStore } from '../../src/store/memory-store.js';
import type { ChatState } from '../../src/store/state.js';
import { createExtractiveSummarizer } from '../../src/summarize/extractive.js';
import { CHAT_ID_HEADER } from '../../src/server/chat-id.js';
import { createCompressorPool, type CompressorPool } from '../../src/server/compressor-pool.js';
import { createFoldThreads, type FoldThreads } from '../../src/server/fold-threads.js';
import { threadReport, type FoldThreadSettings } from '../../src/server/fold-thread-tasks.js';
import { ROUTES, type FoldRoute } from '../../src/server/routes.js';
import { routeHistory } from '../../src/server/route-history.js';
import { viewBody } from '../../src/server/view-body.js';
import type { Fields } from '../../src/runtime/endpoints.js';
import { validHistory } from '../helpers/arbitraries.js';
import { validResponses } from '../helpers/openai-responses-arbitraries.js';
import { validAnthropicHistory } from '../helpers/anthropic-arbitraries.js';
import { ensureBuiltProxy } from '../helpers/proxy-workers.js';
import { propertyParams } from '../helpers/property-runs.js';

/**
 * A body folded in a fold thread goes out as the same bytes as one folded on the serving thread,
 * and a summary job folded in a thread commits the same state: on generated histories of each
 * format the proxy folds (Chat Completions, Responses, Anthropic Messages), on windows from
 * smaller than the history to larger, with and without a stored summary. The thread runs the
 * built code (dist/); this side runs the sources.
 */

const WINDOWS = [40, 90, 160, 300, 600, 1500, 6000];
const config = { models: Object.fromEntries(WINDOWS.map((w) => [`w${w}`, { maxContextTokens: w }])) };
const planning: FoldThreadSettings['pool'] = { config, keepFirst: 1, keepLast: 2, toolOutputTrim: { minChars: 200 } };
const TENANT = 'tenant-a';
const route = (name: string) => ROUTES.find((r): r is FoldRoute => r.kind === 'fold' && r.name === name)!;

let store: MemoryStore;
let pool: CompressorPool;
let threads: FoldThreads;
let chats = 0;

beforeAll(() => {
  ensureBuiltProxy();
  store = new MemoryStore();
  pool = createCompressorPool({ ...planning, store, summarizer: createExtractiveSummarizer() });
  threads = createFoldThreads({
    threads: 1,
    minBytes: 0,
    foldsJobs: true,
    getState: (chatId) => store.get(chatId),
    settings: { pool: planning, summarizer: 'extractive', chatIdHeader: CHAT_ID_HEADER },
    workerFile: join(process.cwd(), 'dist', 'src', 'server', 'fold-worker.js'),
  })!;
});

afterAll(async () => {
  await threads.close();
  await pool.close(0);
});

/** What the serving thread sends for `bytes` (undefined: the body as it came), as serveFold folds it. */
async function foldHere(r: FoldRoute, chatId: string, bytes: Buffer) {
  const body = JSON.parse(bytes.toString('utf8')) as Fields;
  const history = routeHistory(r, body)!;
  const model = body.model as string;
  const { compressor } = pool.forModel(model);
  const { messages, report, tools } = await compressor.compress(chatId, history as unknown[], r.endpoint.extras(body));
  return { body: viewBody(body, r.endpoint.listField, history, messages, tools), report, compressor, history };
}

const stamps = (s: ChatState | undefined) => (s === undefined ? undefined : { ...s, createdAt: '', updatedAt: '' });

async function sameBothWays(r: FoldRoute, body: Record<string, unknown>): Promise<{ changed: boolean; summarized: boolean }> {
  const bytes = Buffer.from(JSON.stringify(body), 'utf8');
  const name = `chat-${chats++}`;
  const chatId = `${TENANT}:${name}`;
  const headers = { [CHAT_ID_HEADER]: name };
  const here = await foldHere(r, chatId, bytes);
  const there = await threads.fold(r, headers, TENANT, bytes);
  expect(there).toBeDefined();
  expect(there!.chatId).toBe(chatId);
  expect(there!.body === undefined ? undefined : Buffer.from(there!.body).toString('utf8')).toBe(here.body?.toString('utf8'));
  expect(there!.report).toEqual(threadReport(here.report));
  // The summary job, where the compressor schedules one: folded in a thread, it commits what the
  // serving thread's own job commits.
  if (here.compressor.schedule(chatId, here.history as unknown[]) !== 'started') return { changed: here.body !== undefined, summarized: false };
  await here.compressor.drain();
  const committed = await store.get(chatId);
  const offloaded = await threads.offload!.fold(chatId, bodyHistory(bytes, { route: r.name, model: body.model as string }), undefined, new AbortController().signal);
  expect(offloaded === undefined ? undefined : stamps({ ...offloaded.next, coveredIds: offloaded.coveredIds.split('\n') })).toEqual(stamps(committed));
  if (committed === undefined) return { changed: here.body !== undefined, summarized: false };
  // With the summary stored, both fold the next request alike again.
  const again = await foldHere(r, chatId, bytes);
  const againThere = await threads.fold(r, headers, TENANT, bytes);
  expect(againThere!.body === undefined ? undefined : Buffer.from(againThere!.body).toString('utf8')).toBe(again.body?.toString('utf8'));
  return { changed: true, summarized: again.report.summary.applied };
}

const windowArb = fc.constantFrom(...WINDOWS.map((w) => `w${w}`));
const runs = () => ({ ...propertyParams(), numRuns: Math.min(propertyParams().numRuns, 150) });

test('Chat Completions: a thread folds a body to the same bytes, and a job to the same state', async () => {
  const seen = { changed: 0, summarized: 0 };
  await fc.assert(fc.asyncProperty(validHistory(), windowArb, async (messages, model) => {
    const r = await sameBothWays(route('chat.completions'), { model, messages });
    seen.changed += Number(r.changed);
    seen.summarized += Number(r.summarized);
  }), runs());
  expect(seen.changed).toBeGreaterThan(5);
  expect(seen.summarized).toBeGreaterThan(2);
});

test('Responses: a thread folds a body to the same bytes, and a job to the same state', async () => {
  const seen = { changed: 0, summarized: 0 };
  await fc.assert(fc.asyncProperty(validResponses(), windowArb, async (input, model) => {
    const r = await sameBothWays(route('responses'), { model, input });
    seen.changed += Number(r.changed);
    seen.summarized += Number(r.summarized);
  }), runs());
  expect(seen.changed).toBeGreaterThan(5);
  expect(seen.summarized).toBeGreaterThan(2);
});

test('Anthropic Messages: a thread folds a body to the same bytes, and a job to the same state', async () => {
  const seen = { changed: 0, summarized: 0 };
  await fc.assert(fc.asyncProperty(validAnthropicHistory(), windowArb, fc.constantFrom(undefined, 'You answer briefly.'), async (messages, model, system) => {
    const r = await sameBothWays(route('messages'), { model, max_tokens: 16, messages, ...(system === undefined ? {} : { system }) });
    seen.changed += Number(r.changed);
    seen.summarized += Number(r.summarized);
  }), runs());
  expect(seen.changed).toBeGreaterThan(5);
  expect(seen.summarized).toBeGreaterThan(2);
});
