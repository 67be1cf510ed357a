import { InputError } from '../errors.js';
import type { ChatState } from '../store/state.js';
import type { TextCounter } from '../tokens/counter.js';
import { parseRecallArgs } from './args.js';
import { fitText } from './fit-text.js';
import type { OriginalRecord, OriginalsStore } from '../store/originals.js';
import { RECALL_TOOL_NAME } from './tool-definition.js';

/** Options of `resolveRecall`. */
export interface ResolveRecallOptions {
  /** The answer's text is at most this many tokens (by `countTokens`). */
  readonly maxTokens: number;
  readonly countTokens: TextCounter;
  /** Search hits read at most. Default 8. */
  readonly searchLimit?: number;
}

/** What a recall call is answered with. Invariant: `countTokens(text) <= maxTokens`. */
export interface RecallAnswer {
  /** The tool result to send back to the model. */
  readonly text: string;
  /** True when the arguments were bad or the store failed (`text` says why). */
  readonly isError: boolean;
  /** Ids of the messages whose text the answer holds (whole or cut), in order. */
  readonly ids: readonly string[];
}

/** A store the resolver reads: originals, and (when it has one) the chat's state, which maps `#k` to ids. */
export type RecallSource = OriginalsStore & { get?(chatId: string): Promise<ChatState | undefined> };

const DEFAULT_SEARCH_LIMIT = 8;

/**
 * Answers a recall call: the original text of the messages asked for by number (`#k`, the k-th
 * message the chat's summary replaced, as the summary frame numbers them) or id, then those a
 * search for `query` finds, best first, without repeats. Bounded: whole messages while they fit
 * in `maxTokens`, then the next one cut with a marker, then a line saying how many were left out.
 * Bad arguments, an unknown chat or a failing store give an error text (`isError`) naming the
 * field and the rule; it never throws for anything the model sends. Options are the caller's:
 * a `maxTokens` that is not a whole number >= 1 is an `InputError`.
 */
export async function resolveRecall(store: RecallSource, chatId: string, args: unknown, options: ResolveRecallOptions): Promise<RecallAnswer> {
  const { maxTokens, countTokens } = options;
  if (!Number.isSafeInteger(maxTokens) || maxTokens < 1) throw new InputError('options.maxTokens', `must be an integer >= 1, got ${String(maxTokens)}`);
  if (typeof countTokens !== 'function') throw new InputError('options.countTokens', 'must be a function (text) => number');
  const fit = (text: string, isError: boolean, ids: readonly string[] = []): RecallAnswer => ({ text: fitText(text, maxTokens, countTokens, ' [...]'), isError, ids });
  const parsed = parseRecallArgs(args);
  if ('error' in parsed) return fit(`${RECALL_TOOL_NAME} error: ${parsed.error}`, true);
  const { ids: asked, query } = parsed.args;
  try {
    const state = typeof store.get === 'function' ? await store.get(chatId) : undefined;
    const covered = state?.coveredIds ?? [];
    const numberOf = new Map<string, number>(covered.map((id, k) => [id, k + 1]));
    const notes: string[] = [];
    const wanted: string[] = [];
    for (const id of asked) {
      const k = /^#?(\d+)$/.exec(id);
      if (!k) wanted.push(id);
      else if (Number(k[1]) >= 1 && Number(k[1]) <= covered.length) wanted.push(covered[Number(k[1]) - 1]);
      else notes.push(covered.length === 0 ? `${id}: no message of this conversation is summarized yet` : `${id}: not a summarized message (they are #1-#${covered.length})`);
    }
    const found = await store.getOriginals(chatId, wanted);
    const foundIds = new Set(found.map((r) => r.id));
    for (const id of wanted) if (!foundIds.has(id)) notes.push(`${label(id, numberOf)}: its original was not kept (summarized before recall was on, or evicted)`);
    const records = [...found];
    if (query !== undefined) {
      const hits = await store.searchOriginals(chatId, query, options.searchLimit ?? DEFAULT_SEARCH_LIMIT);
      for (const r of hits) {
        if (foundIds.has(r.id)) continue;
        foundIds.add(r.id);
        records.push(r);
      }
      if (hits.length === 0) notes.push(`query ${JSON.stringify(query.slice(0, 80))}: no summarized message matched`);
    }
    return bounded(records, notes, numberOf, maxTokens, countTokens);
  } catch (error) {
    return fit(`${RECALL_TOOL_NAME} error: the store did not answer (${error instanceof Error ? error.message : String(error)}); work from the summary`, true);
  }
}

const label = (id: string, numberOf: ReadonlyMap<string, number>): string => {
  const k = numberOf.get(id);
  return k === undefined ? `message ${id}` : `#${k}`;
};

/** The answer's text: header, notes, then whole records while they fit, one cut record, and a count of what was left out. */
function bounded(records: readonly OriginalRecord[], notes: readonly string[], numberOf: ReadonlyMap<string, number>, maxTokens: number, count: TextCounter): RecallAnswer {
  const head = [`[${RECALL_TOOL_NAME}: ${records.length} original message(s), as they were before the summary]`, ...notes.map((n) => `[${n}]`)].join('\n');
  const blocks = records.map((r) => `--- ${label(r.id, numberOf)} (${r.role}) ---\n${r.text}`);
  const leftOut = (n: number) => (n > 0 ? `\n[${n} more message(s) left out to fit ${maxTokens} tokens; ask for fewer ids]` : '');
  let text = head;
  const ids: string[] = [];
  let k = 0;
  for (; k < blocks.length; k++) {
    const next = `${text}\n${blocks[k]}`;
    if (count(next + leftOut(blocks.length - k - 1)) > maxTokens) break;
    text = next;
    ids.push(records[k].id);
  }
  if (k < blocks.length) {
    // The next record, cut to the room left (the line counting what follows it stays whole).
    const tail = leftOut(blocks.length - k - 1);
    const room = maxTokens - count(`${text}\n${tail}`) - 1;
    const cut = room > 8 ? fitText(blocks[k], room, count, `\n[... cut to fit ${maxTokens} tokens]`) : '';
    if (cut !== '') {
      text = `${text}\n${cut}${tail}`;
      ids.push(records[k].id);
    } else text += leftOut(blocks.length - k);
  }
  // Joining parts may merge a token or two across a seam: the whole is checked, and cut if need be.
  return { text: fitText(text, maxTokens, count, ' [...]'), isError: false, ids };
}
