// Counts the src/ files one `compressContext` call and one `wrap()` call pass through.
//
// Method: V8's precise coverage through node:inspector, on the built code (run `npm run build`
// first; dist/src/x.js is src/x.ts). The library is imported and one warm-up call is made on
// another history (so what every process does once, such as loading the tokenizer, is not
// counted); then the counters are reset (`Profiler.takePreciseCoverage` resets them), the call is
// made once, and a file counts when one of its functions, other than its module body, ran at
// least once during that call. For `wrap()`, the call is the awaited `wrap(handler)(request)`
// of a compressor with a memory store, an extractive summarizer and a window the history is over,
// plus the background summary it starts (awaited through `compressor.drain()`); and the same
// call of a compressor with no summarizer (the request path alone).
// Usage: node scripts/files-per-call.mjs [--list]
import { Session } from 'node:inspector/promises';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { dirname, join, relative } from 'node:path';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const dist = join(root, 'dist');
const list = process.argv.includes('--list');

const lib = await import(pathToFileURL(join(dist, 'src', 'index.js')).href);
const { generateConversation } = await import(pathToFileURL(join(dist, 'bench', 'fixtures', 'conversation.js')).href);

const session = new Session();
session.connect();
await session.post('Profiler.enable');
await session.post('Profiler.startPreciseCoverage', { callCount: true, detailed: false });

/** The src files (as `src/...ts`) with a function other than the module body run since the last reset. */
async function filesRun() {
  const { result } = await session.post('Profiler.takePreciseCoverage');
  const files = new Set();
  for (const script of result) {
    if (!script.url.startsWith('file://')) continue;
    const path = fileURLToPath(script.url);
    if (!path.startsWith(join(dist, 'src'))) continue;
    const ran = script.functions.some((f) => f.functionName !== '' && f.ranges[0].count > 0)
      || script.functions.some((f, k) => k > 0 && f.functionName === '' && f.ranges[0].count > 0);
    if (ran) files.add(relative(dist, path).replace(/\.js$/, '.ts'));
  }
  return [...files].sort();
}

async function measure(name, warm, call) {
  await warm();
  await filesRun(); // resets the counters
  await call();
  const files = await filesRun();
  const folders = new Map();
  for (const f of files) {
    const folder = f.split('/').length > 2 ? f.split('/')[1] : '(src)';
    folders.set(folder, (folders.get(folder) ?? 0) + 1);
  }
  console.log(`${name}: ${files.length} src files (${[...folders].map(([f, k]) => `${f} ${k}`).join(', ')})`);
  if (list) for (const f of files) console.log(`  ${f}`);
}

const history = (seed) => generateConversation({ messages: 120, seed });
const options = { maxContextTokens: 3000, compressionThresholdTokens: 2500 };

await measure('compressContext', () => lib.compressContext(history(1), options), () => lib.compressContext(history(2), options));

// The request path alone: a compressor without a summarizer starts no background job.
const plain = lib.createCompressor({ ...options, store: new lib.MemoryStore() });
const plainHandler = plain.wrap(async (request) => ({ choices: [{ message: { role: 'assistant', content: `${request.messages.length} messages` } }] }));
await measure(
  'wrap, request path (no summarizer)',
  () => plainHandler({ chatId: 'warm', messages: history(1) }),
  () => plainHandler({ chatId: 'measured', messages: history(2) }),
);

const compressor = lib.createCompressor({ ...options, store: new lib.MemoryStore(), summarizer: lib.createExtractiveSummarizer() });
const handler = compressor.wrap(async (request) => ({ choices: [{ message: { role: 'assistant', content: `${request.messages.length} messages` } }] }));
const settle = async () => { if (typeof compressor.drain === "function") await compressor.drain(); };
await measure(
  'wrap, with its background summary',
  async () => { await handler({ chatId: 'warm', messages: history(1) }); await settle(); },
  async () => { await handler({ chatId: 'measured', messages: history(2) }); await settle(); },
);
session.disconnect();
