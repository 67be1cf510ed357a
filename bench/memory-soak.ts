/**
 * "Memory stays flat": RSS and heap after 10,000 and 100,000 requests spread over 1,000 live
 * chats, each request a freshly built copy of its chat's history (as a server parses every body).
 * A conversation ends after 20 turns and the user starts a new one, so 1,000 chats are live at any
 * time and about 5,000 are seen over 100,000 requests. Measured for
 * `compressContext` with default options (nothing remembered between calls; the default
 * counter's text cache is bounded) and for `createCompressor` (a bounded per-chat history cache).
 */
import { compressContext, createCompressor, type OpenAIChatMessage } from '../src/index.js';

/** What one system's memory looked like along the run. */
export interface SoakFigure {
  readonly system: string;
  readonly chats: number;
  readonly requests: number;
  /** RSS and heap (MB, after a forced GC) at each checkpoint, in request order. */
  readonly checkpoints: readonly { readonly requests: number; readonly rssMB: number; readonly heapMB: number }[];
  readonly seconds: number;
}

const gc = (globalThis as { gc?: () => void }).gc;

const WORDS = ['order', 'status', 'shipped', 'invoice', 'delayed', 'refund', 'account', 'update', 'address', 'payment', 'ticket', 'priority'];

/** The history of `chat` after `turns` turns: a system prompt, then user/assistant pairs with varied text. */
function historyOf(chat: number, turns: number): OpenAIChatMessage[] {
  const out: OpenAIChatMessage[] = [{ role: 'system', content: `You are support agent #${chat % 7}. Be brief and precise.` }];
  for (let t = 0; t < turns; t++) {
    const w = (k: number) => WORDS[(chat * 31 + t * 7 + k) % WORDS.length];
    out.push({ role: 'user', content: `Chat ${chat}, turn ${t}: please check ${w(1)} ${w(2)} for case C-${chat}-${t} and tell me about the ${w(3)}.` });
    out.push({ role: 'assistant', content: `Case C-${chat}-${t}: the ${w(4)} is ${w(5)}; I noted the ${w(6)} and will follow up on the ${w(7)}.` });
  }
  return out;
}

function sample(requests: number) {
  gc?.();
  const m = process.memoryUsage();
  return { requests, rssMB: m.rss / 1e6, heapMB: m.heapUsed / 1e6 };
}

/** Turns a conversation lasts before its user starts a new one. */
const TURNS_PER_CONVERSATION = 20;

/** Sends `requests` requests round-robin over `chats` live chats through `send`; samples memory at each checkpoint. */
async function soak(system: string, chats: number, requests: number, checkpoints: readonly number[], send: (chatId: string, messages: OpenAIChatMessage[]) => unknown): Promise<SoakFigure> {
  const t0 = performance.now();
  const out: SoakFigure['checkpoints'][number][] = [sample(0)];
  for (let i = 1; i <= requests; i++) {
    const slot = i % chats;
    const round = Math.floor(i / chats);
    const conversation = Math.floor(round / TURNS_PER_CONVERSATION);
    const turns = 1 + (round % TURNS_PER_CONVERSATION);
    const r = send(`chat-${slot}-${conversation}`, historyOf(slot * 7919 + conversation, turns));
    if (r instanceof Promise) await r;
    if (checkpoints.includes(i)) out.push(sample(i));
  }
  return { system, chats, requests, checkpoints: out, seconds: (performance.now() - t0) / 1000 };
}

/** Both systems, one after the other, each from a collected heap. */
export async function memorySoak(chats: number, requests: number): Promise<SoakFigure[]> {
  const checkpoints = [Math.floor(requests / 10), requests];
  const budget = 400;
  const plain = await soak('compressContext (defaults)', chats, requests, checkpoints, (_chatId, messages) => compressContext(messages, { maxContextTokens: budget }));
  const compressor = createCompressor({ maxContextTokens: budget, summarizer: null });
  const wrapped = await soak('createCompressor().compress', chats, requests, checkpoints, (chatId, messages) => compressor.compress(chatId, messages));
  await compressor.close();
  return [plain, wrapped];
}
