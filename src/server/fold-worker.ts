import { once } from 'node:events';
import { constants, setPriority } from 'node:os';
import { workerData } from 'node:worker_threads';
import { InputError, StoreError } from '../errors.js';
import { isFields } from '../runtime/endpoints.js';
import { foldContextOf, foldForOffload, type OffloadedFold } from '../runtime/job-offload.js';
import type { ChatState, StateStore } from '../store/state.js';
import { defaultSummarizer } from './default-summarizer.js';
import { chatOf } from './chat-id.js';
import { createCompressorPool } from './compressor-pool.js';
import { threadReport, type FoldAnswer, type FoldTask, type FoldThreadSettings, type JobTask, type StateAnswer, type ThreadWarning } from './fold-thread-tasks.js';
import { routeHistory } from './route-history.js';
import { ROUTES, type FoldRoute } from './routes.js';
import { viewBody } from './view-body.js';

/**
 * One fold thread of the proxy (run by piscina, one task at a time): `fold` reads a request body,
 * plans its view on the chat's state (asked of the proxy's thread) and writes the body to send;
 * `job` folds a history into its chat's summary and answers what to commit. Its compressors are
 * made from the proxy's own options, so what it sends and commits is what the proxy's thread
 * would have; the store, the scheduling and every write stay on the proxy's thread.
 */

const settings = workerData as FoldThreadSettings;

// Below the serving thread: on a busy host the fold of one large chat gives way to the requests
// of every other (on Linux the nice value is the calling thread's own). Left as it is where the
// system refuses.
try {
  setPriority(constants.priority.PRIORITY_BELOW_NORMAL);
} catch {
  // not permitted here: the thread runs at the process's priority
}
const MAIN: FoldAnswer = { kind: 'main' };

/** How the current task reads a chat's state (one task runs at a time in a thread). */
let reading: ((chatId: string) => Promise<ChatState | undefined>) | undefined;
/** The warnings the current task's compressor raised. */
let warnings: ThreadWarning[] = [];

/** The store as the thread's compressors see it: reads go to the proxy's thread; nothing is ever written here. */
const store: StateStore = {
  get: (chatId) => (reading === undefined ? Promise.resolve(undefined) : reading(chatId)),
  commit: () => Promise.reject(new StoreError('fold thread', 'commits are made on the proxy\'s thread')),
  delete: () => Promise.reject(new StoreError('fold thread', 'deletes are made on the proxy\'s thread')),
  close: async () => undefined,
};

const pool = createCompressorPool({
  ...settings.pool,
  store,
  summarizer: settings.summarizer === 'extractive' ? defaultSummarizer(settings.pool.tokenizerModel) : null,
  onCreate: (compressor) => compressor.on('warning', (w) => { warnings.push({ code: w.code, message: w.message }); }),
});
// Made now, as on the proxy's thread: the first task does not pay for it.
pool.forModel(undefined);

function foldRoute(name: string): FoldRoute {
  const route = ROUTES.find((r): r is FoldRoute => r.kind === 'fold' && r.name === name);
  if (route === undefined) throw new InputError('route', `no folding route named ${JSON.stringify(name)}`);
  return route;
}

function parsed(bytes: Uint8Array): unknown {
  return JSON.parse(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('utf8'));
}

/** Asks the proxy's thread for a chat's state; its store's failure is thrown here with the same message. */
async function askState(port: FoldTask['port'], chatId: string): Promise<ChatState | undefined> {
  port.postMessage({ chatId });
  const [answer] = (await once(port, 'message')) as [StateAnswer];
  if ('error' in answer) throw new StoreError(answer.store, answer.error);
  return answer.state;
}

/** Folds one request body (see `FoldAnswer`). */
export async function fold(task: FoldTask): Promise<FoldAnswer> {
  try {
    const route = foldRoute(task.route);
    let body: unknown;
    try {
      body = parsed(task.bytes);
    } catch {
      return MAIN;
    }
    if (!isFields(body)) return MAIN;
    let history: readonly unknown[] | undefined;
    try {
      history = routeHistory(route, body);
    } catch {
      return MAIN;
    }
    if (history === undefined) return MAIN;
    const chat = chatOf(task.headers, body, history, task.tenant, settings.chatIdHeader);
    const model = typeof body.model === 'string' && body.model !== '' ? body.model : undefined;
    const { compressor } = pool.forModel(model);
    reading = (chatId) => askState(task.port, chatId);
    warnings = [];
    let folded;
    try {
      folded = await compressor.compress(chat.chatId, history as unknown[], route.endpoint.extras(body));
    } catch (error) {
      // A history ctxfold refuses is refused by the proxy's thread, in its words.
      if (InputError.isInstance(error)) return MAIN;
      throw error;
    }
    const out = viewBody(body, route.endpoint.listField, history, folded.messages, folded.tools);
    return { kind: 'folded', chatId: chat.chatId, source: chat.source, model, report: threadReport(folded.report), body: out, warnings };
  } finally {
    reading = undefined;
    task.port.close();
  }
}

/** Folds a history into its chat's summary on `task.state` and answers what to commit (undefined: nothing to fold). */
export async function job(task: JobTask): Promise<OffloadedFold | undefined> {
  const body = parsed(task.bytes);
  const history = isFields(body) ? routeHistory(foldRoute(task.route), body) : undefined;
  if (history === undefined) throw new InputError('messages', 'the body of a summary job carries no history');
  const context = foldContextOf(pool.forModel(task.model).compressor);
  if (context === undefined) return undefined;
  // An aborted job is ended by the pool (the thread is stopped), so the fold itself never is.
  return foldForOffload(context, task.chatId, history, task.state, new AbortController().signal);
}
