/**
 * One timed request: parse the body fresh (untimed, like a server), let the system prepare its
 * input (untimed), time `run`, then check the output (untimed): valid by `openaiProfile`, tokens
 * sent by the reference counter.
 */
import { validateMessages, type HistoryCache, type OpenAIChatMessage, type TokenCounter } from '../src/index.js';
import { openaiProfile } from '../src/core/index.js';
import { protectedFloor, requestFloor, viewTokens } from './budget.js';
import { DeadlineExceeded } from './peer-counter.js';
import type { BenchSystem } from './systems.js';

/** Everything measured for one request of one system. */
export interface RequestRecord {
  readonly workload: string;
  readonly mode: 'cold' | 'replay';
  readonly system: string;
  /** Identifies the request across systems: history ordinal and history length. */
  readonly point: string;
  readonly messages: number;
  readonly budget: number;
  ms?: number;
  timeout?: boolean;
  error?: string;
  tokensSent?: number;
  /** What any valid view must send (first system message, the last user message on, overhead): the request's floor. */
  floorTokens?: number;
  /** For a system that always sends a head and a tail (`keeps`): a lower bound of those alone (`protectedFloor`). */
  protectedTokens?: number;
  messagesSent?: number;
  valid?: boolean;
  /** The view still carries the request's last user message / its first system message (when it has one). */
  askKept?: boolean;
  systemKept?: boolean;
  /** Why the output could not be read back as messages, when it could not. */
  invalidReason?: string;
  heapDeltaMB?: number;
  rssPeakDeltaMB?: number;
  loopDelayP99Ms?: number;
  loopDelayMaxMs?: number;
  /** ctxfold only, small-conversation rows: whether its counter counted or looked up any text during the call (false: the byte bound decided). */
  tokenizerUsed?: boolean;
}

/** Hooks run right around the timed call (memory probe, event-loop monitor). */
export interface CallHooks {
  before?(): void | Promise<void>;
  after?(record: RequestRecord): void | Promise<void>;
}

/** What a timed call needs besides the system. */
export interface CallSpec {
  readonly record: RequestRecord;
  readonly body: string;
  readonly counter: TokenCounter;
  /** ctxfold's per-chat history cache and the chat this request belongs to. */
  readonly historyCache: HistoryCache;
  readonly chatId: string;
  readonly reference: TokenCounter;
  readonly deadlineSeconds: number;
  readonly hooks?: CallHooks;
}

/** Content of the last message with `role`, as a string (parts joined). */
function lastText(messages: readonly OpenAIChatMessage[], role: string): string | undefined {
  for (let i = messages.length - 1; i >= 0; i--) {
    const m = messages[i];
    if (m.role !== role) continue;
    return typeof m.content === 'string' ? m.content : JSON.stringify(m.content);
  }
  return undefined;
}

/** Runs one request through one system; returns the filled record and the system's parsed input. */
export async function timedCall(system: BenchSystem, spec: CallSpec): Promise<{ record: RequestRecord; input: unknown }> {
  const { record, body } = spec;
  const parsed = system.floor ? [] : (JSON.parse(body) as { messages: OpenAIChatMessage[] }).messages;
  const lastUser = lastText(parsed, 'user');
  const system0 = parsed[0]?.role === 'system' ? parsed[0].content : undefined;
  const input = system.prepare(body, parsed);
  await spec.hooks?.before?.();
  const ctx = { budget: record.budget, counter: spec.counter, historyCache: spec.historyCache, chatId: spec.chatId, deadlineSeconds: spec.deadlineSeconds, deadline: performance.now() + spec.deadlineSeconds * 1000 };
  let output: unknown;
  const t0 = performance.now();
  try {
    output = system.run(input, ctx);
    if (output instanceof Promise) output = await output;
    record.ms = performance.now() - t0;
  } catch (error) {
    if (error instanceof DeadlineExceeded) record.timeout = true;
    else record.error = error instanceof Error ? error.message : String(error);
  }
  await spec.hooks?.after?.(record);
  if (record.ms === undefined) return { record, input };
  if (system.floor) return { record, input };
  try {
    const view = system.view(output) ?? [];
    record.valid = validateMessages(view, openaiProfile).length === 0;
    record.tokensSent = viewTokens(view, spec.reference);
    record.floorTokens = requestFloor(parsed, parsed.length, spec.reference);
    if (system.keeps) record.protectedTokens = protectedFloor(parsed, system.keeps.keepFirst, system.keeps.keepLast, spec.reference);
    record.messagesSent = view.length;
    if (lastUser !== undefined) record.askKept = lastText(view, 'user') === lastUser;
    if (system0 !== undefined) record.systemKept = view[0]?.role === 'system' && view[0].content === system0;
  } catch (error) {
    // An output that cannot even be read back as messages is not a valid view.
    record.valid = false;
    if (lastUser !== undefined) record.askKept = false;
    if (system0 !== undefined) record.systemKept = false;
    record.invalidReason = error instanceof Error ? error.message : String(error);
  }
  return { record, input };
}
