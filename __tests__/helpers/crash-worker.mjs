// A chat service the crash tests kill (SIGKILL) at a random moment: it serves one growing chat
// through `createCompressor` (recall on) on a SqliteStore or a RedisStore, request after request,
// now and then waiting for its background summaries, until killed. Built code from dist/ (run
// `npm run build` first).
//
// Usage: node crash-worker.mjs <sqlite|redis> <db-file|redis-url> <key-prefix> <lease-ms>
// It loads its modules, prints `standby`, and waits for one stdin line `go <chat> <first-turn>
// <seed>` before it opens the store: a test starts the next worker while the last one works.
//
// stdout, one line per step, written synchronously before the step goes on (so the line is out
// when a kill lands right after it):
//   standby                                modules loaded, store not open yet
//   ready                                  store open, compressor warm: work starts now
//   req <turn>, served <turn> <violations>, refused <turn> <message>    one request
//   pause, resume                          waiting for the background summaries
//   lease, released                        (Redis) a job asks for the chat's lease (then reads and plans), gives it back
//   job <base-version>                     a job starts folding (summary:start)
//   keep <n>, kept                         the originals it newly covers (recall), kept before the commit
//   commit <version>, committed <version> <true|false>                  its compare-and-set
//   ack <version> <covered-count> <hash>   summary:done: the commit was acknowledged
//   end <stale|failed|skipped> [why]       a job that committed nothing
//   clear <n>, cleared                     originals of results a view cleared (request path)
//   warning <code>                         a compressor warning
import { writeSync } from 'node:fs';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import { createCompressor, createTokenCounter, summarizerFromFunction, validateMessages } from '../../dist/src/index.js';
import { chatHistory, coveredHash, roughTokens } from './crash-chat.mjs';

const [kind, target, prefix, leaseMs] = process.argv.slice(2);
const say = (line) => writeSync(1, `${line}\n`);
const { SqliteStore } = kind === 'sqlite' ? await import('../../dist/src/store/sqlite.js') : {};
const { RedisStore } = kind === 'redis' ? await import('../../dist/src/store/redis.js') : {};
say('standby');
const [go] = await once(createInterface({ input: process.stdin }), 'line');
const [, chat, firstTurn, seed] = go.split(' ');
const oneLine = (error) => String(error?.message ?? error).replace(/\s+/g, ' ').slice(0, 300);

// mulberry32: the worker's pauses and delays follow its seed, so a failing round can be run again.
let s = Number(seed) >>> 0;
const random = () => {
  s = (s + 0x6d2b79f5) >>> 0;
  let t = s;
  t = Math.imul(t ^ (t >>> 15), t | 1);
  t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
};
const sleep = (ms, signal) => new Promise((resolve, reject) => {
  const timer = setTimeout(resolve, ms);
  signal?.addEventListener('abort', () => { clearTimeout(timer); reject(signal.reason); }, { once: true });
});

const store = kind === 'sqlite'
  ? SqliteStore.open(target)
  : await RedisStore.open({ url: target, keyPrefix: prefix, leaseMs: Number(leaseMs), commandTimeoutMs: 5000 });

// The first putOriginals after the summarizer answered is the job's (what it covers, kept before
// its commit); any other is a view's cleared results.
let summarized = false;
const committing = async (version, write) => {
  say(`commit ${version}`);
  const ok = await write();
  say(`committed ${version} ${ok}`);
  return ok;
};
const observed = {
  get: (chatId) => store.get(chatId),
  commit: (state, expected) => committing(state.version, () => store.commit(state, expected)),
  delete: (chatId) => store.delete(chatId),
  close: () => store.close(),
  async putOriginals(chatId, records) {
    const ofJob = summarized;
    summarized = false;
    say(`${ofJob ? 'keep' : 'clear'} ${records.length}`);
    await store.putOriginals(chatId, records);
    say(ofJob ? 'kept' : 'cleared');
  },
  getOriginals: (chatId, ids) => store.getOriginals(chatId, ids),
  searchOriginals: (chatId, query, limit) => store.searchOriginals(chatId, query, limit),
  ...(kind === 'redis' ? {
    async acquireLease(chatId, ttlMs) {
      say('lease');
      const lease = await store.acquireLease(chatId, ttlMs);
      if (lease === undefined) return undefined;
      return {
        chatId, token: lease.token, fence: lease.fence, ttlMs: lease.ttlMs,
        renew: () => lease.renew(),
        release: async () => {
          await lease.release();
          say('released');
        },
        commit: (state, expected) => committing(state.version, () => lease.commit(state, expected)),
      };
    },
  } : {}),
};

// A stand-in for a model call: a few ms to some tens of ms, so kills land inside it too.
const summarizer = summarizerFromFunction(async ({ prompt, signal }) => {
  await sleep(3 + Math.floor(random() * 30), signal);
  summarized = true;
  return `The user looked up records and compared them; ${prompt.user.length} characters folded.`;
}, { name: 'stand-in', checkFacts: false });

const compressor = createCompressor({
  maxContextTokens: 900, compressionThresholdTokens: 450, keepLast: 4, recall: true,
  store: observed, summarizer, counter: createTokenCounter({ countText: roughTokens }),
});
compressor.on('summary:start', (e) => say(`job ${e.baseVersion}`));
compressor.on('summary:done', (e) => say(`ack ${e.version} ${e.coveredIds.length} ${coveredHash(e.coveredIds)}`));
compressor.on('summary:stale', () => say('end stale'));
compressor.on('summary:failed', (e) => { summarized = false; say(`end failed ${oneLine(e.error)}`); });
compressor.on('summary:skipped', (e) => say(`end skipped ${e.reason}`));
compressor.on('warning', (e) => say(`warning ${e.code}`));

const handler = compressor.wrap(async (request) => {
  await sleep(1 + Math.floor(random() * 4)); // the model's answer
  return { violations: validateMessages(request.messages).length };
});

await compressor.compress('warm-up', chatHistory('warm-up', 3));
say('ready');
// Bounded: a worker nobody kills ends by itself (and the test, expecting a kill, fails).
for (let turn = Number(firstTurn), n = 0; n < 5000; turn++, n++) {
  say(`req ${turn}`);
  try {
    const answer = await handler({ chatId: chat, messages: chatHistory(chat, turn) });
    say(`served ${turn} ${answer.violations}`);
  } catch (error) {
    say(`refused ${turn} ${oneLine(error)}`);
  }
  if (random() < 0.2) {
    say('pause');
    await compressor.drain().catch(() => undefined);
    say('resume');
  }
}
await compressor.close(1000);
say('limit');
process.exit(0);
