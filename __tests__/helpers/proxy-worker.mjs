// One ctxfold proxy process of several sharing one Redis, as instances of `ctxfold serve` behind
// a load balancer: `startServer` from the built code (dist/; run `npm run build` first) on a
// `RedisStore`, forwarding to a stand-in upstream, with the LLM summarizer pointed at that same
// stand-in (which decides how slow a summary is).
//
// Usage: node proxy-worker.mjs <redis-url> <key-prefix> <name> <lease-ms> <upstream-base-url>
// stdin, one JSON per line:  {"op":"ready"} | {"op":"drain"} | {"op":"close"}
// stdout, one JSON per line: {"op":"up","url":"http://127.0.0.1:PORT"} once listening, {"op":"ready"},
//   {"op":"drained","records":[...]}.
//
// The store is a `RedisStore` opened here (not `store: 'redis://...'`) for two reasons: its
// `leaseMs` is short, so a killed process's lease lapses within a test's time; and every summary
// job is recorded in the Redis list <key-prefix>log through the store's own connection, so Redis
// orders the records exactly as it ran the job's own commands: `start` right after the chat's
// lease was granted, `end` right before it is released, `done` / `stale` / `commit-failed` as the
// job's fenced commit answered, `skipped` when the lease was held elsewhere. The proxy sees the
// store through the same `StateStore` + `acquireLease` surface a `redis://` spec gives it.
import { createInterface } from 'node:readline';
import { createLlmSummarizer } from '../../dist/src/index.js';
import { startServer } from '../../dist/src/server/index.js';
import { openRecordedStore } from './worker-records.mjs';

const [url, prefix, name, leaseMs, upstream] = process.argv.slice(2);
const { store, records, log } = await openRecordedStore(url, prefix, name, leaseMs);

/** The RedisStore, with each leased job's start, end and commit recorded. */
const recorded = {
  get: (chatId) => store.get(chatId),
  commit: (state, expected) => store.commit(state, expected),
  delete: (chatId) => store.delete(chatId),
  close: () => store.close(),
  async acquireLease(chatId, ttlMs) {
    const lease = await store.acquireLease(chatId, ttlMs);
    if (lease === undefined) {
      log({ e: 'skipped', chat: chatId });
      return undefined;
    }
    log({ e: 'start', chat: chatId, fence: lease.fence });
    let ended = false;
    return {
      chatId, token: lease.token, fence: lease.fence, ttlMs: lease.ttlMs,
      renew: () => lease.renew(),
      async commit(state, expected) {
        try {
          const written = await lease.commit(state, expected);
          log(written ? { e: 'done', chat: chatId, version: state.version, fence: lease.fence } : { e: 'stale', chat: chatId, expected });
          return written;
        } catch (error) {
          log({ e: 'commit-failed', chat: chatId, version: state.version, error: String(error?.message ?? error) });
          throw error;
        }
      },
      release() {
        if (!ended) {
          ended = true;
          log({ e: 'end', chat: chatId, fence: lease.fence });
        }
        return lease.release();
      },
    };
  },
};

const summarizer = createLlmSummarizer({ baseURL: upstream, apiKey: 'sk-summarizer', model: 'fold-model', retries: 0, timeoutMs: 10_000, checkFacts: false });
const server = await startServer({
  upstream, port: 0, store: recorded, summarizer,
  maxContextTokens: 900, compressionThresholdTokens: 450, keepLast: 4, concurrency: 4,
  logLevel: 'silent', shutdownGraceMs: 1000,
});
const reply = (value) => process.stdout.write(`${JSON.stringify(value)}\n`);

createInterface({ input: process.stdin }).on('line', (line) => {
  const message = JSON.parse(line);
  if (message.op === 'ready') store.ready(5000).then(() => reply({ op: 'ready' }), (error) => reply({ op: 'ready', error: error.message }));
  else if (message.op === 'drain') server.drain().then(() => reply({ op: 'drained', records }));
  else if (message.op === 'close') server.close().then(() => process.exit(0));
});
reply({ op: 'up', url: server.url });
