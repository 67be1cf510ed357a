import type { TextCounter } from '../tokens/counter.js';
import { isDistinctive } from './facts.js';
import { truncateMiddle } from './truncate-middle.js';

/**
 * The extractive summary's shape: a title, then sections of one-line items, oldest first. It is
 * plain text a model reads as is, and it parses back, so each run can merge new items into the
 * previous summary instead of starting over.
 */

/**
 * Section names, in the order they are written. `Goal` is the conversation's first request;
 * `Earlier notes` holds the lines of a previous summary written in another shape.
 */
export const SECTIONS = ['Goal', 'Earlier notes', 'User requests', 'Tool calls', 'Facts', 'Errors', 'Conclusions'] as const;

/** One section of the working memory. */
export type SectionName = (typeof SECTIONS)[number];

/**
 * Items per section, oldest first, keyed by `itemKey`: no two items of a section share a key,
 * and a Map keeps insertion order, so moving an item to the newest end is a delete and a set.
 */
export type WorkingMemory = Record<SectionName, Map<string, string>>;

/** First line of every extractive summary. */
export const MEMORY_TITLE = 'Summary of earlier messages (working memory, oldest items first):';

/** A labelled fact: `order_id: QX7P2K`, `Total Cost: $239`. */
const FACT_LINE = /^([\p{L}\p{N}_][\p{L}\p{N}_ .#-]{0,59}): (.+)$/u;

/** An empty working memory. */
export function emptyMemory(): WorkingMemory {
  return {
    Goal: new Map(), 'Earlier notes': new Map(), 'User requests': new Map(), 'Tool calls': new Map(), Facts: new Map(), Errors: new Map(), Conclusions: new Map(),
  };
}

/**
 * What makes two items "the same" for deduplication. A fact is its value when the value
 * identifies something on its own (`QX7P2K` from a result and from an answer are one fact);
 * otherwise, and for every other section, the item's text with spacing and case folded.
 */
export function itemKey(section: SectionName, item: string): string {
  if (section === 'Facts') {
    const m = FACT_LINE.exec(item);
    const value = m ? m[2] : item;
    if (!m || isDistinctive(value)) return `v:${value}`;
  }
  return `t:${item.replace(/\s+/g, ' ').trim().toLowerCase()}`;
}

/**
 * Appends an item as the newest of its section. An item with the same key is moved, not
 * repeated: the older copy is removed. A bare fact that repeats a labelled one keeps the label.
 */
export function addItem(memory: WorkingMemory, section: SectionName, item: string): void {
  const text = item.replace(/\s+/g, ' ').trim();
  if (!text) return;
  const items = memory[section];
  const key = itemKey(section, text);
  const older = items.get(key);
  const kept = older !== undefined && section === 'Facts' && !FACT_LINE.test(text) && FACT_LINE.test(older) ? older : text;
  items.delete(key);
  items.set(key, kept);
}

/**
 * Reads a summary back into sections. Lines under a known `Section:` header become its items;
 * lines of any other shape (a summary written by another summarizer) are kept as `Earlier notes`.
 */
export function parseWorkingMemory(text: string): WorkingMemory {
  const memory = emptyMemory();
  let section: SectionName = 'Earlier notes';
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    if (!line || line === MEMORY_TITLE) continue;
    const header = SECTIONS.find((name) => line === `${name}:`);
    if (header) {
      section = header;
      continue;
    }
    addItem(memory, section, line.replace(/^(?:[-*•]|\d+[.)])\s+/, ''));
  }
  return memory;
}

/**
 * Writes the memory as text: the title, then each non-empty section as `Name:` and `- item` lines.
 * A `factsBlock` (the fact ledger, `Facts:` title included) is written in the place of the Facts section.
 */
export function renderWorkingMemory(memory: WorkingMemory, factsBlock = ''): string {
  const parts = [MEMORY_TITLE];
  for (const name of SECTIONS) {
    if (name === 'Facts' && factsBlock) {
      parts.push(factsBlock);
      continue;
    }
    const items = [...memory[name].values()];
    if (items.length > 0) parts.push(`${name}:\n${items.map((item) => `- ${item}`).join('\n')}`);
  }
  return parts.join('\n');
}

/**
 * How much of the budget a section may hold relative to the others when trimming: tool calls and
 * facts are what a later turn most often needs again. The goal is never dropped.
 */
const SECTION_WEIGHT: Record<SectionName, number> = {
  Goal: Infinity, 'Earlier notes': 1, 'User requests': 1, 'Tool calls': 2, Facts: 1.5, Errors: 1, Conclusions: 1,
};

/** Number of items in the memory. */
export function itemCount(memory: WorkingMemory): number {
  return SECTIONS.reduce((n, name) => n + memory[name].size, 0);
}

/**
 * Drops items until the rendered memory fits `maxTokens`: each step removes the oldest item of
 * the section that costs the most tokens for its weight, so every section keeps its newest items
 * and none starves the others; the goal stays. A lone item still too long is cut in the middle.
 * Never leaves the memory empty while it had items. `checkpoint` runs between steps (abort checks).
 */
export function trimWorkingMemory(memory: WorkingMemory, maxTokens: number, count: TextCounter, checkpoint: () => void = () => {}): WorkingMemory {
  const trimmed = emptyMemory();
  const costs = new Map<SectionName, number[]>();
  const totals = new Map<SectionName, number>();
  const headers = new Map<SectionName, number>();
  for (const name of SECTIONS) {
    trimmed[name] = new Map(memory[name]);
    const items = [...memory[name].values()].map((item) => count(`- ${item}`) + 1);
    costs.set(name, items);
    totals.set(name, items.reduce((a, b) => a + b, 0));
    headers.set(name, count(`${name}:`) + 1);
  }
  const sectionCost = (name: SectionName) => (trimmed[name].size === 0 ? 0 : headers.get(name)! + totals.get(name)!);
  const estimate = () => count(MEMORY_TITLE) + SECTIONS.reduce((n, name) => n + sectionCost(name), 0);

  const dropOne = (): boolean => {
    if (itemCount(trimmed) <= 1) return false;
    let widest: SectionName | undefined;
    let widestShare = 0;
    for (const name of SECTIONS) {
      const share = sectionCost(name) / SECTION_WEIGHT[name];
      if (trimmed[name].size > 0 && share > widestShare) {
        widest = name;
        widestShare = share;
      }
    }
    if (!widest) return false;
    const oldest = trimmed[widest].keys().next().value as string;
    trimmed[widest].delete(oldest);
    totals.set(widest, totals.get(widest)! - costs.get(widest)!.shift()!);
    return true;
  };

  while (estimate() > maxTokens && dropOne()) checkpoint();
  // The estimate sums parts; the exact count of the joined text decides.
  while (count(renderWorkingMemory(trimmed)) > maxTokens && dropOne()) checkpoint();
  if (count(renderWorkingMemory(trimmed)) > maxTokens) shortenLoneItem(trimmed, maxTokens, count);
  return trimmed;
}

function shortenLoneItem(memory: WorkingMemory, maxTokens: number, count: TextCounter): void {
  const name = SECTIONS.find((n) => memory[n].size > 0);
  if (!name) return;
  const [key, original] = memory[name].entries().next().value as [string, string];
  let chars = original.length;
  while (chars > 0) {
    chars = Math.floor(chars * 0.8);
    memory[name].set(key, truncateMiddle(original, chars));
    if (count(renderWorkingMemory(memory)) <= maxTokens) return;
  }
}
