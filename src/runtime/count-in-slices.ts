import { buildGroups } from '../core/groups.js';
import type { MessageLens } from '../formats/lens.js';
import { selectLens } from '../formats/registry.js';
import type { TokenCounter } from '../tokens/counter.js';
import type { HistoryCache, Recall, ViewTrace } from './history-cache.js';
import { inSlices } from './slices.js';

/** The leading entries of a view trace that stand for messages below `unchanged` (or for made messages). */
function viewBefore(view: ViewTrace, unchanged: number): ViewTrace {
  let e = 0;
  while (e < view.keys.length && !(typeof view.keys[e] === 'number' && (view.keys[e] as number) >= unchanged)) e++;
  return e === view.keys.length ? view : { keys: view.keys.slice(0, e), tokens: view.tokens.slice(0, e) };
}

/** Below this many new messages a history is counted synchronously by the plan itself. */
const SLICE_FROM_MESSAGES = 512;

/**
 * Counts the messages of a chat's history that its cache does not know yet, in event-loop
 * friendly slices, groups the history and remembers it in the cache, so the synchronous plan that
 * follows reuses all of it. Only the new messages are shape-checked here; a history the cache
 * already knows costs one comparison per message. With a finite `limit` (a plan that counts
 * lazily: a window and no clearing of old results), messages are counted newest first and those
 * older than the point where the counted total passes `limit` stay uncounted (NaN), as the plan
 * would leave them: it counts whatever it still needs itself, so the view is the same whatever
 * the limit. Returns the recall for `messages` afterwards, so the plan that follows does not
 * compare the history a second time.
 */
export async function countInSlices(cache: HistoryCache, chatId: string, messages: readonly unknown[], counter: TokenCounter, format: string, limit = Infinity): Promise<Recall> {
  const recall = cache.recall(chatId, messages);
  const known = recall.history && (format === 'auto' || format === recall.history.format) ? recall.history : undefined;
  const shared = known ? recall.shared : 0;
  const n = messages.length;
  if (n - shared < SLICE_FROM_MESSAGES) return recall;
  const lens = selectLens(messages, (known?.format ?? format) as Parameters<typeof selectLens>[1], 'messages', shared) as MessageLens<unknown>;
  const counts = new Float64Array(n);
  if (known) counts.set(known.counts.subarray(0, shared));
  if (limit === Infinity) {
    await inSlices(n - shared, (k) => { counts[shared + k] = counter.message(messages[shared + k], lens); });
  } else {
    counts.fill(NaN, shared);
    // Newest first, as the plan's own count: what no view can hold is never tokenized.
    let total = 0;
    await inSlices(n, (k) => {
      if (total > limit) return;
      const i = n - 1 - k;
      let t = counts[i];
      if (t !== t) counts[i] = t = counter.message(messages[i], lens);
      total += t;
    });
  }
  const grouping = buildGroups(messages, lens, known ? { grouping: known.grouping, shared } : undefined);
  const ids = known ? known.ids.slice(0, shared) : [];
  // The previous view's make-up carries over for the part of the history that is unchanged.
  const history = { messages: messages.slice(), counts, grouping, format: lens.format, ids, view: known?.view ? viewBefore(known.view, shared) : undefined, textUnread: known?.textUnread };
  cache.remember(chatId, history);
  return { history, shared: n };
}
