import { afterAll, beforeAll, expect, test } from '@jest/globals';
import { Redis } from 'ioredis';
import OpenAI from 'openai';
import type { ChatCompletionMessageParam } from 'openai/resources/chat/completions';
import { openaiChatLens } from '../../src/formats/openai-chat/lens.js';
import type { OpenAIChatMessage } from '../../src/formats/openai-chat/types.js';
import { validateMessages } from '../../src/formats/profiles.js';
import { DEFAULT_TENANT_HEADER, tenantOf } from '../../src/server/tenant.js';
import { RedisStore } from '../../src/store/redis-store.js';
import { createTokenCounter } from '../../src/tokens/counter.js';
import { committedVersions, ensureBuiltProxy, leaseOverlaps, outOfTurn, startProxyWorker, type ProxyJobRecord, type ProxyWorker } from '../helpers/proxy-workers.js';
import { redisDescribe, startRedisServer, type RedisServer } from '../helpers/redis-server.js';
import { json, startUpstream, type StandInUpstream } from '../helpers/upstream-server.js';

/**
 * The multi-instance check on the proxy itself: two `ctxfold serve` processes (built code,
 * `startServer` on a RedisStore) share one real redis-server and one stand-in upstream on
 * 127.0.0.1, and the real `openai` package sends each chat's requests to both in turn (one API
 * key, so one tenant). Their LLM summarizer calls the same stand-in, which answers a summary
 * after SUMMARY_MS, so jobs of different chats run at once. Every job records, through the
 * store's own Redis connection, when it took and when it released its chat's lease.
 */

const KEY = 'sk-two-proxies';
const MODEL = 'load-model';
const PREFIX = 'proxies:';
const WINDOW = 900; // the workers' --max-tokens
// Long enough that a loaded host serves B's request and schedules its job before a killed A's
// lease lapses (the kill test asserts B skips the chat while that lease stands).
const LEASE_MS = 3000;
const SUMMARY_MS = 30;
const SUMMARY_TEXT = 'the earlier turns looked up records and compared them';
const tenant = tenantOf({ authorization: `Bearer ${KEY}` }, { proxyHoldsKey: false, tenantHeader: DEFAULT_TENANT_HEADER });
const recount = createTokenCounter();
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const range = (n: number) => Array.from({ length: n }, (_, i) => i + 1);

let redis: RedisServer;
let raw: Redis;
let upstream: StandInUpstream;
let a: ProxyWorker;
let b: ProxyWorker;
/** What was wrong with a request the upstream received from a proxy (invalid, or over the window). */
const problems: string[] = [];
let proxied = 0;
let summaries = 0;
/** Summarizer calls whose prompt contains this are held unanswered (once), to kill their process mid-summary. */
let hold: { mark: string; seen: () => void } | undefined;

/** The history of chat `chat` at its `turns`-th user message: every third turn calls a tool. */
function historyOf(chat: string, turns: number): ChatCompletionMessageParam[] {
  const messages: ChatCompletionMessageParam[] = [{ role: 'system', content: `You look up records for team ${chat}.` }];
  for (let t = 1; t <= turns; t++) {
    messages.push({ role: 'user', content: `Turn ${t}: look up record R${chat}-${t} and compare it with the earlier ones, ${'in detail '.repeat(8)}` });
    if (t === turns) break;
    if (t % 3 === 0) {
      const id = `call_${chat}_${t}`;
      messages.push({ role: 'assistant', content: null, tool_calls: [{ id, type: 'function', function: { name: 'lookup', arguments: JSON.stringify({ record: `R${chat}-${t}` }) } }] });
      messages.push({ role: 'tool', tool_call_id: id, content: JSON.stringify({ record: `R${chat}-${t}`, status: 'open', notes: 'n'.repeat(60) }) });
    }
    messages.push({ role: 'assistant', content: `Record R${chat}-${t} is open; it matches the earlier ones.` });
  }
  return messages;
}

const completion = (content: string, promptTokens: number) => ({
  id: 'chatcmpl-two', object: 'chat.completion', created: 0, model: MODEL,
  choices: [{ index: 0, message: { role: 'assistant', content, refusal: null }, finish_reason: 'stop', logprobs: null }],
  usage: { prompt_tokens: promptTokens, completion_tokens: 5, total_tokens: promptTokens + 5 },
});

beforeAll(async () => {
  ensureBuiltProxy();
  // An append-only file, so what Redis acknowledged survives the kill in the outage test.
  redis = await startRedisServer({ persist: true });
  raw = new Redis(redis.url);
  upstream = await startUpstream(async (request, res) => {
    const body = request.body ?? {};
    if (body.model === 'fold-model') {
      // The proxies' LLM summarizer.
      summaries++;
      if (hold && request.rawBody.includes(hold.mark)) {
        const { seen } = hold;
        hold = undefined;
        seen();
        return; // never answered: the process calling it is killed
      }
      await sleep(SUMMARY_MS);
      return json(res, 200, completion(`Summary ${summaries}: ${SUMMARY_TEXT}.`, 100));
    }
    proxied++;
    const messages = body.messages as OpenAIChatMessage[];
    const tokens = recount.requestOverhead + messages.reduce((n, m) => n + recount.message(m, openaiChatLens), 0);
    const violations = validateMessages(messages, 'openai');
    const chat = (body.metadata as { chat_id?: string } | undefined)?.chat_id;
    if (violations.length > 0) problems.push(`${chat}: ${JSON.stringify(violations.slice(0, 2))}`);
    if (tokens > WINDOW) problems.push(`${chat}: ${tokens} tokens sent, over the window of ${WINDOW}`);
    if (request.headers.authorization !== `Bearer ${KEY}`) problems.push(`${chat}: the caller's key was not forwarded`);
    // Usage as the provider would bill it: the proxy calibrates its counts on it.
    json(res, 200, completion('ok', tokens));
  });
  [a, b] = await Promise.all(['A', 'B'].map((name) => startProxyWorker(name, redis.url, PREFIX, LEASE_MS, upstream.baseURL)));
  // Warm-up (tokenizer, lenses) in both, on a chat of its own, before anything is timed or counted.
  await Promise.all([a, b].map((worker) => clientOf(worker).chat.completions.create({ model: MODEL, messages: historyOf(`warm-${worker.name}`, 2), metadata: { chat_id: `warm-${worker.name}` } })));
});

afterAll(async () => {
  await Promise.all([a?.close(), b?.close()]);
  await upstream?.close();
  raw?.disconnect();
  await redis?.stop();
});

const clientOf = (worker: ProxyWorker) => new OpenAI({ apiKey: KEY, baseURL: `${worker.url}/v1`, maxRetries: 0, timeout: 10_000 });

interface Answer { readonly ok: boolean; readonly ms: number; readonly error?: string }

/** One request of chat `chat` at `turns` turns through `client`; ok when the stand-in's answer came back. */
async function ask(client: OpenAI, chat: string, turns: number): Promise<Answer> {
  const t0 = performance.now();
  try {
    const answer = await client.chat.completions.create({ model: MODEL, messages: historyOf(chat, turns), metadata: { chat_id: chat } });
    return { ok: answer.choices[0]?.message.content === 'ok', ms: performance.now() - t0 };
  } catch (error) {
    return { ok: false, ms: performance.now() - t0, error: String((error as Error).message) };
  }
}

/** The job log in the order Redis ran the jobs' own commands, for chats named `<name>-...`. */
async function redisLog(name: string): Promise<ProxyJobRecord[]> {
  return (await raw.lrange(`${PREFIX}log`, 0, -1)).map((line) => JSON.parse(line) as ProxyJobRecord).filter((r) => r.chat.startsWith(`${tenant}:${name}-`));
}

/** A counter of a proxy's /metrics, summed over the series whose labels include `labels`. */
async function metric(worker: ProxyWorker, name: string, labels: string): Promise<number> {
  const text = await (await fetch(`${worker.url}/metrics`)).text();
  let sum = 0;
  for (const line of text.split('\n')) {
    const match = /^(\w+)\{([^}]*)\} (\S+)$/.exec(line);
    if (match && match[1] === name && match[2]!.includes(labels)) sum += Number(match[3]);
  }
  return sum;
}

/** The most jobs (of any chats) that held a lease at one moment. */
function mostAtOnce(records: readonly ProxyJobRecord[]): number {
  let open = 0;
  let most = 0;
  for (const r of [...records].filter((x) => x.e === 'start' || x.e === 'end').sort((x, y) => x.t - y.t)) {
    open += r.e === 'start' ? 1 : -1;
    most = Math.max(most, open);
  }
  return most;
}

const p = (answers: readonly Answer[], q: number) => {
  const sorted = answers.map((x) => x.ms).sort((x, y) => x - y);
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? 0;
};

redisDescribe('two proxy processes sharing one Redis', () => {
  test('1,000 requests over 50 chats split between them: one summary job per chat at a time, no summary lost or overwritten, every upstream request valid and within the window', async () => {
    const CHATS = 50;
    const PER_CHAT = 20;
    problems.length = 0;
    const proxiedBefore = proxied;
    const [toA, toB] = [clientOf(a), clientOf(b)];
    const answers: Answer[] = [];
    const started = performance.now();
    // Each chat is a conversation: its requests go one after another, alternating proxies.
    await Promise.all(range(CHATS).map(async (chat) => {
      for (let k = 0; k < PER_CHAT; k++) answers.push(await ask(k % 2 === chat % 2 ? toA : toB, `load-${chat}`, 4 + k));
    }));
    const requestsMs = performance.now() - started;
    const records = (await Promise.all([a.drain(), b.drain()])).flat().filter((r) => r.chat.startsWith(`${tenant}:load-`));

    expect(answers).toHaveLength(CHATS * PER_CHAT);
    expect(answers.filter((x) => !x.ok)).toEqual([]);
    expect(proxied - proxiedBefore).toBe(CHATS * PER_CHAT);
    expect(problems).toEqual([]);

    // One job per chat at a time, in the order Redis ran the jobs' commands: per chat the log
    // alternates a start and an end of the same process.
    const log = await redisLog('load');
    expect(outOfTurn(log)).toEqual([]);
    expect(log.filter((r) => r.e === 'start')).toHaveLength(records.filter((r) => r.e === 'start').length);
    // The same on the machine's clock, from each process's own records; and jobs of different
    // chats did run at once (the summarizer is slow enough for the check to mean something).
    const { jobs, overlapping } = leaseOverlaps(records);
    expect(overlapping).toEqual([]);
    expect(mostAtOnce(records)).toBeGreaterThanOrEqual(2);

    // The processes really shared the chats: many chats got commits from both.
    const committers = new Map<string, Set<string>>();
    for (const r of records) if (r.e === 'done') committers.set(r.chat, (committers.get(r.chat) ?? new Set()).add(r.name));
    const shared = [...committers.values()].filter((names) => names.size === 2).length;
    expect(shared).toBeGreaterThanOrEqual(CHATS / 5);
    expect(records.filter((r) => r.e === 'stale' || r.e === 'commit-failed')).toEqual([]);
    expect(await metric(a, 'ctxfold_summaries_total', 'outcome="failed"') + await metric(b, 'ctxfold_summaries_total', 'outcome="failed"')).toBe(0);

    // Nothing lost or overwritten: per chat the committed versions are exactly 1..n, each once,
    // and the stored state is version n.
    const versions = committedVersions(records);
    expect(versions.size).toBe(CHATS);
    const store = await RedisStore.open({ url: redis.url, keyPrefix: PREFIX });
    try {
      for (const chat of range(CHATS)) {
        const id = `${tenant}:load-${chat}`;
        const list = versions.get(id) ?? [];
        expect({ chat, list }).toEqual({ chat, list: range(list.length) });
        expect({ chat, stored: (await store.get(id))?.version }).toEqual({ chat, stored: list.length });
      }
    } finally {
      await store.close();
    }
    // And the summaries came back in later views.
    const withSummary = upstream.requests.filter((r) => r.body?.model === MODEL).slice(-CHATS * PER_CHAT).filter((r) => r.rawBody.includes(SUMMARY_TEXT)).length;
    // How many of the load's views already carried a summary depends on how fast the jobs ran
    // against the requests (printed below). Once they are drained, each chat's next request
    // carries its committed summary, whichever proxy gets it.
    const before = upstream.requests.length;
    for (const chat of range(CHATS)) expect((await ask(chat % 2 === 0 ? toA : toB, `load-${chat}`, 4 + PER_CHAT - 1)).ok).toBe(true);
    const resent = upstream.requests.slice(before).filter((r) => r.body?.model === MODEL);
    expect(resent).toHaveLength(CHATS);
    expect(resent.filter((r) => !r.rawBody.includes(SUMMARY_TEXT)).map((r) => r.rawBody.slice(0, 200))).toEqual([]);
    await Promise.all([a.drain(), b.drain()]);
    const commits = [...versions.values()].reduce((n, list) => n + list.length, 0);
    const skipped = records.filter((r) => r.e === 'skipped').length;
    process.stdout.write(`two proxies: ${answers.length} requests in ${requestsMs.toFixed(0)} ms with ${CHATS} chats in flight (p50 ${p(answers, 0.5).toFixed(1)} ms, p99 ${p(answers, 0.99).toFixed(1)} ms), ${jobs} leased jobs (up to ${mostAtOnce(records)} at once), ${commits} commits, ${shared} chats folded by both, ${skipped} jobs skipped (leased elsewhere), ${withSummary} views with a summary\n`);
  });

  test('Redis killed mid-run and restarted: every request still served and valid, summaries resume, state consistent afterwards', async () => {
    const CHATS = 20;
    const PER_CHAT = 20;
    problems.length = 0;
    const [toA, toB] = [clientOf(a), clientOf(b)];
    const answers: (Answer & { during: boolean })[] = [];
    let phase: 'up' | 'down' | 'back' = 'up';
    let restartedAt = Infinity;
    let outage: Promise<void> | undefined;
    const warningsBefore = await metric(a, 'ctxfold_warnings_total', 'store-unavailable') + await metric(b, 'ctxfold_warnings_total', 'store-unavailable');
    await Promise.all(range(CHATS).map(async (chat) => {
      for (let k = 0; k < PER_CHAT; k++) {
        const answer = await ask(k % 2 === chat % 2 ? toA : toB, `out-${chat}`, 4 + k);
        answers.push({ ...answer, during: phase === 'down' });
        // At 40% of the requests Redis is killed (jobs are running); at 70% it is started again.
        if (answers.length === Math.floor(CHATS * PER_CHAT * 0.4)) outage = redis.kill().then(() => { phase = 'down'; });
        if (answers.length === Math.floor(CHATS * PER_CHAT * 0.7)) {
          await outage;
          phase = 'back';
          restartedAt = performance.timeOrigin + performance.now();
          await redis.restart();
        }
        await sleep(2);
      }
    }));
    await Promise.all([a.ready(), b.ready()]);
    // Leases held when Redis died were persisted and lapse within LEASE_MS; then every chat asks again.
    await sleep(LEASE_MS + 50);
    const last = await Promise.all(range(CHATS).map((chat) => ask(chat % 2 ? toA : toB, `out-${chat}`, 4 + PER_CHAT)));
    const records = (await Promise.all([a.drain(), b.drain()])).flat().filter((r) => r.chat.startsWith(`${tenant}:out-`));

    expect([...answers, ...last].filter((x) => !x.ok)).toEqual([]);
    expect(problems).toEqual([]);
    const during = answers.filter((x) => x.during);
    expect(during.length).toBeGreaterThan(20);
    // No request waited for Redis (the workers' command timeout is 5 s): a failed read costs no wait.
    expect(p(during, 0.99)).toBeLessThan(1000);
    const warnings = await metric(a, 'ctxfold_warnings_total', 'store-unavailable') + await metric(b, 'ctxfold_warnings_total', 'store-unavailable') - warningsBefore;
    expect(warnings).toBeGreaterThanOrEqual(20);

    // Summaries resumed once Redis was back, and never two jobs of one chat at once.
    const after = records.filter((r) => r.e === 'done' && r.t > restartedAt).length;
    expect(after).toBeGreaterThan(0);
    expect(leaseOverlaps(records).overlapping).toEqual([]);

    // State consistent: every stored state reads back valid; no version was committed twice; the
    // stored version is the newest committed one, except for commits whose answer was lost with
    // the connection (at most one per failed commit of that chat).
    const versions = committedVersions(records);
    const store = await RedisStore.open({ url: redis.url, keyPrefix: PREFIX });
    try {
      for (const chat of range(CHATS)) {
        const id = `${tenant}:out-${chat}`;
        const list = versions.get(id) ?? [];
        expect({ chat, duplicates: list.length - new Set(list).size }).toEqual({ chat, duplicates: 0 });
        const stored = (await store.get(id))?.version ?? 0;
        const newest = list.at(-1) ?? 0;
        const lost = records.filter((r) => r.chat === id && r.e === 'commit-failed').length;
        expect({ chat, stored, newest, ok: stored >= newest && stored - newest <= lost }).toEqual({ chat, stored, newest, ok: true });
      }
    } finally {
      await store.close();
    }
    process.stdout.write(`two proxies, Redis outage: ${answers.length + last.length} requests, ${during.length} served while Redis was down (p99 ${p(during, 0.99).toFixed(1)} ms), ${warnings} store warnings, ${records.filter((r) => r.e === 'commit-failed').length} commits cut, ${after} commits after the restart\n`);
  });

  test('a proxy killed with SIGKILL mid-summary: its lease lapses and the other proxy folds the chat', async () => {
    problems.length = 0;
    const chat = 'kill-1';
    const id = `${tenant}:${chat}`;
    const [toA, toB] = [clientOf(a), clientOf(b)];
    // A's summarizer call for this chat is held by the stand-in: A is mid-summary when it dies.
    const held = new Promise<void>((resolve) => { hold = { mark: `R${chat}-`, seen: resolve }; });
    expect((await ask(toA, chat, 16)).ok).toBe(true);
    await held;
    const log = await redisLog('kill');
    expect(log.map((r) => [r.name, r.e])).toEqual([['A', 'start']]);
    const fenceOfA = log[0]!.fence!;
    expect(await raw.exists(`${PREFIX}{${id}}:lease`)).toBe(1);
    a.child.kill('SIGKILL');
    await new Promise((resolve) => (a.child.exitCode !== null || a.child.signalCode !== null ? resolve(undefined) : a.child.once('exit', resolve)));

    // Right after the kill the dead process's lease still stands: B serves the chat and skips its summary.
    expect((await ask(toB, chat, 17)).ok).toBe(true);
    await b.drain();
    expect((await redisLog('kill')).map((r) => [r.name, r.e])).toEqual([['A', 'start'], ['B', 'skipped']]);
    // Never released, the lease lapses by itself within LEASE_MS of its last renewal.
    const pttl = await raw.pttl(`${PREFIX}{${id}}:lease`);
    expect(pttl).toBeGreaterThan(0);
    expect(pttl).toBeLessThanOrEqual(LEASE_MS);
    await sleep(pttl + 20);
    expect(await raw.exists(`${PREFIX}{${id}}:lease`)).toBe(0);

    // The chat's next request on B takes the lease, with the next fence, and folds it.
    expect((await ask(toB, chat, 18)).ok).toBe(true);
    await b.drain();
    const after = await redisLog('kill');
    expect(after.map((r) => [r.name, r.e, r.fence ?? null, r.version ?? null])).toEqual([
      ['A', 'start', fenceOfA, null], ['B', 'skipped', null, null],
      ['B', 'start', fenceOfA + 1, null], ['B', 'done', fenceOfA + 1, 1], ['B', 'end', fenceOfA + 1, null],
    ]);
    const store = await RedisStore.open({ url: redis.url, keyPrefix: PREFIX });
    try {
      const state = await store.get(id);
      expect(state?.version).toBe(1);
      expect(state?.summary).toContain(SUMMARY_TEXT);
    } finally {
      await store.close();
    }
    expect(await raw.hget(`${PREFIX}{${id}}:state`, 'fence')).toBe(String(fenceOfA + 1));
    expect(problems).toEqual([]);
  });
});
