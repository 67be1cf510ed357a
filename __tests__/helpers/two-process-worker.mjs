// One of several processes sharing one Redis, as instances of a chat service behind a load
// balancer: serves chat requests through `createCompressor` with a `RedisStore` and a slow
// summarizer, built code from dist/ (run `npm run build` first).
//
// Usage: node two-process-worker.mjs <redis-url> <key-prefix> <name> <lease-ms> <summarizer-ms>
// stdin, one JSON per line:  {"op":"req","id":1,"chat":3,"turns":7} | {"op":"ready"} | {"op":"drain"} | {"op":"close"}
// stdout, one JSON per line: {"id":1,"ok":true,"violations":0,"overBudget":false,"ms":1.2}, {"op":"ready"},
//   {"op":"drained","records":[...],"stats":{...}}, and {"op":"up"} once connected.
//
// Every summary job is recorded, locally and in the Redis list <key-prefix>log through the store's
// own connection (so Redis orders the records exactly as it ran the job's own commands): `start`
// right after the job took the chat's lease, `end` right before the lease is released, and
// `done` / `stale` / `failed` / `skipped` as the compressor reports them.
import { createInterface } from 'node:readline';
import { createCompressor, summarizerFromFunction, validateMessages } from '../../dist/src/index.js';
import { openRecordedStore } from './worker-records.mjs';

const [url, prefix, name, leaseMs, summarizerMs] = process.argv.slice(2);
const { store, records, log } = await openRecordedStore(url, prefix, name, leaseMs);

// The store the compressor sees: the RedisStore, with `end` recorded just before a lease whose job started is released.
const started = new Set();
const recorded = {
  get: (chatId) => store.get(chatId),
  commit: (state, expected) => store.commit(state, expected),
  delete: (chatId) => store.delete(chatId),
  close: () => store.close(),
  async acquireLease(chatId, ttlMs) {
    const lease = await store.acquireLease(chatId, ttlMs);
    if (lease === undefined) return undefined;
    return {
      chatId, token: lease.token, fence: lease.fence, ttlMs: lease.ttlMs,
      renew: () => lease.renew(),
      commit: (state, expected) => lease.commit(state, expected),
      release: () => {
        if (started.delete(chatId)) log({ e: 'end', chat: chatId, fence: lease.fence });
        return lease.release();
      },
    };
  },
};

const sleep = (ms, signal) => new Promise((resolve, reject) => {
  const timer = setTimeout(resolve, ms);
  signal.addEventListener('abort', () => { clearTimeout(timer); reject(signal.reason); }, { once: true });
});
const summarizer = summarizerFromFunction(async ({ prompt, signal }) => {
  await sleep(Number(summarizerMs), signal);
  return `The user asked for records and compared them; ${prompt.user.length} characters folded by ${name}.`;
}, { name: 'slow', checkFacts: false });

const MAX = 900;
const compressor = createCompressor({ maxContextTokens: MAX, compressionThresholdTokens: 450, keepLast: 4, store: recorded, summarizer, concurrency: 4 });
compressor.on('summary:start', (e) => { started.add(e.chatId); log({ e: 'start', chat: e.chatId, base: e.baseVersion }); });
compressor.on('summary:done', (e) => log({ e: 'done', chat: e.chatId, version: e.version }));
compressor.on('summary:stale', (e) => log({ e: 'stale', chat: e.chatId, expected: e.expectedVersion }));
compressor.on('summary:failed', (e) => log({ e: 'failed', chat: e.chatId, error: String(e.error?.message ?? e.error) }));
compressor.on('summary:skipped', (e) => log({ e: 'skipped', chat: e.chatId }));
let overBudget = 0;
compressor.on('compressed', (e) => { if (e.report.tokensAfter > MAX) overBudget++; });

/** The history of chat `chat` at its `turns`-th user message: every third turn calls a tool. */
function historyOf(chat, turns) {
  const messages = [{ role: 'system', content: `You look up records for team ${chat}.` }];
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

const handler = compressor.wrap(async (request) => ({ violations: validateMessages(request.messages).length }));
const reply = (value) => process.stdout.write(`${JSON.stringify(value)}\n`);

async function serve(message) {
  const t0 = performance.now();
  try {
    const before = overBudget;
    const answer = await handler({ chatId: `chat-${message.chat}`, messages: historyOf(message.chat, message.turns) });
    reply({ id: message.id, ok: true, violations: answer.violations, overBudget: overBudget > before, ms: performance.now() - t0 });
  } catch (error) {
    reply({ id: message.id, ok: false, error: String(error?.message ?? error), ms: performance.now() - t0 });
  }
}

createInterface({ input: process.stdin }).on('line', (line) => {
  const message = JSON.parse(line);
  if (message.op === 'req') void serve(message);
  else if (message.op === 'ready') store.ready(5000).then(() => reply({ op: 'ready' }), (error) => reply({ op: 'ready', error: error.message }));
  else if (message.op === 'drain') compressor.drain().then(() => reply({ op: 'drained', records, stats: compressor.stats() }));
  else if (message.op === 'close') compressor.close(500).then(() => process.exit(0));
});
// Warm up (tokenizer, lenses) before the first timed request.
await compressor.compress('warm-up', historyOf(0, 3));
reply({ op: 'up' });
