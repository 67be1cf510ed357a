import type { Grouping } from './groups.js';
import type { MessageLens } from './lens.js';
import { isHeld, type Draft } from './plan-draft.js';
import { DROP } from './report.js';
import { collapsedPlaceholder } from './summary-frame.js';

/** A message with its bulky results cleared, and its tokens. */
export interface ClearedCopy<M> {
  readonly message: M;
  readonly tokens: number;
}

/**
 * Message `i` with its bulky results cleared (each result of at least its share of
 * `collapseMinChars`; the user's own text beside results is kept) and its tokens; undefined when
 * it has none, or clearing saves nothing (always, without `collapseMinChars`). Each message is
 * worked out once per plan.
 */
export function clearer<M>(d: Draft<M>): (i: number) => ClearedCopy<M> | undefined {
  const { messages, lens, tokens, count, input } = d;
  const minChars = d.options.collapseMinChars;
  const copies = new Map<number, ClearedCopy<M> | null>();
  return (i) => {
    if (minChars === undefined) return undefined;
    const results = lens.read(messages[i]).results;
    if (results.length === 0) return undefined;
    let chars = 0;
    for (const r of results) chars += r.content.length;
    if (chars < minChars) return undefined;
    const known = copies.get(i);
    if (known !== undefined) return known ?? undefined;
    let copy: ClearedCopy<M> | null = null;
    let cleared = messages[i];
    for (let slot = results.length - 1; slot >= 0; slot--) {
      const length = results[slot].content.length;
      if (length >= minChars / results.length) cleared = lens.collapseResult(cleared, slot, input.clearedText ? input.clearedText(i, length) : collapsedPlaceholder(length));
    }
    const after = count(cleared);
    if (after < tokens[i]) copy = { message: cleared, tokens: after };
    copies.set(i, copy);
    return copy ?? undefined;
  };
}

/**
 * The group of the newest tool results, those the next reply reads: the last message from `from`
 * on that carries results, when no user text comes after it (-1 otherwise). They are never cleared.
 */
function newestResultsGroup<M>(grouping: Grouping, messages: readonly M[], lens: MessageLens<M>, from: number): number {
  for (let i = messages.length - 1; i >= from; i--) {
    const read = lens.read(messages[i]);
    if (read.results.length > 0) return grouping.groupOf[i];
    if (read.hasUserText) return -1;
  }
  return -1;
}

/**
 * The kept tail's bulky results (never the newest) the view must clear anyway, with no summary in
 * it, when the protected part alone is over the limit: oldest first, only as many as that takes
 * (`collapseTail` clears the same). The room they free (`tailSavings`) is the summary's.
 */
export function reserveTailClearing<M>(d: Draft<M>, cleared: (i: number) => ClearedCopy<M> | undefined): void {
  const max = d.max;
  if (max === undefined || d.options.collapseMinChars === undefined) return;
  d.newestGroup = newestResultsGroup(d.grouping, d.messages, d.lens, d.protectedStart);
  for (let i = d.protectedStart; i < d.n && d.minimumTokens - d.tailSavings > max; i++) {
    if (d.grouping.groupOf[i] === d.newestGroup) continue;
    const copy = cleared(i);
    if (copy) d.tailSavings += d.tokens[i] - copy.tokens;
  }
}

/** Clears the bulky results of message `i` in place (the pair stays, so the view stays valid) when that saves tokens. */
function collapseBulky<M>(d: Draft<M>, cleared: (i: number) => ClearedCopy<M> | undefined, i: number): void {
  const copy = cleared(i);
  if (!copy) return;
  d.replaced.set(i, copy.message);
  d.collapsed.push({ index: i, tokensBefore: d.tokens[i], tokensAfter: copy.tokens });
  d.total += copy.tokens - d.tokens[i];
}

/** Over the budget: clear bulky results older than the tail first, oldest first, until the view fits. */
export function collapseOlder<M>(d: Draft<M>, cleared: (i: number) => ClearedCopy<M> | undefined): void {
  const max = d.max;
  if (max === undefined || d.total <= max || d.options.collapseMinChars === undefined) return;
  for (let i = Math.max(d.coveredEnd, d.countedFrom); i < d.protectedStart && d.total > max; i++) {
    if (d.reason[i] === DROP.kept && !isHeld(d, i)) collapseBulky(d, cleared, i);
  }
}

/**
 * Nothing older is left to drop: clear bulky results from `protectedStart` on (what is never
 * dropped: the kept tail, or what is left of it when it yielded), oldest first, but never the
 * newest results (those the next reply reads). A view over the budget is refused by the provider,
 * so this is the last thing tried before reporting `overBudget`.
 */
export function collapseTail<M>(d: Draft<M>, cleared: (i: number) => ClearedCopy<M> | undefined): void {
  const max = d.max;
  if (max === undefined || d.total <= max || d.options.collapseMinChars === undefined) return;
  for (let i = d.protectedStart; i < d.n && d.total > max; i++) if (d.grouping.groupOf[i] !== d.newestGroup) collapseBulky(d, cleared, i);
}
